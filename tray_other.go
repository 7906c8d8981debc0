//go:build !linux

package main

import "time"

// trayAvailable: Windows and macOS always have a tray (notification area,
// menu bar).
func trayAvailable() bool { return true }

func trayAvailableWithin(time.Duration) bool { return true }
