package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/compose"
	"carrier/internal/app/photos"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// A folder of many pictures makes the rows of a page, not one per file:
// the chosen files and the posted batch alike. (Every row was made and
// measured at once: a 20,000-file folder held the window's thread 22 s
// and 220 MiB.) The reading says how far it is, the counts are grouped,
// and the rows of a later page are made, with where they stand, when
// they come into view.
func TestMediaMakesAPageOfRowsNotOnePerFile(t *testing.T) {
	old := readingStep
	readingStep = 25
	t.Cleanup(func() { readingStep = old })
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dir := t.TempDir()
	const n = 250
	for i := range n {
		writeJPEG(t, filepath.Join(dir, fmt.Sprintf("p%04d.jpg", i)), 200)
	}
	drop(h, dir)
	sawCount := false
	h.until("the dropped files read", func() bool {
		sawCount = sawCount || tl.status.Text == "Reading what was added… 125 of 250 files"
		return tl.reading == 0
	})
	if !sawCount {
		t.Error("the reading never said how far it was")
	}
	if len(tl.files) != n || tl.list.total() != n {
		t.Fatalf("%d files, the list %d rows", len(tl.files), tl.list.total())
	}
	if got := len(tl.list.Box.Objects); got > rowWindow {
		t.Errorf("%d rows made for %d files", got, n)
	}
	if !strings.HasPrefix(tl.info.Text, "250 files (250 pictures, 0 videos)") || !strings.HasSuffix(tl.list.where.Text, "of 250 items") {
		t.Errorf("the counts: %q, %q", tl.info.Text, tl.list.where.Text)
	}
	if got := placeWords("item", 1, 5, 20000); got != "1–5 of 20,000 items" {
		t.Errorf("a camera roll's place reads %q", got)
	}
	if got := mediaSummary(20000, 0, 1<<20); !strings.HasPrefix(got, "20,000 files (20,000 pictures, 0 videos)") {
		t.Errorf("a camera roll's summary reads %q", got)
	}
	test.Tap(tl.post)
	h.until("the batch on screen", func() bool { return tl.batch != nil })
	made := func() int {
		k := 0
		for _, r := range tl.batch.rows {
			if r != nil {
				k++
			}
		}
		return k
	}
	if k := made(); k > rowWindow || len(tl.list.Box.Objects) > rowWindow {
		t.Errorf("%d batch rows made for %d files", k, n)
	}
	h.until("the batch done: "+tl.batchState.Text, func() bool { return strings.HasPrefix(tl.batchState.Text, "Done") })
	// The last page's rows, made after the batch ended, say where they
	// stand: in Google Photos, not "Queued".
	for tl.list.firstShown()+tl.list.layout.shown < n {
		tl.list.turn(+1)
	}
	last := tl.batch.rows[n-1]
	if last == nil || last.words != "In Google Photos" || last.bar.confirmed != 1 {
		t.Fatalf("the last file's row, made after the end: %+v", last)
	}
	if k := made(); k > 3*rowWindow {
		t.Errorf("%d batch rows made after paging to the end", k)
	}
}

// A camera roll's row in Transfers groups its counts as Media does:
// "2,000 files · to Google Photos", "Queued: 2,000 files go…" (they read
// "20000 files" beside Media's "20,000").
func TestBatchRowCountsGrouped(t *testing.T) {
	fu := &fakeUploads{recs: photosBatch(2000, transfer.StateQueued)}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, make(chan transfer.Event, 8) })
	row := h.onlyRow()
	if row == nil || row.name.Text != "2,000 files · to Google Photos" || row.state.Text != "Queued: 2,000 files go to Google Photos" {
		t.Fatalf("the batch's row: %+v", row)
	}
	if got := placeWords("upload", 1, 3, 20000); got != "1–3 of 20,000 uploads" {
		t.Errorf("the place reads %q", got)
	}
	// And Media's line of the same batch, half of it uploaded.
	b := &photos.PhotosBatch{}
	var files []*compose.PhotosMedia
	for i := range 2000 {
		id := fmt.Sprintf("p%05d", i)
		if i < 1000 {
			h.u.transfers.fold(transfer.Event{Job: id, Kind: transfer.EventDone, Snap: transfer.Snapshot{ID: id, State: transfer.StateDone, Size: 100, Confirmed: 100, Seq: 9}})
		}
		b.Uploads = append(b.Uploads, id)
		files = append(files, &compose.PhotosMedia{Name: id + ".jpg", Size: 100})
	}
	for c := range 40 {
		b.Creates = append(b.Creates, fmt.Sprintf("c%03d", c))
	}
	h.u.timeline.showBatch(b, files, time.Time{})
	h.u.timeline.drawBatch()
	if got := h.u.timeline.batchState.Text; !strings.HasPrefix(got, "Uploading: 1,000 of 2,000 files") {
		t.Errorf("Media's line of the batch reads %q", got)
	}
}

// A batch still being queued is named, in Transfers, by the files it
// sends, not by those queued so far ("2,000 files", not "600").
func TestBatchRowCountsTheFilesBeingQueued(t *testing.T) {
	fu := &fakeUploads{recs: photosBatch(600, transfer.StateQueued),
		stored: []delivery.Delivery{{ID: "d-0a", Kind: delivery.KindPhotos, Created: time.Now(), Files: 2000}}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, make(chan transfer.Event, 8) })
	row := h.onlyRow()
	if row == nil || row.name.Text != "2,000 files · to Google Photos" || row.state.Text != "Queued: 2,000 files go to Google Photos" {
		t.Fatalf("the batch's row: %q, %q", row.name.Text, row.state.Text)
	}
}

// While a batch is queued (a camera roll's takes minutes, each job
// written to the disk first), Media's line says how far the queuing is,
// with the plan: not the plan alone, as if nothing happened.
func TestMediaSaysHowFarTheQueuingIs(t *testing.T) {
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dir := t.TempDir()
	const n = 120
	for i := range n {
		writeJPEG(t, filepath.Join(dir, fmt.Sprintf("p%04d.jpg", i)), 200)
	}
	drop(h, dir)
	h.until("the dropped files read", func() bool { return tl.reading == 0 && len(tl.files) == n })
	test.Tap(tl.post)
	var said []string
	h.until("the batch queued: "+tl.status.Text, func() bool {
		if strings.HasPrefix(tl.status.Text, "Queuing") && (len(said) == 0 || said[len(said)-1] != tl.status.Text) {
			said = append(said, tl.status.Text)
		}
		return tl.batch != nil
	})
	want := []string{
		"Queuing for Google Photos: 50 of 120 files. The first are on their way already. 120 files need 123 of Google Photos' 10,000 requests a day.",
		"Queuing for Google Photos: 100 of 120 files. The first are on their way already. 120 files need 123 of Google Photos' 10,000 requests a day.",
	}
	if !slices.Equal(said, want) {
		t.Fatalf("while queuing, Media said:\n%q\nwant:\n%q", said, want)
	}
}
