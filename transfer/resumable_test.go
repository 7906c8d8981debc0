package transfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestResumableSizesAndChunks(t *testing.T) {
	const Q = ChunkQuantum
	for _, size := range []int64{0, 1, Q - 1, Q, Q + 1, 3*Q + 5} {
		for _, chunk := range []int64{Q, 2 * Q, 0} {
			t.Run(fmt.Sprintf("size=%d/chunk=%d", size, chunk), func(t *testing.T) {
				f := newFake(t)
				h := newHarness(t, Config{})
				path, data := writeFile(t, size)
				id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: chunk, Metadata: []byte(`{"name":"obj"}`)})
				resp := h.mustDone(id)
				if resp.Status != 201 {
					t.Errorf("status %d, want 201 for a POST session", resp.Status)
				}
				if got := resourceSHA(t, resp); got != sha(data) {
					t.Errorf("server stored different bytes")
				}
				comp, recv, sessions := f.stats()
				if comp != 1 || sessions != 1 || recv != size {
					t.Errorf("completions=%d sessions=%d received=%d, want 1, 1, %d", comp, sessions, recv, size)
				}
				eff := chunk
				if eff == 0 {
					eff = DefaultChunkSize
				}
				for _, l := range f.log {
					if !strings.HasPrefix(l, "chunk bytes ") || strings.HasPrefix(l, "chunk bytes */") {
						continue
					}
					span, _, _ := strings.Cut(strings.TrimPrefix(l, "chunk bytes "), "/")
					a, b, _ := strings.Cut(span, "-")
					first, _ := strconv.ParseInt(a, 10, 64)
					last, _ := strconv.ParseInt(b, 10, 64)
					if n := last - first + 1; n > eff || (last != size-1 && n%Q != 0) {
						t.Errorf("chunk %s: %d bytes breaks the chunk rules", span, n)
					}
				}
				rec, _ := h.q.record(id)
				if rec.State != StateDone || rec.Confirmed != size || rec.Session == "" {
					t.Errorf("record: state=%s confirmed=%d", rec.State, rec.Confirmed)
				}
			})
		}
	}
}

func TestResumable308Forms(t *testing.T) {
	const Q = ChunkQuantum
	cases := []struct {
		name  string
		setup func(f *fakeServer)
	}{
		{"bare range 0-N", func(f *fakeServer) {
			f.rangeForm = func(last int64) string { return "0-" + strconv.FormatInt(last, 10) }
		}},
		{"200 with override", func(f *fakeServer) { f.override = true }},
		{"308 without Range keeps nothing once", func(f *fakeServer) {
			// The first chunk is dropped entirely: 308 with no Range means
			// zero bytes stored, and the client must send them again.
			f.keep = func(s *fakeSession, stored, arrived int64) int64 {
				if f.counts["chunk"] == 1 {
					return 0
				}
				return stored + arrived
			}
		}},
		{"partial persistence", func(f *fakeServer) {
			// Keep one quantum less than arrived, as servers may. A chunk
			// of one quantum (the engine shrinks chunks to it when they
			// go slowly, as on a loaded machine) is kept whole: a server
			// that kept nothing of it would never let an upload finish.
			f.keep = func(s *fakeSession, stored, arrived int64) int64 {
				if stored+arrived == s.size || arrived <= Q {
					return stored + arrived
				}
				return stored + arrived - Q
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			c.setup(f)
			h := newHarness(t, Config{})
			path, data := writeFile(t, 5*Q+17)
			id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: 2 * Q})
			resp := h.mustDone(id)
			if resourceSHA(t, resp) != sha(data) {
				t.Fatal("bytes differ")
			}
			if comp, _, sessions := f.stats(); comp != 1 || sessions != 1 {
				t.Errorf("completions=%d sessions=%d", comp, sessions)
			}
			for _, e := range h.seen {
				if e.Kind == EventRetrying || e.Kind == EventFailed {
					t.Errorf("a server storing less is progress, not an error: %s", e)
				}
			}
		})
	}
}

// The answer to the last chunk is lost after the server stored it: the
// status query finds the resource, and nothing is sent again.
func TestLostFinalAnswerNeverSendsTwice(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	path, data := writeFile(t, 2*Q+3)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && strings.HasSuffix(r.Header.Get("Content-Range"), fmt.Sprintf("-%d/%d", 2*Q+2, 2*Q+3)) {
			f.session(discardWriter{}, r, s) // store it...
			hangUp(w)                        // ...and lose the answer
			return true
		}
		return false
	}
	h := newHarness(t, Config{})
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	resp := h.mustDone(id)
	if resp.Status != 201 || resourceSHA(t, resp) != sha(data) {
		t.Fatalf("response %d %s", resp.Status, resp.Body)
	}
	comp, recv, _ := f.stats()
	if comp != 1 || recv != 2*Q+3 {
		t.Errorf("completions=%d received=%d: sent something twice", comp, recv)
	}
	if f.count("status") != 1 || f.count("chunk") != 3 {
		t.Errorf("status queries=%d chunks=%d, want 1 and 3", f.count("status"), f.count("chunk"))
	}
}

type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

func TestFailuresThenResume(t *testing.T) {
	const Q = ChunkQuantum
	cases := []struct {
		name string
		fail func(w http.ResponseWriter, r *http.Request)
	}{
		{"503", func(w http.ResponseWriter, r *http.Request) {
			googleError(w, 503, "UNAVAILABLE", "backendError", "try later")
		}},
		{"500", func(w http.ResponseWriter, r *http.Request) { googleError(w, 500, "INTERNAL", "backendError", "oops") }},
		{"reset", func(w http.ResponseWriter, r *http.Request) { hangUp(w) }},
		{"429", func(w http.ResponseWriter, r *http.Request) {
			googleError(w, 429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "slow down")
		}},
		{"403 userRateLimitExceeded", func(w http.ResponseWriter, r *http.Request) {
			googleError(w, 403, "PERMISSION_DENIED", "userRateLimitExceeded", "slow down")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "chunk" && (n == 2 || n == 3) || kind == "status" && n == 1 || kind == "start" && n == 1 {
					c.fail(w, r)
					return true
				}
				return false
			}
			h := newHarness(t, Config{})
			path, data := writeFile(t, 4*Q)
			id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
			resp := h.mustDone(id)
			if resourceSHA(t, resp) != sha(data) {
				t.Fatal("bytes differ")
			}
			if comp, _, sessions := f.stats(); comp != 1 || sessions != 1 {
				t.Errorf("completions=%d sessions=%d", comp, sessions)
			}
			retries := 0
			for _, e := range h.seen {
				if e.Kind == EventRetrying {
					retries++
					if e.Reason == "" {
						t.Errorf("retrying without a reason")
					}
				}
			}
			if retries != 4 {
				t.Errorf("%d retrying events, want 4 (start, two chunks, one status)", retries)
			}
			if f.count("status") < 2 {
				t.Errorf("a failed chunk must be followed by a status query")
			}
		})
	}
}

func TestGivesUpAfterMaxRetries(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" || kind == "status" {
			googleError(w, 503, "UNAVAILABLE", "backendError", "down")
			return true
		}
		return false
	}
	h := newHarness(t, Config{MaxRetries: 3})
	path, _ := writeFile(t, 1000)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	e := h.finish(id)
	if e.Kind != EventFailed || !strings.Contains(e.Message, "gave up") || !strings.Contains(e.Message, "503") {
		t.Fatalf("got %s", e)
	}
	// n = 0..3 waits: 4 retries after the first failure, 5 requests.
	if got := f.count("chunk") + f.count("status"); got != 5 {
		t.Errorf("%d requests, want 5", got)
	}
	rec, _ := h.q.record(id)
	if !rec.Retryable || rec.Session == "" {
		t.Errorf("a transient failure must keep the session and be retryable: %+v", rec)
	}
}

func TestProgressResetsBackoff(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	// Every chunk fails once after storing half of it: progress each time,
	// so the job never runs out of retries even with MaxRetries 1.
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n%2 == 1 {
			f.keep = func(s *fakeSession, stored, arrived int64) int64 {
				if stored+arrived == s.size {
					return s.size
				}
				return stored + arrived/2/Q*Q
			}
			f.session(discardWriter{}, r, s)
			googleError(w, 503, "UNAVAILABLE", "backendError", "down")
			return true
		}
		return false
	}
	h := newHarness(t, Config{MaxRetries: 1})
	path, data := writeFile(t, 8*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: 2 * Q})
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	for _, e := range h.seen {
		if e.Kind == EventRetrying && e.Attempt > 1 {
			t.Errorf("attempt %d: progress should have reset the count", e.Attempt)
		}
	}
}

func TestBackoffWait(t *testing.T) {
	base := time.Second
	for n := 0; n <= 8; n++ {
		lo := min(base<<n, maxWait)
		for range 50 {
			w := backoffWait(base, n)
			if w < lo || w > min(lo+base, maxWait) || w >= time.Minute {
				t.Fatalf("n=%d: wait %s outside [%s, %s]", n, w, lo, lo+base)
			}
		}
	}
	if backoffWait(0, 3) != 0 {
		t.Error("zero base must not wait")
	}
}

func TestSessionGone(t *testing.T) {
	const Q = ChunkQuantum
	for _, code := range []int{404, 410} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			f := newFake(t)
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if s != nil && s.id == "SECRET-1" && kind == "chunk" && n == 2 {
					f.mu.Lock()
					s.gone = true
					f.mu.Unlock()
				}
				if s != nil && s.gone && kind != "start" {
					googleError(w, code, "NOT_FOUND", "notFound", "gone")
					return true
				}
				return false
			}
			h := newHarness(t, Config{})
			path, data := writeFile(t, 3*Q)
			id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
			if resourceSHA(t, h.mustDone(id)) != sha(data) {
				t.Fatal("bytes differ")
			}
			comp, _, sessions := f.stats()
			if comp != 1 || sessions != 2 {
				t.Errorf("completions=%d sessions=%d, want 1 and 2", comp, sessions)
			}
			if f.count("status") < 1 {
				t.Error("a 404 on a chunk must be checked with a status query before starting over")
			}
		})
	}
}

func TestAuth(t *testing.T) {
	t.Run("401 once then refresh", func(t *testing.T) {
		f := newFake(t)
		f.token = "new"
		tok := "old"
		refreshes := 0
		src := TokenFunc(func(_ context.Context, refresh bool) (string, error) {
			if refresh {
				refreshes++
				tok = "new"
			}
			return tok, nil
		})
		h := newHarness(t, Config{Auth: src})
		path, data := writeFile(t, 100)
		id := h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path})
		if resourceSHA(t, h.mustDone(id)) != sha(data) {
			t.Fatal("bytes differ")
		}
		if refreshes != 1 {
			t.Errorf("%d refreshes, want 1", refreshes)
		}
	})
	t.Run("401 after refresh fails", func(t *testing.T) {
		f := newFake(t)
		f.token = "right"
		h := newHarness(t, Config{Auth: StaticToken("wrong")})
		path, _ := writeFile(t, 100)
		id := h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path})
		e := h.finish(id)
		if e.Kind != EventFailed || !strings.Contains(e.Message, "401") || !errors.Is(e.Err, ErrCannotRefresh) {
			t.Fatalf("got %s", e)
		}
		if f.count("start") != 1 {
			t.Errorf("a static token cannot be refreshed: %d starts, want 1", f.count("start"))
		}
	})
	t.Run("token only to the target's host", func(t *testing.T) {
		f := newFake(t)
		f.token = "tok"
		var sessionAuth []string
		f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
			if kind == "chunk" {
				sessionAuth = append(sessionAuth, r.Header.Get("Authorization"))
			}
			return false
		}
		h := newHarness(t, Config{Auth: StaticToken("tok")})
		path, _ := writeFile(t, 100)
		id := h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path})
		h.mustDone(id)
		if len(sessionAuth) != 1 || sessionAuth[0] != "Bearer tok" {
			t.Errorf("same-host session requests carry the token: %q", sessionAuth)
		}
	})
}

func TestOtherClientErrorsFailWithServerMessage(t *testing.T) {
	cases := []struct {
		code   int
		reason string
	}{{400, "badContent"}, {403, "forbidden"}, {413, "uploadTooLarge"}}
	for _, c := range cases {
		t.Run(strconv.Itoa(c.code), func(t *testing.T) {
			f := newFake(t)
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "start" {
					googleError(w, c.code, "INVALID_ARGUMENT", c.reason, "Media type 'text/plain' is not supported. Valid media types: [message/*]")
					return true
				}
				return false
			}
			h := newHarness(t, Config{})
			path, _ := writeFile(t, 10)
			id := h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path})
			e := h.finish(id)
			if e.Kind != EventFailed || !strings.Contains(e.Message, "Media type 'text/plain' is not supported") {
				t.Fatalf("got %s", e)
			}
			var ae *APIError
			if !errors.As(e.Err, &ae) || ae.Code != c.code || ae.Reasons[0] != c.reason {
				t.Errorf("error %v", e.Err)
			}
			if f.count("start") != 1 {
				t.Errorf("a %d must not be retried", c.code)
			}
		})
	}
}
