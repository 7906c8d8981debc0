// Package ui holds Carrier's Fyne screens and the bridge from transfer
// events to widgets. It is given a fyne.App and fyne.Window by main.go and
// never creates them, so it builds and tests without cgo.
package ui
