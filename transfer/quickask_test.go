package transfer

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// driveTimers runs the fake clock for an upload: whenever the engine waits
// on a timer due within limit (a backoff, a jitter; not a watchdog's
// hour), the clock jumps to it. It returns the upload's error and every
// wait it jumped over.
func driveTimers(t *testing.T, clock *FakeClock, done <-chan error, limit time.Duration) (error, []time.Duration) {
	t.Helper()
	var waits []time.Duration
	deadline := time.After(20 * time.Second)
	for {
		added := clock.TimerAdded()
		if _, next := clock.Timers(); next >= 0 && next < limit {
			waits = append(waits, next)
			clock.Advance(next)
			continue
		}
		select {
		case err := <-done:
			return err, waits
		case <-added:
		case <-deadline:
			t.Fatalf("the upload did not end; waits so far %v", waits)
		}
	}
}

func runUpload(t *testing.T, u *Uploader, rec Record, sink Sink) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := u.Upload(ctxT(t), Work{Record: rec, Sink: sink})
		done <- err
	}()
	return done
}

// A connection cut after part of a chunk went out is followed by a status
// query after a short jitter, not the backoff: the 5xx backoff there made
// an upload cut every 4 s take 1.5x its time.
func TestCutAsksAtOnce(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 2 {
			f.keep = func(s *fakeSession, stored, arrived int64) int64 { return stored + Q }
			f.session(discardWriter{}, r, s) // the server keeps half the chunk...
			f.keep = nil
			hangUp(w) // ...and the connection drops before the answer
			return true
		}
		return false
	}
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Clock: clock, Retry: RetryPolicy{Base: 50 * time.Second, MaxRetries: 3}, Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, 6*Q)
	sink := &recSink{}
	err, waits := driveTimers(t, clock, runUpload(t, u, uploadRecord(t, f.url(), path, 2*Q), sink), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] > quickAskMax || waits[0] < quickAskMin {
		t.Fatalf("waits %v: want one jitter of %s-%s before the status query", waits, quickAskMin, quickAskMax)
	}
	if f.count("status") != 1 {
		t.Errorf("%d status queries, want 1", f.count("status"))
	}
	if len(sink.retries) != 1 || !strings.Contains(sink.retries[0].Reason, "the connection dropped") || sink.retries[0].Attempt != 0 {
		t.Errorf("retry notices %+v: want one, not counted, saying the connection dropped", sink.retries)
	}
}

// A 5xx says the server is busy: the client backs off even when the chunk
// made progress, and says so.
func TestBusyServerStillBacksOff(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 2 {
			f.keep = func(s *fakeSession, stored, arrived int64) int64 { return stored + Q }
			f.session(discardWriter{}, r, s)
			f.keep = nil
			googleError(w, 503, "UNAVAILABLE", "backendError", "try later")
			return true
		}
		return false
	}
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Clock: clock, Retry: RetryPolicy{Base: 50 * time.Second, MaxRetries: 3}, Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, 6*Q)
	sink := &recSink{}
	err, waits := driveTimers(t, clock, runUpload(t, u, uploadRecord(t, f.url(), path, 2*Q), sink), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] < 50*time.Second {
		t.Fatalf("waits %v: want one backoff of at least the base", waits)
	}
	if len(sink.retries) != 1 || !strings.Contains(sink.retries[0].Reason, "the server is busy (it answered 503") {
		t.Errorf("retry notices %+v: want one saying the server is busy", sink.retries)
	}
}

// A server that cuts every chunk and keeps nothing gets one quick ask,
// then the counted backoff: the upload gives up after MaxRetries instead
// of asking and resending in a hot loop.
func TestCutsWithoutProgressGiveUp(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" {
			if n > 50 { // a hot loop: end it so the test fails rather than spins
				googleError(w, 400, "INVALID_ARGUMENT", "invalid", "hot loop")
				return true
			}
			io.CopyN(io.Discard, r.Body, 1000)
			hangUp(w)
			return true
		}
		return false
	}
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Clock: clock, Retry: RetryPolicy{Base: 50 * time.Second, MaxRetries: 3}, Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, 2*ChunkQuantum)
	err, waits := driveTimers(t, clock, runUpload(t, u, uploadRecord(t, f.url(), path, ChunkQuantum), nil), time.Minute)
	if !errors.Is(err, ErrGaveUp) {
		t.Fatalf("got %v, want it to give up", err)
	}
	// One quick ask, then n = 0..3 backoffs, then the fifth counted failure ends it.
	if got := f.count("chunk"); got != 6 {
		t.Errorf("%d chunk requests, want 6", got)
	}
	if len(waits) != 5 || waits[0] > quickAskMax || waits[1] < 50*time.Second {
		t.Errorf("waits %v: want a jitter then four backoffs", waits)
	}
}
