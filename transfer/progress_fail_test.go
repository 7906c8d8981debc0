package transfer

import (
	"net/http"
	"os"
	"testing"
)

// Progress between durable saves is a courtesy: when it cannot be written
// (on Windows another process reading the file refuses the rename; here a
// folder squats its name) the upload goes on and finishes.
func TestUnwritableProgressDoesNotFailTheUpload(t *testing.T) {
	f := newFake(t)
	ready := make(chan struct{})
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 1 {
			<-ready
		}
		return false
	}
	h := newHarness(t, Config{})
	path, data := writeFile(t, 8*ChunkQuantum)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: ChunkQuantum})
	if err := os.Mkdir(h.q.journal.path(id, ".progress"), 0o700); err != nil {
		t.Fatal(err)
	}
	close(ready)
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
}
