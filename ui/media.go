package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/photos"
	"carrier/transfer"
)

// The Media screen keeps the batch it queued in view: a row per file with
// its bar and its state, and the batch's state in words above the form, so
// that a folder of 300 pictures is followed where it was dropped (the
// Transfers screen has the same jobs, one row each). Rows live in a paged
// list: the window never grows with the files, and a screen reader reads
// the rows on screen (paged.go).

// mediaTick is how often the batch's rows are redrawn while it moves:
// often enough for a bar to look alive, rarely enough for 300 rows.
const mediaTick = time.Second / 4

// mediaRow is one file: before posting its type and size (and a button
// that takes it off the files to post), after it the upload's bar and
// state.
type mediaRow struct {
	name   *widget.Label
	state  *widget.Label
	bar    *dualBar
	remove *iconButton // nil once posted
	object fyne.CanvasObject
	words  string // what state shows: a batch of 300 redraws only the rows that changed
	imp    widget.Importance
}

// setState shows a file's state, touching the label only when it changed.
func (r *mediaRow) setState(words string, imp widget.Importance) {
	if words == r.words && imp == r.imp {
		return
	}
	r.words, r.imp = words, imp
	r.state.Importance = imp
	setLabel(r.state, words)
}

func newMediaRow(name, state string) *mediaRow {
	r := &mediaRow{name: newLabel(name), state: newLabel(state), bar: newDualBar(), words: state}
	r.name.Truncation = fyne.TextTruncateEllipsis
	if windowRTL.Load() {
		r.name.Alignment = fyne.TextAlignTrailing // beside its thumbnail, at the right
	}
	r.bar.Hide()
	// One line a file (name, bar, state), so that a page holds as many
	// files as it can; the bar is centred on the line at its own height.
	bar := container.NewVBox(layout.NewSpacer(), r.bar, layout.NewSpacer())
	// A right-to-left window reads the row from the right, as Transfers'.
	r.object = mirrorRTL(container.NewBorder(nil, nil, nil, r.state, mirrorRTL(container.NewGridWithColumns(2, r.name, bar))))
	return r
}

// mediaBatch is the batch on screen and where its jobs stand.
type mediaBatch struct {
	b       *photos.PhotosBatch
	files   []*compose.PhotosMedia // in the uploads' order
	rows    []*mediaRow            // by file; nil until the file's row comes into view
	ended   bool                   // every job done or cancelled: the redraws stop
	quotaAt time.Time              // the daily quota's reset the batch waits for; zero: none
	waiting bool                   // the app's wait for quotaAt was asked for
}

// mediaFileRow is a chosen file's row before it is posted, with its
// Remove button.
func mediaFileRow(m *compose.PhotosMedia, thumb fyne.CanvasObject, remove func()) *mediaRow {
	kind := lang.X("media.kind.picture", "picture")
	if m.Video {
		kind = lang.X("media.kind.video", "video")
	}
	r := newMediaRow(app.Printable(m.Name), lang.X("media.row.chosen", "{{.Kind}} · {{.Size}}", w{"Kind": kind, "Size": humanSize(m.Size)}))
	r.removable(app.Printable(m.Name), thumb, remove)
	return r
}

// removable gives a chosen file's row a button that takes the file off
// the files to post (issue 32: only Clear, which took them all, did).
// thumb, when not nil, shows the file small before its name.
func (r *mediaRow) removable(name string, thumb fyne.CanvasObject, remove func()) {
	r.remove = newIconButton(lang.X("media.remove", "Remove {{.Name}} from the files to post", w{"Name": name}), theme.DeleteIcon(), remove)
	bar := container.NewVBox(layout.NewSpacer(), r.bar, layout.NewSpacer())
	var lead fyne.CanvasObject
	if thumb != nil {
		lead = container.NewCenter(thumb)
	}
	r.object = mirrorRTL(container.NewBorder(nil, nil, lead, mirrorRTL(container.NewHBox(r.state, r.remove)), mirrorRTL(container.NewGridWithColumns(2, r.name, bar))))
}

// snap is the newest snapshot of a job the window knows: the Transfers
// screen folds every event of the queue into its views.
func (t *timelineScreen) snap(id string) (transfer.Snapshot, bool) {
	s := t.u.transfers
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.views[id]
	if !ok {
		return transfer.Snapshot{ID: id}, false
	}
	return v.snap, true
}

// showBatch puts a queued batch on the screen and follows it.
func (t *timelineScreen) showBatch(b *photos.PhotosBatch, files []*compose.PhotosMedia, quotaAt time.Time) {
	mb := &mediaBatch{b: b, files: files, quotaAt: quotaAt, rows: make([]*mediaRow, len(files))}
	t.batch = mb
	t.clearFiles.Enable() // takes the batch off the screen; it goes on
	// A row is made when it comes into view (the list's built draws it),
	// so a batch of 20,000 makes and redraws a page's rows, not 20,000.
	t.setRows(len(files), func(i int) *mediaRow {
		if mb.rows[i] == nil {
			m := files[i]
			r := newMediaRow(app.Printable(m.Name), lang.X("state.queued", "Queued"))
			r.bar.name = m.Name
			r.bar.Show()
			mb.rows[i] = r
		}
		return mb.rows[i]
	}, "")
	t.u.goBackground(func(ctx context.Context) {
		tick := time.NewTicker(mediaTick)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ended := make(chan bool, 1)
			t.u.do(func() {
				if t.batch != mb {
					ended <- true // another selection replaced it
					return
				}
				t.drawBatch()
				ended <- mb.ended
			})
			select {
			case <-ctx.Done():
				return
			case e := <-ended:
				if e {
					return
				}
			}
		}
	})
}

// drawBatch puts each job's state into its row and the batch's in words
// (UI thread). The batch's counts read every job's view where it is,
// under one hold of the Transfers screen's lock; only the rows in view
// (a page) get a copy of theirs, and words: a camera roll's 20,000 are
// counted four times a second (issue 29).
func (t *timelineScreen) drawBatch() {
	mb := t.batch
	if mb == nil {
		return
	}
	now := t.now()
	var sent, total int64
	uploaded, failed, paused, cancelled, quota := 0, 0, 0, 0, 0
	var failure string
	mended := true // every failed file may be retried
	type shown struct {
		i int
		s transfer.Snapshot
	}
	var inView []shown
	ts := t.u.transfers
	ts.mu.Lock()
	look := func(id string) *transfer.Snapshot {
		if v := ts.views[id]; v != nil {
			return &v.snap
		}
		return &transfer.Snapshot{ID: id}
	}
	for i, id := range mb.b.Uploads {
		s := look(id)
		m := mb.files[i]
		total += m.Size
		done := s.State == transfer.StateDone
		if done {
			sent += m.Size
		} else {
			sent += s.Confirmed
		}
		switch {
		case done:
			uploaded++
		case s.State == transfer.StateFailed && errors.Is(s.Cause, transfer.ErrDailyQuota):
			quota++
		case s.State == transfer.StateFailed:
			// The row says it failed; why, and what to do, is the
			// batch's line (a wrapping one): the whole sentence on a
			// row's one line made the window wider than the screen.
			failed++
			failure = s.Error
			mended = mended && !retryCannotMend(*s)
		case s.State == transfer.StatePaused:
			paused++
		case s.State == transfer.StateCancelled:
			cancelled++
		}
		if mb.rows[i] != nil { // nil: not yet in view
			inView = append(inView, shown{i, *s})
		}
	}
	creates := 0
	for _, id := range mb.b.Creates {
		s := look(id)
		switch {
		case s.State == transfer.StateDone:
			creates++
		case s.State == transfer.StateFailed && errors.Is(s.Cause, transfer.ErrDailyQuota):
			quota++
		case s.State == transfer.StateFailed:
			failed++
			failure = s.Error
		}
	}
	ts.mu.Unlock()
	for _, v := range inView {
		s, m, r := v.s, mb.files[v.i], mb.rows[v.i]
		size := max(s.Size, m.Size)
		done := s.State == transfer.StateDone
		frac := func(n int64) float64 {
			if done {
				return 1
			}
			if size <= 0 {
				return 0
			}
			return float64(n) / float64(size)
		}
		r.bar.Set(frac(s.Confirmed), frac(s.Sent))
		words, imp := "", widget.MediumImportance
		switch {
		case done:
			words = t.itemWords(v.i)
		case s.State == transfer.StateFailed && errors.Is(s.Cause, transfer.ErrDailyQuota):
			words = lang.X("media.row.quota", "Waiting for the daily quota")
		case s.State == transfer.StateFailed:
			words = lang.X("part.failed", "Failed")
			imp = widget.DangerImportance
		default:
			words = stateWords(jobView{snap: s}, now)
		}
		r.setState(words, imp)
	}
	n := len(mb.b.Uploads)
	imp := widget.MediumImportance
	var words string
	switch {
	case quota > 0 || (!mb.quotaAt.IsZero() && paused > 0):
		if mb.quotaAt.IsZero() || !mb.quotaAt.After(now) {
			mb.quotaAt = photos.PhotosDailyReset(now)
		}
		words = t.quotaWords(mb.quotaAt, now)
		imp = widget.WarningImportance
		if !mb.waiting && t.quota != nil {
			mb.waiting = true
			t.quota.Expect(mb.quotaAt)
		}
	case failed > 0 && !mended:
		// A file that changed, say: Retry would fail the same way.
		words = lang.XN("media.batch.failed.other", "{{.Failed}} of {{.Count}} files are not in Google Photos: {{.Error}}. The Transfers screen says what can be done.", n, w{"Failed": groupCount(failed), "Count": groupCount(n), "Error": windowText(failure)})
		imp = widget.DangerImportance
	case failed > 0:
		words = lang.XN("media.batch.failed", "{{.Failed}} of {{.Count}} files are not in Google Photos: {{.Error}}. The Transfers screen can retry them.", n, w{"Failed": groupCount(failed), "Count": groupCount(n), "Error": windowText(failure)})
		imp = widget.DangerImportance
	case cancelled > 0:
		words = lang.XN("media.batch.cancelled", "Cancelled: {{.Done}} of {{.Count}} files were uploaded.", n, w{"Done": groupCount(uploaded), "Count": groupCount(n)})
		mb.ended = true
	case creates == len(mb.b.Creates):
		words = lang.XN("media.batch.done", "Done: all {{.Count}} files are in Google Photos.", n, w{"Count": groupCount(n)})
		if mb.b.AlbumID != "" {
			words += " " + lang.X("media.batch.inalbum", "Album: {{.Album}}.", w{"Album": app.Printable(mb.b.AlbumTitle)})
		}
		imp = widget.SuccessImportance
		mb.ended = true
	case paused > 0:
		words = lang.XN("media.batch.paused", "Paused: {{.Done}} of {{.Count}} files uploaded. Resume them on the Transfers screen.", n, w{"Done": groupCount(uploaded), "Count": groupCount(n)})
	case uploaded == n:
		words = lang.XN("media.batch.creating", "All {{.Count}} files uploaded; adding them to Google Photos.", n, w{"Count": groupCount(n)})
	default:
		words = lang.XN("media.batch.uploading", "Uploading: {{.Done}} of {{.Count}} files, {{.Sent}} of {{.Total}}.", n, w{"Done": groupCount(uploaded), "Count": groupCount(n), "Sent": humanSize(sent), "Total": humanSize(total)})
	}
	t.setBatchState(words, imp)
}

// itemWords are an uploaded file's: in Google Photos once its batchCreate
// call is done, else waiting for it.
func (t *timelineScreen) itemWords(i int) string {
	mb := t.batch
	if c := i / photos.MaxPhotosBatch; c < len(mb.b.Creates) {
		if s, _ := t.snap(mb.b.Creates[c]); s.State == transfer.StateDone {
			return lang.X("media.row.inphotos", "In Google Photos")
		}
	}
	return lang.X("media.row.uploaded", "Uploaded; it shows in Google Photos next")
}

// batchWords say what a batch holds before it goes: the files already
// in the album (or in Google Photos), the new ones, and what those need
// of the day's quota and when they will be in; or that nothing is new.
func batchWords(b *photos.PhotosBatch) string {
	pl := b.Plan
	d := w{"Already": groupCount(b.Already), "New": groupCount(pl.Files), "Album": app.Printable(b.AlbumTitle),
		"Count": groupCount(pl.Files), "Requests": groupCount(pl.Requests), "Quota": groupCount(pl.Quota)}
	album := b.AlbumTitle != ""
	if pl.Files == 0 {
		d["Count"] = groupCount(b.Already)
		if album {
			return lang.XN("media.nothingnew.album", "Nothing new to send: all {{.Count}} files are already in the album {{.Album}}.", b.Already, d)
		}
		return lang.XN("media.nothingnew", "Nothing new to send: all {{.Count}} files are already in Google Photos.", b.Already, d)
	}
	var parts []string
	switch {
	case b.Already > 0 && album:
		parts = append(parts, lang.XN("media.already.album", "{{.Already}} already in the album {{.Album}}, {{.New}} new.", b.Already, d))
	case b.Already > 0:
		parts = append(parts, lang.XN("media.already", "{{.Already}} already in Google Photos, {{.New}} new.", b.Already, d))
	}
	parts = append(parts, lang.XN("media.plan", "{{.Count}} files need {{.Requests}} of Google Photos' {{.Quota}} requests a day.", pl.Files, d))
	if pl.Days > 1 {
		parts = append(parts, lang.XN("media.plan.days", "About {{.Days}} days at Google Photos' daily limit: {{.Today}} today, the rest after midnight Pacific ({{.Time}} here).", pl.Days,
			w{"Days": pl.Days, "Today": groupCount(pl.Today), "Time": soonDate(pl.Reset.Local())}))
	}
	return strings.Join(parts, " ")
}

// queuingWords say how far a batch's queuing is.
func queuingWords(queued, total int) string {
	return lang.XN("media.queuing", "Queuing for Google Photos: {{.Queued}} of {{.Count}} files. The first are on their way already.", total, w{"Queued": groupCount(queued), "Count": groupCount(total)})
}

// quotaWords say the day's quota is used up and when the batch goes on.
func (t *timelineScreen) quotaWords(at, now time.Time) string {
	return lang.X("media.batch.quota", "Waiting: Google Photos' quota for today is used up. It resets at {{.Time}} (in {{.Left}}); the batch goes on by itself then.", w{"Time": soonDate(at.Local()), "Left": humanDuration(at.Sub(now).Round(time.Minute))})
}

// startQuota takes up the wait for the daily quota where an earlier
// Carrier left it: the jobs the quota stopped go on at its reset, and
// until then the screen says so, as it did before the restart. Its
// goroutine is started with the window, so that it is counted before the
// window can close, and waits for the screen's clock, given on the UI
// thread once it runs (a test sets its own first).
func (t *timelineScreen) startQuota() {
	ready := make(chan struct{})
	fired := make(chan struct{})
	var once sync.Once
	t.u.goBackground(func(ctx context.Context) {
		select {
		case <-ctx.Done():
			return
		case <-ready:
		}
		at, ids, err := t.quota.Start(ctx)
		if err != nil {
			fyne.LogError("the uploads held for Google Photos' quota", err)
		}
		if len(ids) == 0 {
			return
		}
		t.u.do(func() {
			t.waitingAt = at
			t.idleState()
		})
		// The words count down to the reset while nothing else is shown.
		tick := time.NewTicker(time.Minute)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-fired:
				return
			case <-tick.C:
				t.u.do(t.idleState)
			}
		}
	})
	t.u.do(func() {
		t.quota.Now, t.quota.After = t.now, t.after
		t.quota.Fired = func(time.Time, []string) {
			once.Do(func() { close(fired) })
			t.u.do(t.quotaReset)
		}
		close(ready)
		t.quotaClock = true
		for _, at := range t.quotaAsked {
			t.quota.Expect(at)
		}
		t.quotaAsked = nil
	})
}

// expectQuota has the window's wait send on at the reset at what the
// quota stopped (UI thread): at once, or once the wait has the screen's
// clock (startQuota), for a row drawn before.
func (t *timelineScreen) expectQuota(at time.Time) {
	if t.quota == nil {
		return
	}
	if !t.quotaClock {
		t.quotaAsked = append(t.quotaAsked, at)
		return
	}
	t.quota.Expect(at)
}

// quotaReset shows that the quota reset sent the waiting jobs on (UI
// thread).
func (t *timelineScreen) quotaReset() {
	t.waitingAt = time.Time{}
	if mb := t.batch; mb != nil {
		mb.waiting = false
		mb.quotaAt = time.Time{}
		t.drawBatch()
		return
	}
	t.idleState()
}

// idleState is the batch line when no batch is on the screen: the wait
// for the quota's reset that an earlier Carrier began, if any.
func (t *timelineScreen) idleState() {
	if t.batch != nil {
		return
	}
	if t.waitingAt.IsZero() {
		t.setBatchState("", widget.MediumImportance)
		return
	}
	t.setBatchState(t.quotaWords(t.waitingAt, t.now()), widget.WarningImportance)
}

// quotaUsedUp reports whether the journal shows the day's Photos quota at
// root used up: a Photos job failed for it since the last reset (the
// app's fact, QuotaWait.UsedUp). It is then known before the first byte;
// the reset is when it turns over. It reads the journal: off the UI
// thread (queue runs in the background).
func (t *timelineScreen) quotaUsedUp(root string, now time.Time) (time.Time, bool) {
	if t.quota == nil {
		return time.Time{}, false
	}
	return t.quota.UsedUp(root, now)
}

// errStorage is storage too small for the files, in the window's words.
type errStorage struct{ words string }

func (e *errStorage) Error() string { return e.words }

// checkStorage reads the account's storage (Drive's about.storageQuota:
// Photos has none of its own and shares Drive's) and refuses files that
// would not fit, before a byte goes. A sign-in that does not reach Drive
// cannot read it: Photos then refuses what does not fit, item by item.
func (t *timelineScreen) checkStorage(ctx context.Context, d app.Drive, files []*compose.PhotosMedia) error {
	var need int64
	videos := 0
	for _, m := range files {
		need += m.Size
		if m.Video {
			videos++
		}
	}
	if d.Client == nil {
		d.Client = t.u.deps.Client
	}
	free, err := d.StorageFree(ctx)
	if err != nil {
		return fmt.Errorf("cannot read Google storage: %w", err)
	}
	if free < 0 || need <= free {
		return nil
	}
	return &errStorage{storageWords(free, need, len(files), videos)}
}

// storageWords: "Google storage has 3.1 GB free; these videos need 7.4 GB".
func storageWords(free, need int64, count, videos int) string {
	f := w{"Free": humanSize(free), "Need": humanSize(need), "Count": count}
	var s string
	switch videos {
	case count:
		s = lang.XN("media.storage.videos", "Google storage has {{.Free}} free; these videos need {{.Need}}.", count, f)
	case 0:
		s = lang.XN("media.storage.pictures", "Google storage has {{.Free}} free; these pictures need {{.Need}}.", count, f)
	default:
		s = lang.XN("media.storage.files", "Google storage has {{.Free}} free; these {{.Count}} files need {{.Need}}.", count, f)
	}
	return s + " " + lang.X("media.storage.advice", "Free some space (Google Drive, Gmail and Google Photos share it), or post fewer files.")
}

// setBatchState shows the batch's state in words; the line takes no room
// while there is no batch.
func (t *timelineScreen) setBatchState(words string, imp widget.Importance) {
	if words == t.batchState.Text && imp == t.batchState.Importance && t.batchState.Visible() == (words != "") {
		return
	}
	setLabel(t.batchState, words)
	t.batchState.Importance = imp
	if words == "" {
		t.batchState.Hide()
	} else {
		t.batchState.Show()
	}
	t.batchState.Refresh()
}
