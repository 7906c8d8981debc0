package platform

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"carrier/internal/dbustest"
)

// dbusmock runs python-dbusmock's template on the bus, as the system's
// service would be there.
func dbusmock(t *testing.T, addr, template, name string) {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import dbusmock").Run() != nil {
		t.Skip("python3-dbusmock is not installed (make deps-test installs it)")
	}
	cmd := exec.Command("/usr/bin/python3", "-m", "dbusmock", "--system", "--template", template)
	cmd.Env = append(os.Environ(), "DBUS_SYSTEM_BUS_ADDRESS="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	conn := busConn(t, addr)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var has bool
		if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has) == nil && has {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dbusmock's %s never took %s", template, name)
		}
		time.Sleep(50 * time.Millisecond) // another process's start: nothing to wait on but the bus
	}
}

func busConn(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// emit makes a mocked service send a signal, through dbusmock's own
// EmitSignal: the signal comes from the service's name, as a real one.
func emit(t *testing.T, conn *dbus.Conn, name, path, iface, member, sig string, args ...any) {
	t.Helper()
	call := conn.Object(name, dbus.ObjectPath(path)).Call("org.freedesktop.DBus.Mock.EmitSignal", 0, iface, member, sig, args)
	if call.Err != nil {
		t.Fatalf("emit %s.%s: %v", iface, member, call.Err)
	}
}

func TestSleepAndNetworkFromTheSystemBus(t *testing.T) {
	addr := dbustest.SystemBus(t)
	dbusmock(t, addr, "logind", logindName)
	dbusmock(t, addr, "networkmanager", nmName)
	got := make(chan Signal, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Watch(ctx, func(s Signal) { got <- s }); err != nil {
		t.Fatal(err)
	}
	conn := busConn(t, addr)
	// A process that only pretends to be logind is not heard.
	if err := conn.Emit(logindPath, logindIf+".PrepareForSleep", false); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, path, iface, member, sig string
		arg                            any
		want                           Signal
	}{
		{logindName, logindPath, logindIf, "PrepareForSleep", "b", true, Sleeping},
		{logindName, logindPath, logindIf, "PrepareForSleep", "b", false, Woke},
		{nmName, nmPath, nmIf, "StateChanged", "u", uint32(20), NetworkDown},
		{nmName, nmPath, nmIf, "StateChanged", "u", uint32(40), 0}, // connecting: nothing to do yet
		{nmName, nmPath, nmIf, "StateChanged", "u", uint32(70), NetworkUp},
	}
	if n := inhibitors(t, conn); n != 1 {
		t.Fatalf("%d sleep inhibitors held while awake, want 1", n)
	}
	for _, s := range steps {
		emit(t, conn, s.name, s.path, s.iface, s.member, s.sig, s.arg)
		if s.want == 0 {
			continue
		}
		select {
		case g := <-got:
			if g != s.want {
				t.Fatalf("%s(%v): got %s, want %s", s.member, s.arg, g, s.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s(%v): no signal", s.member, s.arg)
		}
		switch s.want { // the delay lock: let go once told of the sleep, taken again after
		case Sleeping:
			waitInhibitors(t, conn, 0)
		case Woke:
			waitInhibitors(t, conn, 1)
		}
	}
	select {
	case g := <-got:
		t.Fatalf("an extra signal: %s", g)
	default:
	}
}

func TestNoSystemBusIsSaidPlainly(t *testing.T) {
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/carrier-test-bus")
	if err := Watch(context.Background(), func(Signal) {}); err == nil || !strings.Contains(err.Error(), "does not report") {
		t.Fatalf("err %v", err)
	}
}

// inhibitors counts the delay locks on sleep that logind (the mock) holds.
func inhibitors(t *testing.T, conn *dbus.Conn) int {
	t.Helper()
	var list [][]any
	if err := conn.Object(logindName, logindPath).Call(logindIf+".ListInhibitors", 0).Store(&list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range list {
		if len(in) >= 4 && in[0] == "sleep" && in[1] == "Carrier" && in[3] == "delay" {
			n++
		}
	}
	return n
}

func waitInhibitors(t *testing.T, conn *dbus.Conn, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for inhibitors(t, conn) != want {
		if time.Now().After(deadline) {
			t.Fatalf("logind holds %d inhibitors of Carrier, want %d", inhibitors(t, conn), want)
		}
		time.Sleep(20 * time.Millisecond) // another process lets go of a file: nothing to wait on
	}
}

// NetworkManager's Metered and PrimaryConnection: read at start, then
// followed through its PropertiesChanged signals (the template sends both
// the standard one and NetworkManager's own: one change is told once).
func TestMeteredAndPrimaryConnectionFromNetworkManager(t *testing.T) {
	addr := dbustest.SystemBus(t)
	dbusmock(t, addr, "networkmanager", nmName)
	conn := busConn(t, addr)
	nm := conn.Object(nmName, nmPath)
	add := func(name string, v any) {
		t.Helper()
		if err := nm.Call("org.freedesktop.DBus.Mock.AddProperty", 0, nmIf, name, dbus.MakeVariant(v)).Err; err != nil {
			t.Fatalf("add %s: %v", name, err)
		}
	}
	add("Metered", uint32(nmMeteredYes)) // a phone's hotspot when Carrier starts
	add("PrimaryConnection", dbus.ObjectPath("/org/freedesktop/NetworkManager/ActiveConnection/1"))

	got := make(chan Signal, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Watch(ctx, func(s Signal) { got <- s }); err != nil {
		t.Fatal(err)
	}
	want := func(step string, w Signal) {
		t.Helper()
		select {
		case g := <-got:
			if g != w {
				t.Fatalf("%s: got %s, want %s", step, g, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no signal, want %s", step, w)
		}
	}
	want("at start", Metered)

	// Processes that only pretend to be NetworkManager are not heard:
	// one broadcasting, one sending to each listener directly (which no
	// match rule filters).
	fake := map[string]dbus.Variant{"Metered": dbus.MakeVariant(uint32(2)), "PrimaryConnection": dbus.MakeVariant(dbus.ObjectPath("/fake"))}
	if err := conn.Emit(nmPath, propsIf+".PropertiesChanged", nmIf, fake, []string{}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Emit(nmPath, nmIf+".PropertiesChanged", fake); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := conn.BusObject().Call("org.freedesktop.DBus.ListNames", 0).Store(&names); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !strings.HasPrefix(name, ":") || name == conn.Names()[0] {
			continue
		}
		body := []any{nmIf, fake, []string{}}
		msg := &dbus.Message{Type: dbus.TypeSignal, Headers: map[dbus.HeaderField]dbus.Variant{
			dbus.FieldPath:        dbus.MakeVariant(dbus.ObjectPath(nmPath)),
			dbus.FieldInterface:   dbus.MakeVariant(propsIf),
			dbus.FieldMember:      dbus.MakeVariant("PropertiesChanged"),
			dbus.FieldDestination: dbus.MakeVariant(name),
			dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(body...)),
		}, Body: body}
		if call := conn.Send(msg, nil); call.Err != nil {
			t.Fatal(call.Err)
		}
	}

	steps := []struct {
		name string
		v    any
		want Signal // 0: nothing to tell
	}{
		{"Metered", uint32(nmMeteredGuessYes), 0}, // metered still
		{"Metered", uint32(2), NotMetered},        // NM_METERED_NO
		{"Metered", uint32(4), 0},                 // NM_METERED_GUESS_NO: not metered still
		{"Metered", uint32(nmMeteredGuessYes), Metered},
		{"Metered", uint32(0), NotMetered}, // NM_METERED_UNKNOWN
		{"PrimaryConnection", dbus.ObjectPath("/org/freedesktop/NetworkManager/ActiveConnection/2"), PrimaryChanged}, // another Wi-Fi
		{"PrimaryConnection", dbus.ObjectPath("/org/freedesktop/NetworkManager/ActiveConnection/2"), 0},              // the same, said again
		{"PrimaryConnection", dbus.ObjectPath(nmNoConnection), 0},                                                    // none: StateChanged tells
		{"PrimaryConnection", dbus.ObjectPath("/org/freedesktop/NetworkManager/ActiveConnection/3"), PrimaryChanged}, // a VPN up
		{"Metered", uint32(nmMeteredYes), Metered},                                                                   // the last: nothing came before it
	}
	for _, s := range steps {
		start := time.Now()
		if err := nm.Call("org.freedesktop.DBus.Mock.SetProperty", 0, nmPath, nmIf, s.name, dbus.MakeVariant(s.v)).Err; err != nil {
			t.Fatalf("set %s: %v", s.name, err)
		}
		if s.want == 0 {
			continue
		}
		want(s.name+"="+fmt.Sprint(s.v), s.want)
		if s.want == PrimaryChanged {
			if d := time.Since(start); d > time.Second {
				t.Errorf("the primary connection's change told after %s, want within 1 s", d)
			}
		}
	}
	select {
	case g := <-got:
		t.Fatalf("an extra signal: %s", g)
	default:
	}
}
