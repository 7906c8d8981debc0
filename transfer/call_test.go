package transfer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// A Call job sends its file as the body of one plain request to the URL
// as given (no uploadType), and, being one its caller vouches for as
// idempotent, sends it again when the answer was lost or cut, where a
// Media upload would stop as may-have-arrived.
func TestCallIsAPlainRequestSentAgainWhenItsAnswerIsLost(t *testing.T) {
	for _, c := range []struct {
		name string
		lose func(w http.ResponseWriter) // the first answer's fate
	}{
		{"connection dropped after the body", func(w http.ResponseWriter) {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}},
		{"answer cut short", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"kind":"drive#permiss`))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			var bad atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if r.URL.RawQuery != "sendNotificationEmail=false" || r.Method != "POST" || string(body) != `{"type":"user","role":"reader","emailAddress":"zoe@example.com"}` || r.Header.Get("Content-Type") != "application/json" {
					bad.Store(r.Method + " " + r.URL.String() + " " + string(body))
				}
				if calls.Add(1) == 1 {
					c.lose(w)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"kind":"drive#permission","id":"p1","type":"user","role":"reader"}`))
			}))
			defer srv.Close()
			src := filepath.Join(t.TempDir(), "permission.json")
			os.WriteFile(src, []byte(`{"type":"user","role":"reader","emailAddress":"zoe@example.com"}`), 0o600)
			h := newHarness(t, Config{})
			id := h.add(Spec{URL: srv.URL + "/drive/v3/files/F1/permissions?sendNotificationEmail=false", Type: Call, ContentType: "application/json", Path: src})
			e := h.finish(id)
			if e.Kind != EventDone {
				t.Fatalf("got %s", e)
			}
			if v := bad.Load(); v != nil {
				t.Fatalf("the request was not the call as given: %v", v)
			}
			if calls.Load() != 2 {
				t.Fatalf("%d calls, want 2", calls.Load())
			}
		})
	}
}
