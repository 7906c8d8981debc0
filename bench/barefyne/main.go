//go:build barefyne

// Command barefyne is a bare Fyne window, the floor against which the
// harness (../) judges the desktop app's CPU at rest: what Fyne, GLFW and
// the X connection cost when nothing is asked of them. It opens one window
// of the app's size holding one label, and waits.
//
// The build tag keeps it out of `go build ./...` and `go vet ./...`, which
// must work with CGO_ENABLED=0: Fyne's driver needs cgo. The harness
// builds it with -tags barefyne.
package main

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"
)

func main() {
	a := app.NewWithID("app.carrier.bench.barefyne")
	w := a.NewWindow("Bare Fyne")
	w.SetContent(widget.NewLabel("A bare Fyne window"))
	w.Resize(fyne.NewSize(1100, 720))
	w.ShowAndRun()
}
