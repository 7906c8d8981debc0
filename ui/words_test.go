package ui

import (
	"strings"
	"testing"
	"time"

	"carrier/internal/app"
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
		{transfer.Snapshot{State: transfer.StateSignIn, SignInFor: "zoe@example.com", Error: "a sign-in is needed"}, "Sign in to zoe@example.com again to continue"},
		{transfer.Snapshot{State: transfer.StateWaiting}, "Waiting for the uploads it needs to finish first"},
		{transfer.Snapshot{State: transfer.StateWaiting, Blocked: `it needs "a.mov", which failed`}, `Waiting: it needs "a.mov", which failed. Retry that upload, or cancel this one.`},
	}
	for _, c := range cases {
		if got := stateWords(jobView{snap: c.snap}, now); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q in it", c.snap, got, c.want)
		}
	}
	// A retry is worded by its cause: the server's trouble is not the
	// network's.
	retry := func(url string, status int, reason string) jobView {
		return jobView{snap: transfer.Snapshot{State: transfer.StateRetrying, URL: url}, retryStatus: status, retryReason: reason, retryAt: now.Add(8 * time.Second)}
	}
	google := "https://www.googleapis.com/upload/gmail/v1/users/me/messages/send?uploadType=resumable"
	for _, c := range []struct {
		v    jobView
		want string
	}{
		{retry(google, 503, "the server is busy (it answered 503 Service Unavailable)"), "Google's server had a problem (503); retrying in 8 s"},
		{retry(google, 429, "the server asks to slow down"), "Google's server asked Carrier to slow down (429); retrying in 8 s"},
		{retry("http://127.0.0.1:8765/upload/gmail/v1/users/me/messages/send", 500, "x"), "The sandbox had a problem (500); retrying in 8 s"},
		{retry(google, 0, "the connection dropped: send bytes 0-9 to www.googleapis.com/upload: EOF"), "The connection dropped: send bytes 0-9 to www.googleapis.com/upload: EOF; retrying in 8 s"},
	} {
		if got := stateWords(c.v, now); got != c.want {
			t.Errorf("status %d: %q, want %q", c.v.retryStatus, got, c.want)
		}
	}
	failed := jobView{snap: transfer.Snapshot{State: transfer.StateFailed, Error: "cannot get credentials for the upload: " + app.ErrNoCredentials.Error()}}
	if got := stateWords(failed, now); strings.Contains(got, "carrier ") || !strings.Contains(got, "Account screen") {
		t.Errorf("a failure for want of a sign-in: %q", got)
	}
	held := jobView{snap: transfer.Snapshot{State: transfer.StateRetrying}, held: true, retryReason: "Offline: waiting for the network", retryAt: now.Add(time.Minute)}
	if got := stateWords(held, now); got != "Offline: waiting for the network" {
		t.Errorf("held: %q (no countdown while the system holds uploads)", got)
	}
}
