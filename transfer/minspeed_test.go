package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// trickleServer is a transport standing in for a server behind a link
// that takes a few bytes of a chunk only when the test says (step), so
// the body's pace is set in fake time; with step nil it takes what the
// body gives. Status queries say nothing is stored.
type trickleServer struct {
	step  chan struct{}
	piece int
}

func (s *trickleServer) RoundTrip(r *http.Request) (*http.Response, error) {
	answer := func(code int, h http.Header, body string) *http.Response {
		if h == nil {
			h = http.Header{}
		}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}
	}
	q := r.URL.Query()
	cr := r.Header.Get("Content-Range")
	switch {
	case q.Get("upload_id") == "":
		return answer(200, http.Header{"Location": {r.URL.String() + "&upload_id=S"}}, ""), nil
	case strings.HasPrefix(cr, "bytes */"):
		return answer(308, nil, ""), nil
	}
	buf := make([]byte, s.piece)
	var n int64
	for {
		if s.step != nil {
			select {
			case <-r.Context().Done():
				return nil, r.Context().Err()
			case <-s.step:
			}
		}
		m, err := r.Body.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return answer(200, http.Header{"Content-Type": {"application/json"}}, fmt.Sprintf(`{"size":%d}`, n)), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

type noticeSink struct {
	nopSink
	retries chan RetryNotice
}

func (s noticeSink) Retrying(n RetryNotice) { s.retries <- n }

// A link that moves 100 B/s keeps the stall timer quiet, but the minimum
// speed (1 KiB/s over 60 s) abandons the request and says why.
func TestMinSpeedAbandonsATrickle(t *testing.T) {
	srv := &trickleServer{step: make(chan struct{}), piece: 100}
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Client: &http.Client{Transport: srv}, Clock: clock, Stall: 30 * time.Second,
		Retry: RetryPolicy{Base: 50 * time.Second}, MinSpeed: MinSpeed{Rate: 1 << 10, Window: 60 * time.Second}})
	path, _ := writeFile(t, 64<<10)
	sink := noticeSink{retries: make(chan RetryNotice, 4)}
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := u.Upload(ctx, Work{Record: uploadRecord(t, "http://carrier.test/upload?name=x", path, ChunkQuantum), Sink: sink})
		done <- err
	}()
	for sec := 0; ; {
		// The clock moves only while the watchdog waits on its timer: on
		// a busy machine its goroutine may not have run since its last
		// tick fired, and the trickle would run on unwatched.
		armed := clock.TimerAdded()
		step := srv.step
		if n, _ := clock.Timers(); n == 0 {
			step = nil
		}
		select {
		case step <- struct{}{}:
			clock.Advance(time.Second)
			sec++
		case <-armed:
		case n := <-sink.retries:
			if !strings.Contains(n.Reason, "slower than 1 KiB/s for 60 s, so the request was abandoned") {
				t.Fatalf("the request was abandoned for %q", n.Reason)
			}
			if sec < 60 || sec > 80 {
				t.Errorf("abandoned after %d s of trickle; the window is 60 s", sec)
			}
			if n.Wait > quickAskMax {
				t.Errorf("waits %s before asking the session", n.Wait)
			}
			cancel()
			<-done
			return
		case err := <-done:
			t.Fatalf("the upload ended: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatalf("nothing after %d s of trickle", sec)
		}
	}
}

// A request the bandwidth limit holds to 200 B/s, below the minimum speed,
// is not abandoned for it: the limit, not the link, holds the bytes back.
func TestMinSpeedSparesAThrottledUpload(t *testing.T) {
	srv := &trickleServer{piece: 4096}
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	u := NewUploader(Uploader{Client: &http.Client{Transport: srv}, Clock: clock, Stall: 30 * time.Second,
		Limit: NewLimiter(200, clock), MinSpeed: MinSpeed{Rate: 1 << 10, Window: 60 * time.Second}})
	path, _ := writeFile(t, 32<<10)
	sink := noticeSink{retries: make(chan RetryNotice, 4)}
	done := make(chan error, 1)
	go func() {
		_, err := u.Upload(ctxT(t), Work{Record: uploadRecord(t, "http://carrier.test/upload?name=x", path, ChunkQuantum), Sink: sink})
		done <- err
	}()
	stop := make(chan struct{})
	defer close(stop)
	go driveLimit(clock, stop)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case n := <-sink.retries:
		t.Fatalf("the throttled request was abandoned: %s", n.Reason)
	case <-time.After(20 * time.Second):
		t.Fatal("the upload did not end")
	}
	if el := clock.Elapsed(); el < 120*time.Second {
		t.Errorf("32 KiB at 200 B/s took %s of clock time: the limit did not hold it", el)
	}
}

func TestParseMinSpeed(t *testing.T) {
	for in, want := range map[string]MinSpeed{
		"10k/60s": {10 << 10, time.Minute},
		"1k":      {1 << 10, DefaultMinSpeed.Window},
		"500B/2m": {500, 2 * time.Minute},
		"off":     {Rate: -1},
	} {
		got, err := ParseMinSpeed(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast/60s", "10k/soon", "10k/-5s", "0/60s"} {
		if _, err := ParseMinSpeed(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	var ne *NetError
	if err := (&NetError{Op: "send bytes 0-1", Where: "x", Err: tooSlow(DefaultMinSpeed)}); !errors.As(error(err), &ne) || !strings.Contains(err.Error(), "slower than 1 KiB/s for 60 s, so the request was abandoned") {
		t.Errorf("words: %v", err)
	}
}
