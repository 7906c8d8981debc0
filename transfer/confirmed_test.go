package transfer

import (
	"io"
	"net/http"
	"testing"
)

// A job paused while a chunk was going out shows what the server holds,
// not its last confirmation (the paused row said "0 bytes" while
// the server held 11.9 MiB); the journal keeps it, and after a restart
// the resumed job shows it from its first snapshot on.
func TestPausedJobShowsWhatTheServerHolds(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	got := make(chan struct{})
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 1 {
			buf := make([]byte, 2*Q) // half the chunk arrives, and the link stops
			io.ReadFull(r.Body, buf)
			f.mu.Lock()
			s.data.Write(buf)
			s.stored = 2 * Q
			f.mu.Unlock()
			close(got)
			f.hold(r)
			return true
		}
		return false
	}
	state := t.TempDir()
	h := newHarness(t, Config{StateDir: state})
	path, data := writeFile(t, 8*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: 4 * Q})
	waitChan(t, got)
	if err := h.q.Pause(id); err != nil {
		t.Fatal(err)
	}
	e := h.await(func(e Event) bool { return e.Job == id && e.Kind == EventPaused })
	if e.Snap.Confirmed != 2*Q || e.Snap.Sent != 2*Q {
		t.Fatalf("the paused row shows %d confirmed, %d sent; the server holds %d", e.Snap.Confirmed, e.Snap.Sent, 2*Q)
	}
	if rec, _ := h.q.journal.Load(id); rec.Confirmed != 2*Q {
		t.Fatalf("the journal keeps %d; the server holds %d", rec.Confirmed, 2*Q)
	}
	h.q.Close()

	h2 := newHarness(t, Config{StateDir: state})
	if _, err := h2.q.ResumeJournal(true); err != nil {
		t.Fatal(err)
	}
	first := h2.next()
	if first.Job != id || first.Snap.Confirmed != 2*Q {
		t.Errorf("the first snapshot after a restart: %s, confirmed %d; want %d", first, first.Snap.Confirmed, 2*Q)
	}
	p := h2.await(func(e Event) bool { return e.Job == id && e.Kind == EventProgress })
	if p.Snap.Confirmed != 2*Q || p.Snap.Sent < 2*Q {
		t.Errorf("the first progress of the resumed job shows %d confirmed, %d sent; want %d", p.Snap.Confirmed, p.Snap.Sent, 2*Q)
	}
	if resourceSHA(t, h2.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
}
