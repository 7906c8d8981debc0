package transfer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"carrier/internal/platform"
)

// Journal keeps one JSON file per job in <state dir>/jobs.
//
// Files rather than bbolt: the desktop app, `carrier upload` and `carrier
// resume` may run at once on the same journal, and bbolt locks its whole
// database to one process. With a file per job, a process locks only the
// jobs it works (Lock), each write is one atomic rename, and a damaged
// record costs one job, not the journal.
type Journal struct {
	dir string

	// reader reads its files; see recordReader.
	reader recordReader

	mu      sync.Mutex
	syncErr error // the last folder sync's failure; see syncFolder
}

// ErrBusy is returned by Journal.Lock when another worker (in this
// process or another) holds the job.
var ErrBusy = errors.New("the job is being worked by another Carrier process or window")

// BusyError is ErrBusy for one job: ResumeJournal's error carries one for
// each job it found held, so a front end can name them.
type BusyError struct{ ID string }

func (e *BusyError) Error() string { return fmt.Sprintf("job %s: %v", e.ID, ErrBusy) }
func (e *BusyError) Unwrap() error { return ErrBusy }

// BusyJobs splits an error of ResumeJournal into the jobs another worker
// holds and the rest (nil when nothing else went wrong).
func BusyJobs(err error) (ids []string, rest error) {
	var others []error
	var walk func(error)
	walk = func(err error) {
		var b *BusyError
		switch e := err.(type) {
		case nil:
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		default:
			if errors.As(err, &b) {
				ids = append(ids, b.ID)
				return
			}
			others = append(others, err)
		}
	}
	walk(err)
	return ids, errors.Join(others...)
}

// OpenJournal opens (making it if needed) the journal under stateDir. The
// folder is made private: records hold session URIs, which are credentials.
func OpenJournal(stateDir string) (*Journal, error) {
	dir := filepath.Join(stateDir, "jobs")
	if err := platform.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot make the upload journal folder: %w", err)
	}
	// 0700 on Unix; on Windows an owner-only access list, which the
	// records made in it inherit.
	if err := platform.Private(dir); err != nil {
		return nil, fmt.Errorf("cannot make the upload journal folder private: %w", err)
	}
	return &Journal{dir: dir, reader: systemRecordReader()}, nil
}

// Dir is the folder holding the records.
func (j *Journal) Dir() string { return j.dir }

func (j *Journal) path(id, ext string) string { return filepath.Join(j.dir, id+ext) }

// Save writes r durably: a temporary file is written and synced, renamed
// over the record, and the folder synced (on Windows, which refuses to
// sync a folder, the rename is written through instead), so a crash leaves
// either the old record or the new one, never a torn one.
//
// Save fails only when the record was not put in place: a job whose Save
// failed is never read back and sent later. Once the rename stands, a
// failing folder sync is not reported (the record is written; only its
// survival of a power cut right now is in doubt).
func (j *Journal) Save(r *Record) error {
	data, err := EncodeRecord(r)
	if err != nil {
		return err
	}
	tmp, err := platform.CreateTemp(j.dir, "."+r.ID+".*.tmp") // CreateTemp makes it 0600
	if err != nil {
		return fmt.Errorf("cannot write the upload journal: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("cannot write the upload journal (disk full?): %w", err)
	}
	if err := platform.SyncFile(tmp); err != nil {
		return fmt.Errorf("cannot write the upload journal: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot write the upload journal: %w", err)
	}
	if err := renameRecord(tmp.Name(), j.path(r.ID, ".json")); err != nil {
		// A rename can report failure after the move was made (a
		// write-through rename whose flush failed, a network drive). The
		// record then stands and will be read at the next start, so the
		// caller must not be told it failed.
		_, terr := os.Lstat(tmp.Name())
		_, ferr := os.Lstat(j.path(r.ID, ".json"))
		if !errors.Is(terr, fs.ErrNotExist) || ferr != nil {
			return fmt.Errorf("cannot write the upload journal: %w", err)
		}
	}
	done = true
	j.syncFolder()
	return nil
}

// Seams of the durability tests: the two steps after the record is written.
// renameRecord moves a synced temporary file over the record, durably
// where the system can (platform.DurableRename); syncJournalDir makes the
// rename itself durable where the system needs the folder synced.
var (
	renameRecord   = platform.DurableRename
	syncJournalDir = platform.SyncDir
)

// syncFolder syncs the folder once a rename stands. Its failure is not
// the caller's: the record is in place, a later start reads it and sends
// the job, so reporting "failed" now would have a job believed failed go
// out later. The error is kept (dirSyncError) and the next write tries
// again.
func (j *Journal) syncFolder() {
	err := syncJournalDir(j.dir)
	j.mu.Lock()
	j.syncErr = err
	j.mu.Unlock()
}

// dirSyncError is the last folder sync's failure, nil once one succeeds.
func (j *Journal) dirSyncError() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.syncErr
}

// progress is what SaveProgress keeps between durable saves.
type progress struct {
	Session   string    `json:"session,omitempty"`
	Confirmed int64     `json:"confirmed"`
	Hashed    int64     `json:"hashed"`
	HashState []byte    `json:"hashState,omitempty"`
	Updated   time.Time `json:"updated"`
}

// SaveProgress writes r's progress (offset and hash state) beside its
// record, atomically but without fsync: cheap enough for every chunk. A
// crash of the machine can lose it, or tear it, and Load then falls back
// to the record, which is always whole.
func (j *Journal) SaveProgress(r *Record) error {
	data, err := json.Marshal(progress{Session: r.Session, Confirmed: r.Confirmed, Hashed: r.Hashed, HashState: r.HashState, Updated: r.Updated})
	if err != nil {
		return err
	}
	tmp, err := platform.CreateTemp(j.dir, "."+r.ID+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write the upload journal: %w", err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = platform.Rename(tmp.Name(), j.path(r.ID, ".progress"))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cannot write the upload journal: %w", werr)
	}
	return nil
}

// mergeProgress applies a progress file newer than the record, when it
// belongs to the same session and makes sense for it. Newer is a later
// time, or the same time and further on: Windows' clock moves in steps of
// up to 15.6 ms, within which a fast link confirms several chunks.
func (j *Journal) mergeProgress(r *Record) {
	data, err := j.reader.readRecord(j.path(r.ID, ".progress"))
	if err != nil {
		return
	}
	var p progress
	if json.Unmarshal(data, &p) != nil || p.Session != r.Session {
		return
	}
	if !p.Updated.After(r.Updated) && !(p.Updated.Equal(r.Updated) && p.Confirmed > r.Confirmed) {
		return
	}
	next := *r
	next.Confirmed, next.Updated = p.Confirmed, p.Updated
	if p.Hashed > r.Hashed && p.HashState != nil {
		next.Hashed, next.HashState = p.Hashed, p.HashState
	}
	if next.validate() == nil {
		*r = next
	}
}

// Load reads one record: the folder's, else the archive's (archive.go).
func (j *Journal) Load(id string) (*Record, error) {
	r, err := j.loadFile(id)
	if errors.Is(err, fs.ErrNotExist) {
		if a, ok := j.loadArchived(id); ok {
			return a, nil
		}
	}
	return r, err
}

// LoadMany is Load of each of ids, by id: those the folder no longer
// holds are looked for in the archive in one read of it, not one read
// each (a camera roll's 400 batchCreate calls, archived by another
// Carrier's start). An id found in neither is left out; the error is the
// first other failure to read one.
func (j *Journal) LoadMany(ids []string) (map[string]*Record, error) {
	out := make(map[string]*Record, len(ids))
	missing := map[string]bool{}
	var first error
	for _, id := range ids {
		r, err := j.loadFile(id)
		switch {
		case err == nil:
			out[id] = r
		case errors.Is(err, fs.ErrNotExist):
			missing[id] = true
		case first == nil:
			first = err
		}
	}
	if len(missing) == 0 {
		return out, first
	}
	recs, _ := j.readArchive(func(id string) bool { return !missing[id] })
	for id, r := range recs {
		out[id] = r
	}
	return out, first
}

// loadFile reads one record from the folder.
func (j *Journal) loadFile(id string) (*Record, error) {
	if !idPattern.MatchString(id) {
		return nil, fmt.Errorf("%q is not a job id", id)
	}
	data, err := j.reader.readRecord(j.path(id, ".json"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no job %q in the journal %s: %w", id, j.dir, err)
		}
		return nil, fmt.Errorf("cannot read job %q: %w", id, err)
	}
	r, err := DecodeRecord(data)
	if err != nil {
		return nil, err
	}
	if r.ID != id {
		return nil, fmt.Errorf("job file %s holds job %q", j.path(id, ".json"), r.ID)
	}
	j.mergeProgress(r)
	return r, nil
}

// List reads every record, the archive's (archive.go) as well, oldest
// first, each job once. Records that cannot be read are left out and
// reported together in the error; the others are returned.
func (j *Journal) List() ([]*Record, error) { return j.listSkipping(nil) }

// listSkipping is List without the jobs skip names (nil: none), whose
// records are not even read: a queue's History has those in memory.
func (j *Journal) listSkipping(skip func(id string) bool) ([]*Record, error) {
	archived, aerr := j.readArchive(skip)
	recs, gone, err := j.readFolder(skip)
	if len(gone) > 0 {
		// Records that left the folder while it was read: a compaction
		// moved them after the archive was read, so it is read again.
		archived, aerr = j.readArchive(skip)
	}
	inFolder := make(map[string]bool, len(recs))
	for _, r := range recs {
		inFolder[r.ID] = true
	}
	for id, r := range archived {
		if !inFolder[id] {
			recs = append(recs, r)
		}
	}
	sortRecords(recs)
	return recs, errors.Join(aerr, err)
}

// walkSkipping hands fn every record List would return but those skip
// names, one at a time and in no order: the folder's first (held until
// the archive is read: they stand over its lines, and they are the few
// that may still move), then the archive's (walkArchive).
func (j *Journal) walkSkipping(skip func(id string) bool, fn func(*Record)) error {
	recs, _, err := j.readFolder(skip)
	inFolder := make(map[string]bool, len(recs))
	for _, r := range recs {
		inFolder[r.ID] = true
	}
	// Read after the folder: a record a compaction moved meanwhile is in
	// the archive by the time it left the folder.
	aerr := j.walkArchive(func(id string) bool { return inFolder[id] || skip != nil && skip(id) }, fn)
	for _, r := range recs {
		fn(r)
	}
	return errors.Join(aerr, err)
}

// listFolder reads the records in the folder, oldest first: the jobs that
// may still move and those that ended since the last Compact. A queue
// taking up its journal needs no more, and reads no more, so its start
// does not grow with the jobs ever sent.
func (j *Journal) listFolder() ([]*Record, error) {
	recs, _, err := j.readFolder(nil)
	sortRecords(recs)
	return recs, err
}

// readFolder reads the folder's records but those skip names (nil:
// none), in no order; gone names those that were removed between the
// folder's listing and their reading.
func (j *Journal) readFolder(skip func(id string) bool) (recs []*Record, gone []string, err error) {
	gone, err = j.walkFolder(skip, func(r *Record) { recs = append(recs, r) })
	return recs, gone, err
}

// walkFolder is readFolder handing each record to fn as it is read,
// holding none: Compact looks at a camera roll's 20,400 records for a few
// words each.
func (j *Journal) walkFolder(skip func(id string) bool, fn func(*Record)) (gone []string, err error) {
	var errs []error
	err = j.eachEntry(func(e fs.DirEntry) {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			return
		}
		id := strings.TrimSuffix(name, ".json")
		if skip != nil && skip(id) {
			return
		}
		r, err := j.loadFile(id)
		if errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, id)
			return
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return
		}
		fn(r)
	})
	if err != nil {
		return gone, errors.Join(append(errs, fmt.Errorf("cannot read the upload journal: %w", err))...)
	}
	return gone, errors.Join(errs...)
}

// folderBatch is how many of the folder's names eachEntry reads at once.
const folderBatch = 256

// eachEntry calls fn for each entry of the journal's folder, in the
// system's order, reading folderBatch names at a time: a queue holding a
// camera roll's 20,400 jobs has three files each in the folder, and
// History, which reads none of them, would otherwise list all 61,200
// names at once (os.ReadDir) at each of a batch's steps.
func (j *Journal) eachEntry(fn func(fs.DirEntry)) error {
	f, err := os.Open(j.dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(folderBatch)
		for _, e := range entries {
			fn(e)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func sortRecords(recs []*Record) {
	sort.Slice(recs, func(a, b int) bool {
		if !recs[a].Created.Equal(recs[b].Created) {
			return recs[a].Created.Before(recs[b].Created)
		}
		return recs[a].ID < recs[b].ID
	})
}

// Lock takes the job for this worker until the returned release is called.
// It fails with ErrBusy at once, without waiting, when someone else has it.
// The lock is the operating system's (flock; LockFileEx on Windows), so it
// goes away when the process dies, however it dies.
func (j *Journal) Lock(id string) (release func(), err error) {
	if !idPattern.MatchString(id) {
		return nil, fmt.Errorf("%q is not a job id", id)
	}
	return lockFile(j.path(id, ".lock"))
}

// LockFile takes the operating system's lock on the file at path (made
// if missing), as Journal.Lock takes a job's, for a front end's own
// read-modify-write of a file other Carrier processes write too. It waits
// up to wait for another holder to let go, then fails with ErrBusy.
func LockFile(path string, wait time.Duration) (release func(), err error) {
	deadline := time.Now().Add(wait)
	pause := 2 * time.Millisecond
	for {
		release, err = lockFile(path)
		if !errors.Is(err, ErrBusy) || !time.Now().Before(deadline) {
			return release, err
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Remove deletes a job's record and lock file, and forgets it in the
// archive, which may hold it too (archive.go).
func (j *Journal) Remove(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%q is not a job id", id)
	}
	if err := platform.Remove(j.path(id, ".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove job %q: %w", id, err)
	}
	if _, err := os.Lstat(j.archivePath()); err == nil {
		if err := j.appendArchive([]archiveLine{{Forgot: id}}); err != nil {
			return fmt.Errorf("cannot remove job %q: %w", id, err)
		}
	}
	os.Remove(j.path(id, ".lock"))
	platform.Remove(j.path(id, ".progress"))
	j.syncFolder() // the record is gone whatever the sync says
	return nil
}
