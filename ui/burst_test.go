package ui

import (
	"fmt"
	"testing"
	"time"

	"carrier/transfer"
)

// Uploads that end one by one, each event alone in the queue's channel,
// are drawn together, not a drawing each: a camera roll's 20,000 uploads
// end a few a second, and each drew its whole batch again (n² in the
// batch's size; the window's thread was busy for minutes).
func TestEventsOneByOneDrawnTogether(t *testing.T) {
	const n = 40
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{}}
	events := make(chan transfer.Event, 1)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	s := h.u.transfers
	for i := range n {
		id := fmt.Sprintf("u%03d", i)
		snap := transfer.Snapshot{ID: id, Label: id, URL: "http://127.0.0.1:9/upload/drive/v3/files?uploadType=resumable",
			State: transfer.StateDone, Size: 10, Confirmed: 10, Seq: 1, Created: time.Unix(int64(i), 0)}
		events <- transfer.Event{Job: id, Kind: transfer.EventDone, Snap: snap}
		h.until("the event taken", func() bool { return len(events) == 0 })
	}
	h.until("the last row", func() bool { return s.rowOf(fmt.Sprintf("u%03d", n-1)) != nil })
	t.Logf("%d drawings", s.flushes.Load())
	if k := s.flushes.Load(); k > n/4 {
		t.Errorf("%d drawings for %d events that came one by one", k, n)
	}
}

// After a drawing that took long (a camera roll's row), the ticks leave
// the rows alone for three times as long: what changed stays to be drawn
// later, and the UI thread is not kept drawing.
func TestSlowDrawingRestsTheTicks(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"u1": {ID: "u1", Label: "u1", URL: "http://127.0.0.1:9/upload/drive/v3/files?uploadType=resumable", State: transfer.StateRunning, Size: 10, Seq: 1},
	}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, make(chan transfer.Event, 8) })
	s := h.u.transfers
	s.timed(time.Now().Add(-time.Hour)) // a drawing that took an hour, just ended
	if r := s.rest(); r < 3*time.Hour-time.Minute {
		t.Fatalf("rest %v after an hour's drawing", r)
	}
	s.mu.Lock()
	s.views["u1"].dirty = true
	s.mu.Unlock()
	s.tick()
	s.mu.Lock()
	dirty := s.views["u1"].dirty
	s.mu.Unlock()
	if !dirty {
		t.Error("a tick drew during the rest")
	}
	s.drawCost.Store(0)
	s.tick()
	s.mu.Lock()
	dirty = s.views["u1"].dirty
	s.mu.Unlock()
	if dirty {
		t.Error("a tick after the rest did not draw")
	}
}
