package transfer

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A call that quotes the jobs it needs carries their results, as JSON
// strings in its order, where its template's NULs stand: a batch's
// creation names the upload tokens of uploads that ran after it was
// recorded, read from the journal.
func TestCallQuotesTheResultsOfTheJobsItNeeds(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/a":
			w.Write([]byte(" {\"t\":\"A\"}\n"))
		case "/b":
			w.Write([]byte(`{"t":"B"}`))
		case "/batch":
			got.Store(string(body))
			w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o600)
		return p
	}
	h := newHarness(t, Config{})
	a := h.add(Spec{URL: srv.URL + "/a", Type: Call, ContentType: "application/json", Path: file("a", "{}")})
	b := h.add(Spec{URL: srv.URL + "/b", Type: Call, ContentType: "application/json", Path: file("b", "{}")})
	tmpl := file("t", "{\"items\":[\x00,\x00],\"t\":\x00}")
	if _, err := h.q.Add(Spec{URL: srv.URL + "/batch", Type: Call, ContentType: "application/json", Path: tmpl, Quote: []string{a}}); err == nil || !strings.Contains(err.Error(), "does not need") {
		t.Fatalf("a call quoting a job it does not need was recorded: %v", err)
	}
	c := h.add(Spec{URL: srv.URL + "/batch", Type: Call, ContentType: "application/json", Path: tmpl, Needs: []string{a, b}, Quote: []string{b, a, a + ".t"}})
	h.mustDone(c)
	if want := `{"items":["{\"t\":\"B\"}","{\"t\":\"A\"}"],"t":"A"}`; got.Load() != want {
		t.Fatalf("the call sent %v, want %s", got.Load(), want)
	}
}

// A 429 that says the quota per day is used up fails at once with its
// cause, where a 429 for the minute is retried.
func TestDailyQuotaFailsAtOnceWithItsCause(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 && r.URL.Path == "/minute" {
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user'"}}`))
			return
		}
		if r.URL.Path == "/day" {
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded for quota metric 'All requests' and limit 'All requests per day'"}}`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(p, []byte("{}"), 0o600)
	h := newHarness(t, Config{})
	h.mustDone(h.add(Spec{URL: srv.URL + "/minute", Type: Call, ContentType: "application/json", Path: p}))
	calls.Store(0)
	id := h.add(Spec{URL: srv.URL + "/day", Type: Call, ContentType: "application/json", Path: p})
	e := h.finish(id)
	if e.Kind != EventFailed || !errors.Is(e.Err, ErrDailyQuota) || !strings.HasPrefix(e.Message, "the server's quota for the day is used up (it answered 429") {
		t.Fatalf("got %s, want a failure for the daily quota", e)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the day's quota was asked %d times, want once", n)
	}
	r, err := h.q.journal.Load(id)
	if err != nil || r.Cause != "daily-quota" || !r.Retryable {
		t.Fatalf("the journal keeps cause %q, retryable %v (%v)", r.Cause, r.Retryable, err)
	}
}

// Google's 409 ABORTED (Photos: another batchCreate of the person's was
// running) asks for the request again; it is retried, not failed.
func TestAbortedConflictIsRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":{"code":409,"status":"ABORTED","message":"Another call is running."}}`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(p, []byte("{}"), 0o600)
	h := newHarness(t, Config{})
	h.mustDone(h.add(Spec{URL: srv.URL + "/v1/mediaItems:batchCreate", Type: Call, ContentType: "application/json", Path: p}))
	if calls.Load() != 2 {
		t.Fatalf("%d calls", calls.Load())
	}
}
