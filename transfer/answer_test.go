package transfer

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A done job's answer body, once dropped, is no longer held by the queue:
// its snapshots carry the status without the body and say the journal
// has it, Answer reads it back whole, and a snapshot taken before (the
// done event's) keeps its body. A job not done is refused.
func TestDropAnswerLeavesTheBodyInTheJournalOnly(t *testing.T) {
	body := []byte(`{"newMediaItemResults":[` + strings.Repeat(`{"status":{"message":"Success"}},`, 40) + `{}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	h := newHarness(t, Config{})
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	id := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
	done := h.finish(id)
	if done.Kind != EventDone {
		t.Fatalf("job: %s", done)
	}
	if s, _ := h.q.Job(id); !bytes.Equal(s.Response.Body, body) || s.AnswerInJournal {
		t.Fatalf("before the drop the queue holds %q (in the journal: %v)", s.Response.Body, s.AnswerInJournal)
	}
	if err := h.q.DropAnswer(id); err != nil {
		t.Fatal(err)
	}
	s, _ := h.q.Job(id)
	if s.Response == nil || s.Response.Status != http.StatusOK || s.Response.Body != nil || !s.AnswerInJournal || s.State != StateDone {
		t.Fatalf("after the drop: %s, answer %v, in the journal: %v; want done, status 200, no body, in the journal", s.State, s.Response != nil && s.Response.Body != nil, s.AnswerInJournal)
	}
	if !bytes.Equal(done.Snap.Response.Body, body) {
		t.Fatal("the done event's snapshot lost its body")
	}
	r, err := h.q.Answer(id)
	if err != nil || !bytes.Equal(r.Body, body) || r.Status != http.StatusOK {
		t.Fatalf("Answer: %v %+v", err, r)
	}
	if hist, err := h.q.History(); err != nil || len(hist) != 1 || !hist[0].AnswerInJournal {
		t.Fatalf("History: %v %+v", err, hist)
	}
	if err := h.q.DropAnswer(id); err != nil {
		t.Fatalf("a second drop: %v", err)
	}
	if err := h.q.DropAnswer("nosuchjob"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("an unknown job: %v", err)
	}
}

// An answer whose done record the journal could not write stays in
// memory: dropping it would lose it.
func TestDropAnswerKeepsAnAnswerTheJournalLacks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"id":"kept"}`))
	}))
	defer srv.Close()
	h := newHarness(t, Config{})
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	id := h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
	h.mustDone(id)
	// As if the done record's write had failed: the journal holds the
	// job as it was before.
	h.q.mu.Lock()
	jb := h.q.jobs[id]
	h.q.mu.Unlock()
	jb.mu.Lock()
	jb.doneSaved = false
	old := jb.rec
	old.State, old.Response = StateRunning, nil
	jb.mu.Unlock()
	if err := h.q.journal.Save(&old); err != nil {
		t.Fatal(err)
	}
	if err := h.q.DropAnswer(id); err == nil {
		t.Fatal("the answer was dropped though the journal lacks it")
	}
	if s, _ := h.q.Job(id); s.Response == nil || string(s.Response.Body) != `{"id":"kept"}` || s.AnswerInJournal {
		t.Fatalf("the queue holds %+v", s.Response)
	}
}
