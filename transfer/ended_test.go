package transfer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// A job that ended for good leaves the index of who needs whom as a
// needer, and a job nobody waits for one by one holds no channel for
// Wait: a camera roll's 20,400 finished jobs keep neither. A job still
// waiting stays indexed, and Wait still wakes.
func TestEndedJobsLeaveTheIndexAndHoldNoWaitChannel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"id":"x"}`))
	}))
	defer srv.Close()
	h := newHarness(t, Config{})
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	a := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
	b := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src, Needs: []string{a}})
	c := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src, Needs: []string{a, b}})
	for _, id := range []string{a, b, c} {
		h.mustDone(id)
	}
	h.q.mu.Lock()
	needers := len(h.q.needers)
	var chans int
	for _, jb := range h.q.jobs {
		if jb.changed != nil {
			chans++
		}
	}
	h.q.mu.Unlock()
	if needers != 0 {
		t.Errorf("the index of who needs whom holds %d entries after every job ended; want none", needers)
	}
	if chans != 0 {
		t.Errorf("%d jobs nobody waited for hold a channel for Wait; want none", chans)
	}
	// A job that needs one still running is indexed until it ends, and its
	// Wait returns when it does.
	hold := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-hold
		w.Write([]byte(`{"id":"y"}`))
	}))
	defer slow.Close()
	d := h.add(Spec{URL: slow.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
	e := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src, Needs: []string{d}})
	h.q.mu.Lock()
	waiting := len(h.q.needers[d])
	h.q.mu.Unlock()
	if waiting != 1 {
		t.Fatalf("%d jobs indexed as needing the running one; want 1", waiting)
	}
	done := make(chan Snapshot, 1)
	go func() { s, _ := h.q.Wait(ctxT(t), e); done <- s }()
	close(hold)
	if s := <-done; s.State != StateDone {
		t.Fatalf("Wait returned %s", s.State)
	}
}
