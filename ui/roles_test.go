package ui

import (
	"strings"
	"testing"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// storedUploads is fakeUploads whose deliveries are the stored ones, as
// the app's Queue gives them: each names its members' roles.
type storedUploads struct {
	*fakeUploads
	dels []delivery.Delivery
}

func (f *storedUploads) Deliveries() ([]delivery.Delivery, error) { return f.dels, nil }

// A job's role is the one its stored delivery gives it, not a reading of
// its URL: here a message's file went up at an address on no route of
// the table, which alone reads as a plain upload of its own. The tray
// counts the message, not its file; a job of a journal from before
// deliveries (no delivery stored) is still read off its URL.
func TestJobRolesComeFromTheStoredDelivery(t *testing.T) {
	now := time.Now()
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"f":   {ID: "f", Owner: "d-1", Path: "/tmp/big.mov", URL: "http://127.0.0.1:9/elsewhere/files", Size: 100, State: transfer.StateRunning, Created: now},
		"m":   {ID: "m", Owner: "d-1", Label: "Minutes · to zoe@example.com", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 10, State: transfer.StateQueued, Needs: []string{"f"}, Created: now.Add(time.Second)},
		"old": {ID: "old", Path: "/tmp/cat.jpg", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateRunning, Created: now.Add(2 * time.Second)},
	}}
	up := &storedUploads{fakeUploads: fu, dels: []delivery.Delivery{{ID: "d-1", Kind: delivery.KindMessage, Created: now, Label: "Minutes · to zoe@example.com", Members: []delivery.Member{
		{Job: "f", Role: delivery.RoleDriveFile, File: "/tmp/big.mov"},
		{Job: "m", Role: delivery.RoleMessage},
	}}}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads = up })
	s := h.u.transfers
	file, msg, old := fu.recs["f"], fu.recs["m"], fu.recs["old"]
	if r := guessRole(file); r != delivery.RoleUpload {
		t.Fatalf("the file's URL alone reads as %q: the test needs a URL that misleads", r)
	}
	for _, c := range []struct {
		snap transfer.Snapshot
		want delivery.Role
	}{{file, delivery.RoleDriveFile}, {msg, delivery.RoleMessage}, {old, delivery.RoleUpload}} {
		if r := s.roleOf(c.snap); r != c.want {
			t.Errorf("%s: role %q, want %q", c.snap.ID, r, c.want)
		}
		if r := s.roles()(c.snap); r != c.want {
			t.Errorf("%s among many: role %q, want %q", c.snap.ID, r, c.want)
		}
	}
	snaps := s.snapshots()
	if got := trayStatus(snaps, s.roles()); !strings.HasPrefix(got, "2 uploads") {
		t.Errorf("the tray counts the message and the post, not the message's file: %q", got)
	}
	if got := TrayStatus(snaps); !strings.HasPrefix(got, "3 uploads") {
		t.Errorf("bare snapshots, read off their URLs alone: %q", got)
	}
	// A failure's words name the changed file of a Drive upload, never a
	// message's spool, by the role the delivery gives.
	changed := file
	changed.State, changed.Failure = transfer.StateFailed, &transfer.Failure{Code: transfer.FailSourceChanged, Reason: transfer.ChangedSize}
	if words := failureWordsAs(changed, s.roleOf(changed)); !strings.Contains(words, "big.mov") {
		t.Errorf("the Drive file's failure does not name it: %q", words)
	}
	if words := failureWordsAs(changed, delivery.RoleMessage); strings.Contains(words, "big.mov") {
		t.Errorf("a message's failure names its spool: %q", words)
	}
}
