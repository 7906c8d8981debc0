package ui

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"carrier/compose"
	"carrier/internal/app/photos"
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

// TestMeasureMediaBatchTick measures one of Media's ticks over a batch
// of CARRIER_MEASURE pictures (four a second while it goes), half of
// them uploaded, its first page of rows in view. A measurement to read,
// never a timed assertion.
func TestMeasureMediaBatchTick(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CARRIER_MEASURE"))
	if n <= 0 {
		t.Skip("a measurement: CARRIER_MEASURE=20000 to run it over 20,000 pictures")
	}
	recs := photosBatch(n, transfer.StateQueued)
	b := &photos.PhotosBatch{}
	var files []*compose.PhotosMedia
	for i := range n {
		id := fmt.Sprintf("p%05d", i)
		if i < n/2 {
			s := recs[id]
			s.State, s.Confirmed, s.Sent = transfer.StateDone, s.Size, s.Size
			recs[id] = s
		}
		b.Uploads = append(b.Uploads, id)
		files = append(files, &compose.PhotosMedia{Path: recs[id].Path, Name: fmt.Sprintf("pic%05d.jpg", i), Size: 100})
	}
	for c := 0; c*50 < n; c++ {
		b.Creates = append(b.Creates, fmt.Sprintf("c%03d", c))
	}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = &fakeUploads{recs: recs}, make(chan transfer.Event, 8) })
	h.until("the batch's row", func() bool { return h.u.transfers.rows["d-0a"] != nil })
	tl := h.u.timeline
	tl.showBatch(b, files, time.Time{})
	const ticks = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	for range ticks {
		tl.drawBatch()
	}
	took := time.Since(began)
	runtime.ReadMemStats(&after)
	t.Logf("a batch of %d pictures: a tick of Media took %v and allocated %.1f MB; it reads %q",
		n, took/ticks, float64(after.TotalAlloc-before.TotalAlloc)/ticks/1e6, tl.batchState.Text)
}

// BenchmarkDrawABatchRow is a drawing of a Photos batch's row in
// Transfers, 20,000 pictures half uploaded (make bench): its time, and
// its MB allocated (issue 29: 313 ms and 270 MB before the row read its
// members' views once; 42 ms and 19 MB after).
func BenchmarkDrawABatchRow(b *testing.B) {
	const n = 20000
	recs := photosBatch(n, transfer.StateQueued)
	for i := range n / 2 {
		id := fmt.Sprintf("p%05d", i)
		s := recs[id]
		s.State, s.Confirmed, s.Sent = transfer.StateDone, s.Size, s.Size
		recs[id] = s
	}
	h := newHarness(b, func(o *harnessOpts) { o.uploads, o.events = &fakeUploads{recs: recs}, make(chan transfer.Event, 8) })
	s := h.u.transfers
	h.until("the batch's row", func() bool { return s.rows["d-0a"] != nil })
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		s.draw("d-0a")
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/1e6, "MB/op")
}
