package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// More promises of the engine's edges, each pinned by a test that fails
// when it breaks (docs/RELIABILITY.md, Mutation).

// A record written before Failure existed keeps its error's text only:
// read back, it gets the Failure its words say (status, Google's status
// word, reason), and a newer Carrier's unknown code reads as FailOther.
func TestEdgeOldRecordsReadTheirFailureFromTheirWords(t *testing.T) {
	for _, c := range []struct {
		state  State
		cause  string
		text   string
		code   FailureCode
		status int
		reason string
	}{
		// A status alone, no word, no reason: the status decides.
		{StateFailed, "", "the server answered 403 Forbidden: no", FailRefused, 403, ""},
		{StateFailed, "", "it answered 404 Not Found", FailNotFound, 404, ""},
		{StateFailed, "", "the server answered 413 Request Entity Too Large", FailTooLarge, 413, "uploadTooLarge"},
		// Google's status word alone.
		{StateFailed, "", "refused (RESOURCE_EXHAUSTED): try later", FailQuota, 0, "RESOURCE_EXHAUSTED"},
		// A reason's words alone.
		{StateFailed, "", "the storage quota is used up", FailQuota, 0, "storageQuotaExceeded"},
		// Credentials that could not be had, without invalid_grant: a sign-in.
		{StateFailed, "", "cannot get credentials for the upload: the keychain is locked", FailSignIn, 0, ""},
		{StateFailed, "", "a sign-in is needed: token revoked", FailSignIn, 0, ""},
		{StateFailed, "", "the token endpoint said invalid_grant", FailSignIn, 0, "invalid_grant"},
		// Nothing to read: other.
		{StateFailed, "", "open /x: no such file or directory", FailOther, 0, ""},
		// The cause by name wins over the words.
		{StateFailed, "maybe-sent", "the server answered 403 Forbidden", FailMaybeSent, 403, ""},
		{StateFailed, "source-changed", "the file changed: its size is now 3", FailSourceChanged, 0, ChangedSize},
		{StateFailed, "not-verified", "the server's checksum differs", FailNotVerified, 0, ""},
		{StateFailed, "sign-in", "the sign-in was refused", FailSignIn, 0, ""},
		{StateFailed, "daily-quota", "the server answered 429 Too Many Requests", FailDailyQuota, 429, ""},
		{StateFailed, "gave-up", "the server answered 503 Service Unavailable", FailGaveUp, 503, ""},
		{StateSignIn, "", "the server answered 403 Forbidden", FailSignIn, 403, ""},
	} {
		r := &Record{State: c.state, Cause: c.cause, Error: c.text}
		settleFailure(r)
		f := r.Failure
		if f == nil || f.Code != c.code || f.Status != c.status || f.Reason != c.reason {
			t.Errorf("%s %q %q reads as %+v; want code %s, status %d, reason %q", c.state, c.cause, c.text, f, c.code, c.status, c.reason)
		}
	}
	// A Failure already there stays, an unknown code read as other.
	for code, want := range map[FailureCode]FailureCode{FailQuota: FailQuota, "a-newer-code": FailOther} {
		r := &Record{State: StateFailed, Error: "the server answered 404 Not Found", Failure: &Failure{Code: code, Status: 507}}
		settleFailure(r)
		if r.Failure.Code != want || r.Failure.Status != 507 {
			t.Errorf("a record's failure %s reads as %+v; want %s", code, r.Failure, want)
		}
	}
	// One that has not ended gets none, even with a text.
	for _, st := range []State{StateQueued, StateRunning, StatePaused, StateDone} {
		r := &Record{State: st, Error: "the server answered 500 Internal Server Error"}
		if settleFailure(r); r.Failure != nil {
			t.Errorf("a %s record got %+v", st, r.Failure)
		}
	}
}

// A one-shot answered 2xx without its resource (a bare 200, one of the
// wrong size): a Media upload stops as may-have-arrived, saying what the
// server answered (it cannot be asked, nor sent again blindly); a Call,
// which its caller vouches for as idempotent, is made again.
func TestEdgeOneShotAnsweredWithoutItsResource(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer string // the first answer's body, with a 200
	}{
		{"bare 200", ""},
		{"the wrong size", `{"id":"x","size":"3"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				if calls.Add(1) == 1 {
					w.Write([]byte(c.answer))
					return
				}
				w.Write([]byte(`{"id":"y","size":"` + strconv.Itoa(len(body)) + `"}`))
			}))
			defer srv.Close()
			src := filepath.Join(t.TempDir(), "body.json")
			os.WriteFile(src, []byte(`{"role":"reader"}`), 0o600)

			h := newHarness(t, Config{})
			e := h.finish(h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "application/json", Path: src}))
			if e.Kind != EventFailed || e.Snap.Failure == nil || e.Snap.Failure.Code != FailMaybeSent ||
				!strings.Contains(e.Message, "answered 200 to the media upload") || !strings.Contains(e.Message, "not sent again") {
				t.Fatalf("media: got %s (%+v)", e, e.Snap.Failure)
			}
			if calls.Load() != 1 {
				t.Fatalf("media: %d sends, want 1", calls.Load())
			}

			calls.Store(0)
			e = h.finish(h.add(Spec{URL: srv.URL + "/call", Type: Call, ContentType: "application/json", Path: src}))
			if e.Kind != EventDone {
				t.Fatalf("call: got %s", e)
			}
			if calls.Load() != 2 {
				t.Fatalf("call: %d calls, want 2", calls.Load())
			}
		})
	}
}

// A restart takes up the journal's jobs a process left: one found
// running (its process died) and one waiting for a sign-in go back to
// the queue; a paused one and a failed one that may be tried again wait
// for the person's "resume all", and a failure for good never comes back.
func TestEdgeRestartTakesUpWhatThePersonLeft(t *testing.T) {
	f := newFake(t)
	path, data := writeFile(t, 1000)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]State{"01": StateRunning, "02": StateSignIn, "03": StatePaused, "04": StateFailed, "05": StateFailed, "06": StateDone, "07": StateQueued}
	journal := func(t *testing.T) string {
		dir := t.TempDir()
		j, err := OpenJournal(dir)
		if err != nil {
			t.Fatal(err)
		}
		for n, st := range states {
			r := goodRecord()
			r.ID = "20300102T030405-abcdef" + n
			r.URL, r.Type, r.ContentType, r.Metadata = f.url(), Resumable, "application/octet-stream", nil
			r.Path, r.Size, r.ModTime = path, int64(len(data)), fi.ModTime()
			r.SHA256, r.Session, r.SessionStarted, r.Confirmed = "", "", time.Time{}, 0
			r.State = st
			switch st {
			case StateFailed:
				r.Error, r.Retryable = "the server answered 503 Service Unavailable", n == "04"
				r.Failure = &Failure{Code: FailGaveUp, Status: 503}
				if n == "05" {
					r.Error, r.Failure = "the server answered 403 Forbidden", &Failure{Code: FailRefused, Status: 403}
				}
			case StateSignIn:
				r.Error, r.Failure = "a sign-in is needed", &Failure{Code: FailSignIn}
			case StateDone:
				r.Confirmed, r.Response = r.Size, &Response{Status: 200, Body: json.RawMessage(`{}`)}
			}
			if err := j.Save(r); err != nil {
				t.Fatalf("record %s (%s): %v", n, st, err)
			}
		}
		return dir
	}
	for _, c := range []struct {
		all         bool
		want, ended string // the records' numbers taken up, and sent of those
	}{
		{false, "01 02 03 07", "01 02 07"}, // the paused one is held, still paused
		{true, "01 02 03 04 07", "01 02 03 04 07"},
	} {
		h := newHarness(t, Config{StateDir: journal(t)})
		ids, err := h.q.ResumeJournal(c.all)
		if err != nil {
			t.Fatalf("all %v: %v", c.all, err)
		}
		var got []string
		for _, id := range ids {
			got = append(got, id[len(id)-2:])
		}
		slices.Sort(got)
		if strings.Join(got, " ") != c.want {
			t.Fatalf("all %v: took up %v, want %s", c.all, got, c.want)
		}
		for _, id := range ids {
			if !strings.Contains(c.ended, id[len(id)-2:]) {
				if s, _ := h.q.Job(id); s.State != StatePaused {
					t.Errorf("all %v: job %s is %s, want still paused", c.all, id, s.State)
				}
				continue
			}
			if resourceSHA(t, h.mustDone(id)) != sha(data) {
				t.Errorf("all %v: job %s sent other bytes", c.all, id)
			}
		}
		h.q.Close()
	}
}

// A run's live figures are its own: a job paused mid-upload then resumed
// does not show, as it starts again, the rates of the run before (the
// written bytes' rate, the confirmations' pace and its time left).
func TestEdgeResumedJobStartsItsLiveFiguresAfresh(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	held := stopAfterChunk(f, 3)
	h := newHarness(t, Config{})
	path, data := writeFile(t, 4*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	waitChan(t, held)
	h.await(func(e Event) bool { return e.Job == id && e.Snap.ConfirmedRate > 0 })
	if err := h.q.Pause(id); err != nil {
		t.Fatal(err)
	}
	h.untilState(id, StatePaused)

	// The resumed run's first request is held: the job is running, and
	// has learnt nothing yet.
	again := make(chan struct{})
	var once sync.Once
	f.hook = func(kind string, k int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		first := false
		once.Do(func() { first = true })
		if !first {
			return false
		}
		close(again)
		f.hold(r)
		return true
	}
	if err := h.q.Resume(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	waitChan(t, again)
	s, _ := h.q.Job(id)
	if !s.State.Active() || s.WriteRate != 0 || s.ConfirmedRate != 0 || s.ETA != 0 || s.Pace != (Pace{}) {
		t.Errorf("the resumed run starts with %s, write rate %.0f, confirmed rate %.0f, ETA %s, pace %+v; want none yet", s.State, s.WriteRate, s.ConfirmedRate, s.ETA, s.Pace)
	}
	f.hook = nil
	if err := h.q.Pause(id); err != nil {
		t.Fatal(err)
	}
	h.untilState(id, StatePaused)
	if err := h.q.Resume(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
}

// A need's moves that end nothing (its start, a pause, a resume) cost no
// look at the jobs that wait for it: only its end does, once each. (The
// clock is a fake one, so the periodic look at waiting jobs never runs.)
func TestEdgeANeedsMovesCostItsWaitersNothingUntilItEnds(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "a")
	h := newHarness(t, Config{Clock: NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))})
	p, _ := writeFile(t, 100)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: p})
	h.untilState(a, StateRunning)
	const waiters = 50
	var ids []string
	for i := range waiters {
		id := h.add(Spec{URL: named(f, fmt.Sprintf("w%d", i)), ContentType: "application/octet-stream", Path: p, Needs: []string{a}})
		h.untilState(id, StateWaiting)
		ids = append(ids, id)
	}
	before := h.q.depSteps.Load()
	if err := h.q.Pause(a); err != nil {
		t.Fatal(err)
	}
	h.untilState(a, StatePaused)
	if err := h.q.Resume(ctxT(t), a); err != nil {
		t.Fatal(err)
	}
	h.untilState(a, StateRunning)
	if n := h.q.depSteps.Load() - before; n != 0 {
		t.Errorf("a pause and a resume of the need looked at %d jobs waiting for it", n)
	}
	before = h.q.depSteps.Load()
	g.open("a")
	h.mustDone(a)
	for _, id := range ids {
		h.mustDone(id)
	}
	if n := h.q.depSteps.Load() - before; n > waiters {
		t.Errorf("the need's end looked at %d jobs; %d wait for it", n, waiters)
	}
}

// A status query that gets no answer while the system holds uploads (the
// network went as it was asked) waits for the hold to end, then asks at
// once: no quick-retry wait on top of the hold, and no retry counted.
func TestEdgeStatusQueryAfterAHoldAsksAtOnce(t *testing.T) {
	const Q = ChunkQuantum
	const why = "Offline: waiting for the network"
	f := newFake(t)
	hs := newHolds()
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		switch {
		case kind == "chunk" && n == 2: // a chunk's connection breaks: the session must be asked
			io.CopyN(io.Discard, r.Body, 1000)
			hangUp(w)
			return true
		case kind == "status" && n == 1:
			hs.set(why, true) // the network goes...
			hangUp(w)         // ...and the query with it
			return true
		}
		return false
	}
	path, data := writeFile(t, 3*Q)
	sink := &recSink{}
	u := NewUploader(Uploader{Retry: RetryPolicy{Base: time.Millisecond, MaxRetries: 5}, Held: hs.held})
	done := make(chan error, 1)
	var resp *Response
	go func() {
		var err error
		resp, err = u.Upload(ctxT(t), Work{Record: uploadRecord(t, f.url(), path, Q), Sink: sink})
		done <- err
	}()
	held := func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return slices.ContainsFunc(sink.retries, func(n RetryNotice) bool { return n.Held })
	}
	for !held() { // the sink has no channel to wait on
		select {
		case err := <-done:
			t.Fatalf("the upload ended before it was held: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	hs.set(why, false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, resp) != sha(data) {
		t.Fatal("bytes differ")
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	i := slices.IndexFunc(sink.retries, func(n RetryNotice) bool { return n.Held })
	for _, n := range sink.retries[i+1:] {
		t.Errorf("after the hold: %+v", n)
	}
	if f.count("status") != 2 {
		t.Errorf("%d status queries, want 2 (the one cut, then one at once)", f.count("status"))
	}
}

// A one-shot upload refused for its token (401) is sent again with a
// refreshed one, once, and ends with its resource.
func TestEdgeOneShotRefreshesItsToken(t *testing.T) {
	for _, typ := range []UploadType{Media, Multipart} {
		t.Run(string(typ), func(t *testing.T) {
			f := newFake(t)
			f.token = "new"
			var mu sync.Mutex
			tok, refreshes := "old", 0
			src := TokenFunc(func(_ context.Context, refresh bool) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				if refresh {
					refreshes++
					tok = "new"
				}
				return tok, nil
			})
			h := newHarness(t, Config{Auth: src})
			path, data := writeFile(t, 1000)
			id := h.add(Spec{URL: f.url(), Type: typ, ContentType: "image/png", Path: path})
			if resourceSHA(t, h.mustDone(id)) != sha(data) {
				t.Fatal("bytes differ")
			}
			mu.Lock()
			defer mu.Unlock()
			if refreshes != 1 || f.count(string(typ)) != 2 {
				t.Errorf("%d refreshes, %d sends; want 1 and 2", refreshes, f.count(string(typ)))
			}
		})
	}
}

// A job's pace is shown from its first confirmations whatever the clock
// reads: under a clock at its start (a fake one, as the soak and the
// app's tests use), two chunks confirmed show in the snapshot's pace.
func TestEdgePaceShownUnderAClockAtItsStart(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	held := stopAfterChunk(f, 3)
	h := newHarness(t, Config{Clock: NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))})
	path, _ := writeFile(t, 4*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	waitChan(t, held)
	h.await(func(e Event) bool { return e.Job == id && e.Snap.Confirmed == 2*Q })
	if s, _ := h.q.Job(id); s.Pace.Bytes != 2*Q || s.Pace.Left != 2*Q {
		t.Errorf("after two chunks confirmed the pace is %+v; want 2 chunks paced, 2 left", s.Pace)
	}
}

// A job that ended lets its journal lock go: another process (a person's
// "carrier resume" with resume all while the window runs) may take up a
// failed one at once.
func TestEdgeEndedJobLetsItsLockGo(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "start" && n == 1 {
			googleError(w, 503, "UNAVAILABLE", "backendError", "later")
			return true
		}
		return false
	}
	h := newHarness(t, Config{MaxRetries: -1})
	path, data := writeFile(t, 1000)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	if e := h.finish(id); e.Kind != EventFailed || !e.Snap.Retryable {
		t.Fatalf("got %s, retryable %v", e, e.Snap.Retryable)
	}
	h2 := newHarness(t, Config{StateDir: h.dir})
	ids, err := h2.q.ResumeJournal(true)
	if err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("another queue took up %v (%v); want the failed job", ids, err)
	}
	if resourceSHA(t, h2.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
}

// waitTimers waits until the fake clock has n timers waiting.
func waitTimers(t *testing.T, c *FakeClock, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		added := c.TimerAdded()
		if got, _ := c.Timers(); got == n {
			return
		}
		select {
		case <-added:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no %d timers within the deadline", n)
		}
	}
}

// A request is abandoned as stalled one stall timeout after its last
// sign of life: a sign midway gives it a whole timeout from then, and no
// more.
func TestEdgeStallCountsFromTheLastSignOfLife(t *testing.T) {
	const stall = 10 * time.Second
	clock := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	w := &watchdog{clock: clock}
	w.touch()
	abandoned := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go w.run(stall, nil, done, func(err error) { abandoned <- err })
	waitTimers(t, clock, 1)
	clock.Advance(4 * time.Second)
	w.touch() // a sign of life at 4 s
	clock.Advance(6 * time.Second)
	waitTimers(t, clock, 1) // looked at 10 s: 6 s idle, not stalled
	select {
	case err := <-abandoned:
		t.Fatalf("abandoned 6 s after its last sign of life: %v", err)
	default:
	}
	clock.Advance(4 * time.Second)
	select {
	case err := <-abandoned:
		if !errors.Is(err, errStalled) {
			t.Fatalf("abandoned for %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not abandoned 10 s after its last sign of life")
	}
}

// A read that takes fewer bytes than the limit granted it (the body's
// end) gives the rest back: the next request's bytes go at once, not
// after a wait for bytes that never went.
func TestEdgeShortReadRefundsTheLimit(t *testing.T) {
	l, _ := limiterAt(10240) // pieces of 1 KiB; an idle second stored one
	body := &progressBody{r: bytes.NewReader(make([]byte, 100)), limit: l, stop: make(chan struct{})}
	n, err := body.Read(make([]byte, 1<<10))
	if n != 100 || err != nil && err != io.EOF {
		t.Fatalf("read %d: %v", n, err)
	}
	if g, ok := takeNow(l, 1<<10-100); !ok || g != 1<<10-100 {
		t.Fatalf("the %d bytes granted and not read were not given back (granted %d, %v)", 1<<10-100, g, ok)
	}
	if _, ok := takeNow(l, 1<<10); ok {
		t.Fatal("more went at once than the idle second paid")
	}
}

// A record refused for ever says how long the reader waited for it: the
// waits' sum, from when it began, whatever the clock read then (here an
// hour after its start).
func TestEdgeReadRefusalSaysHowLongItLasted(t *testing.T) {
	j, r, clock := refusingJournal(t, func(path string) ([]byte, error) {
		return nil, refused(path, errSharingViolation)
	})
	clock.Advance(time.Hour)
	_, _, err := loadWaiting(t, j, r.ID, clock)
	if err == nil || !strings.Contains(err.Error(), "locked by another process for 511ms:") {
		t.Errorf("the error does not say how long the refusal lasted: %v", err)
	}
}

// A person's retry or cancel of a job this queue does not hold takes it
// from the journal (one that failed under another window, say); a job
// another queue is working stays that queue's: ErrBusy, and it goes on.
func TestEdgeRetryOrCancelClaimsFromTheJournal(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "held")
	g.fail["refused"] = 1
	h := newHarness(t, Config{})
	path, data := writeFile(t, 1000)
	refused := h.add(Spec{URL: named(f, "refused"), ContentType: "application/octet-stream", Path: path})
	if e := h.finish(refused); e.Kind != EventFailed {
		t.Fatalf("got %s", e)
	}
	held := h.add(Spec{URL: named(f, "held"), ContentType: "application/octet-stream", Path: path})
	h.untilState(held, StateRunning)

	h2 := newHarness(t, Config{StateDir: h.dir})
	if err := h2.q.Retry(ctxT(t), refused); err != nil {
		t.Fatalf("retry of a failed job from the journal: %v", err)
	}
	if resourceSHA(t, h2.mustDone(refused)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if err := h2.q.Cancel(ctxT(t), held); !errors.Is(err, ErrBusy) {
		t.Fatalf("cancel of a job another queue works: %v, want ErrBusy", err)
	}
	if err := h2.q.Retry(ctxT(t), held); !errors.Is(err, ErrBusy) {
		t.Fatalf("retry of a job another queue works: %v, want ErrBusy", err)
	}
	// A restart beside it names the job it could not take.
	h3 := newHarness(t, Config{StateDir: h.dir})
	ids, err := h3.q.ResumeJournal(false)
	if busy, rest := BusyJobs(err); len(ids) != 0 || !slices.Equal(busy, []string{held}) || rest != nil {
		t.Fatalf("a restart beside the working queue took %v, busy %v, else %v; want the busy job named", ids, busy, rest)
	}
	g.open("held")
	if resourceSHA(t, h.mustDone(held)) != sha(data) {
		t.Fatal("bytes differ")
	}
}

// The chunks after the first are written at the pace the server's
// answers measured (issue 33): a first chunk the link took a second over
// (the pace's clock, a fake one, moved while the server read it) has the
// next ones wait on the pace; unmeasured, they would go at once.
func TestEdgeChunksAfterAMeasuredOneArePaced(t *testing.T) {
	const Q = ChunkQuantum
	clock := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	saved := paceClock
	paceClock = clock
	defer func() { paceClock = saved }()
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 1 {
			body, _ := io.ReadAll(r.Body) // every byte written...
			clock.Advance(time.Second)    // ...the link took a second over them
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		return false
	}
	path, data := writeFile(t, 3*Q)
	u := NewUploader(Uploader{Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	done := make(chan error, 1)
	var resp *Response
	go func() {
		var err error
		resp, err = u.Upload(ctxT(t), Work{Record: uploadRecord(t, f.url(), path, Q)})
		done <- err
	}()
	err, waits := driveTimers(t, clock, done, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, resp) != sha(data) {
		t.Fatal("bytes differ")
	}
	if len(waits) == 0 {
		t.Error("the chunks after a measured one were written without waiting on the pace")
	}
}

// An answer that stops halfway is abandoned as a stall, and the retry
// says so: the watchdog's cause, not the bare cancellation it causes.
func TestEdgeAnswerStalledHalfwaySaysStall(t *testing.T) {
	clock := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	f := newFake(t)
	answering := make(chan struct{})
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind != "chunk" || n != 1 {
			return false
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"kind":"storage#obj`))
		http.NewResponseController(w).Flush()
		close(answering)
		f.hold(r)
		return true
	}
	h := newHarness(t, Config{Clock: clock, StallTimeout: 10 * time.Second, MinSpeed: MinSpeed{Rate: -1}})
	path, data := writeFile(t, 1000)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	waitChan(t, answering)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // time passes, on the fake clock
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				clock.Advance(5 * time.Second)
			}
		}
	}()
	e := h.await(func(e Event) bool { return e.Job == id && e.Kind == EventRetrying })
	if !strings.Contains(e.Reason, "stall") {
		t.Errorf("the retry after an answer that stopped says %q; want the stall", e.Reason)
	}
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
}

// A job cancelled while a chunk goes out deletes its session without
// asking it first where it stands (a pause asks, so its row shows what
// the server kept; a cancel throws the session away).
func TestEdgeCancelMidChunkAsksNothing(t *testing.T) {
	const Q = ChunkQuantum
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
	if f.count("delete") != 1 || f.count("status") != 0 {
		t.Errorf("%d DELETEs, %d status queries; want the DELETE alone", f.count("delete"), f.count("status"))
	}
}

// A restart reads each job again once it holds its lock: another process
// may have moved it on between the folder's listing and the lock (here
// the listing read it running, and it is done), and then it is left.
func TestEdgeRestartReadsAJobAgainUnderItsLock(t *testing.T) {
	f := newFake(t)
	path, data := writeFile(t, 1000)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	j, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	r.URL, r.ContentType, r.Metadata, r.SHA256 = f.url(), "application/octet-stream", nil, ""
	r.Path, r.Size, r.ModTime = path, int64(len(data)), fi.ModTime()
	r.Session, r.SessionStarted, r.Confirmed = "", time.Time{}, 0
	r.State = StateRunning
	stale, err := EncodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	r.State, r.Confirmed, r.Response = StateDone, r.Size, &Response{Status: 200, Body: json.RawMessage(`{}`)}
	if err := j.Save(r); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{StateDir: dir})
	var mu sync.Mutex
	reads := 0
	h.q.journal.reader = recordReader{clock: SystemClock(), passes: func(error) bool { return false }, read: func(p string) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if filepath.Base(p) == r.ID+".json" {
			if reads++; reads == 1 {
				return stale, nil // the listing's read, before the other process's move
			}
		}
		return os.ReadFile(p)
	}}
	ids, err := h.q.ResumeJournal(false)
	if err != nil || len(ids) != 0 {
		t.Fatalf("took up %v (%v); want the job that was done under the lock left", ids, err)
	}
	if f.count("start") != 0 {
		t.Errorf("the done job was sent again: %d starts", f.count("start"))
	}
}

// A job whose lock cannot be taken for a reason other than another
// holder (here its lock file's name is taken by a folder) is named in the
// restart's error, not taken up, and not called busy.
func TestEdgeRestartNamesAJobItCannotLock(t *testing.T) {
	f := newFake(t)
	path, data := writeFile(t, 1000)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	j, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	r.URL, r.ContentType, r.Metadata, r.SHA256 = f.url(), "application/octet-stream", nil, ""
	r.Path, r.Size, r.ModTime = path, int64(len(data)), fi.ModTime()
	r.Session, r.SessionStarted, r.Confirmed, r.State = "", time.Time{}, 0, StateRunning
	if err := j.Save(r); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(j.path(r.ID, ".lock"), 0o700); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{StateDir: dir})
	ids, err := h.q.ResumeJournal(false)
	busy, rest := BusyJobs(err)
	if len(ids) != 0 || len(busy) != 0 || rest == nil || !strings.Contains(rest.Error(), r.ID) {
		t.Fatalf("took up %v, busy %v, error %v; want the job named in the error", ids, busy, rest)
	}
}
