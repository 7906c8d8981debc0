package main

import "github.com/godbus/dbus/v5"

// trayAvailable reports whether a system tray host runs: on Linux, a
// StatusNotifierWatcher on the session bus. Without one a tray icon would
// never show, and closing the window must ask instead of hiding.
func trayAvailable() bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return false
	}
	var has bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has)
	return err == nil && has
}
