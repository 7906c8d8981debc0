package delivery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"carrier/compose"
	"carrier/transfer"
)

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func sample() Delivery {
	return Delivery{ID: "d-0123abcd", Kind: KindMessage, Created: t0, Account: "ann@example.com", Label: "Report · to bob@example.com",
		Members: []Member{
			{Job: "j1", Role: RoleDriveFile, File: "/home/ann/big.mov"},
			{Job: "j2", Role: RoleDriveShare},
			{Job: "j3", Role: RoleMessage},
		},
		DraftID: "r-42", QuotaReset: t0.Add(15 * time.Hour),
		Composed: &Composed{To: []string{"bob@example.com"}, Subject: "Report", Text: "Here.", Attachments: []string{"/home/ann/big.mov"},
			Method: compose.Send, Choose: map[string]bool{"/home/ann/big.mov": true}, Share: ShareAnyone, Expiry: 24 * time.Hour},
	}
}

func TestStoreKeepsADeliveryWholeAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deliveries")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := sample()
	if err := s.Put(d); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, d)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(filepath.Join(dir, d.ID+".json"))
		di, _ := os.Stat(dir)
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("file %v, folder %v: want 0600 and 0700", fi.Mode().Perm(), di.Mode().Perm())
		}
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].ID != d.ID {
		t.Fatalf("List = %v, %v", list, err)
	}
	if err := s.Delete(d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(d.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(d.ID); err != nil {
		t.Fatalf("a second Delete: %v", err)
	}
}

// The window and the CLI each open the folder: what one puts, the other
// reads at its next Get or List, whole.
func TestTwoStoresOnOneFolderSeeEachOthersWrites(t *testing.T) {
	dir := t.TempDir()
	a, _ := Open(dir)
	b, _ := Open(dir)
	d := sample()
	if err := a.Put(d); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(d.ID); err != nil || got.Label != d.Label {
		t.Fatalf("the other store reads %+v, %v", got, err)
	}
	d.Members = d.Members[2:]
	d.QuotaReset = time.Time{}
	if err := a.Put(d); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(d.ID)
	if err != nil || len(got.Members) != 1 || !got.QuotaReset.IsZero() {
		t.Fatalf("the other store reads the old delivery: %+v, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the folder holds %d files, want the delivery alone", len(entries))
	}
}

func TestUnmarshalReadsKnownVersionsStrictly(t *testing.T) {
	good, err := Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unmarshal(good); err != nil {
		t.Fatalf("its own form: %v", err)
	}
	edit := func(from, to string) []byte {
		if !strings.Contains(string(good), from) {
			t.Fatalf("%q is not in %s", from, good)
		}
		return []byte(strings.Replace(string(good), from, to, 1))
	}
	for name, data := range map[string][]byte{
		"unknown field":  edit(`"kind":`, `"colour": "red", "kind":`),
		"unknown kind":   edit(`"kind":"message"`, `"kind":"parcel"`),
		"unknown role":   edit(`"role":"drive-share"`, `"role":"courier"`),
		"bad id":         edit(`"id":"d-0123abcd"`, `"id":"../../etc/passwd"`),
		"no version":     edit(`"version":1,`, ``),
		"trailing value": append(append([]byte{}, good...), []byte(` {"version": 1}`)...),
		"a job twice":    edit(`"job":"j2"`, `"job":"j1"`),
		"cut short":      good[:len(good)/2],
	} {
		if _, err := Unmarshal(data); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	if _, err := Unmarshal(edit(`"version":1`, `"version":2`)); !errors.Is(err, ErrNewer) {
		t.Errorf("a newer version: %v, want ErrNewer", err)
	}
}

func TestStoreRefusesIDsThatAreNotDeliveries(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	d := sample()
	d.ID = "../escaped"
	if err := s.Put(d); !errors.Is(err, ErrBadID) {
		t.Fatalf("Put: %v, want ErrBadID", err)
	}
	for _, id := range []string{"../escaped", "d-", "d-XYZ", "d-12/34", ""} {
		if _, err := s.Get(id); !errors.Is(err, ErrBadID) {
			t.Errorf("Get(%q): %v, want ErrBadID", id, err)
		}
		if err := s.Delete(id); !errors.Is(err, ErrBadID) {
			t.Errorf("Delete(%q): %v, want ErrBadID", id, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("something was written beside the folder: %v", entries)
	}
	if id := NewID(); checkID(id) != nil || id == NewID() {
		t.Errorf("NewID %q is not a fresh delivery id", id)
	}
}

// A write in flight is no delivery, and a damaged file costs itself only:
// it is named, left as it is, and the others are read.
func TestListSkipsWritesInFlightAndNamesDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	d := sample()
	s.Put(d)
	os.WriteFile(filepath.Join(dir, ".d-0123abcd.json.77.tmp"), []byte(`{"ver`), 0o600)
	bad := filepath.Join(dir, "d-beef.json")
	os.WriteFile(bad, []byte(`{"version": 1, "id": "d-beef", "kind": "message", "memb`), 0o600)
	list, err := s.List()
	if len(list) != 1 || list[0].ID != d.ID {
		t.Fatalf("List = %v", list)
	}
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("List's error %v does not name %s", err, bad)
	}
	if _, serr := os.Stat(bad); serr != nil {
		t.Fatalf("the damaged file went: %v", serr)
	}
}

func snapsOf(ss ...transfer.Snapshot) map[string]transfer.Snapshot {
	m := map[string]transfer.Snapshot{}
	for _, s := range ss {
		m[s.ID] = s
	}
	return m
}

func TestReconcileDropsMembersWhoseJobsAreGone(t *testing.T) {
	d := sample()
	nd, f := Reconcile(d, snapsOf(transfer.Snapshot{ID: "j3", State: transfer.StateDone}))
	if len(nd.Members) != 1 || nd.Members[0].Job != "j3" || f.Empty || !f.Changed() {
		t.Fatalf("kept %v, found %+v", nd.Members, f)
	}
	if len(f.Gone) != 2 || f.Gone[0].Job != "j1" || f.Gone[1].Job != "j2" {
		t.Fatalf("gone %v, want j1 and j2", f.Gone)
	}
	if len(d.Members) != 3 {
		t.Fatalf("the delivery given was changed: %v", d.Members)
	}
	nd, f = Reconcile(d, snapsOf(transfer.Snapshot{ID: "other"}))
	if !f.Empty || len(nd.Members) != 0 {
		t.Fatalf("no job left: %+v, %v", f, nd.Members)
	}
	nd, f = Reconcile(d, snapsOf(transfer.Snapshot{ID: "j1"}, transfer.Snapshot{ID: "j2"}, transfer.Snapshot{ID: "j3"}))
	if f.Changed() || f.Empty || len(nd.Members) != 3 {
		t.Fatalf("every job there: %+v, %v", f, nd.Members)
	}
}

// The store's reconcile leaves a young delivery alone (another Carrier may
// be queuing its jobs), rewrites one that lost members and removes one
// with none left.
func TestStoreReconcileWaitsForAYoungDelivery(t *testing.T) {
	s, _ := Open(t.TempDir())
	young, changed, empty := sample(), sample(), sample()
	young.ID, changed.ID, empty.ID = "d-01", "d-02", "d-03"
	now := t0.Add(2 * time.Hour)
	young.Created = now.Add(-time.Minute)
	for _, d := range []Delivery{young, changed, empty} {
		if err := s.Put(d); err != nil {
			t.Fatal(err)
		}
	}
	snaps := snapsOf(transfer.Snapshot{ID: "j3", State: transfer.StateDone})
	empty.Members = []Member{{Job: "j9", Role: RoleUpload}}
	s.Put(empty)
	left, err := s.Reconcile(snaps, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 {
		t.Fatalf("left %v, want the young and the changed", left)
	}
	if got, _ := s.Get(young.ID); len(got.Members) != 3 {
		t.Errorf("the young delivery was touched: %v", got.Members)
	}
	if got, _ := s.Get(changed.ID); len(got.Members) != 1 {
		t.Errorf("the changed delivery was not stored: %v", got.Members)
	}
	if _, err := s.Get(empty.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the empty delivery is still there: %v", err)
	}
}

// A delivery a newer Carrier stored is neither read as this one's nor
// written over.
func TestStoreLeavesANewerCarriersDeliveryAlone(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	d := sample()
	newer := []byte(`{"version": 2, "id": "d-0123abcd", "kind": "message", "members": [], "sendLater": "2027-01-01T00:00:00Z"}`)
	path := filepath.Join(dir, d.ID+".json")
	if err := os.WriteFile(path, newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(d.ID); !errors.Is(err, ErrNewer) {
		t.Fatalf("Get: %v, want ErrNewer", err)
	}
	if err := s.Put(d); !errors.Is(err, ErrNewer) {
		t.Fatalf("Put over it: %v, want ErrNewer", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(newer) {
		t.Fatalf("the newer delivery was written over: %s", got)
	}
}

// One Carrier rewrites a delivery while another reads it: every read
// finds one whole delivery, the old or the new, never a part or nothing.
func TestAReaderNeverSeesAHalfWrittenDelivery(t *testing.T) {
	dir := t.TempDir()
	w, _ := Open(dir)
	r, _ := Open(dir)
	small, big := sample(), sample()
	for i := range 400 {
		big.Members = append(big.Members, Member{Job: fmt.Sprintf("extra%d", i), Role: RolePhoto, File: strings.Repeat("/p", 40)})
	}
	if err := w.Put(small); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 60 {
			d := small
			if i%2 == 0 {
				d = big
			}
			if err := w.Put(d); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	reads := 0
	for {
		select {
		case <-done:
			if reads == 0 {
				t.Fatal("no read happened while the writes went on")
			}
			return
		default:
		}
		d, err := r.Get(small.ID)
		if n := len(d.Members); err == nil && n != len(small.Members) && n != len(big.Members) {
			err = fmt.Errorf("%d members, a delivery never stored", n)
		}
		if err != nil {
			<-done
			t.Fatalf("read %d: %v", reads, err)
		}
		reads++
		if runtime.GOOS == "windows" {
			// Windows refuses a rename over a file another handle has
			// open: a reader that never pauses would starve the writer's
			// retries (platform.DurableRename), as no real reader does.
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// ReconcileJobs, given the journal's jobs one at a time (has, and the
// jobs a delivery owns), reconciles as Reconcile over their snapshots: the
// members gone are dropped, the owned jobs not members join oldest first,
// a member is never doubled.
func TestReconcileJobsAsReconcile(t *testing.T) {
	d := sample()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	snaps := snapsOf(
		transfer.Snapshot{ID: "j1", Owner: d.ID},
		transfer.Snapshot{ID: "j3"},
		transfer.Snapshot{ID: "late", Owner: d.ID, URL: "https://photoslibrary.googleapis.com/v1/uploads", Path: "/p/b.jpg", Created: t0.Add(time.Second)},
		transfer.Snapshot{ID: "early", Owner: d.ID, URL: "https://photoslibrary.googleapis.com/v1/uploads", Path: "/p/a.jpg", Created: t0},
		transfer.Snapshot{ID: "another's", Owner: "someone else"},
	)
	want, wantF := Reconcile(d, snaps)
	var owned []Owned
	for _, s := range snaps {
		if s.Owner == d.ID {
			owned = append(owned, Owned{ID: s.ID, URL: s.URL, Path: s.Path, Created: s.Created})
		}
	}
	got, f := ReconcileJobs(d, func(id string) bool { _, ok := snaps[id]; return ok }, owned)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(f, wantF) {
		t.Fatalf("ReconcileJobs: %v %+v\nReconcile: %v %+v", got.Members, f, want.Members, wantF)
	}
	var ids []string
	for _, m := range got.Members {
		ids = append(ids, m.Job)
	}
	if fmt.Sprint(ids) != "[j1 j3 early late]" || len(f.Gone) != 1 || f.Gone[0].Job != "j2" || len(f.Joined) != 2 {
		t.Fatalf("members %v, found %+v; want j1 j3 early late, j2 gone, two joined", ids, f)
	}
}
