//go:build linux || windows

package platform

import (
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testAppID = "app.carrier.desktop"

// A second launch, as main does it: hand the items over and exit 0, or
// exit 3 when no window took them. Run as a process of its own by
// TestSecondLaunchHandsOverToTheWindow.
func TestHandOverHelper(t *testing.T) {
	if os.Getenv("CARRIER_HANDOVER_DATA") == "" {
		t.Skip("run by TestSecondLaunchHandsOverToTheWindow")
	}
	var items []string
	if s := os.Getenv("CARRIER_HANDOVER_ITEMS"); s != "" {
		items = strings.Split(s, "\n")
	}
	if err := HandOver(testAppID, os.Getenv("CARRIER_HANDOVER_DATA"), items); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	os.Exit(0)
}

func secondLaunch(t *testing.T, data string, items ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHandOverHelper$")
	cmd.Env = append(os.Environ(), "CARRIER_HANDOVER_DATA="+data, "CARRIER_HANDOVER_ITEMS="+strings.Join(items, "\n"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// The first Carrier claims the window (on Linux on a session bus of the
// test's own, on Windows its pipe); a second process's Open reaches the
// first's handler with its items in order, a plain launch's Activate
// reaches it as nothing to open, and both processes exit 0. A hand-over that came before the window was
// ready waits for it. A Carrier on other folders is not handed anything,
// and a second claim on the same folders is refused as ErrRunning.
func TestSecondLaunchHandsOverToTheWindow(t *testing.T) {
	instanceTestSetup(t)
	data := t.TempDir()
	first, err := ClaimInstance(testAppID, data)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if again, err := ClaimInstance(testAppID, data); !errors.Is(err, ErrRunning) {
		again.Close()
		t.Fatalf("a second claim on the same folders: %v, want ErrRunning", err)
	}

	// Before the window serves: kept until it does.
	if code, out := secondLaunch(t, data, "file:///tmp/early.pdf"); code != 0 {
		t.Fatalf("the early second launch exited %d: %s", code, out)
	}
	got := make(chan []string, 8)
	first.Serve(func(items []string) { got <- items })
	next := func() []string {
		t.Helper()
		select {
		case items := <-got:
			return items
		case <-time.After(10 * time.Second):
			t.Fatal("nothing was handed over")
		}
		return nil
	}
	if items := next(); !reflect.DeepEqual(items, []string{"file:///tmp/early.pdf"}) {
		t.Errorf("the early hand-over gave %q", items)
	}

	start := time.Now()
	items := []string{"file:///home/zoe/a%20report.pdf", "file:///home/zoe/b.jpg", "mailto:to@example.com?subject=S"}
	if code, out := secondLaunch(t, data, items...); code != 0 {
		t.Fatalf("the second launch exited %d: %s", code, out)
	}
	if got := next(); !reflect.DeepEqual(got, items) {
		t.Errorf("handed over %q, want %q", got, items)
	}
	t.Logf("a second launch handed two files and a link over and exited in %v", time.Since(start).Round(time.Millisecond))

	if code, out := secondLaunch(t, data); code != 0 {
		t.Fatalf("a plain second launch exited %d: %s", code, out)
	}
	if got := next(); len(got) != 0 {
		t.Errorf("a plain launch handed %q, want only Activate", got)
	}

	// Other folders: no window there, so the launch must open its own.
	if code, _ := secondLaunch(t, t.TempDir(), "file:///tmp/x"); code != 3 {
		t.Errorf("a launch on other folders exited %d, want 3 (no window took it)", code)
	}
	select {
	case items := <-got:
		t.Errorf("the window on other folders was handed %q", items)
	default:
	}

	// Once the window lets go, the next launch opens its own.
	first.Close()
	if code, _ := secondLaunch(t, data, "file:///tmp/x"); code != 3 {
		t.Errorf("a launch after the window closed exited %d, want 3", code)
	}
	then, err := ClaimInstance(testAppID, data)
	if err != nil {
		t.Fatalf("the claim after the window closed: %v", err)
	}
	then.Close()
}

// The window's name is the app id's, one per data folder, and a valid bus
// name whatever the folder is called.
func TestInstanceNamePerFolder(t *testing.T) {
	a, b := InstanceName(testAppID, "/home/zoe/.local/share/carrier"), InstanceName(testAppID, "/tmp/x y/ü")
	if a == b || !strings.HasPrefix(a, testAppID+".d") || InstanceName(testAppID, "/home/zoe/.local/share/carrier/") != a {
		t.Errorf("names %q and %q", a, b)
	}
	for _, r := range b[len(testAppID):] {
		if !(r == '.' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			t.Errorf("%q is no bus name", b)
		}
	}
}
