package ui

import (
	"strings"
	"testing"
	"time"

	"carrier/transfer"
)

// A failure is worded for the window from its cause, and a waiting job
// says why it waits.
func TestStateWordsForCausesAndWaiting(t *testing.T) {
	now := time.Now()
	cases := []struct {
		snap transfer.Snapshot
		want string
	}{
		{transfer.Snapshot{State: transfer.StateFailed, Error: "503", Cause: transfer.ErrGaveUp}, "Failed: 503. Retry goes on where it stopped."},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrMaybeSent}, "Retry sends it again"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrSignIn}, "Account screen"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrDailyQuota}, "resets at midnight, Pacific time: Retry after that"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "bad request"}, "Failed: bad request"},
		{transfer.Snapshot{State: transfer.StateWaiting}, "Waiting for the uploads it needs to finish first"},
		{transfer.Snapshot{State: transfer.StateWaiting, Blocked: `it needs "a.mov", which failed`}, `Waiting: it needs "a.mov", which failed. Retry that upload, or cancel this one.`},
	}
	for _, c := range cases {
		if got := stateWords(jobView{snap: c.snap}, now); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q in it", c.snap, got, c.want)
		}
	}
	held := jobView{snap: transfer.Snapshot{State: transfer.StateRetrying}, held: true, retryReason: "Offline: waiting for the network", retryAt: now.Add(time.Minute)}
	if got := stateWords(held, now); got != "Offline: waiting for the network" {
		t.Errorf("held: %q (no countdown while the system holds uploads)", got)
	}
}
