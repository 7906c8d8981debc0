package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/transfer"
)

// The question before a cancel names the choice not to cancel as what it
// keeps: a failed upload is kept (for Retry or Reopen), not "kept
// uploading"; a paused one stays paused; a parked one waits; only one
// that moves keeps uploading. A message waiting on a failed file is a
// failed one.
func TestCancelKeepFitsTheState(t *testing.T) {
	now := time.Now()
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"failed":  {ID: "failed", Path: "/tmp/a.mov", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateFailed, Error: "refused", Created: now},
		"paused":  {ID: "paused", Path: "/tmp/b.mov", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StatePaused, Created: now.Add(time.Second)},
		"parked":  {ID: "parked", Path: "/tmp/c.mov", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateSignIn, Account: "zoe@example.com", Created: now.Add(2 * time.Second)},
		"running": {ID: "running", Path: "/tmp/d.mov", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateRunning, Created: now.Add(3 * time.Second)},
		"held":    {ID: "held", Path: "/tmp/e.mov", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateQueued, Held: transfer.HeldMetered, Created: now.Add(4 * time.Second)},
		"file":    {ID: "file", Path: "/tmp/f.mov", URL: "http://127.0.0.1:9/upload/drive/v3/files", Size: 10, State: transfer.StateFailed, Error: "refused", Created: now.Add(5 * time.Second)},
		"msg":     {ID: "msg", Path: "/tmp/m.eml", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 10, State: transfer.StateWaiting, Needs: []string{"file"}, Label: "Film · to zoe@example.com", Created: now.Add(6 * time.Second)},
	}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads = fu })
	for id, want := range map[string]string{
		"failed":  "Keep it",
		"paused":  "Keep it paused",
		"parked":  "Keep it waiting",
		"running": "Keep uploading",
		"held":    "Keep it paused",
		"msg":     "Keep it",
	} {
		row := h.u.transfers.rowOf(id)
		if row == nil {
			t.Errorf("%s: no row", id)
			continue
		}
		test.Tap(row.cancel)
		a := h.u.transfers.cancelling
		if a == nil {
			t.Errorf("%s: Cancel did not ask", id)
			continue
		}
		if a.keep.Text != want {
			t.Errorf("%s: the choice not to cancel reads %q, want %q", id, a.keep.Text, want)
		}
		test.Tap(a.keep)
		if st := fu.recs[id].State; st == transfer.StateCancelled {
			t.Errorf("%s: cancelled by the keep button", id)
		}
	}
}

// A hold's words come from the catalogue: in Persian, a job held on a
// metered connection does not read in English.
func TestHeldWordsInPersian(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	useLanguage("fa")
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
	fa := readCatalogue(t, "fa")
	if got, want := stateWords(jobView{snap: transfer.Snapshot{State: transfer.StateQueued, Held: transfer.HeldMetered}}, time.Now()), fa["held.metered"].(string); got != want {
		t.Errorf("held on a metered connection: %q, want %q", got, want)
	}
	if got, want := heldWords("Offline: waiting for the network"), fa["held.offline"].(string); got != want {
		t.Errorf("offline: %q, want %q", got, want)
	}
}
