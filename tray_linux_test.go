package main

import (
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"carrier/internal/dbustest"
)

// Started at login, Carrier waits for a tray host that takes its name on
// the bus after Carrier started, and says there is none once the wait
// ends without one.
func TestTrayHostThatComesLate(t *testing.T) {
	addr := dbustest.SessionBus(t)
	if trayAvailableWithin(100 * time.Millisecond) { // trayWaits is nil yet
		t.Fatal("no tray host on the bus, yet one was found")
	}
	waiting := make(chan struct{})
	trayWaits = func() { close(waiting) }
	defer func() { trayWaits = nil }()
	found := make(chan bool, 1)
	go func() { found <- trayAvailableWithin(30 * time.Second) }()
	<-waiting // the host comes while Carrier waits, not before it looked
	host, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	if reply, err := host.RequestName(trayWatcher, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("taking the tray host's name: %v %v", reply, err)
	}
	select {
	case ok := <-found:
		if !ok {
			t.Fatal("the tray host came, but Carrier did not see it")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the tray host came, but Carrier still waits")
	}
}
