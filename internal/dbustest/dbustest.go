// Package dbustest starts a D-Bus daemon of a test's own and points
// DBUS_SYSTEM_BUS_ADDRESS (or DBUS_SESSION_BUS_ADDRESS) at it, so the code
// under test talks to it as to the system (or session) bus. Test support
// only.
package dbustest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// SystemBus starts the daemon, stopped when the test ends, and returns
// its address. It skips the test when dbus-daemon is not installed.
func SystemBus(t *testing.T) string {
	t.Helper()
	addr := start(t)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	return addr
}

// SessionBus is SystemBus for the session bus: the person's desktop
// services (notifications) live there.
func SessionBus(t *testing.T) string {
	t.Helper()
	addr := start(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return addr
}

func start(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed (make deps-test installs it)")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(addr)
}
