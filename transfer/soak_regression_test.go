package transfer

// Regression tests for what the soak (go run ./soak, docs/RELIABILITY.md)
// found, fixed in f8d78fd; they keep it fixed.

import (
	"net/http"
	"testing"
	"time"
)

// A session request answered "200 OK" with an empty body was taken as the
// end of the upload: the job was recorded done, with an empty response,
// though the server never completed it. The sandbox sends exactly that
// during a graceful stop (sandbox/soak_regression_test.go), and the soak's
// restart phase caught the engine marking such a job done. Every Google
// upload endpoint answers a finished upload with its resource, and asking
// again is always safe (a finished session answers the status query with
// the resource again), so an empty 2xx deserves a status query, not trust.
func TestSoakRegressionEmpty200IsNotCompletion(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		switch {
		case kind == "chunk" && n == 2:
			hangUp(w) // the server went away mid-upload
			return true
		case kind == "status" && n == 1:
			// What net/http sends for a handler that wrote nothing.
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return true
		}
		return false
	}
	h := newHarness(t, Config{RetryBase: time.Millisecond})
	path, data := writeFile(t, 3*Q+17)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	e := h.finish(id)
	completions, _, _ := f.stats()
	if e.Kind != EventDone || completions != 1 {
		t.Fatalf("job ended %s with %d completions on the server: a job must not be done unless the upload completed", e, completions)
	}
	if resourceSHA(t, e.Response) != sha(data) {
		t.Fatal("the response is not the finished resource")
	}
}

// The wake detector compares the clocks every WakeCheck of awake time, and
// nothing else tells the queue of a wake. With a 5 s check the soak
// measured a median of 2.6 s and a maximum of 4.9 s from the wake to the
// next confirmed byte, against a goal of under 2 s; the check is now 1 s.
// Here the machine wakes right after a tick, with a request stalled on a
// dead connection; within 2 s of awake time the request must have been
// abandoned for the wake.
func TestSoakRegressionWakeNoticedWithinTwoSeconds(t *testing.T) {
	const Q = ChunkQuantum
	clock := NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	f := newFake(t)
	held := make(chan struct{})
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 2 {
			close(held)
			f.hold(r)
			return true
		}
		return false
	}
	h := newHarness(t, Config{Clock: clock, RetryBase: 50 * time.Second, StallTimeout: 10 * time.Hour})
	path, _ := writeFile(t, 3*Q)
	h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the second chunk never came")
	}
	// One tick of the detector while awake, then the sleep right after it.
	tick := h.q.wakeCheck
	if n, next := clock.Timers(); n == 0 || next > tick {
		t.Fatalf("timers: %d, next in %s", n, next)
	}
	clock.Advance(tick)
	// The detector has taken its reading once it waits for the next tick.
	for deadline := time.After(5 * time.Second); ; {
		added := clock.TimerAdded() // before looking, so no new timer is missed
		if _, next := clock.Timers(); next == tick {
			break
		}
		select {
		case <-added:
		case <-deadline:
			t.Fatal("the wake detector did not wait for its next tick")
		}
	}
	clock.Suspend(8 * time.Hour)
	for range 20 { // 2 s of awake time after the wake, in 100 ms steps
		clock.Advance(100 * time.Millisecond)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e := <-h.events:
			if e.Kind == EventRetrying && e.Woke {
				return
			}
		case <-deadline:
			t.Fatalf("2 s after the wake the engine had not noticed it (it checks every %s)", tick)
		}
	}
}
