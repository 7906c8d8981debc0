package delivery

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"carrier/transfer"
)

// The promises of the deliveries' edges, each pinned by a test that fails
// when it breaks (docs/RELIABILITY.md, Mutation).

// A group's top job is the one nothing needs, even when a job it needs
// sorts after it: two jobs queued in one second sort by id, and the
// id's random part may put the Drive file after its message.
func TestAdoptTopIsTheJobNothingNeeds(t *testing.T) {
	same := t0.Add(time.Minute)
	jobs := []transfer.Snapshot{
		{ID: "20261127T090100-ffffffff", URL: driveURL, Created: same, State: transfer.StateDone, Path: "/home/ann/a.mov", Label: "a.mov"},
		{ID: "20261127T090100-00000000", URL: sendURL, Created: same, State: transfer.StateDone, Needs: []string{"20261127T090100-ffffffff"}, Label: "Report"},
	}
	got := Adopt(jobs)
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1: %+v", len(got), got)
	}
	if d := got[0]; d.Kind != KindMessage || d.Label != "Report" {
		t.Errorf("adopted a %s labelled %q; want the message, Report", d.Kind, d.Label)
	}
}

// Jobs whose owner's file is lost make the delivery again under the
// owner's id: the jobs name it, so it is theirs.
func TestOfRebuildsALostDeliveryUnderItsOwnersID(t *testing.T) {
	f := transfer.Snapshot{ID: "20261127T090000-00000001", URL: driveURL, Created: t0, State: transfer.StateDone, Owner: "d-0123abcd", Path: "/home/ann/a.mov"}
	m := transfer.Snapshot{ID: "20261127T090001-00000002", URL: sendURL, Created: t0.Add(time.Second), State: transfer.StateRunning, Owner: "d-0123abcd", Needs: []string{f.ID}}
	got := Of([]transfer.Snapshot{f, m}, nil)
	if len(got) != 1 || got[0].ID != "d-0123abcd" || got[0].Kind != KindMessage || len(got[0].Members) != 2 {
		t.Fatalf("rebuilt %+v; want one message delivery d-0123abcd of two members", got)
	}
}

// Member finds a delivery's member by its job, and says when none is.
func TestMemberByItsJob(t *testing.T) {
	d := message(KindMessage, false)
	for _, m := range d.Members {
		if got, ok := d.Member(m.Job); !ok || got != m {
			t.Errorf("Member(%s) = %+v, %v; want %+v", m.Job, got, ok, m)
		}
	}
	if got, ok := d.Member("nobody"); ok || got != (Member{}) {
		t.Errorf("Member of a job not in it: %+v, %v", got, ok)
	}
}

// Missing names the attachments no longer at their paths: one deleted,
// a folder where the file was; not one still there.
func TestComposedMissingAttachments(t *testing.T) {
	dir := t.TempDir()
	here := filepath.Join(dir, "here.pdf")
	if err := os.WriteFile(here, []byte("%PDF"), 0o600); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone.pdf")
	folder := filepath.Join(dir, "folder.pdf")
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	c := &Composed{Attachments: []string{here, gone, folder}}
	if got := c.Missing(); !slices.Equal(got, []string{gone, folder}) {
		t.Errorf("Missing = %q; want %q", got, []string{gone, folder})
	}
	if got := (&Composed{Attachments: []string{here}}).Missing(); len(got) != 0 {
		t.Errorf("Missing of a file still there = %q", got)
	}
}

// A URL near a route but not on it is not named by it: a Drive file's
// own URL is no share, a permissions URL off Drive no Drive share, an
// empty {id} no id, a root shorter than the route no route.
func TestRouteNearMissesAreNotTheRoute(t *testing.T) {
	for _, c := range []struct {
		url, kind string
		role      Role
	}{
		{"https://www.googleapis.com/drive/v3/files/abc", "", RoleUpload},
		{"https://example.com/api/v1/permissions", "", RoleUpload},
		{"http://127.0.0.1:4000/upload/mirror/v1/timeline//attachments", "timeline", RoleUpload},
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/drafts//", "", RoleUpload},
		{"http://127.0.0.1:4000/gmail/v1/users/me/messages/send", "", RoleUpload},
		{"http://h/send", "", RoleUpload},
		{"http://h/", "", RoleUpload},
	} {
		r := RouteOf(c.url)
		if r.Kind != c.kind || roleOf(r) != c.role {
			t.Errorf("%s: kind %q role %q, want %q %q", c.url, r.Kind, roleOf(r), c.kind, c.role)
		}
	}
}

// Of holds the deliveries Adopt makes of the jobs with no owner (a
// journal from before deliveries), beside those of owned jobs.
func TestOfHoldsTheAdoptedDeliveries(t *testing.T) {
	adopted := Adopt(oldJournal())
	all := Of(oldJournal(), nil)
	ids := map[string]bool{}
	for _, d := range all {
		ids[d.ID] = true
	}
	for _, d := range adopted {
		if !ids[d.ID] {
			t.Errorf("Of left out the delivery adopted for %s", d.Label)
		}
	}
	if !ids["d-abc"] || len(all) != len(adopted)+1 {
		t.Errorf("Of made %d deliveries; want the %d adopted and d-abc", len(all), len(adopted))
	}
}

// Reconcile joins the jobs that name the delivery as their owner but are
// not its members (a crash between queuing them and storing it), oldest
// first and by id within one instant, each in the role its URL names;
// a member's job is not joined again, nor another delivery's.
func TestReconcileJoinsTheJobsThatNameIt(t *testing.T) {
	d := sample()
	own := func(id, url string, at time.Time, owner string) transfer.Snapshot {
		return transfer.Snapshot{ID: id, URL: url, Created: at, Owner: owner, Path: "/home/ann/" + id, State: transfer.StateQueued}
	}
	snaps := snapsOf(
		own("j1", driveURL, t0, d.ID), own("j2", shareURL, t0, d.ID), own("j3", sendURL, t0, d.ID),
		own("k9", driveURL, t0.Add(2*time.Second), d.ID),
		own("k5", shareURL, t0.Add(time.Second), d.ID),
		own("k2", driveURL, t0.Add(time.Second), d.ID),
		own("x1", driveURL, t0, "d-ffff"),
	)
	nd, f := Reconcile(d, snaps)
	want := []Member{{Job: "k2", Role: RoleDriveFile, File: "/home/ann/k2"}, {Job: "k5", Role: RoleDriveShare}, {Job: "k9", Role: RoleDriveFile, File: "/home/ann/k9"}}
	if !slices.Equal(f.Joined, want) || len(f.Gone) != 0 || !f.Changed() || f.Empty {
		t.Fatalf("found %+v; want joined %+v", f, want)
	}
	if got := nd.Members; len(got) != 6 || !slices.Equal(got[3:], want) || !slices.Equal(got[:3], d.Members) {
		t.Errorf("members %+v", got)
	}
}

// Adopt lists its deliveries in the order Of and Store.List do: oldest
// first, and by id among those of one instant.
func TestAdoptOrdersAsTheStoreDoes(t *testing.T) {
	var jobs []transfer.Snapshot
	for _, id := range []string{"20261127T090000-0000000c", "20261127T090000-0000000a", "20261127T085900-0000000f", "20261127T090000-0000000b"} {
		created := t0
		if strings.HasSuffix(id, "f") {
			created = t0.Add(-time.Minute)
		}
		jobs = append(jobs, transfer.Snapshot{ID: id, URL: postURL, Created: created, State: transfer.StateDone, Label: id[len(id)-1:]})
	}
	got := Adopt(jobs)
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.Created.After(b.Created) || a.Created.Equal(b.Created) && a.ID > b.ID {
			t.Fatalf("adopted in the order %s (%s) before %s (%s)", a.ID, a.Label, b.ID, b.Label)
		}
	}
	if len(got) != 4 || got[0].Label != "f" {
		t.Fatalf("adopted %d deliveries, the oldest %+v first", len(got), got)
	}
}

// An adopted message knows its draft whichever way it names it: a
// drafts.send job by its metadata, a draft saved by Gmail's answer, an
// update by its URL.
func TestAdoptReadsTheDraftOfEachRoute(t *testing.T) {
	for _, c := range []struct {
		name string
		job  transfer.Snapshot
		want string
	}{
		{"send", transfer.Snapshot{URL: root + "/upload/gmail/v1/users/me/drafts/send", Metadata: []byte(`{"id":"r-9"}`)}, "r-9"},
		{"saved", transfer.Snapshot{URL: draftURL, Response: &transfer.Response{Status: 200, Body: []byte(`{"id":"r-7","message":{"id":"m1"}}`)}}, "r-7"},
		{"updated", transfer.Snapshot{URL: draftURL + "/r%2F5"}, "r/5"},
		{"sent", transfer.Snapshot{URL: sendURL}, ""},
	} {
		c.job.ID, c.job.Created, c.job.State = "20261127T090000-0000000"+c.name[:1], t0, transfer.StateDone
		got := Adopt([]transfer.Snapshot{c.job})
		if len(got) != 1 || got[0].DraftID != c.want {
			t.Errorf("%s: adopted %+v; want draft %q", c.name, got, c.want)
		}
	}
}

// Of lists a journal's deliveries oldest first, stored, rebuilt and
// adopted alike, by id among those of one instant.
func TestOfListsOldestFirst(t *testing.T) {
	snaps := oldJournal()
	stored := Delivery{ID: "d-ffff", Kind: KindUpload, Created: t0.Add(-time.Hour), Members: []Member{{Job: "u9", Role: RoleUpload}}}
	snaps = append(snaps, transfer.Snapshot{ID: "u9", URL: postURL, Created: t0.Add(-time.Hour), Owner: "d-ffff", State: transfer.StateDone})
	got := Of(snaps, []Delivery{stored})
	if len(got) < 3 || got[0].ID != "d-ffff" {
		t.Fatalf("Of listed %d deliveries, the first %+v; want the stored one, the oldest", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.Created.After(b.Created) || a.Created.Equal(b.Created) && a.ID > b.ID {
			t.Fatalf("Of listed %s (%s) before %s (%s)", a.ID, a.Created, b.ID, b.Created)
		}
	}
}

// The store reconciles a delivery created at least Grace ago: one
// exactly Grace old is checked against the journal (a member gone is
// dropped), one a moment younger is left as stored.
func TestStoreReconcilesADeliveryGraceOld(t *testing.T) {
	s, _ := Open(t.TempDir())
	now := t0.Add(2 * time.Hour)
	old, young := sample(), sample()
	old.ID, young.ID = "d-01", "d-02"
	old.Created, young.Created = now.Add(-Grace), now.Add(-Grace+time.Nanosecond)
	for _, d := range []Delivery{old, young} {
		if err := s.Put(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Reconcile(snapsOf(transfer.Snapshot{ID: "j3", State: transfer.StateDone}), now); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(old.ID); len(got.Members) != 1 {
		t.Errorf("a delivery Grace old was not reconciled: %v", got.Members)
	}
	if got, _ := s.Get(young.ID); len(got.Members) != 3 {
		t.Errorf("a delivery younger than Grace was touched: %v", got.Members)
	}
}

// A batch with a picture cancelled and nothing going is cancelled, even
// when its call failed for the daily quota (which a delivery waits for,
// not a failure): nothing can end it but the person.
func TestStatusCancelledMemberWithNothingGoing(t *testing.T) {
	st := Status(photos(true), snapsOf(
		snap("p1", photoURL, C, 50, 0), snap("p2", photoURL, D, 50, 50),
		snap("c1", itemsURL, F, 0, 0, failure(transfer.FailDailyQuota, 429))))
	if st.Phase != PhaseCancelled || st.Member != nil {
		t.Errorf("phase %s, member %+v; want cancelled", st.Phase, st.Member)
	}
}
