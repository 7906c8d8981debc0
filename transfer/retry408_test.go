package transfer

import (
	"io"
	"net/http"
	"testing"
)

// 408 Request Timeout is retried like a 5xx, within the same budget, on
// every request of an upload (PROTOCOL.md section 5).
func Test408IsRetriedEverywhere(t *testing.T) {
	const Q = ChunkQuantum
	timeout := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		googleError(w, 408, "", "requestTimeout", "Request Timeout")
	}
	cases := []struct {
		name string
		typ  UploadType
		fail func(kind string, n int) bool
	}{
		{"start", Resumable, func(kind string, n int) bool { return kind == "start" && n == 1 }},
		{"chunk", Resumable, func(kind string, n int) bool { return kind == "chunk" && n == 2 }},
		// A 503 on a chunk makes the engine ask; the question gets a 408.
		{"status after a 503", Resumable, func(kind string, n int) bool { return kind == "status" && n == 1 }},
		{"media", Media, func(kind string, n int) bool { return kind == "media" && n == 1 }},
		{"multipart", Multipart, func(kind string, n int) bool { return kind == "multipart" && n == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			failed := 0
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if c.name == "status after a 503" && kind == "chunk" && n == 2 {
					io.Copy(io.Discard, r.Body)
					googleError(w, 503, "UNAVAILABLE", "backendError", "try later")
					return true
				}
				if c.fail(kind, n) {
					failed++
					timeout(w, r)
					return true
				}
				return false
			}
			h := newHarness(t, Config{MaxRetries: 2})
			path, data := writeFile(t, 3*Q+11)
			spec := Spec{URL: f.url(), Type: c.typ, ContentType: "application/octet-stream", Path: path, ChunkSize: Q}
			if c.typ == Multipart {
				spec.Metadata = []byte(`{"name":"obj"}`)
			}
			id := h.add(spec)
			e := h.finish(id)
			if e.Kind != EventDone {
				t.Fatalf("a 408 then success: the job ended %s", e)
			}
			if failed != 1 {
				t.Fatalf("the 408 was answered %d times", failed)
			}
			if resourceSHA(t, e.Response) != sha(data) {
				t.Fatal("the server holds other bytes than the file's")
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.completions != 1 || string(f.resources[0]) != string(data) {
				t.Fatalf("completions=%d: want the file exactly once", f.completions)
			}
		})
	}
}
