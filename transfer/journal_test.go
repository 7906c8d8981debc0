package transfer

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestJournalFilesArePrivateAndAtomic(t *testing.T) {
	state := t.TempDir()
	j, err := OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	for i := range 3 {
		r.Confirmed = int64(i)
		if err := j.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	// Mode bits are Unix's: Windows has none to check (Go shows 0666/0777
	// there), and privacy by ACL is not built yet (docs/PLATFORMS.md).
	unixModes := runtime.GOOS != "windows"
	fi, _ := os.Stat(j.Dir())
	if unixModes && fi.Mode().Perm() != 0o700 {
		t.Errorf("journal folder mode %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(j.Dir())
	if len(entries) != 1 {
		t.Errorf("left files behind: %v", entries)
	}
	fi, _ = os.Stat(filepath.Join(j.Dir(), r.ID+".json"))
	if unixModes && fi.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v", fi.Mode().Perm())
	}
	back, err := j.Load(r.ID)
	if err != nil || back.Confirmed != 2 {
		t.Fatalf("%+v %v", back, err)
	}
	// A damaged record costs that job, not the journal.
	os.WriteFile(filepath.Join(j.Dir(), "broken.json"), []byte("{"), 0o600)
	recs, err := j.List()
	if len(recs) != 1 || err == nil {
		t.Errorf("List = %d records, %v", len(recs), err)
	}
}

func TestJournalLock(t *testing.T) {
	j, _ := OpenJournal(t.TempDir())
	release, err := j.Lock("job1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Lock("job1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock: %v", err)
	}
	release()
	release2, err := j.Lock("job1")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	release2()
	if _, err := j.Lock("../x"); err == nil {
		t.Error("a path as id must be refused")
	}
}

// stopAfterChunk makes a fake hold chunk number n, so a test can close the
// queue (as a crash would) with part of the file confirmed.
func stopAfterChunk(f *fakeServer, n int) <-chan struct{} {
	held := make(chan struct{})
	f.hook = func(kind string, k int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && k == n {
			close(held)
			f.hold(r)
			return true
		}
		return false
	}
	return held
}

func waitChan(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatal("timed out")
	}
}

// A restart resumes the same session from where the server stands.
func TestRestartResumesSameSession(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	held := stopAfterChunk(f, 3)
	state := t.TempDir()
	path, data := writeFile(t, 5*Q+1)
	h1 := newHarness(t, Config{StateDir: state})
	id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	waitChan(t, held)
	h1.q.Close()
	f.hook = nil

	h2 := newHarness(t, Config{StateDir: state})
	ids, err := h2.q.ResumeJournal(false)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("ResumeJournal = %v, %v", ids, err)
	}
	if resourceSHA(t, h2.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	comp, recv, sessions := f.stats()
	if comp != 1 || sessions != 1 {
		t.Errorf("completions=%d sessions=%d: a restart must keep the session", comp, sessions)
	}
	if recv > 5*Q+1+Q {
		t.Errorf("received %d bytes; re-sent more than one chunk", recv)
	}
	rec, _ := h2.q.journal.Load(id)
	if rec.State != StateDone || rec.Response == nil {
		t.Errorf("journal: %+v", rec)
	}
	// A second process sees nothing left to do.
	h3 := newHarness(t, Config{StateDir: state})
	if ids, _ := h3.q.ResumeJournal(true); len(ids) != 0 {
		t.Errorf("done jobs resumed again: %v", ids)
	}
}

func TestChangedSourceRefused(t *testing.T) {
	const Q = ChunkQuantum
	cases := map[string]func(path string, data []byte){
		// Bytes already sent differ: only the hash of the sent prefix can tell.
		"content, same size and time": func(path string, data []byte) {
			fi, _ := os.Stat(path)
			data[0] ^= 0xff
			os.WriteFile(path, data, 0o600)
			os.Chtimes(path, fi.ModTime(), fi.ModTime())
		},
		"size": func(path string, data []byte) {
			os.WriteFile(path, append(data, 1), 0o600)
		},
		"time": func(path string, data []byte) {
			os.Chtimes(path, time.Now(), time.Now().Add(time.Hour))
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			held := stopAfterChunk(f, 2)
			state := t.TempDir()
			path, data := writeFile(t, 3*Q)
			h1 := newHarness(t, Config{StateDir: state})
			id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
			waitChan(t, held)
			h1.q.Close()
			f.hook = nil
			change(path, data)
			h2 := newHarness(t, Config{StateDir: state})
			h2.q.ResumeJournal(false)
			e := h2.finish(id)
			if e.Kind != EventFailed || !errors.Is(e.Err, ErrSourceChanged) || !strings.Contains(e.Message, "changed") {
				t.Fatalf("got %s", e)
			}
			if comp, _, _ := f.stats(); comp != 0 {
				t.Error("mixed bytes completed an upload")
			}
		})
	}
}

func TestExpiredSessionReplaced(t *testing.T) {
	const Q = ChunkQuantum
	for _, finished := range []bool{false, true} {
		name := map[bool]string{false: "unfinished", true: "finished before expiry"}[finished]
		t.Run(name, func(t *testing.T) {
			clock := NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
			f := newFake(t)
			held := make(chan struct{})
			f.hook = func(kind string, k int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "chunk" && k == 2 {
					if finished {
						f.session(discardWriter{}, r, s)
					}
					close(held)
					f.hold(r)
					return true
				}
				return false
			}
			state := t.TempDir()
			path, data := writeFile(t, 2*Q)
			h1 := newHarness(t, Config{StateDir: state, Clock: clock, StallTimeout: time.Hour})
			id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
			waitChan(t, held)
			h1.q.Close()
			f.hook = nil
			clock.Advance(DefaultSessionTTL + time.Minute)
			h2 := newHarness(t, Config{StateDir: state, Clock: clock, StallTimeout: time.Hour})
			h2.q.ResumeJournal(false)
			if resourceSHA(t, h2.mustDone(id)) != sha(data) {
				t.Fatal("bytes differ")
			}
			comp, _, sessions := f.stats()
			wantSessions := map[bool]int{false: 2, true: 1}[finished]
			if comp != 1 || sessions != wantSessions {
				t.Errorf("completions=%d sessions=%d, want 1 and %d", comp, sessions, wantSessions)
			}
		})
	}
}

// The file is hashed as it goes out, never read ahead of sending: the
// record holds the sum of the sent prefix during the upload (a CRC32C
// where the job names no sum its target checks: a raw file to Gmail, which
// reports none). A file rewritten with its size and time kept
// is refused by its change time where the system keeps one; where it does
// not (simulated by clearing it), the sent prefix's hash refuses a change
// in bytes the server holds, and a change only in bytes not yet sent goes
// up as the new file, whole: the server never holds a mix.
func TestHashFollowsTheBytesSent(t *testing.T) {
	const Q = ChunkQuantum
	for _, c := range []struct {
		name      string
		noCtime   bool
		change    func(data []byte)
		wantFresh bool // the new file goes up; otherwise the job is refused
	}{
		// Refused where the record holds a change time (Linux, macOS;
		// Windows once the engine reads it with changeTimeOf), else fresh.
		{"unsent bytes, change time kept", false, func(d []byte) { d[len(d)-1] ^= 0xff }, true},
		{"unsent bytes, no change time", true, func(d []byte) { d[len(d)-1] ^= 0xff }, true},
		{"sent bytes, no change time", true, func(d []byte) { d[0] ^= 0xff }, false},
	} {
		// A target that checks CRC32C (Cloud Storage) has no SHA-256 of
		// its own: its CRC32C, kept with the offset, is the prefix's; one
		// that reports a SHA-256 (Drive) has its SHA-256 there; one that
		// reports nothing a CRC32C as the source sum.
		for _, sums := range [][]string{nil, {SumCRC32C}, {SumSHA256}} {
			t.Run(fmt.Sprintf("%s/sums=%v", c.name, sums), func(t *testing.T) {
				f := newFake(t)
				held := stopAfterChunk(f, 2)
				state := t.TempDir()
				path, data := writeFile(t, 3*Q+5)
				h1 := newHarness(t, Config{StateDir: state})
				id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q, Checksums: sums})
				waitChan(t, held)
				h1.q.Close()
				j, _ := OpenJournal(state)
				rec, err := j.Load(id)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case sums == nil && (rec.SourceSum != SumCRC32C || rec.SHA256 != "" || rec.Hashed < Q || rec.HashState == nil):
					t.Fatalf("mid-upload the record holds source sum %q, sha %q, hashed %d, state %d bytes", rec.SourceSum, rec.SHA256, rec.Hashed, len(rec.HashState))
				case sums != nil && (rec.Hashed != 0 || rec.HashState != nil || rec.Summed < Q || rec.SumState[sums[0]] == nil):
					t.Fatalf("mid-upload the record holds hashed %d, summed %d, states %v: the %s alone must stand for the prefix", rec.Hashed, rec.Summed, rec.SumState, sums[0])
				}
				wantFresh := c.wantFresh
				if !c.noCtime && !rec.ChangeTime.IsZero() {
					wantFresh = false
				}
				if runtime.GOOS == "linux" && !c.noCtime && rec.ChangeTime.IsZero() {
					t.Fatal("no change time recorded on Linux")
				}
				if c.noCtime {
					rec.ChangeTime = time.Time{}
					if err := j.Save(rec); err != nil {
						t.Fatal(err)
					}
				}
				f.hook = nil
				fi, _ := os.Stat(path)
				c.change(data)
				os.WriteFile(path, data, 0o600)
				os.Chtimes(path, fi.ModTime(), fi.ModTime())
				h2 := newHarness(t, Config{StateDir: state})
				h2.q.ResumeJournal(false)
				e := h2.finish(id)
				if !wantFresh {
					if e.Kind != EventFailed || !errors.Is(e.Err, ErrSourceChanged) {
						t.Fatalf("got %s; the job must be refused", e)
					}
					if comp, _, _ := f.stats(); comp != 0 {
						t.Fatal("an upload completed")
					}
					return
				}
				if e.Kind != EventDone || resourceSHA(t, e.Response) != sha(data) {
					t.Fatalf("got %s; the server must hold the file as it now is", e)
				}
				rec, _ = j.Load(id)
				if rec.SHA256 != "" {
					t.Fatalf("done: sha %q; the target reports none, so none was computed", rec.SHA256)
				}
			})
		}
	}
}

// A caller that knows the file's SHA-256 saves the engine the hashing; a
// resume checks it all the same.
func TestGivenSHA256(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	held := stopAfterChunk(f, 2)
	state := t.TempDir()
	path, data := writeFile(t, 3*Q)
	h1 := newHarness(t, Config{StateDir: state})
	id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q, SHA256: sha(append([]byte{1}, data[1:]...))})
	waitChan(t, held)
	h1.q.Close()
	f.hook = nil
	h2 := newHarness(t, Config{StateDir: state})
	h2.q.ResumeJournal(false)
	if e := h2.finish(id); e.Kind != EventFailed || !errors.Is(e.Err, ErrSourceChanged) {
		t.Fatalf("a file that is not the one whose hash was given: %s", e)
	}
}

// Progress between durable writes lives in the progress file; a torn one
// is ignored and the record, always whole, stands.
func TestProgressFile(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	r.Session = "http://x/upload?upload_id=1"
	if err := j.Save(r); err != nil {
		t.Fatal(err)
	}
	p := *r
	p.Confirmed, p.Updated = r.Size, r.Updated.Add(time.Second)
	if err := j.SaveProgress(&p); err != nil {
		t.Fatal(err)
	}
	if got, _ := j.Load(r.ID); got.Confirmed != r.Size || r.Confirmed == r.Size {
		t.Fatalf("progress not merged: %d", got.Confirmed)
	}
	// Windows' clock moves in steps: progress made within one step of
	// the record's save has the same time, and is still the newer.
	p.Confirmed, p.Updated = r.Confirmed+2, r.Updated
	if err := j.SaveProgress(&p); err != nil {
		t.Fatal(err)
	}
	if got, _ := j.Load(r.ID); got.Confirmed != r.Confirmed+2 {
		t.Fatalf("progress saved within the clock's step of the record: confirmed %d", got.Confirmed)
	}
	os.WriteFile(filepath.Join(j.Dir(), r.ID+".progress"), []byte(`{"confirmed":`), 0o600)
	if got, err := j.Load(r.ID); err != nil || got.Confirmed != r.Confirmed {
		t.Fatalf("a torn progress file: %v, confirmed %d", err, got.Confirmed)
	}
}

// LockFile waits for the holder to let go, within its wait; past it, or
// asked not to wait, it says ErrBusy.
func TestLockFileWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stamp.lock")
	release, err := LockFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockFile(path, 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("a held lock, not waited for: %v, want ErrBusy", err)
	}
	if _, err := LockFile(path, 20*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("a held lock, waited for in vain: %v, want ErrBusy", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := LockFile(path, time.Minute)
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	if err := <-got; err != nil {
		t.Fatalf("the lock let go was not taken: %v", err)
	}
}
