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

// The rule's arithmetic, sample by sample in fake time: a body is too
// slow only once a sample a whole window old exists (exactly a window
// counts) and fewer bytes than the rate times the time since it went out
// after it (exactly the rate is not too slow); a body read whole, a rule
// off, or a limit that held bytes back within the window (exactly a
// window ago is outside it) never is.
func TestMinSpeedBrokenSampleBySample(t *testing.T) {
	const w = 60 * time.Second
	rule := MinSpeed{Rate: 100, Window: w} // 100 B/s: 6,000 B a window
	type step struct {
		at        time.Duration
		n         int64 // bytes gone by then
		throttled time.Duration
		want      bool
	}
	none := time.Duration(-1)
	for _, c := range []struct {
		name   string
		rule   MinSpeed
		length int64
		steps  []step
	}{
		{"not a window old yet", rule, 1 << 20, []step{{0, 0, none, false}, {59 * time.Second, 10, none, false}}},
		{"a window old, too slow", rule, 1 << 20, []step{{0, 0, none, false}, {w, 5999, none, true}}},
		{"a window old, exactly the rate", rule, 1 << 20, []step{{0, 0, none, false}, {w, 6000, none, false}}},
		{"the base is the newest sample a window old", rule, 1 << 20, []step{
			{0, 0, none, false}, {10 * time.Second, 5000, none, false}, {70 * time.Second, 10999, none, true}}},
		{"the newest base, not the oldest", rule, 1 << 20, []step{
			{0, 0, none, false}, {10 * time.Second, 5000, none, false}, {70 * time.Second, 11000, none, false}}},
		{"samples older than the base are let go", rule, 1 << 20, []step{
			{0, 0, none, false}, {10 * time.Second, 1000, none, false}, {70 * time.Second, 7000, none, false},
			{71 * time.Second, 7099, none, true}}},
		{"read whole", rule, 6000, []step{{0, 0, none, false}, {w, 6000, none, false}}},
		{"read whole, short of the rate", rule, 100, []step{{0, 0, none, false}, {w, 100, none, false}}},
		{"off", MinSpeed{Rate: -1, Window: w}, 1 << 20, []step{{0, 0, none, false}, {2 * w, 0, none, false}}},
		{"a rate of 0 is on, and never trips", MinSpeed{Rate: 0, Window: w}, 1 << 20, []step{{0, 0, none, false}, {2 * w, 0, none, false}}},
		{"throttled within the window", rule, 1 << 20, []step{{0, 0, none, false}, {w, 10, 1 * time.Second, false}}},
		{"throttled at the clock's start, a window ago", rule, 1 << 20, []step{{0, 0, 0, false}, {w, 10, 0, true}}},
		{"throttled just inside the window", rule, 1 << 20, []step{{0, 0, none, false}, {2 * w, 10, w + time.Nanosecond, false}}},
		{"throttled exactly a window ago", rule, 1 << 20, []step{{0, 0, none, false}, {2 * w, 10, w, true}}},
	} {
		body := &progressBody{}
		s := &speedRule{rule: c.rule, body: body, length: c.length}
		for i, st := range c.steps {
			body.mu.Lock()
			body.n = st.n
			body.mu.Unlock()
			body.throttled.Store(int64(st.throttled) + 1)
			if got := s.broken(st.at); got != st.want {
				t.Errorf("%s: step %d (%d B at %s): broken %v, want %v", c.name, i, st.n, st.at, got, st.want)
			}
		}
		if c.name == "samples older than the base are let go" && len(s.samples) != 3 {
			t.Errorf("%s: %d samples held, want 3 (from the base at 10 s on)", c.name, len(s.samples))
		}
	}
	var nobody *speedRule
	if nobody.broken(time.Hour) || (&speedRule{rule: rule}).broken(time.Hour) {
		t.Error("a request with no rule or no body was broken")
	}
}

// The rule in words and its sampling period.
func TestMinSpeedWordsAndPeriod(t *testing.T) {
	for r, want := range map[int64]string{
		1023: "1023 B/s", 1 << 10: "1 KiB/s", 1536: "1.5 KiB/s", 1<<20 - 1: "1023.9990234375 KiB/s",
		1 << 20: "1 MiB/s", 3 << 19: "1.5 MiB/s",
	} {
		if got := humanRate(r); got != want {
			t.Errorf("humanRate(%d) = %q, want %q", r, got, want)
		}
	}
	for m, want := range map[MinSpeed]string{
		{Rate: -1}: "off", {Rate: 0, Window: time.Second}: "0 B/s for 1 s",
		{Rate: 10 << 10, Window: 90 * time.Second}: "10 KiB/s for 90 s", {Rate: 512, Window: 1500 * time.Millisecond}: "512 B/s for 1.5 s",
	} {
		if got := m.String(); got != want {
			t.Errorf("%+v: %q, want %q", m, got, want)
		}
	}
	for window, want := range map[time.Duration]time.Duration{
		60 * time.Second: 15 * time.Second, 40 * time.Millisecond: 10 * time.Millisecond, 20 * time.Millisecond: 10 * time.Millisecond,
	} {
		if got := (&speedRule{rule: MinSpeed{Rate: 1, Window: window}}).every(); got != want {
			t.Errorf("a window of %s is sampled every %s, want %s", window, got, want)
		}
	}
	if err := (MinSpeed{Window: -time.Second}).check(); err == nil {
		t.Error("a negative window passed the check")
	}
	if err := (MinSpeed{}).check(); err != nil {
		t.Errorf("a zero window: %v", err)
	}
	for _, in := range []string{"10k/0s", "  off  ", "OFF"} {
		m, err := ParseMinSpeed(in)
		if in == "10k/0s" && err == nil || in != "10k/0s" && (err != nil || !m.off()) {
			t.Errorf("%q: %+v, %v", in, m, err)
		}
	}
}
