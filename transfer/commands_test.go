package transfer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

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
