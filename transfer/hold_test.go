package transfer

import (
	"net/http"
	"testing"
	"time"
)

// While the system holds uploads (asleep, offline), nothing is sent and no
// retry is burnt, even for a job allowed none; the request in flight is
// abandoned at once, and the job goes on in its session on Release.
func TestHoldBurnsNoRetry(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	held := stopAfterChunk(f, 2)
	h := newHarness(t, Config{MaxRetries: -1}) // any failure would end the job
	path, data := writeFile(t, 4*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	waitChan(t, held)
	h.q.Hold("Offline: waiting for the network")
	e := h.await(func(e Event) bool { return e.Job == id && e.Kind == EventRetrying && e.Held })
	if e.Reason != "Offline: waiting for the network" || e.Snap.State != StateRetrying || e.Snap.Held != e.Reason {
		t.Fatalf("held: %s (state %s, row held %q)", e, e.Snap.State, e.Snap.Held)
	}
	before := f.count("chunk") + f.count("status")
	f.hook = nil
	// Held: a second reason comes and the first goes; still nothing is sent.
	h.q.Hold("Sleeping: will resume on wake")
	h.q.Release("Offline: waiting for the network")
	h.await(func(e Event) bool {
		return e.Job == id && e.Kind == EventRetrying && e.Held && e.Reason == "Sleeping: will resume on wake"
	})
	if n := f.count("chunk") + f.count("status"); n != before {
		t.Fatalf("%d requests went out while held", n-before)
	}
	rec, _ := h.q.journal.Load(id)
	if rec.Confirmed < Q {
		t.Errorf("the journal holds offset %d after the hold; it must be durable with the server's %d", rec.Confirmed, Q)
	}
	h.q.Release("Sleeping: will resume on wake")
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if _, _, sessions := f.stats(); sessions != 1 {
		t.Errorf("%d sessions: a hold keeps the session", sessions)
	}
}

// A job added while held waits before its first request.
func TestAddedWhileHeld(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, Config{})
	h.q.Hold("Offline: waiting for the network")
	path, _ := writeFile(t, 1000)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	h.await(func(e Event) bool { return e.Job == id && e.Held })
	if n := f.count("start"); n != 0 {
		t.Fatalf("%d requests while held", n)
	}
	h.q.Release("Offline: waiting for the network")
	h.mustDone(id)
}

// A request that fails of itself while the system holds uploads (the
// network went just as it broke) burns no retry either: the Uploader
// waits for the hold to end, then asks the session.
func TestFailureWhileHeldIsNotCounted(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	hs := newHolds()
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 2 {
			hs.set("Offline: waiting for the network", true) // the network goes...
			hangUp(w)                                        // ...and the request with it
			return true
		}
		return false
	}
	path, data := writeFile(t, 3*Q)
	sink := &recSink{}
	u := NewUploader(Uploader{Retry: RetryPolicy{MaxRetries: -1}, Held: hs.held})
	done := make(chan error, 1)
	var resp *Response
	go func() {
		var err error
		resp, err = u.Upload(ctxT(t), Work{Record: uploadRecord(t, f.url(), path, Q), Sink: sink})
		done <- err
	}()
	for { // until the upload tells it is held
		sink.mu.Lock()
		n := len(sink.retries)
		sink.mu.Unlock()
		if n > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the upload ended while held: %v", err)
		case <-time.After(10 * time.Millisecond): // the sink has no channel to wait on
		}
	}
	hs.set("Offline: waiting for the network", false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, resp) != sha(data) {
		t.Fatal("bytes differ")
	}
	if !sink.retries[0].Held {
		t.Errorf("the wait was not told as held: %+v", sink.retries[0])
	}
}
