package ui

import (
	"slices"
	"testing"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// The tray's Pause all and Resume all go by delivery, as each row's
// buttons do: a message's own job moves before its Drive file, a job
// alone gets the verb, and a job that ended is left as it is.
func TestPauseAllAndResumeAllGoByDelivery(t *testing.T) {
	now := time.Now()
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"f":    {ID: "f", Owner: "d-1", Path: "/tmp/big.mov", URL: "http://127.0.0.1:9/upload/drive/v3/files", Size: 100, State: transfer.StateRunning, Created: now},
		"m":    {ID: "m", Owner: "d-1", Label: "Minutes · to zoe@example.com", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 10, State: transfer.StateWaiting, Needs: []string{"f"}, Created: now.Add(time.Second)},
		"post": {ID: "post", Path: "/tmp/cat.jpg", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateRunning, Created: now.Add(2 * time.Second)},
		"sent": {ID: "sent", Path: "/tmp/dog.jpg", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateDone, Created: now.Add(3 * time.Second)},
	}}
	up := &storedUploads{fakeUploads: fu, dels: []delivery.Delivery{{ID: "d-1", Kind: delivery.KindMessage, Created: now, Label: "Minutes · to zoe@example.com", Members: []delivery.Member{
		{Job: "f", Role: delivery.RoleDriveFile, File: "/tmp/big.mov"},
		{Job: "m", Role: delivery.RoleMessage},
	}}}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads = up })
	h.until("the message's delivery to be known", func() bool { return h.u.transfers.deliveryOf("f") == "d-1" })
	calls := func() []string {
		fu.mu.Lock()
		defer fu.mu.Unlock()
		return slices.Clone(fu.calls)
	}
	check := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v (in any order of deliveries)", what, got, want)
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
		if m, f := slices.Index(got, want[0]), slices.Index(got, want[1]); m > f {
			t.Fatalf("%s: %v: the message's job after its file's", what, got)
		}
	}
	h.u.PauseAll()
	check("Pause all", calls(), "pause m", "pause f", "pause post")

	fu.mu.Lock()
	fu.calls = nil
	for _, id := range []string{"f", "m", "post"} {
		s := fu.recs[id]
		s.State = transfer.StatePaused
		fu.recs[id] = s
	}
	fu.mu.Unlock()
	h.u.ResumeAll()
	h.until("Resume all to reach the queue", func() bool { return len(calls()) >= 3 })
	check("Resume all", calls(), "resume m", "resume f", "resume post")
}
