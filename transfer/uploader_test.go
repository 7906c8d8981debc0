package transfer

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// The Uploader stands alone: these tests use no Queue and no Journal.

// recSink records what an upload reports.
type recSink struct {
	mu        sync.Mutex
	cursors   []Cursor
	durable   []bool
	retries   []RetryNotice
	retried   int
	maxSent   int64
	failAfter int // Checkpoint fails from this call on (0: never)
}

var errSinkFull = errors.New("the sink cannot keep this")

func (s *recSink) Checkpoint(c Cursor, durable bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAfter > 0 && len(s.cursors)+1 >= s.failAfter {
		return errSinkFull
	}
	s.cursors = append(s.cursors, c)
	s.durable = append(s.durable, durable)
	return nil
}

func (s *recSink) Progress(sent int64, _ float64) {
	s.mu.Lock()
	s.maxSent = max(s.maxSent, sent)
	s.mu.Unlock()
}

func (s *recSink) Retrying(n RetryNotice) {
	s.mu.Lock()
	s.retries = append(s.retries, n)
	s.mu.Unlock()
}

func (s *recSink) Retried() {
	s.mu.Lock()
	s.retried++
	s.mu.Unlock()
}

func (s *recSink) last() Cursor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cursors[len(s.cursors)-1]
}

// uploadRecord describes a file for the Uploader, as a caller would.
func uploadRecord(t *testing.T, url, path string, chunk int64) Record {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return Record{ID: "standalone", URL: url, Method: http.MethodPost, Type: Resumable, ContentType: "application/octet-stream",
		Path: path, Size: fi.Size(), ModTime: fi.ModTime(), ChangeTime: changeTimeOf(path, fi), ChunkSize: chunk}
}

func TestUploaderAloneThroughResets(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n%2 == 0 {
			hangUp(w)
			return true
		}
		return false
	}
	path, data := writeFile(t, 4*Q+7)
	sink := &recSink{}
	u := NewUploader(Uploader{Retry: RetryPolicy{Base: time.Millisecond}})
	resp, err := u.Upload(ctxT(t), Work{Record: uploadRecord(t, f.url(), path, Q), Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, resp) != sha(data) {
		t.Fatal("bytes differ")
	}
	// The session is kept durably before any byte goes; offsets only grow;
	// the last checkpoint holds the whole file's SHA-256.
	if sink.cursors[0].Session == "" || !sink.durable[0] || sink.cursors[0].Confirmed != 0 {
		t.Errorf("first checkpoint %+v durable=%v: the session must be kept first", sink.cursors[0], sink.durable[0])
	}
	var prev int64
	for i, c := range sink.cursors {
		if c.Confirmed < prev {
			t.Errorf("checkpoint %d went back from %d to %d", i, prev, c.Confirmed)
		}
		prev = c.Confirmed
	}
	if last := sink.last(); last.Confirmed != int64(len(data)) || last.SHA256 != sha(data) || last.HashState != nil {
		t.Errorf("last checkpoint: confirmed=%d sha=%q", last.Confirmed, last.SHA256)
	}
	if len(sink.retries) == 0 || sink.retried != len(sink.retries) {
		t.Errorf("%d retries told, %d tries again: each wait must be told and ended", len(sink.retries), sink.retried)
	}
	if sink.maxSent != int64(len(data)) {
		t.Errorf("progress reached %d of %d", sink.maxSent, len(data))
	}
	if _, _, sessions := f.stats(); sessions != 1 {
		t.Errorf("%d sessions for one upload", sessions)
	}
}

// A second Upload given the cursor the first one left goes on in the same
// session and sends no stored byte again.
func TestUploaderGoesOnFromACursor(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	path, data := writeFile(t, 6*Q)
	rec := uploadRecord(t, f.url(), path, Q)
	u := NewUploader(Uploader{Retry: RetryPolicy{Base: time.Millisecond}})

	first := &recSink{failAfter: 4} // session, then two offsets; the third cannot be kept
	if _, err := u.Upload(ctxT(t), Work{Record: rec, Sink: first}); !errors.Is(err, errSinkFull) {
		t.Fatalf("an upload whose progress cannot be kept must stop: %v", err)
	}
	_, received, _ := f.stats()
	rec.setCursor(first.last())
	if rec.Confirmed != 2*Q || rec.Session == "" {
		t.Fatalf("cursor after the stop: %+v", first.last())
	}

	second := &recSink{}
	resp, err := u.Upload(ctxT(t), Work{Record: rec, Sink: second})
	if err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, resp) != sha(data) {
		t.Fatal("bytes differ")
	}
	comp, total, sessions := f.stats()
	// The chunk whose offset could not be kept was stored by the server,
	// which says so when asked: nothing is sent twice.
	if comp != 1 || sessions != 1 || total != int64(len(data)) {
		t.Errorf("completions=%d sessions=%d received=%d (first run %d), want 1, 1, %d", comp, sessions, total, received, len(data))
	}
	if f.count("status") != 1 {
		t.Errorf("%d status queries: going on must ask the session first, once", f.count("status"))
	}
}

func TestUploaderCancelSession(t *testing.T) {
	f := newFake(t)
	path, _ := writeFile(t, 3*ChunkQuantum)
	rec := uploadRecord(t, f.url(), path, ChunkQuantum)
	u := NewUploader(Uploader{})
	first := &recSink{failAfter: 2}
	u.Upload(ctxT(t), Work{Record: rec, Sink: first})
	rec.setCursor(first.last())
	if err := u.CancelSession(ctxT(t), rec); err != nil {
		t.Fatal(err)
	}
	if f.count("delete") != 1 {
		t.Fatalf("%d deletes", f.count("delete"))
	}
	if _, err := u.Upload(ctxT(t), Work{Record: rec, Sink: &recSink{}}); err != nil {
		t.Fatal(err) // a cancelled session is gone: a new one carries the upload
	}
	if _, _, sessions := f.stats(); sessions != 2 {
		t.Errorf("%d sessions, want 2", sessions)
	}
}

// The one retry decision, for every step and kind of failure.
func TestDecide(t *testing.T) {
	net := &NetError{Op: "x", Where: "y", Err: errors.New("reset")}
	cases := []struct {
		name string
		err  error
		want [3]verdict // start, status, chunk
	}{
		{"network", net, [3]verdict{verdictRetry, verdictRetry, verdictBackoffAsk}},
		{"503", &APIError{Code: 503}, [3]verdict{verdictRetry, verdictRetry, verdictBackoffAsk}},
		{"429", &APIError{Code: 429}, [3]verdict{verdictRetry, verdictRetry, verdictBackoffAsk}},
		{"403 rate", &APIError{Code: 403, Reasons: []string{"userRateLimitExceeded"}}, [3]verdict{verdictRetry, verdictRetry, verdictBackoffAsk}},
		{"403", &APIError{Code: 403, Reasons: []string{"forbidden"}}, [3]verdict{verdictFail, verdictFail, verdictFail}},
		{"404", &APIError{Code: 404}, [3]verdict{verdictFail, verdictNewSession, verdictAsk}},
		{"410", &APIError{Code: 410}, [3]verdict{verdictFail, verdictNewSession, verdictAsk}},
		{"401", &APIError{Code: 401}, [3]verdict{verdictRefresh, verdictRefresh, verdictRefresh}},
		{"400", &APIError{Code: 400}, [3]verdict{verdictFail, verdictFail, verdictFail}},
		{"bad range", &protocolError{"x"}, [3]verdict{verdictRetry, verdictRetry, verdictBackoffAsk}},
		{"permanent network", &permanent{net}, [3]verdict{verdictFail, verdictFail, verdictFail}},
		{"journal", errSinkFull, [3]verdict{verdictFail, verdictFail, verdictFail}},
	}
	for _, c := range cases {
		for i, s := range []step{stepStart, stepStatus, stepChunk} {
			if got := decide(s, c.err); got != c.want[i] {
				t.Errorf("%s at step %d: %s, want %s", c.name, s, got, c.want[i])
			}
		}
	}
}

func TestCauseOf(t *testing.T) {
	for name, e := range causes {
		if got := causeOf(&permanent{e}); got != name {
			t.Errorf("causeOf(%v) = %q, want %q", e, got, name)
		}
	}
	if causeOf(context.Canceled) != "" {
		t.Error("an unnamed error has a cause")
	}
}
