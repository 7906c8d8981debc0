package ui

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"carrier/transfer"
)

// photosBatch is the fake journal of one Photos delivery: n pictures'
// uploads, then a batchCreate call for each fifty of them, in state st
// (the calls waiting while the pictures are not done).
func photosBatch(n int, st transfer.State) map[string]transfer.Snapshot {
	t0 := time.Now()
	root := "http://127.0.0.1:9"
	recs := map[string]transfer.Snapshot{}
	var photos []string
	for i := range n {
		id := fmt.Sprintf("p%05d", i)
		photos = append(photos, id)
		s := transfer.Snapshot{ID: id, Owner: "d-0a", Label: fmt.Sprintf("pic%05d.jpg · to Google Photos", i), URL: root + "/v1/uploads",
			Path: fmt.Sprintf("/pics/pic%05d.jpg", i), Size: 100, State: st, Created: t0.Add(time.Duration(i))}
		if st == transfer.StateDone {
			s.Confirmed, s.Sent = s.Size, s.Size
		}
		recs[id] = s
	}
	for c := 0; c*50 < n; c++ {
		id := fmt.Sprintf("c%03d", c)
		last := min((c+1)*50, n)
		s := transfer.Snapshot{ID: id, Owner: "d-0a", Type: transfer.Call, Label: fmt.Sprintf("Google Photos · items %d–%d of %d", c*50+1, last, n),
			URL: root + "/v1/mediaItems:batchCreate", Needs: photos[c*50 : last], State: transfer.StateWaiting, Created: t0.Add(time.Duration(n + c))}
		if st == transfer.StateDone {
			s.State = transfer.StateDone
		}
		recs[id] = s
	}
	return recs
}

// A batch of 600 pictures is one row, not a row per picture and per call
// (issue 29): its words count the files ("Uploading 12 of 600 files to
// Google Photos"), then say it posts them, then that it is done; its bar
// counts the bytes of all; and the person is told once, when all are in.
func TestAPhotosBatchIsOneRow(t *testing.T) {
	const n = 600
	fu := &fakeUploads{recs: photosBatch(n, transfer.StateQueued)}
	events := make(chan transfer.Event, 2048)
	var mu sync.Mutex
	var told []string
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = fu, events
		o.deps = func(d *Deps) {
			d.Notify = func(title, body string, _ []NoticeAction) error {
				mu.Lock()
				defer mu.Unlock()
				told = append(told, title+": "+body)
				return nil
			}
		}
	})
	row := h.onlyRow()
	if row == nil {
		t.Fatalf("%d rows for one batch", len(h.u.transfers.rows))
	}
	if row.name.Text != "600 files · to Google Photos" || row.state.Text != "Queued: 600 files go to Google Photos" {
		t.Fatalf("the batch's row: %q, %q", row.name.Text, row.state.Text)
	}
	done := func(s *transfer.Snapshot) { s.State, s.Confirmed, s.Sent = transfer.StateDone, s.Size, s.Size }
	for i := range 11 {
		events <- fu.event(transfer.EventDone, fmt.Sprintf("p%05d", i), done)
	}
	events <- fu.event(transfer.EventStarted, "p00011", func(s *transfer.Snapshot) { s.State = transfer.StateRunning })
	h.until("12 of 600 uploading", func() bool {
		return h.onlyRow() == row && row.state.Text == "Uploading 12 of 600 files to Google Photos" &&
			row.bar.confirmed == 11.0/n && row.pause.Visible() && row.cancel.Visible() && !row.retry.Visible()
	})
	for i := 11; i < n; i++ {
		events <- fu.event(transfer.EventDone, fmt.Sprintf("p%05d", i), done)
	}
	events <- fu.event(transfer.EventStarted, "c000", func(s *transfer.Snapshot) { s.State = transfer.StateRunning })
	h.until("posting", func() bool {
		return h.onlyRow() == row && row.state.Text == "Posting 600 files to Google Photos: making their items" && row.bar.confirmed == 1
	})
	for c := range n / 50 {
		events <- fu.event(transfer.EventDone, fmt.Sprintf("c%03d", c), func(s *transfer.Snapshot) { s.State = transfer.StateDone })
	}
	h.until("done, and told once", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return h.onlyRow() == row && row.state.Text == "Done: all 600 files are in Google Photos" && len(told) == 1
	})
	mu.Lock()
	defer mu.Unlock()
	if told[0] != "Carrier: sent: 600 files · to Google Photos" {
		t.Errorf("the notification: %q", told[0])
	}
}

// TestMeasureStartWith2000Photos measures how long the window takes to
// start over a journal of one Photos batch of 2,000 pictures (and its 40
// calls), all done, and how many rows it draws: a measurement to read
// (CARRIER_MEASURE=2000 go test -run TestMeasureStartWith2000Photos -v
// ./ui/), never a timed assertion.
func TestMeasureStartWith2000Photos(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CARRIER_MEASURE"))
	if n <= 0 {
		t.Skip("a measurement: CARRIER_MEASURE=2000 to run it over 2,000 pictures")
	}
	recs := photosBatch(n, transfer.StateDone)
	for range 2 {
		fu := &fakeUploads{recs: recs}
		began := time.Now()
		h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, make(chan transfer.Event, 8) })
		took := time.Since(began)
		t.Logf("the window started over %d jobs in %v: %d rows, %d drawn", len(recs), took, len(h.u.transfers.rows), countDraws(h))
		_ = h
	}
}

// A burst of events is drawn once per delivery, not once per event: the
// 600 uploads of a batch ending together cost a handful of draws of its
// row (each reads all 612 members), not 600, so a large batch does not
// fall ever further behind its events (issue 29).
func TestABurstOfEventsIsDrawnOncePerDelivery(t *testing.T) {
	const n = 600
	fu := &fakeUploads{recs: photosBatch(n, transfer.StateQueued)}
	events := make(chan transfer.Event, 2048)
	for i := range n {
		id := fmt.Sprintf("p%05d", i)
		s := fu.recs[id] // a copy: the uploads start queued, the events end them
		s.Seq++
		s.State, s.Confirmed, s.Sent = transfer.StateDone, s.Size, s.Size
		events <- transfer.Event{Kind: transfer.EventDone, Job: id, Snap: s}
	}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	var row *transferRow
	h.until("all 600 uploaded", func() bool {
		row = h.onlyRow()
		return row != nil && len(events) == 0 && row.bar.confirmed == 1 &&
			row.state.Text == "Posting 600 files to Google Photos: making their items"
	})
	if d := h.u.transfers.draws; d > 20 {
		t.Errorf("the row was drawn %d times for a burst of %d events", d, n)
	}
}
