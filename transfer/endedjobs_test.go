package transfer

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// memStateDir is a fresh journal folder, in memory where the system has
// one, so that thousands of jobs' fsyncs cost little.
func memStateDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "carrier-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

func answerServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A camera roll's ended jobs cost the queue a few hundred bytes each, not
// the whole job with its Record (about 1.1 KB): the live heap after 3,000
// pictures' uploads, less the heap before, over 3,000 (issue 29).
func TestEndedJobsHeapPerJob(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 3,000 files")
	}
	const n = 3000
	srv := answerServer(t)
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	q, err := New(Config{StateDir: memStateDir(t), Workers: 3, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	ids := make([]string, 0, n)
	for range n {
		id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src, Label: "picture.png · to Google Photos", Owner: "d-0123456789"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if s, err := q.Wait(context.Background(), id); err != nil || s.State != StateDone {
			t.Fatalf("job %s: %s %v", id, s.State, err)
		}
		if err := q.DropAnswer(id); err != nil { // as the app does once it used the answer
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC() // what sync.Pools let go at the first stays to the second
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes of live heap per ended job", per)
	if per > endedHeapBound {
		t.Errorf("%d bytes of live heap per ended job; want at most %d", per, endedHeapBound)
	}
	runtime.KeepAlive(ids)
}

// An ended job kept as an endedJob shows every reader what it showed
// whole: Job, Jobs, EachJob, History, HistoryWhere and Wait; a person's
// move on it is refused as before, DropAnswer and Answer work, the
// package's record is the journal's whole one, and Forget forgets it.
func TestEndedJobShowsWhatItShowedWhole(t *testing.T) {
	srv := answerServer(t)
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	hold := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hold)
	h := newHarness(t, Config{StateDir: memStateDir(t)})
	ctx := context.Background()
	meta := []byte(`{"name":"picture.png"}`)
	done := h.add(Spec{URL: srv.URL + "/upload", Type: Multipart, ContentType: "image/png", Path: src, Metadata: meta, Label: "picture.png", Owner: "d-1", Account: "me@example.com"})
	h.mustDone(done)
	body := filepath.Join(t.TempDir(), "call.json")
	os.WriteFile(body, []byte("{\"token\":\x00}"), 0o600)
	call := h.add(Spec{URL: srv.URL + "/call", Type: Call, ContentType: "application/json", Path: body, Needs: []string{done}, Quote: []string{done}, Label: "the call"})
	h.mustDone(call)
	cancelled := h.add(Spec{URL: slow.URL + "/upload", Type: Media, ContentType: "image/png", Path: src, Label: "cancelled"})
	for s, _ := h.q.Job(cancelled); s.State != StateRunning; s, _ = h.q.Job(cancelled) {
		time.Sleep(time.Millisecond)
	}
	if err := h.q.Cancel(ctx, cancelled); err != nil {
		t.Fatal(err)
	}
	ended := []string{done, call, cancelled}
	// A job counts among those that ended last once its worker let go of
	// it (settle), which may come after its event and after the next
	// job's on a loaded machine: each is waited for, so that the count
	// of jobs ended since is the one the test means.
	letGo := func(id string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			h.q.mu.Lock()
			jb := h.q.jobs[id]
			let := jb != nil && jb.recent || h.q.ended[id] != nil
			h.q.mu.Unlock()
			if let {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: its worker never let go of it", id)
			}
		}
	}
	for _, id := range ended {
		letGo(id)
	}
	whole := map[string]Snapshot{}
	fullRec := map[string]Record{}
	for _, id := range ended {
		s, _ := h.q.Job(id)
		whole[id] = s
		fullRec[id], _ = h.q.record(id)
	}
	// keepWhole more jobs end after them: theirs are let go.
	for range keepWhole {
		id := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
		h.mustDone(id)
		letGo(id)
	}
	same := func(how string, got Snapshot) {
		t.Helper()
		want := whole[got.ID]
		got.Seq, want.Seq = 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s shows job %s as\n%+v\nwhole it showed\n%+v", how, got.ID, got, want)
		}
	}
	h.q.mu.Lock()
	for _, id := range ended {
		if _, ok := h.q.ended[id]; !ok {
			t.Errorf("job %s, ended %d jobs ago, is still whole", id, keepWhole)
		}
		if _, ok := h.q.jobs[id]; ok {
			t.Errorf("job %s is still among the whole jobs too", id)
		}
	}
	if len(h.q.recent) != keepWhole {
		t.Errorf("%d jobs are kept whole; want %d", len(h.q.recent), keepWhole)
	}
	h.q.mu.Unlock()
	for _, id := range ended {
		s, ok := h.q.Job(id)
		if !ok {
			t.Fatalf("Job(%s) is gone", id)
		}
		same("Job", s)
		w, err := h.q.Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		same("Wait", w)
	}
	found := 0
	for _, s := range h.q.Jobs() {
		if _, ok := whole[s.ID]; ok {
			found++
			same("Jobs", s)
		}
	}
	hist, err := h.q.History()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range hist {
		if _, ok := whole[s.ID]; ok {
			found++
			same("History", s)
		}
	}
	where, err := h.q.HistoryWhere(func(s *Snapshot) bool { _, ok := whole[s.ID]; return ok })
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range where {
		found++
		same("HistoryWhere", s)
	}
	h.q.EachJob(func(s *Snapshot) {
		if _, ok := whole[s.ID]; ok {
			found++
			same("EachJob", *s)
		}
	})
	if found != 4*len(ended) {
		t.Errorf("the listings showed the ended jobs %d times; want %d", found, 4*len(ended))
	}
	// Its whole record is the journal's.
	for _, id := range ended {
		want := fullRec[id]
		r, ok := h.q.record(id)
		a, _ := EncodeRecord(&r)
		b, _ := EncodeRecord(&want)
		if !ok || string(a) != string(b) {
			t.Errorf("record(%s) =\n%s\nwhole it was\n%s", id, a, b)
		}
	}
	// The package's look at the record took the first back whole: the
	// next ended jobs let it go again.
	for range keepWhole {
		id := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
		h.mustDone(id)
		letGo(id)
	}
	// A person's moves are refused as they were.
	if err := h.q.Cancel(ctx, done); !errors.Is(err, ErrAlreadyDone) {
		t.Errorf("Cancel of a done job: %v", err)
	}
	if err := h.q.Cancel(ctx, cancelled); err != nil {
		t.Errorf("Cancel of a cancelled job: %v", err)
	}
	if err := h.q.Retry(ctx, call); !errors.Is(err, ErrNotFailed) {
		t.Errorf("Retry of a done job: %v", err)
	}
	if err := h.q.Pause(cancelled); !errors.Is(err, ErrEnded) {
		t.Errorf("Pause of a cancelled job: %v", err)
	}
	// The answer's body goes; the journal keeps it.
	for range keepWhole {
		id := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
		h.mustDone(id)
		letGo(id)
	}
	if err := h.q.DropAnswer(cancelled); !errors.Is(err, ErrUnfinished) {
		t.Errorf("DropAnswer of a cancelled job: %v", err)
	}
	if err := h.q.DropAnswer(done); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.q.Job(done); !s.AnswerInJournal || s.Response == nil || s.Response.Body != nil || s.Response.Status != whole[done].Response.Status {
		t.Errorf("after DropAnswer the job shows %+v, AnswerInJournal %v", s.Response, s.AnswerInJournal)
	}
	if whole[done].Response.Body == nil {
		t.Error("DropAnswer changed a snapshot taken before")
	}
	if a, err := h.q.Answer(done); err != nil || string(a.Body) != string(whole[done].Response.Body) {
		t.Errorf("Answer = %v, %v", a, err)
	}
	// Taken back whole, it still has no body in memory.
	if r, _ := h.q.record(done); r.Response == nil || r.Response.Body != nil {
		t.Errorf("taken back whole, its answer is %+v", r.Response)
	}
	if err := h.q.Forget(call); err != nil {
		t.Fatal(err)
	}
	for range keepWhole {
		id := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
		h.mustDone(id)
		letGo(id)
	}
	if err := h.q.Forget(done); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{call, done} {
		if _, ok := h.q.Job(id); ok {
			t.Errorf("job %s is still held after Forget", id)
		}
	}
}

// compactOf keeps what a snapshot shows, to the last field, and refuses
// a record it could not show exactly.
func TestCompactOfKeepsWhatASnapshotShows(t *testing.T) {
	now := time.Now().Round(0)
	r := Record{
		Version: recordVersion, ID: "j1", Created: now, Updated: now.Add(time.Second), URL: "https://example.com/upload",
		Method: "PUT", Type: Resumable, Protocol: ProtocolGoogUpload, ContentType: "image/jpeg", Metadata: []byte(`{}`),
		Path: "/p/a.jpg", Size: 10, ModTime: now, SHA256: "ab", Hashed: 10, HashState: []byte{1}, Checksums: []string{SumCRC32C},
		ChunkSize: ChunkQuantum, Label: "a", Needs: []string{"j0"}, Account: "me", Owner: "d-1", Quote: []string{"j0"},
		State: StateCancelled, Session: "https://example.com/s", Confirmed: 4, Sent: true,
		Response: &Response{Status: 200, Body: []byte("x")}, Error: "e", Retryable: true, Cause: "gave-up",
		Failure: &Failure{Code: "cancelled"}, Verified: SumMD5, SignInFor: "you", SendAt: now.Add(time.Hour),
	}
	e, ok := compactOf(&r, false)
	if !ok {
		t.Fatal("a cancelled record was kept whole")
	}
	back := e.record(r.ID)
	if !reflect.DeepEqual(snapshotOf(&r), snapshotOf(&back)) {
		t.Errorf("compacted, the record shows\n%+v\nnot\n%+v", snapshotOf(&back), snapshotOf(&r))
	}
	plain := Record{Version: recordVersion, ID: "j2", Method: "POST", Type: Media, State: StateDone, Response: &Response{Status: 200}}
	if e, ok := compactOf(&plain, false); !ok || e.more != nil {
		t.Errorf("a record with none of the rare fields: %v, more %+v", ok, e)
	}
	for _, bad := range []func(*Record){
		func(r *Record) { r.State = StateFailed },
		func(r *Record) { r.State = StateRunning },
		func(r *Record) { r.Method = "PATCH" },
		func(r *Record) { r.Verified = "sha1" },
	} {
		x := r
		bad(&x)
		if _, ok := compactOf(&x, false); ok {
			t.Errorf("%s %s %q compacted", x.State, x.Method, x.Verified)
		}
	}
}
