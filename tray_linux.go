package main

import (
	"time"

	"github.com/godbus/dbus/v5"
)

const trayWatcher = "org.kde.StatusNotifierWatcher"

// trayWaits, when set, is told that trayAvailableWithin found no tray host
// and waits for one (a test's cue to bring one).
var trayWaits func()

// trayAvailable reports whether a system tray host runs: on Linux, a
// StatusNotifierWatcher on the session bus. Without one a tray icon would
// never show, and closing the window must ask instead of hiding.
func trayAvailable() bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return false
	}
	var has bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, trayWatcher).Store(&has)
	return err == nil && has
}

// trayAvailableWithin is trayAvailable for a start at login: session
// managers start autostart entries alongside the panel, whose tray host
// may take its name on the bus a few seconds later. It waits up to d for
// the name to be taken before saying there is no tray.
func trayAvailableWithin(d time.Duration) bool {
	conn, err := dbus.ConnectSessionBus() // its own: the signal channel is closed with it
	if err != nil {
		return false
	}
	defer conn.Close()
	if err := conn.AddMatchSignal(dbus.WithMatchSender("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, trayWatcher)); err != nil {
		return trayAvailable()
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	var has bool
	// Asked after subscribing, so a name taken in between is not missed.
	if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, trayWatcher).Store(&has) == nil && has {
		return true
	}
	if trayWaits != nil {
		trayWaits()
	}
	deadline := time.After(d)
	for {
		select {
		case sig, ok := <-signals:
			if !ok { // the bus went away
				return false
			}
			if len(sig.Body) == 3 {
				if owner, _ := sig.Body[2].(string); owner != "" {
					return true
				}
			}
		case <-deadline:
			return false
		}
	}
}
