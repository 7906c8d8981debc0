package transfer

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// cutAnswer stores a chunk as the fake would and sends back only the first
// n bytes of its answer, with the status the fake chose.
func cutAnswer(f *fakeServer, w http.ResponseWriter, r *http.Request, s *fakeSession, n int) []byte {
	rec := httptest.NewRecorder()
	f.session(rec, r, s)
	body := rec.Body.Bytes()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(rec.Code)
	w.Write(body[:min(n, len(body))])
	return body[:min(n, len(body))]
}

// The answer to the last chunk is cut to its first 16 bytes: the job is
// not done on that; the status query gives the resource, and the fragment
// is reported nowhere.
func TestCutFinishingAnswerAsksTheSession(t *testing.T) {
	const Q = ChunkQuantum
	for _, c := range []struct {
		name   string
		answer func(f *fakeServer, w http.ResponseWriter, r *http.Request, s *fakeSession) []byte
	}{
		{"cut to 16 bytes", func(f *fakeServer, w http.ResponseWriter, r *http.Request, s *fakeSession) []byte {
			return cutAnswer(f, w, r, s, 16)
		}},
		{"another size", func(f *fakeServer, w http.ResponseWriter, r *http.Request, s *fakeSession) []byte {
			f.session(discardWriter{}, r, s)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			b := []byte(`{"id":"other","size":"12"}`)
			w.Write(b)
			return b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			path, data := writeFile(t, 2*Q+3)
			var fragment []byte
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind == "chunk" && strings.HasSuffix(r.Header.Get("Content-Range"), "-"+itoa(2*Q+2)+"/"+itoa(2*Q+3)) {
					fragment = c.answer(f, w, r, s)
					return true
				}
				return false
			}
			h := newHarness(t, Config{})
			id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
			resp := h.mustDone(id)
			if bytes.Equal(resp.Body, fragment) || resourceSHA(t, resp) != sha(data) {
				t.Fatalf("done with %q: not the resource", resp.Body)
			}
			if f.count("status") != 1 {
				t.Errorf("%d status queries, want 1", f.count("status"))
			}
			if comp, recv, _ := f.stats(); comp != 1 || recv != 2*Q+3 {
				t.Errorf("completions=%d received=%d: sent something twice", comp, recv)
			}
			for _, e := range h.seen {
				if e.Response != nil && bytes.Equal(e.Response.Body, fragment) || e.Snap.Response != nil && bytes.Equal(e.Snap.Response.Body, fragment) {
					t.Errorf("event %s carries the fragment as the resource", e)
				}
				if strings.Contains(e.Reason, string(fragment)) || strings.Contains(e.Message, string(fragment)) {
					t.Errorf("event %s quotes the fragment", e)
				}
			}
			rec, _ := h.q.journal.Load(id)
			if rec.Response == nil || resourceSHA(t, rec.Response) != sha(data) {
				t.Errorf("journal holds %+v", rec.Response)
			}
		})
	}
}

// A server that never answers with the resource: the job fails, saying it
// may have arrived, and is never done.
func TestNeverAResourceIsMaybeSent(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" || kind == "status" {
			cutAnswer(f, w, r, s, 16)
			return true
		}
		return false
	}
	h := newHarness(t, Config{MaxRetries: 2})
	path, _ := writeFile(t, 1000)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	e := h.finish(id)
	if e.Kind != EventFailed || !errors.Is(e.Err, ErrMaybeSent) || !strings.Contains(e.Message, "uploaded resource") {
		t.Fatalf("got %s", e)
	}
	if got := f.count("chunk") + f.count("status"); got != 4 {
		t.Errorf("%d requests, want 4 (n = 0..2 waits)", got)
	}
	rec, _ := h.q.journal.Load(id)
	if rec.Cause != "maybe-sent" || rec.Response != nil || !rec.Retryable {
		t.Errorf("record: cause %q, response %v, retryable %v", rec.Cause, rec.Response, rec.Retryable)
	}
}

// A one-shot upload whose answer is cut short cannot be asked: it fails as
// may-have-arrived and is not sent again.
func TestOneShotCutAnswerIsMaybeSent(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		rec := httptest.NewRecorder()
		f.oneShot(rec, r, kind)
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes()[:16])
		return true
	}
	h := newHarness(t, Config{})
	path, _ := writeFile(t, 5000)
	id := h.add(Spec{URL: f.url(), Type: Media, ContentType: "image/png", Path: path})
	e := h.finish(id)
	if e.Kind != EventFailed || !errors.Is(e.Err, ErrMaybeSent) {
		t.Fatalf("got %s", e)
	}
	if f.count("media") != 1 {
		t.Errorf("%d sends", f.count("media"))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
