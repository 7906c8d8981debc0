package transfer

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Servers that misbehave, on purpose or not, get nothing out of Carrier
// and cannot make it spin.

// A server that answers every chunk with the same 308 is not sent to
// forever: each answer that keeps none of the bytes is a failure, counted
// against the retry limit.
func TestNoProgressIsAFailure(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n > 1 {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", Q-1))
			w.WriteHeader(http.StatusPermanentRedirect)
			return true
		}
		return false
	}
	h := newHarness(t, Config{MaxRetries: 3})
	path, _ := writeFile(t, 4*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	e := h.finish(id)
	if e.Kind != EventFailed || !errors.Is(e.Err, ErrGaveUp) || !strings.Contains(e.Message, "kept none of the bytes") {
		t.Fatalf("got %s", e)
	}
	// One chunk kept, one sent again at once (a server may drop a chunk),
	// then a failure per answer: waits for n = 0..3, then the end.
	if n := f.count("chunk"); n != 7 {
		t.Errorf("%d chunks sent to a server that keeps nothing, want 7", n)
	}
}

// An https upload never goes on over http, whatever the server says.
func TestHTTPSessionForHTTPSRefused(t *testing.T) {
	var sessionHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sessionHits.Add(1) }))
	defer plain.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", plain.URL+"/upload?upload_id=SECRET")
		w.WriteHeader(http.StatusOK)
	}))
	defer tls.Close()
	path, _ := writeFile(t, 1000)
	u := NewUploader(Uploader{Client: tls.Client()})
	_, err := u.Upload(ctxT(t), Work{Record: uploadRecord(t, tls.URL+"/upload/x", path, ChunkQuantum)})
	if err == nil || !strings.Contains(err.Error(), "not https") {
		t.Fatalf("err %v", err)
	}
	if sessionHits.Load() != 0 {
		t.Fatal("bytes went over http")
	}
}

// A server's words reach people without control characters.
func TestServerTextMadePrintable(t *testing.T) {
	e := parseAPIError(400, []byte(`{"error":{"message":"bad \u001b[31mred\u001b[0m\r\nX-Fake: 1 \u0085 \u007f"}}`))
	for _, r := range e.Message {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			t.Fatalf("control character %U in %q", r, e.Message)
		}
	}
	if !strings.Contains(e.Message, "red") {
		t.Fatalf("message lost its words: %q", e.Message)
	}
}
