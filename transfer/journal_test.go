package transfer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func goodRecord() *Record {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	return &Record{
		Version: recordVersion, ID: "20300102T030405-abcdef01", Created: t0,
		URL: "https://h/upload/x?name=a", Method: "POST", Type: Resumable, ContentType: "message/rfc822",
		Metadata: json.RawMessage(`{"a":1}`), Path: "/tmp/f", Size: 10, ModTime: t0,
		SHA256: strings.Repeat("ab", 32), ChunkSize: ChunkQuantum, State: StateQueued,
		Session: "https://h/upload/x?upload_id=1", SessionStarted: t0, Confirmed: 5, Updated: t0,
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := goodRecord()
	data, err := EncodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeRecord(back)
	if string(again) != string(data) {
		t.Errorf("round trip changed the record:\n%s\n%s", data, again)
	}
}

func TestDecodeRecordRefuses(t *testing.T) {
	cases := map[string]func(r *Record){
		"version":           func(r *Record) { r.Version = 2 },
		"id with slash":     func(r *Record) { r.ID = "../x" },
		"method":            func(r *Record) { r.Method = "GET" },
		"type":              func(r *Record) { r.Type = "simple" },
		"content type CRLF": func(r *Record) { r.ContentType = "a\r\nX-Evil: 1" },
		"size":              func(r *Record) { r.Size = -1 },
		"confirmed > size":  func(r *Record) { r.Confirmed = 11 },
		"chunk":             func(r *Record) { r.ChunkSize = 1000 },
		"state":             func(r *Record) { r.State = "lost" },
		"hash":              func(r *Record) { r.SHA256 = "xyz" },
		"url":               func(r *Record) { r.URL = "file:///etc/passwd" },
		"session":           func(r *Record) { r.Session = "/relative" },
		"done w/o response": func(r *Record) { r.State = StateDone },
		"response status":   func(r *Record) { r.Response = &Response{Status: 1000} },
	}
	for name, mutate := range cases {
		r := goodRecord()
		mutate(r)
		data, _ := json.Marshal(r)
		if _, err := DecodeRecord(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, raw := range []string{``, `{`, `[]`, `{"version":1,"bogus":2}`, `{"version":1}{}`} {
		if _, err := DecodeRecord([]byte(raw)); err == nil {
			t.Errorf("%q: accepted", raw)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	data, _ := EncodeRecord(goodRecord())
	f.Add(data)
	f.Add([]byte(`{"version":1,"id":"a"}`))
	f.Add([]byte(`{"version":1,"id":"a","confirmed":-1,"size":1e30}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRecord(data)
		if err != nil {
			return
		}
		// Whatever it accepts must be a record it would write itself.
		out, err := EncodeRecord(r)
		if err != nil {
			t.Fatalf("accepted a record it cannot encode: %v", err)
		}
		if _, err := DecodeRecord(out); err != nil {
			t.Fatalf("cannot read its own output: %v", err)
		}
	})
}

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

func TestPauseResumeCancelRetry(t *testing.T) {
	const Q = ChunkQuantum
	t.Run("pause and resume", func(t *testing.T) {
		f := newFake(t)
		held := stopAfterChunk(f, 2)
		h := newHarness(t, Config{})
		path, data := writeFile(t, 3*Q)
		id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
		waitChan(t, held)
		if err := h.q.Pause(id); err != nil {
			t.Fatal(err)
		}
		h.next(EventPaused)
		f.hook = nil
		rec, _ := h.q.record(id)
		if rec.State != StatePaused || rec.Session == "" {
			t.Fatalf("paused record: %+v", rec)
		}
		if err := h.q.Resume(ctxT(t), id); err != nil {
			t.Fatal(err)
		}
		if resourceSHA(t, h.mustDone(id)) != sha(data) {
			t.Fatal("bytes differ")
		}
		if _, _, sessions := f.stats(); sessions != 1 {
			t.Errorf("%d sessions: a pause keeps the session", sessions)
		}
	})
	t.Run("cancel deletes the session", func(t *testing.T) {
		f := newFake(t)
		held := stopAfterChunk(f, 2)
		h := newHarness(t, Config{})
		path, _ := writeFile(t, 3*Q)
		id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
		waitChan(t, held)
		if err := h.q.Cancel(ctxT(t), id); err != nil {
			t.Fatal(err)
		}
		if e := h.finish(id); e.Kind != EventCancelled {
			t.Fatalf("got %s", e)
		}
		if f.count("delete") != 1 {
			t.Errorf("%d DELETEs", f.count("delete"))
		}
		rec, _ := h.q.journal.Load(id)
		if rec.State != StateCancelled {
			t.Errorf("state %s", rec.State)
		}
		if err := h.q.Retry(ctxT(t), id); err == nil {
			t.Error("a cancelled job cannot be retried")
		}
	})
	t.Run("retry a failed job", func(t *testing.T) {
		f := newFake(t)
		f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
			if kind == "start" && n == 1 {
				googleError(w, 400, "INVALID_ARGUMENT", "invalid", "not today")
				return true
			}
			return false
		}
		h := newHarness(t, Config{})
		path, data := writeFile(t, Q)
		id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
		if e := h.finish(id); e.Kind != EventFailed {
			t.Fatalf("got %s", e)
		}
		if err := h.q.Retry(ctxT(t), id); err != nil {
			t.Fatal(err)
		}
		if resourceSHA(t, h.mustDone(id)) != sha(data) {
			t.Fatal("bytes differ")
		}
		rec, err := h.q.Wait(ctxT(t), id)
		if err != nil || rec.State != StateDone {
			t.Fatalf("Wait: %+v %v", rec.State, err)
		}
	})
}

func TestWorkersLimitConcurrency(t *testing.T) {
	f := newFake(t)
	var inFlight, peak int
	gate := make(chan struct{})
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind != "chunk" {
			return false
		}
		f.mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		f.mu.Unlock()
		select {
		case <-gate:
		case <-time.After(100 * time.Millisecond):
		}
		f.mu.Lock()
		inFlight--
		f.mu.Unlock()
		return false
	}
	h := newHarness(t, Config{Workers: 2})
	var ids []string
	for range 5 {
		path, _ := writeFile(t, 1000)
		ids = append(ids, h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path}))
	}
	for _, id := range ids {
		if _, err := h.q.Wait(ctxT(t), id); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	if comp, _, _ := f.stats(); comp != 5 {
		t.Errorf("%d completions", comp)
	}
	if peak != 2 {
		t.Errorf("peak %d chunks in flight with 2 workers", peak)
	}
}

func TestAddRefusesBadSpecs(t *testing.T) {
	h := newHarness(t, Config{})
	path, _ := writeFile(t, 10)
	cases := map[string]Spec{
		"no url":         {ContentType: "a/b", Path: path},
		"bad metadata":   {URL: "http://h/u", ContentType: "a/b", Path: path, Metadata: []byte("{")},
		"media+metadata": {URL: "http://h/u", ContentType: "a/b", Path: path, Type: Media, Metadata: []byte("{}")},
		"chunk":          {URL: "http://h/u", ContentType: "a/b", Path: path, ChunkSize: 1000},
		"no file":        {URL: "http://h/u", ContentType: "a/b", Path: path + ".missing"},
		"folder":         {URL: "http://h/u", ContentType: "a/b", Path: filepath.Dir(path)},
		"no type":        {URL: "http://h/u", Path: path},
		"method":         {URL: "http://h/u", ContentType: "a/b", Path: path, Method: "PATCH"},
	}
	for name, spec := range cases {
		if _, err := h.q.Add(spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if n := len(h.q.Jobs()); n != 0 {
		t.Errorf("%d jobs recorded from bad specs", n)
	}
}

func TestHistoryAndForget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"id":"done"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	q, err := New(Config{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("hello"), 0o600)
	id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "text/plain", Path: src, Label: "greeting"})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := q.Wait(context.Background(), id); err != nil || rec.State != StateDone {
		t.Fatalf("wait: %v %v", rec.State, err)
	}
	q.Close()
	// A new queue on the same journal sees the finished job in its history.
	q2, err := New(Config{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	hist, err := q2.History()
	if err != nil || len(hist) != 1 || hist[0].ID != id || hist[0].State != StateDone || hist[0].Label != "greeting" {
		t.Fatalf("history: %+v %v", hist, err)
	}
	if err := q2.Forget(id); err != nil {
		t.Fatal(err)
	}
	if hist, _ := q2.History(); len(hist) != 0 {
		t.Fatalf("forgotten job still listed: %+v", hist)
	}
}

// A job that failed in an earlier run can be retried from a new queue.
func TestRetryAJobOfAnEarlierRun(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"code":400,"message":"no thanks"}}`))
			return
		}
		w.Write([]byte(`{"id":"ok"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("hello"), 0o600)
	q, _ := New(Config{StateDir: dir})
	id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "text/plain", Path: src})
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := q.Wait(context.Background(), id); rec.State != StateFailed || !strings.Contains(rec.Error, "no thanks") {
		t.Fatalf("first run: %v %q", rec.State, rec.Error)
	}
	q.Close()
	fail.Store(false)
	q2, _ := New(Config{StateDir: dir})
	defer q2.Close()
	if err := q2.Retry(context.Background(), id); err != nil {
		t.Fatalf("retry from a new queue: %v", err)
	}
	if rec, _ := q2.Wait(context.Background(), id); rec.State != StateDone {
		t.Fatalf("after retry: %v %q", rec.State, rec.Error)
	}
}

// The file is hashed as it goes out, never read ahead of sending: the
// record holds the hash of the sent prefix during the upload and the
// file's SHA-256 at the end. A file rewritten with its size and time kept
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
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			held := stopAfterChunk(f, 2)
			state := t.TempDir()
			path, data := writeFile(t, 3*Q+5)
			h1 := newHarness(t, Config{StateDir: state})
			id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
			waitChan(t, held)
			h1.q.Close()
			j, _ := OpenJournal(state)
			rec, err := j.Load(id)
			if err != nil {
				t.Fatal(err)
			}
			if rec.SHA256 != "" || rec.Hashed < Q || rec.HashState == nil {
				t.Fatalf("mid-upload the record holds sha %q, hashed %d, state %d bytes", rec.SHA256, rec.Hashed, len(rec.HashState))
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
			if rec.SHA256 != sha(data) || rec.HashState != nil || rec.Hashed != rec.Size {
				t.Fatalf("done: sha %q (want %q), hashed %d", rec.SHA256, sha(data), rec.Hashed)
			}
		})
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
	os.WriteFile(filepath.Join(j.Dir(), r.ID+".progress"), []byte(`{"confirmed":`), 0o600)
	if got, err := j.Load(r.ID); err != nil || got.Confirmed != r.Confirmed {
		t.Fatalf("a torn progress file: %v, confirmed %d", err, got.Confirmed)
	}
}

// swapSeam sets one of journal.go's seams for the rest of the test.
func swapSeam[T any](t *testing.T, seam *T, v T) {
	t.Helper()
	old := *seam
	*seam = v
	t.Cleanup(func() { *seam = old })
}

// countingServer answers every one-shot upload with a resource and counts
// the uploads it received.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte(`{"id":"sent"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Windows refuses to sync a folder, and any system may fail it. The record
// was renamed into place by then: it will be read and sent at the next
// start, so Save must not report it failed (that is how a send reported
// as failed went out later). The job is done once, never twice.
func TestJournalFolderSyncFailureIsNotAFailure(t *testing.T) {
	injected := errors.New("injected: the folder cannot be synced")
	swapSeam(t, &syncJournalDir, func(string) error { return injected })

	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	if err := j.Save(r); err != nil {
		t.Fatalf("Save reported a record that stands as failed: %v", err)
	}
	if back, err := j.Load(r.ID); err != nil || back.Confirmed != r.Confirmed {
		t.Fatalf("Load = %+v, %v", back, err)
	}
	if !errors.Is(j.dirSyncError(), injected) {
		t.Errorf("the sync failure is not kept: %v", j.dirSyncError())
	}
	if err := j.Remove(r.ID); err != nil {
		t.Fatalf("Remove: %v", err)
	}

	srv, uploads := countingServer(t)
	state := t.TempDir()
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("hello"), 0o600)
	q, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "text/plain", Path: src})
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	if rec, err := q.Wait(ctxT(t), id); err != nil || rec.State != StateDone {
		t.Fatalf("Wait: %v %q, %v", rec.State, rec.Error, err)
	}
	q.Close()
	q2, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if ids, err := q2.ResumeJournal(true); len(ids) != 0 || err != nil {
		t.Fatalf("a done job resumed: %v %v", ids, err)
	}
	if n := uploads.Load(); n != 1 {
		t.Errorf("%d uploads, want 1", n)
	}
}

// A Save that fails leaves nothing a later start would send: a job whose
// record could not be written is reported failed and never goes out.
// And a rename that reports failure after the move was made (possible
// with a write-through rename or a network drive) is a success: the record
// stands.
func TestJournalFailedSaveIsNeverSent(t *testing.T) {
	injected := errors.New("injected: the rename failed")
	state := t.TempDir()
	mine := func(path string) bool { return strings.HasPrefix(path, state) }
	swapSeam(t, &renameRecord, func(from, to string) error {
		if mine(to) {
			return injected
		}
		return durableRename(from, to)
	})

	srv, uploads := countingServer(t)
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("hello"), 0o600)
	q, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "text/plain", Path: src}); err == nil {
		q.Wait(ctxT(t), id)
		t.Fatalf("Add succeeded (job %s) though its record was never written", id)
	}
	q.Close()
	entries, _ := os.ReadDir(filepath.Join(state, "jobs"))
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	renameRecord = durableRename
	q2, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if ids, err := q2.ResumeJournal(true); len(ids) != 0 || err != nil {
		t.Fatalf("a job reported failed was resumed: %v %v", ids, err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := uploads.Load(); n != 0 {
		t.Fatalf("%d uploads of a job reported failed", n)
	}

	// Moved, then reported failed: the record stands, so Save says so.
	renameRecord = func(from, to string) error {
		if err := durableRename(from, to); err != nil {
			return err
		}
		return injected
	}
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	if err := j.Save(r); err != nil {
		t.Fatalf("Save of a record that stands: %v", err)
	}
	if _, err := j.Load(r.ID); err != nil {
		t.Fatal(err)
	}
}

// Job locks hold across processes: this test runs itself again as the
// holder (CARRIER_TEST_LOCK_HOLDER names the journal), which takes the lock,
// says so and keeps it until its stdin closes.
func TestJournalLockAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("CARRIER_TEST_LOCK_HOLDER"); dir != "" {
		j, err := OpenJournal(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		release, err := j.Lock("job1")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		release()
		fmt.Println("released")
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot run this test binary again: %v", err)
	}
	state := t.TempDir()
	j, err := OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command(exe, "-test.run=^TestJournalLockAcrossProcesses$")
	holder.Env = append(os.Environ(), "CARRIER_TEST_LOCK_HOLDER="+state)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "locked" {
		t.Fatalf("the holder says %q", lines.Text())
	}
	if release, err := j.Lock("job1"); !errors.Is(err, ErrBusy) {
		if err == nil {
			release()
		}
		t.Fatalf("a job locked by another process: Lock = %v, want ErrBusy", err)
	}
	stdin.Close()
	if !lines.Scan() || lines.Text() != "released" {
		t.Fatalf("the holder says %q", lines.Text())
	}
	holder.Wait()
	release, err := j.Lock("job1")
	if err != nil {
		t.Fatalf("after the other process let go: %v", err)
	}
	defer release()
	// And the other way round: the holder cannot take it from us.
	cmd := exec.Command(exe, "-test.run=^TestJournalLockAcrossProcesses$")
	cmd.Env = append(os.Environ(), "CARRIER_TEST_LOCK_HOLDER="+state)
	out, err := cmd.Output()
	if err == nil || !strings.Contains(string(out), ErrBusy.Error()) {
		t.Fatalf("another process took a job this one holds: %v, %s", err, out)
	}
}

// The change time moves when a file is rewritten with its size and
// modification time kept, where the system keeps one.
func TestChangeTimeMovesOnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	before := changeTimeOf(path, fi)
	if before.IsZero() {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
			t.Fatalf("no change time on %s", runtime.GOOS)
		}
		t.Skipf("%s keeps no change time Carrier reads", runtime.GOOS)
	}
	time.Sleep(20 * time.Millisecond)
	os.WriteFile(path, []byte("jello"), 0o600)
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	fi2, _ := os.Stat(path)
	if !fi2.ModTime().Equal(fi.ModTime()) || fi2.Size() != fi.Size() {
		t.Fatal("size or modification time not kept")
	}
	if after := changeTimeOf(path, fi2); after.Equal(before) {
		t.Errorf("change time kept at %v after a write", before)
	}
}
