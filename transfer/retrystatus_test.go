package transfer

import (
	"io"
	"net/http"
	"testing"
)

// A retry says what failed by its cause: the HTTP status of a server's
// refusal (a 503 is the server's trouble, a 429 its request to slow
// down), 0 when no answer came, so a front end does not word a server's
// trouble as the network's.
func TestRetryCarriesTheStatus(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		switch {
		case kind == "start" && n == 1:
			googleError(w, 503, "UNAVAILABLE", "backendError", "try later")
		case kind == "start" && n == 2:
			googleError(w, 429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "slow down")
		case kind == "start" && n == 3:
			hangUp(w)
		default:
			return false
		}
		io.Copy(io.Discard, r.Body)
		return true
	}
	h := newHarness(t, Config{MaxRetries: 5})
	path, _ := writeFile(t, ChunkQuantum+5)
	id := h.add(Spec{URL: f.url(), Type: Resumable, ContentType: "application/octet-stream", Path: path, ChunkSize: ChunkQuantum})
	h.mustDone(id)
	var got []int
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.seen {
		if e.Job == id && e.Kind == EventRetrying && !e.Held {
			got = append(got, e.Status)
		}
	}
	if len(got) != 3 || got[0] != 503 || got[1] != 429 || got[2] != 0 {
		t.Fatalf("the retries' statuses: %v, want [503 429 0]", got)
	}
}
