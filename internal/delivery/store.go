package delivery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"carrier/internal/platform"
	"carrier/transfer"
)

// Store keeps deliveries, one file per delivery (ID.json) in a private
// folder. Every Put replaces a file whole and durably (platform.WriteFile:
// written, synced, renamed, the folder synced), so a reader in another
// process finds the old delivery or the new one, never a part; nothing is
// cached, so Get and List read what the folder holds now. Two processes
// putting one delivery at once: the last write wins, whole.
type Store struct {
	dir string
}

// Dir is the folder of the deliveries beside the journal of stateDir.
func Dir(stateDir string) string { return filepath.Join(stateDir, "deliveries") }

// Open is the store in dir, made (0700) if there is none.
func Open(dir string) (*Store, error) {
	if err := platform.MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("cannot open the deliveries folder: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".json") }

// ErrNotFound says the store holds no delivery of that id.
var ErrNotFound = errors.New("no such delivery")

// Put stores d, replacing what was stored under its id. A delivery that
// fails Check is refused and nothing is written; so is one a newer
// Carrier stored under that id (ErrNewer), which this one would cut down
// to the fields it knows.
func (s *Store) Put(d Delivery) error {
	data, err := Marshal(d)
	if err != nil {
		return err
	}
	if old, err := platform.ReadFile(s.path(d.ID)); err == nil {
		if _, err := Unmarshal(old); errors.Is(err, ErrNewer) {
			return fmt.Errorf("cannot store delivery %s: %w", d.ID, err)
		}
	}
	if err := platform.WriteFile(s.path(d.ID), data); err != nil {
		return fmt.Errorf("cannot store delivery %s: %w", d.ID, err)
	}
	return nil
}

// Get reads delivery id from the folder.
func (s *Store) Get(id string) (Delivery, error) {
	if err := checkID(id); err != nil {
		return Delivery{}, err
	}
	data, err := platform.ReadFile(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return Delivery{}, fmt.Errorf("delivery %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("cannot read delivery %s: %w", id, err)
	}
	d, err := Unmarshal(data)
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery %s (%s): %w", id, s.path(id), err)
	}
	if d.ID != id {
		return Delivery{}, fmt.Errorf("delivery %s (%s): the file holds delivery %s", id, s.path(id), d.ID)
	}
	return d, nil
}

// Delete removes delivery id, durably, and what is kept beside it; one
// already gone is no error.
func (s *Store) Delete(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	// What a Photos batch keeps beside its delivery (its files' stamps,
	// internal/app/photos' photosstamps.go) goes with it.
	platform.Remove(filepath.Join(s.dir, id+".stamps"))
	if err := platform.Remove(s.path(id)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cannot remove delivery %s: %w", id, err)
	}
	return platform.SyncDir(s.dir)
}

// List reads every delivery in the folder, oldest first. A file that
// cannot be read is left as it is and named in the error, beside the
// deliveries that could be read; a write in flight (a temporary file) is
// not a delivery.
func (s *Store) List() ([]Delivery, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("cannot list the deliveries: %w", err)
	}
	var out []Delivery
	var errs []error
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		d, err := s.Get(id)
		if errors.Is(err, ErrNotFound) {
			continue // removed since the folder was read
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, errors.Join(errs...)
}

// Found is what Reconcile found of a delivery against the journal.
type Found struct {
	// Gone are the members whose jobs the journal no longer has
	// (forgotten, or never recorded): Reconcile dropped them.
	Gone []Member
	// Joined are the jobs that name the delivery as their owner but were
	// not among its members (a crash between queuing them and storing
	// the delivery with them, or a job added to it later by another
	// process): Reconcile added them.
	Joined []Member
	// Empty says none of the delivery's jobs remain: it may be removed.
	Empty bool
}

// Changed reports whether Reconcile changed the delivery.
func (f Found) Changed() bool { return len(f.Gone) > 0 || len(f.Joined) > 0 }

// Reconcile checks d against snaps, the journal's jobs by id (finished
// ones too), as it stands at an entry (a start, a list): the members whose
// jobs are gone are dropped, the jobs that name it as their owner are
// members (Joined), and a delivery none of whose jobs remain is Empty. snaps must be read after the delivery's jobs were queued: a job
// not yet recorded reads as gone.
func Reconcile(d Delivery, snaps map[string]transfer.Snapshot) (Delivery, Found) {
	var owned []Owned
	for _, j := range snaps {
		if j.Owner == d.ID {
			owned = append(owned, Owned{ID: j.ID, URL: j.URL, Path: j.Path, Created: j.Created})
		}
	}
	return ReconcileJobs(d, func(id string) bool { _, ok := snaps[id]; return ok }, owned)
}

// Owned is a job that names a delivery as its owner, as Reconcile reads
// it.
type Owned struct {
	ID, URL, Path string
	Created       time.Time
}

// ReconcileJobs is Reconcile for a caller that looks at the journal's
// jobs one at a time rather than holding them as snapshots (a camera
// roll's delivery is 20,400 of them): has reports whether the journal
// has a job, and owned are the jobs that name d as their owner (sorted in
// place: the caller gives them up).
func ReconcileJobs(d Delivery, has func(job string) bool, owned []Owned) (Delivery, Found) {
	var f Found
	kept := make([]Member, 0, len(d.Members)+len(owned))
	isKept := make(map[string]bool, len(d.Members))
	for _, m := range d.Members {
		if has(m.Job) {
			kept = append(kept, m)
			isKept[m.Job] = true
		} else {
			f.Gone = append(f.Gone, m)
		}
	}
	// The jobs that join are sorted where they are (owned is the
	// caller's to give), and Found's Joined is the tail of the members,
	// not a copy: a camera roll's 20,400 are otherwise held three times.
	joined := owned[:0]
	for _, j := range owned {
		if !isKept[j.ID] {
			joined = append(joined, j)
		}
	}
	sort.Slice(joined, func(a, b int) bool {
		if !joined[a].Created.Equal(joined[b].Created) {
			return joined[a].Created.Before(joined[b].Created)
		}
		return joined[a].ID < joined[b].ID
	})
	n := len(kept)
	for _, j := range joined {
		kept = append(kept, MemberOf(j.ID, j.URL, j.Path))
	}
	if len(kept) > n {
		f.Joined = kept[n:len(kept):len(kept)]
	}
	d.Members = kept
	f.Empty = len(kept) == 0
	return d, f
}

// Grace is how old a delivery must be before Store.Reconcile touches it:
// another Carrier sharing the folder may be between storing a delivery
// and queuing its jobs (as the spool's sweep waits for a message's job).
const Grace = time.Hour

// Reconcile checks every stored delivery created at least Grace before
// now against snaps (Reconcile), stores those that changed and removes
// those that are empty, and returns the deliveries that remain (younger
// ones as stored). What cannot be read or written is named in the error;
// the rest is done.
func (s *Store) Reconcile(snaps map[string]transfer.Snapshot, now time.Time) ([]Delivery, error) {
	all, err := s.List()
	errs := []error{err}
	var out []Delivery
	for _, d := range all {
		if now.Sub(d.Created) < Grace {
			out = append(out, d)
			continue
		}
		nd, f := Reconcile(d, snaps)
		switch {
		case f.Empty:
			errs = append(errs, s.Delete(d.ID))
			continue
		case f.Changed():
			errs = append(errs, s.Put(nd))
		}
		out = append(out, nd)
	}
	return out, errors.Join(errs...)
}
