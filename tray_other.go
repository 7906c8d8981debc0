//go:build !linux

package main

// trayAvailable: Windows and macOS always have a tray (notification area,
// menu bar).
func trayAvailable() bool { return true }
