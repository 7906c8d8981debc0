package transfer

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// cutThen is a fake whose second chunk is cut after the server kept half
// of it, and whose status queries are answered by query (n from 1): true
// when it answered.
func cutThen(t *testing.T, query func(n int, w http.ResponseWriter) bool) *fakeServer {
	const Q = ChunkQuantum
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		switch {
		case kind == "chunk" && n == 2:
			f.keep = func(s *fakeSession, stored, arrived int64) int64 { return stored + Q }
			f.session(discardWriter{}, r, s)
			f.keep = nil
			hangUp(w)
			return true
		case kind == "status":
			return query(n, w)
		}
		return false
	}
	return f
}

// A status query after a cut that finds the link still broken is asked
// again after a short wait, not after the upload's backoff, and the
// failure is not counted: on a flaky link the backoff was most of the
// time lost.
func TestStatusAskedAgainQuickly(t *testing.T) {
	f := cutThen(t, func(n int, w http.ResponseWriter) bool {
		if n <= 2 {
			hangUp(w)
			return true
		}
		return false
	})
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Clock: clock, Retry: RetryPolicy{Base: 50 * time.Second, MaxRetries: 3}, Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, 6*ChunkQuantum)
	sink := &recSink{}
	err, waits := driveTimers(t, clock, runUpload(t, u, uploadRecord(t, f.url(), path, 2*ChunkQuantum), sink), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if f.count("status") != 3 {
		t.Errorf("%d status queries, want 3", f.count("status"))
	}
	if len(waits) != 3 || waits[0] > quickAskMax || waits[1] > askAgainCap || waits[2] > askAgainCap {
		t.Fatalf("waits %v: want the jitter before the query, then two short waits before asking again", waits)
	}
	for _, n := range sink.retries {
		if n.Attempt != 0 {
			t.Errorf("retry notices %+v: a query with no answer counted as a failure of the upload", sink.retries)
			break
		}
	}
}

// A 5xx answer to the status query is the server's: it backs off, counted,
// as Google's retry rules ask.
func TestBusyStatusBacksOff(t *testing.T) {
	f := cutThen(t, func(n int, w http.ResponseWriter) bool {
		if n == 1 {
			googleError(w, 503, "UNAVAILABLE", "backendError", "try later")
			return true
		}
		return false
	})
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Clock: clock, Retry: RetryPolicy{Base: 50 * time.Second, MaxRetries: 3}, Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, 6*ChunkQuantum)
	sink := &recSink{}
	err, waits := driveTimers(t, clock, runUpload(t, u, uploadRecord(t, f.url(), path, 2*ChunkQuantum), sink), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(waits) != 2 || waits[0] > quickAskMax || waits[1] < 50*time.Second {
		t.Fatalf("waits %v: want the jitter, then a backoff of at least the base", waits)
	}
	if len(sink.retries) != 2 || sink.retries[1].Attempt != 1 || !strings.Contains(sink.retries[1].Reason, "503") {
		t.Errorf("retry notices %+v: want the second counted, saying 503", sink.retries)
	}
}

// Queries that never get an answer are asked again quickly a bounded
// number of times, then back off, counted: a server out of reach still
// ends the upload after MaxRetries.
func TestStatusNeverAnsweredGivesUp(t *testing.T) {
	f := cutThen(t, func(n int, w http.ResponseWriter) bool {
		hangUp(w)
		return true
	})
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Clock: clock, Retry: RetryPolicy{Base: 50 * time.Second, MaxRetries: 1}, Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, 6*ChunkQuantum)
	err, waits := driveTimers(t, clock, runUpload(t, u, uploadRecord(t, f.url(), path, 2*ChunkQuantum), nil), time.Minute)
	if !errors.Is(err, ErrGaveUp) {
		t.Fatalf("got %v, want it to give up", err)
	}
	// The jitter, then for each of the two counted backoffs (n = 0, 1) the
	// quick queries before it; the third counted failure ends it.
	backoffs := 0
	for _, w := range waits[1:] {
		if w >= 50*time.Second {
			backoffs++
		} else if w > askAgainCap {
			t.Errorf("a wait of %s between quick queries", w)
		}
	}
	if backoffs != 2 || f.count("status") != 3*(askAgainTries+1) {
		t.Errorf("waits %v, %d status queries: want %d quick queries around each of 2 backoffs", waits, f.count("status"), askAgainTries)
	}
}
