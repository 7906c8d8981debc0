package transfer

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Promises of events.go and oneshot.go found by a whole mutation run of
// the two files, each pinned by a test that fails when it breaks
// (docs/RELIABILITY.md, Mutation).

// A job scheduled with nothing sent says when its upload starts,
// ScheduleLead before its last bytes go; one whose session is open, or
// one not scheduled, says nothing of it.
func TestEdgeSnapshotSaysWhenAScheduledUploadStarts(t *testing.T) {
	sendAt := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name    string
		state   State
		session string
		want    time.Time
	}{
		{"scheduled, nothing sent", StateScheduled, "", sendAt.Add(-ScheduleLead)},
		{"scheduled, its session open", StateScheduled, "https://upload.example/s/1", time.Time{}},
		{"queued", StateQueued, "", time.Time{}},
	} {
		r := &Record{ID: "j", State: c.state, SendAt: sendAt}
		r.Session = c.session
		if got := r.Snapshot().UploadFrom; !got.Equal(c.want) {
			t.Errorf("%s: UploadFrom %v, want %v", c.name, got, c.want)
		}
	}
}

// Confirmations leave the pace's window by their age: one 9 s old at a
// confirmation 15 s into the upload stays, however far from the start.
func TestEdgeConfirmationsLeaveByTheirAge(t *testing.T) {
	s := time.Second
	var m confirmMeter
	for _, a := range []rateSample{{6 * s, 0}, {10 * s, 400}, {15 * s, 900}} {
		m.add(a.at, a.bytes)
	}
	want := confirmEstimate{bytes: 900, span: 9 * s, count: 2, at: 15 * s, left: 100}
	if got := m.estimate(1000); got != want {
		t.Errorf("%+v, want %+v (no confirmation is older than the window)", got, want)
	}
}

// A multipart body's boundary is drawn afresh for each body, so no file
// can be made to hold it: two bodies of the same media never share one.
func TestEdgeMultipartBoundaryIsDrawnForEachBody(t *testing.T) {
	boundary := func() string {
		_, _, ct := multipartBody(nil, "image/png", bytes.NewReader(nil), 0)
		_, params, err := mime.ParseMediaType(ct)
		if err != nil || len(params["boundary"]) < 40 {
			t.Fatalf("Content-Type %q (%v)", ct, err)
		}
		return params["boundary"]
	}
	if a, b := boundary(), boundary(); a == b {
		t.Errorf("two bodies share the boundary %q", a)
	}
}

// rateSink keeps an upload's last progress report and moves the upload's
// fake clock past each retry's wait as it is told.
type rateSink struct {
	clock *FakeClock
	mu    sync.Mutex
	sent  int64
	rate  float64
	waits time.Duration
}

func (s *rateSink) Checkpoint(Cursor, bool) error { return nil }
func (s *rateSink) Progress(sent int64, rate float64) {
	s.mu.Lock()
	s.sent, s.rate = sent, rate
	s.mu.Unlock()
}
func (s *rateSink) Retrying(n RetryNotice) {
	s.mu.Lock()
	s.waits += n.Wait
	s.mu.Unlock()
	s.clock.Advance(n.Wait)
}
func (s *rateSink) Retried() {}

// oneShotWritten sends a media upload of size bytes through a server
// whose first request is cut after 1000 bytes when cutFirst, and whose
// last is answered a second after its body was read. It gives the bytes
// the last report's write rate stands for: rate times the time gone.
func oneShotWritten(t *testing.T, size int64, cutFirst bool) float64 {
	t.Helper()
	clock := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	read, answer := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 && cutFirst {
			io.CopyN(io.Discard, r.Body, 1000)
			hangUp(w)
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		close(read)
		select {
		case <-answer:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","size":"` + strconv.FormatInt(n, 10) + `"}`))
	}))
	defer srv.Close()
	path, _ := writeFile(t, size)
	rec := uploadRecord(t, srv.URL+"/upload", path, ChunkQuantum)
	rec.Type, rec.ContentType = Media, "application/octet-stream"
	sink := &rateSink{clock: clock}
	u := NewUploader(Uploader{Clock: clock, Retry: RetryPolicy{Base: time.Millisecond}})
	done := make(chan error, 1)
	go func() {
		_, err := u.Upload(ctxT(t), Work{Record: rec, Sink: sink})
		done <- err
	}()
	select {
	case <-read:
	case err := <-done:
		t.Fatalf("the upload ended before its body was read: %v", err)
	}
	clock.Advance(time.Second)
	close(answer)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.sent != size {
		t.Errorf("the last report says %d bytes sent of %d", sink.sent, size)
	}
	return sink.rate * (time.Second + sink.waits).Seconds()
}

// A one-shot upload's write rate counts the bytes its body hands the
// connection: a file of 100000 bytes written in a second is 100000 B/s.
func TestEdgeOneShotWriteRateCountsItsBody(t *testing.T) {
	if got := oneShotWritten(t, 100000, false); got < 99999 || got > 100001 {
		t.Errorf("the write rate stands for %.0f bytes written, want 100000", got)
	}
}

// A one-shot upload sent again counts its bytes again from the start: the
// write rate stands for the first try's bytes and the whole file after.
// (The file is larger than the buffers between, so the cut comes before
// the whole body left: it is sent again.)
func TestEdgeOneShotSentAgainCountsItsBytesAgain(t *testing.T) {
	const size = 8 << 20
	if got := oneShotWritten(t, size, true); got < size+1000-1 {
		t.Errorf("the write rate stands for %.0f bytes written, want the whole file and the 1000 or more of the cut try", got)
	}
}
