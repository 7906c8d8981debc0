package platform

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"carrier/internal/dbustest"
)

// notificationDaemon runs python-dbusmock's notification_daemon on a
// session bus of the test's own, showing capabilities caps.
func notificationDaemon(t *testing.T, caps string) *dbus.Conn {
	t.Helper()
	addr := dbustest.SessionBus(t)
	if exec.Command("/usr/bin/python3", "-c", "import dbusmock").Run() != nil {
		t.Skip("python3-dbusmock is not installed (make deps-test installs it)")
	}
	cmd := exec.Command("/usr/bin/python3", "-m", "dbusmock", "--session", "--template", "notification_daemon",
		"--parameters", `{"capabilities": "`+caps+`"}`)
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	conn := busConn(t, addr)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var has bool
		if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, notifyName).Store(&has) == nil && has {
			return conn
		}
		if time.Now().After(deadline) {
			t.Fatal("dbusmock's notification_daemon never took its name")
		}
		time.Sleep(50 * time.Millisecond) // another process's start: nothing to wait on but the bus
	}
}

// notifyCalls are the Notify calls the mock received: each its arguments.
func notifyCalls(t *testing.T, conn *dbus.Conn) [][]any {
	t.Helper()
	var calls []struct {
		At     uint64
		Method string
		Args   []dbus.Variant
	}
	if err := conn.Object(notifyName, notifyPath).Call("org.freedesktop.DBus.Mock.GetCalls", 0).Store(&calls); err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for _, c := range calls {
		if c.Method == "Notify" {
			var args []any
			for _, a := range c.Args {
				args = append(args, a.Value())
			}
			out = append(out, args)
		}
	}
	return out
}

// A notification goes to the desktop's service with its buttons, and the
// button the service says was pressed runs, once; a closed notification's
// buttons do nothing.
func TestNotifierActions(t *testing.T) {
	conn := notificationDaemon(t, "body actions")
	n, err := NewNotifier("Carrier", "app.carrier.desktop")
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !n.Actions() {
		t.Fatal("the service shows actions, the notifier thinks not")
	}
	pressed := make(chan string, 8)
	act := func(key string) Action {
		return Action{Key: key, Label: "Label " + key, Do: func() { pressed <- key }}
	}
	if err := n.Notify("Carrier: failed", "Report: the server is busy", []Action{act("retry"), act("show"), act(DefaultAction)}); err != nil {
		t.Fatal(err)
	}
	if err := n.Notify("Carrier: sent", "Minutes", []Action{act("mailbox")}); err != nil {
		t.Fatal(err)
	}
	calls := notifyCalls(t, conn)
	if len(calls) != 2 {
		t.Fatalf("the service got %d notifications, want 2", len(calls))
	}
	first := calls[0]
	if first[0] != "Carrier" || first[2] != "app.carrier.desktop" || first[3] != "Carrier: failed" || first[4] != "Report: the server is busy" {
		t.Fatalf("Notify's arguments: %v", first)
	}
	if keys := first[5].([]string); !slices.Equal(keys, []string{"retry", "Label retry", "show", "Label show", "default", "Label default"}) {
		t.Fatalf("actions sent: %v", keys)
	}

	emit(t, conn, notifyName, notifyPath, notifyIface, "ActionInvoked", "us", uint32(1), "retry")
	emit(t, conn, notifyName, notifyPath, notifyIface, "ActionInvoked", "us", uint32(1), "show") // one answer per notification
	emit(t, conn, notifyName, notifyPath, notifyIface, "NotificationClosed", "uu", uint32(2), uint32(2))
	emit(t, conn, notifyName, notifyPath, notifyIface, "ActionInvoked", "us", uint32(2), "mailbox")
	// A marker: a third notification's action, pressed last. Signals
	// arrive in order, so once it ran the others had their chance.
	if err := n.Notify("Carrier: sent", "Marker", []Action{act("marker")}); err != nil {
		t.Fatal(err)
	}
	emit(t, conn, notifyName, notifyPath, notifyIface, "ActionInvoked", "us", uint32(3), "marker")
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) == 0 || got[len(got)-1] != "marker" {
		select {
		case k := <-pressed:
			got = append(got, k)
		case <-timeout:
			t.Fatalf("actions run: %v; the marker never came", got)
		}
	}
	if !slices.Equal(got, []string{"retry", "marker"}) {
		t.Fatalf("actions run: %v, want retry then marker only", got)
	}
}

// A service without actions gets the words alone; a bus without the
// service, or no bus, is ErrNoNotifications (the caller uses Fyne's).
func TestNotifierWithoutActionsOrService(t *testing.T) {
	conn := notificationDaemon(t, "body")
	n, err := NewNotifier("Carrier", "app.carrier.desktop")
	if err != nil {
		t.Fatal(err)
	}
	if n.Actions() {
		t.Fatal("the service shows no actions")
	}
	if err := n.Notify("Carrier: sent", "Minutes", []Action{{Key: "mailbox", Label: "Open in Mailbox"}}); err != nil {
		t.Fatal(err)
	}
	n.Close()
	if calls := notifyCalls(t, conn); len(calls) != 1 || len(calls[0][5].([]string)) != 0 {
		t.Fatalf("actions sent to a service without them: %v", calls)
	}

	dbustest.SessionBus(t)
	if _, err := NewNotifier("Carrier", "app.carrier.desktop"); !errors.Is(err, ErrNoNotifications) {
		t.Fatalf("no service on the bus: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+t.TempDir()+"/no-bus")
	if _, err := NewNotifier("Carrier", "app.carrier.desktop"); !errors.Is(err, ErrNoNotifications) {
		t.Fatalf("no bus: %v", err)
	}
}
