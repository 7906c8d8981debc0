package nettest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"carrier/internal/nettest"
	"carrier/transfer"
)

// A silent outage mid-upload (issue 33): every packet dropped for 5 s,
// nothing reset (the loopback down in a private network namespace:
// nettest.SetLoopback). The engine finds the dead path from its
// connection's acknowledgements, resets it, asks where the upload stands
// on a fresh connection once the path is back, and finishes with the
// file's bytes, one object. The engine talks to the sandbox directly, the
// link's speed the sandbox's rate fault: toxiproxy's kernel acknowledges
// every byte whatever its toxics do (nettest's netns.go), and it keeps the
// reset connection open to the server and delivers its stale request
// late. The test re-runs itself in the namespace.
func TestDeadPathBlackhole(t *testing.T) {
	if !nettest.InPrivateNetwork() {
		err := nettest.RunInPrivateNetwork("-test.run=^TestDeadPathBlackhole$", "-test.v", "-test.count=1")
		if errors.Is(err, nettest.ErrNoNamespaces) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatalf("the test in the private network: %v", err)
		}
		return
	}
	if err := nettest.SetLoopback(true); err != nil {
		t.Fatal(err)
	}
	const (
		size   = 12 << 20
		outage = 5 * time.Second
	)
	const rate = "rate=4000KB"

	// The same upload undisturbed, for the time it takes.
	calm := newEnvWith(t, transfer.Config{}, rate, false)
	start := time.Now()
	want := calm.add(t, "calm", size)
	calm.await(t, nil)
	base := time.Since(start)
	calm.check(t, "calm", want)

	e := newEnvWith(t, transfer.Config{}, rate, false)
	start = time.Now()
	want = e.add(t, "hole", size)
	var holed, lifted, found time.Time
	dead := false
	restored := make(chan error, 1)
	retries := e.await(t, func(ev transfer.Event) {
		switch {
		case holed.IsZero() && ev.Kind == transfer.EventProgress && ev.Confirmed > 0:
			if err := nettest.SetLoopback(false); err != nil {
				t.Fatal(err)
			}
			holed = time.Now()
			time.AfterFunc(outage, func() {
				lifted = time.Now()
				restored <- nettest.SetLoopback(true)
			})
		case !holed.IsZero() && ev.Kind == transfer.EventRetrying && found.IsZero():
			found = time.Now()
			dead = strings.Contains(ev.Reason, "went dead")
			t.Logf("%s after the outage began: %s", found.Sub(holed).Round(10*time.Millisecond), ev.Reason)
		}
	})
	took := time.Since(start)
	if holed.IsZero() {
		t.Fatalf("the upload ended before the outage (%d retries)", len(retries))
	}
	if err := <-restored; err != nil {
		t.Fatal(err)
	}
	e.check(t, "hole", want)
	lost := took - base - outage
	if !dead {
		t.Fatalf("the outage was not found as a dead path (%s lost beyond it)", lost.Round(10*time.Millisecond))
	}
	t.Logf("undisturbed %s; with a %s outage %s: %s lost beyond the outage (the dead path found %s after it began, the path back %s after that)",
		base.Round(10*time.Millisecond), outage, took.Round(10*time.Millisecond), lost.Round(10*time.Millisecond),
		found.Sub(holed).Round(10*time.Millisecond), lifted.Sub(found).Round(10*time.Millisecond))
	// Far under the 30 s the stall timer alone would lose (an idle machine
	// loses about a second and a half; a loaded one more).
	if lost > 15*time.Second {
		t.Errorf("the upload lost %s beyond a %s outage", lost, outage)
	}
}
