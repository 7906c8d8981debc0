package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The harness: a queue on a temporary journal whose events the test reads.

type harness struct {
	t      *testing.T
	q      *Queue
	events chan Event
	dir    string
	mu     sync.Mutex
	seen   []Event
	taken  map[int]bool // indexes of seen that await returned
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, events: make(chan Event, 4096)}
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	h.dir = cfg.StateDir
	if cfg.RetryBase == 0 {
		cfg.RetryBase = time.Millisecond
	}
	cfg.Events = h.events
	q, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.q = q
	t.Cleanup(func() { q.Close() })
	return h
}

// next returns the next event of one of the kinds (any kind when none),
// failing the test after a deadline.
func (h *harness) next(kinds ...EventKind) Event {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e := <-h.events:
			h.mu.Lock()
			h.seen = append(h.seen, e)
			h.mu.Unlock()
			if len(kinds) == 0 {
				return e
			}
			for _, k := range kinds {
				if e.Kind == k {
					return e
				}
			}
		case <-deadline:
			h.t.Fatalf("no %v event within the deadline", kinds)
		}
	}
}

// finish waits for the job's end (done, failed or cancelled).
func (h *harness) finish(id string) Event {
	h.t.Helper()
	return h.await(func(e Event) bool {
		return e.Job == id && (e.Kind == EventDone || e.Kind == EventFailed || e.Kind == EventCancelled)
	})
}

func (h *harness) mustDone(id string) *Response {
	h.t.Helper()
	e := h.finish(id)
	if e.Kind != EventDone {
		h.t.Fatalf("job %s: %s", id, e)
	}
	return e.Response
}

func (h *harness) add(spec Spec) string {
	h.t.Helper()
	id, err := h.q.Add(spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// writeFile makes a file of n pseudo-random bytes.
func writeFile(t testing.TB, n int64) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	var x uint32 = uint32(n) + 12345
	for i := range data {
		x = x*1664525 + 1013904223
		data[i] = byte(x >> 24)
	}
	p := filepath.Join(t.TempDir(), "src.bin")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, data
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// resourceSHA reads the sha256 a fake resource reports.
func resourceSHA(t *testing.T, resp *Response) string {
	t.Helper()
	var v struct{ SHA256 string }
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		t.Fatalf("resource %q: %v", resp.Body, err)
	}
	return v.SHA256
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
