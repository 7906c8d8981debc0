package ui

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"carrier/transfer"
)

// TestMeasureDrawOfABatchRow measures what one drawing of a Photos
// batch's row costs on the UI thread, in time and in bytes allocated,
// with half its uploads done: a camera roll's batch is drawn again each
// time its uploads move (issue 29). A measurement to read
// (CARRIER_MEASURE=20000 go test -run TestMeasureDrawOfABatchRow -v
// ./ui/), never a timed assertion.
func TestMeasureDrawOfABatchRow(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CARRIER_MEASURE"))
	if n <= 0 {
		t.Skip("a measurement: CARRIER_MEASURE=20000 to run it over 20,000 pictures")
	}
	recs := photosBatch(n, transfer.StateQueued)
	for id, s := range recs {
		if s.Type != transfer.Call && s.Path > "/pics/pic"+strconv.Itoa(n/2) {
			continue
		}
		if s.Type != transfer.Call {
			s.State, s.Confirmed, s.Sent = transfer.StateDone, s.Size, s.Size
			recs[id] = s
		}
	}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = &fakeUploads{recs: recs}, make(chan transfer.Event, 8) })
	s := h.u.transfers
	h.until("the batch's row", func() bool { return s.rows["d-0a"] != nil })
	const draws = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	for range draws {
		s.draw("d-0a")
	}
	took := time.Since(began)
	runtime.ReadMemStats(&after)
	t.Logf("a batch of %d pictures: a drawing of its row took %v and allocated %.1f MB (%d objects); it reads %q",
		n, took/draws, float64(after.TotalAlloc-before.TotalAlloc)/draws/1e6, (after.Mallocs-before.Mallocs)/draws, s.rows["d-0a"].state.Text)
}
