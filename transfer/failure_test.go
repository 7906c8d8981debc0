package transfer

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Network errors from net/http carry the whole URL, upload_id included;
// none of it may reach an error, an event or the journal's error field.
func TestNoSessionURIInErrorsOrEvents(t *testing.T) {
	cases := []struct {
		name string
		hook func(f *fakeServer) func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool
	}{
		{"resets", func(f *fakeServer) func(string, int, http.ResponseWriter, *http.Request, *fakeSession) bool {
			return func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "chunk" || kind == "status" {
					hangUp(w)
					return true
				}
				return false
			}
		}},
		{"server gone", func(f *fakeServer) func(string, int, http.ResponseWriter, *http.Request, *fakeSession) bool {
			return func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "chunk" {
					// Connection refused from here on.
					go f.srv.Close()
					hangUp(w)
					return true
				}
				return false
			}
		}},
		{"error naming the session", func(f *fakeServer) func(string, int, http.ResponseWriter, *http.Request, *fakeSession) bool {
			return func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "chunk" || kind == "status" {
					googleError(w, 400, "INVALID_ARGUMENT", "invalid", "bad request to "+r.URL.String())
					return true
				}
				return false
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.hook = c.hook(f)
			h := newHarness(t, Config{MaxRetries: 2})
			path, _ := writeFile(t, 1000)
			id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
			e := h.finish(id)
			if e.Kind != EventFailed {
				t.Fatalf("got %s", e)
			}
			rec, _ := h.q.Job(id)
			var texts []string
			for _, e := range h.seen {
				texts = append(texts, e.String(), e.Reason, e.Message)
				if e.Err != nil {
					texts = append(texts, e.Err.Error())
				}
			}
			texts = append(texts, rec.Error)
			retried := false
			for _, s := range texts {
				if strings.Contains(s, "SECRET") || strings.Contains(s, "upload_id="+"S") {
					t.Errorf("leaked the session: %q", s)
				}
				retried = retried || strings.Contains(s, "upload session at")
			}
			if c.name != "error naming the session" && !retried {
				t.Errorf("no network error was reported, so the test proved nothing: %q", texts)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		`Put "http://h/u?uploadType=resumable&upload_id=ABC": EOF`: `Put "http://h/u?uploadType=resumable&upload_id=REDACTED": EOF`,
		"access_token=xyz&b=1": "access_token=REDACTED&b=1",
		"plain words":          "plain words",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStalledRequestIsAbandoned(t *testing.T) {
	const Q = ChunkQuantum
	for _, where := range []string{"body", "answer"} {
		t.Run(where, func(t *testing.T) {
			f := newFake(t)
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "chunk" && n == 2 {
					if where == "answer" {
						// Read everything, then never answer.
						buf := make([]byte, 32<<10)
						for {
							if _, err := r.Body.Read(buf); err != nil {
								break
							}
						}
					}
					f.hold(r)
					return true
				}
				return false
			}
			h := newHarness(t, Config{StallTimeout: 300 * time.Millisecond})
			path, data := writeFile(t, 3*Q)
			id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
			if resourceSHA(t, h.mustDone(id)) != sha(data) {
				t.Fatal("bytes differ")
			}
			found := false
			for _, e := range h.seen {
				found = found || e.Kind == EventRetrying && strings.Contains(e.Reason, "stall")
			}
			if !found {
				t.Error("no retrying event naming the stall")
			}
			if f.count("status") < 1 {
				t.Error("a stalled chunk must be followed by a status query")
			}
		})
	}
}

// A wake cuts a backoff short: the job asks its session at once.
func TestWakeSkipsBackoff(t *testing.T) {
	const Q = ChunkQuantum
	clock := NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 1 {
			googleError(w, 503, "UNAVAILABLE", "backendError", "down")
			return true
		}
		return false
	}
	h := newHarness(t, Config{Clock: clock, RetryBase: 50 * time.Second, StallTimeout: 10 * time.Hour})
	path, data := writeFile(t, 2*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	e := h.next(EventRetrying)
	if e.Wait < 50*time.Second {
		t.Fatalf("wait %s, want at least the base", e.Wait)
	}
	statusBefore := f.count("status")
	clock.Suspend(8 * time.Hour)
	clock.Advance(DefaultWakeCheck) // the wake detector's tick: far less than the backoff
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if f.count("status") != statusBefore+1 {
		t.Errorf("the wake must lead to a status query")
	}
}

// A wake abandons a request in flight that would otherwise wait for the
// stall timeout.
func TestWakeAbandonsRequestInFlight(t *testing.T) {
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
	path, data := writeFile(t, 3*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the second chunk never came")
	}
	clock.Suspend(time.Hour)
	clock.Advance(DefaultWakeCheck)
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	woke := false
	for _, e := range h.seen {
		if e.Kind == EventRetrying {
			woke = woke || strings.Contains(e.Reason, "woke")
			if e.Wait != 0 {
				t.Errorf("after a wake no backoff: %s", e)
			}
		}
	}
	if !woke {
		t.Error("no retrying event naming the wake")
	}
}

func TestSleepGap(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if g := sleepGap(t0, 0, t0.Add(5*time.Second), 5*time.Second); g != 0 {
		t.Errorf("awake: gap %s", g)
	}
	if g := sleepGap(t0, 0, t0.Add(time.Hour+5*time.Second), 5*time.Second); g != time.Hour {
		t.Errorf("slept an hour: gap %s", g)
	}
	// The real clock: both readings from time.Now, so no gap.
	c := SystemClock()
	w0, m0 := c.Now(), c.Elapsed()
	if g := sleepGap(w0, m0, c.Now(), c.Elapsed()); g > time.Second || g < -time.Second {
		t.Errorf("system clock gap %s without sleeping", g)
	}
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		h    string
		want int64
		bad  bool
	}{
		{"", 0, false},
		{"bytes=0-42", 43, false},
		{"0-42", 43, false},
		{"bytes=0-0", 1, false},
		{" bytes=0-262143 ", 262144, false},
		{"bytes=5-42", 0, true},
		{"bytes=0-", 0, true},
		{"garbage", 0, true},
		{"bytes=0-9223372036854775807", 0, true},
		{"bytes=0--1", 0, true},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.h != "" {
			h.Set("Range", c.h)
		}
		got, err := parseRange(h)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("parseRange(%q) = %d, %v; want %d, bad=%v", c.h, got, err, c.want, c.bad)
		}
	}
}

func TestParseAPIError(t *testing.T) {
	e := parseAPIError(403, []byte(`{"error":{"code":403,"message":"Rate Limit Exceeded","errors":[{"message":"Rate Limit Exceeded","domain":"usageLimits","reason":"userRateLimitExceeded"}],"status":"PERMISSION_DENIED"}}`))
	if !e.rateLimited() || e.Message != "Rate Limit Exceeded" || e.Status != "PERMISSION_DENIED" {
		t.Errorf("%+v", e)
	}
	e = parseAPIError(502, []byte("<html>\nBad gateway</html>"))
	if e.Message != "<html>" || classify(e) != classRetry {
		t.Errorf("%+v", e)
	}
	if classify(parseAPIError(403, []byte(`{"error":{"errors":[{"reason":"forbidden"}]}}`))) != classFatal {
		t.Error("403 forbidden must be fatal")
	}
}

func TestCancelledContextIsNotAFailure(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" {
			f.hold(r)
			return true
		}
		return false
	}
	h := newHarness(t, Config{})
	path, _ := writeFile(t, 1000)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	h.next(EventStarted)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := h.q.Wait(ctx, id); err == nil {
		t.Fatal("Wait returned before the job ended")
	}
	h.q.Close()
	rec, err := h.q.journal.Load(id)
	if err != nil || rec.State != StateQueued || rec.Session == "" {
		t.Fatalf("a closed queue leaves the job queued with its session: %+v %v", rec, err)
	}
}
