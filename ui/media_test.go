package ui

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/internal/app/photos"
	"carrier/sandbox"
	"carrier/transfer"
)

// writeJPEG writes a small picture whose bytes say JPEG, as the sandbox
// reads them.
func writeJPEG(t *testing.T, p string, size int) {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	copy(b, "\xff\xd8\xff\xe0")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeMP4 writes a video whose first bytes are an MP4's ftyp box.
func writeMP4(t *testing.T, p string, size int) {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	copy(b, "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A dropped folder gives every picture and video under it, its
// subfolders' too, in name order; hidden files and folders are left
// out, what is no picture or video is named, and a link back to a parent
// folder is not walked again (the walk ends).
func TestMediaFolderDroppedWhole(t *testing.T) {
	root := filepath.Join(t.TempDir(), "Trip")
	writeJPEG(t, filepath.Join(root, "b.jpg"), 2000)
	writeJPEG(t, filepath.Join(root, "a.jpg"), 2000)
	writeJPEG(t, filepath.Join(root, "day2", "c.jpg"), 2000)
	writeJPEG(t, filepath.Join(root, "day2", "deeper", "d.jpg"), 2000)
	writeMP4(t, filepath.Join(root, "day2", "e.mp4"), 5000)
	writeJPEG(t, filepath.Join(root, ".thumbnails", "x.jpg"), 2000)
	writeJPEG(t, filepath.Join(root, ".hidden.jpg"), 2000)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("what we saw"), 0o600)
	outside := filepath.Join(t.TempDir(), "elsewhere.jpg")
	writeJPEG(t, outside, 2000)
	// Windows makes symbolic links only with a privilege people seldom
	// have (and Wine's are Unix links, which it shows otherwise); the
	// walk's loop check on Windows is by path, tested here without them.
	links := runtime.GOOS != "windows" && os.Symlink(root, filepath.Join(root, "day2", "loop")) == nil &&
		os.Symlink(outside, filepath.Join(root, "linked.jpg")) == nil

	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dropMedia(h, root)
	var names []string
	for _, m := range tl.files {
		rel, _ := filepath.Rel(root, m.Path)
		names = append(names, filepath.ToSlash(rel))
	}
	want := []string{"a.jpg", "b.jpg", "day2/c.jpg", "day2/deeper/d.jpg", "day2/e.mp4"}
	if links {
		want = []string{"a.jpg", "b.jpg", "day2/c.jpg", "day2/deeper/d.jpg", "day2/e.mp4", "linked.jpg"}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("the files: %v, want %v", names, want)
	}
	if !strings.Contains(tl.status.Text, "notes.txt is no picture or video") {
		t.Fatalf("the text file is not named: %q", tl.status.Text)
	}
	pics := len(want) - 1
	if !strings.Contains(tl.info.Text, fmt.Sprintf("%d files (%d pictures, 1 video)", len(want), pics)) {
		t.Fatalf("the summary: %q", tl.info.Text)
	}
	rows := rowTexts(tl)
	if len(rows) != len(want) || !strings.HasPrefix(rows[4], "e.mp4 · video · ") || !strings.HasPrefix(rows[0], "a.jpg · picture · ") {
		t.Fatalf("the rows: %q", rows)
	}

	// Only hidden files: said so, nothing chosen.
	tl.clear()
	hidden := t.TempDir()
	writeJPEG(t, filepath.Join(hidden, ".a.jpg"), 100)
	dropMedia(h, hidden)
	if len(tl.files) != 0 || !strings.Contains(tl.status.Text, "only hidden ones") || !tl.post.Disabled() {
		t.Fatalf("a folder of hidden files: %d files, %q", len(tl.files), tl.status.Text)
	}
}

// Links that loop among themselves end the walk too, each folder walked
// once.
func TestMediaWalkLinkLoops(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	writeJPEG(t, filepath.Join(a, "1.jpg"), 100)
	writeJPEG(t, filepath.Join(b, "2.jpg"), 100)
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows, and Wine's are Unix links it shows otherwise")
	}
	if os.Symlink(b, filepath.Join(a, "to-b")) != nil || os.Symlink(a, filepath.Join(b, "to-a")) != nil {
		t.Skip("this system makes no symbolic links here")
	}
	files, problems := mediaWalk([]string{root})
	var rel []string
	for _, f := range files {
		r, _ := filepath.Rel(root, f)
		rel = append(rel, filepath.ToSlash(r))
	}
	if len(problems) != 0 || !slices.Equal(rel, []string{"a/1.jpg", "a/to-b/2.jpg"}) {
		t.Fatalf("files %v, problems %v", rel, problems)
	}
}

// A folder of 300 pictures keeps the window at 1024x700: the list shows
// the rows that fit and pages through the rest, and the Post button stays
// on screen.
func TestMedia300FilesFitTheWindow(t *testing.T) {
	h := newHarness(t)
	h.w.Resize(fyne.NewSize(1024, 700))
	h.u.Select("Media")
	tl := h.u.timeline
	dir := t.TempDir()
	for i := range 300 {
		writeJPEG(t, filepath.Join(dir, fmt.Sprintf("IMG_%04d.jpg", i+1)), 600)
	}
	dropMedia(h, dir)
	if len(tl.files) != 300 {
		t.Fatalf("%d files of 300", len(tl.files))
	}
	if m := h.w.Content().MinSize(); m.Width > 1024 || m.Height > 700 {
		t.Fatalf("the window asks for %v with 300 files", m)
	}
	h.w.Resize(fyne.NewSize(1024, 700))
	if s := h.w.Canvas().Size(); s.Width > 1024 || s.Height > 700 {
		t.Fatalf("the window grew to %v", s)
	}
	shown := tl.list.layout.shown
	if shown < 3 || shown >= 300 {
		t.Fatalf("%d rows on screen", shown)
	}
	if want := fmt.Sprintf("1–%d of 300 items", shown); tl.list.where.Text != want {
		t.Fatalf("the pager says %q, want %q", tl.list.where.Text, want)
	}
	d := fyne.CurrentApp().Driver()
	for _, o := range []fyne.CanvasObject{tl.post, tl.list.later, tl.album, tl.description} {
		p, s := d.AbsolutePositionForObject(o), o.Size()
		if p.X < 0 || p.Y < 0 || p.X+s.Width > 1024 || p.Y+s.Height > 700 || !o.Visible() {
			t.Fatalf("%T at %v size %v is off the 1024x700 window", o, p, s)
		}
	}
	test.Tap(tl.list.later)
	if tl.list.firstShown() != shown {
		t.Fatalf("Later shows from row %d, want %d", tl.list.firstShown(), shown)
	}
}

// A posted batch stays on the screen: each file's row says where it
// stands, its bar full once uploaded, and the batch's state says when all
// are in Google Photos.
func TestMediaFollowsTheBatch(t *testing.T) {
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dir := t.TempDir()
	for i := range 3 {
		writeJPEG(t, filepath.Join(dir, fmt.Sprintf("p%d.jpg", i)), 3000)
	}
	dropMedia(h, dir)
	test.Type(tl.album, "Walk")
	test.Tap(tl.post)
	h.until("the batch done: "+tl.batchState.Text, func() bool {
		return tl.batchState.Text == "Done: all 3 files are in Google Photos. Album: Walk."
	})
	if h.u.tabs.Selected() != h.u.timelineTab {
		t.Fatal("posting left the Media screen")
	}
	rows := rowTexts(tl)
	if len(rows) != 3 || rows[0] != "p0.jpg · In Google Photos" {
		t.Fatalf("the rows: %q", rows)
	}
	for i, r := range tl.batch.rows {
		if r.bar.confirmed != 1 || !r.bar.Visible() {
			t.Fatalf("row %d's bar at %v", i, r.bar.confirmed)
		}
	}
	// In Transfers the batch is one row, its three uploads and its call
	// together.
	h.until("the batch's one row done", func() bool {
		row := h.onlyRow()
		return row != nil && row.state.Text == "Done: all 3 files are in Google Photos" && row.bar.confirmed == 1
	})
}

// Storage too small is said in words before a byte goes: how much is
// free and what these files need; nothing is queued and the files stay.
func TestMediaStorageCheckedBeforeTheFirstByte(t *testing.T) {
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dir := t.TempDir()
	writeMP4(t, filepath.Join(dir, "a.mp4"), 300<<10)
	writeMP4(t, filepath.Join(dir, "b.mp4"), 300<<10)
	h.sb.SetDriveQuota(sandbox.DriveQuota{Limit: 500 << 10})
	dropMedia(h, dir)
	test.Tap(tl.post)
	want := "Google storage has 500.0 KiB free; these videos need 600.0 KiB. Free some space"
	h.until("the storage refused: "+tl.status.Text, func() bool { return strings.HasPrefix(tl.status.Text, want) })
	if jobs := h.q.Jobs(); len(jobs) != 0 || len(tl.files) != 2 || tl.post.Disabled() {
		t.Fatalf("%d jobs queued, %d files kept, post disabled %v", len(jobs), len(tl.files), tl.post.Disabled())
	}
	writeJPEG(t, filepath.Join(dir, "c.jpg"), 1000)
	dropMedia(h, filepath.Join(dir, "c.jpg"))
	test.Tap(tl.post)
	h.until("the mixed batch refused: "+tl.status.Text, func() bool {
		return strings.HasPrefix(tl.status.Text, "Google storage has 500.0 KiB free; these 3 files need 601.0 KiB.")
	})
}

// A quota for the day used up is a wait, not a failure: the batch says
// when the quota resets and goes on by itself then. A batch posted while
// the journal shows the quota used up is held before its first byte.
func TestMediaDailyQuotaWaitsForTheReset(t *testing.T) {
	// gate, once set, holds every Photos upload request until the
	// request is given up: a held batch must never get past it.
	var gate atomic.Bool
	h := newHarness(t, func(o *harnessOpts) {
		o.wrap = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if gate.Load() && r.URL.Path == "/v1/uploads" {
					<-r.Context().Done()
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	})
	h.u.Select("Media")
	tl := h.u.timeline
	// 01:00 Pacific today, so the reset is 23 h away: today, since the
	// journal's failures carry the real time they happened at.
	now := photos.PhotosDailyReset(time.Now()).Add(-23 * time.Hour)
	reset := make(chan time.Time)
	var mu sync.Mutex
	var waits []time.Duration
	tl.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tl.after = func(d time.Duration) <-chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return reset
	}
	dir := t.TempDir()
	writeJPEG(t, filepath.Join(dir, "a.jpg"), 3000)
	writeJPEG(t, filepath.Join(dir, "b.jpg"), 3000)
	h.sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1})
	dropMedia(h, dir)
	test.Tap(tl.post)
	h.until("the batch waiting: "+tl.batchState.Text, func() bool {
		return strings.HasPrefix(tl.batchState.Text, "Waiting: Google Photos' quota for today is used up. It resets at ")
	})
	at := now.Add(23 * time.Hour).Local().Format("15:04 Mon 2 Jan")
	if !strings.Contains(tl.batchState.Text, at+" (in 23 h 0 min)") {
		t.Fatalf("the words: %q, want the reset at %s", tl.batchState.Text, at)
	}
	if !slices.Contains(rowTexts(tl), "b.jpg · Waiting for the daily quota") && !slices.Contains(rowTexts(tl), "a.jpg · Waiting for the daily quota") {
		t.Fatalf("no row waits for the quota: %q", rowTexts(tl))
	}
	// Transfers says the same of the batch: it waits, it has not failed
	// (no Retry, not in red), though no reset was kept before its first
	// byte (the quota ran out as it went).
	h.until("Transfers' row waiting", func() bool {
		r := h.onlyRow()
		return r != nil && strings.HasPrefix(r.state.Text, "Waiting: Google Photos' quota for today is used up. It resets at ")
	})
	if r := h.onlyRow(); r.state.Importance == widget.DangerImportance || r.retry.Visible() {
		t.Fatalf("Transfers' row of a batch waiting for the quota: %q, importance %v, Retry shown %v", r.state.Text, r.state.Importance, r.retry.Visible())
	}
	h.until("the wait for the reset", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(waits) == 1
	})
	mu.Lock()
	if waits[0] != time.Minute { // a minute at a time: the wall clock is looked at after each
		t.Fatalf("the wait: %v", waits)
	}
	mu.Unlock()
	first := tl.batch

	// Known before the first byte: the next batch is held, not sent.
	writeJPEG(t, filepath.Join(dir, "c.jpg"), 3000)
	dropMedia(h, filepath.Join(dir, "c.jpg"))
	gate.Store(true)
	test.Tap(tl.post)
	h.until("the second batch held", func() bool {
		return tl.batch != nil && tl.batch != first && strings.HasPrefix(tl.batchState.Text, "Waiting: Google Photos' quota")
	})
	// Paused as it was queued (a worker quicker than the pause is
	// stopped at the session's start, held here at the gate).
	held := tl.batch.b.Uploads[0]
	h.until("c.jpg paused", func() bool {
		s, _ := tl.snap(held)
		return s.State == transfer.StatePaused
	})
	if s, _ := tl.snap(held); s.Confirmed != 0 || s.Sent != 0 {
		t.Fatalf("the held upload sent bytes: %+v", s)
	}
	gate.Store(false)

	// The reset: both batches go on by themselves.
	h.sb.SetPhotosQuota(sandbox.PhotosQuota{})
	mu.Lock()
	now = now.Add(23 * time.Hour) // the reset, by the wall clock
	mu.Unlock()
	close(reset)
	h.until("the second batch done: "+tl.batchState.Text, func() bool {
		return tl.batchState.Text == "Done: the file is in Google Photos."
	})
	for _, id := range first.b.Jobs() {
		h.until("the first batch done", func() bool {
			s, _ := tl.snap(id)
			return s.State == transfer.StateDone
		})
	}
	for _, id := range first.b.Uploads {
		if s, _ := tl.snap(id); errors.Is(s.Cause, transfer.ErrDailyQuota) {
			t.Fatalf("%s still failed for the quota", id)
		}
	}
}

// A batch the daily quota stops after Media let it go (Clear took it off
// the screen) still goes on by itself at the reset: Transfers, whose row
// says so, arms the window's wait.
func TestTransfersArmsTheQuotaWaitOfABatchMediaLetGo(t *testing.T) {
	var gate atomic.Bool
	gate.Store(true)
	release := make(chan struct{})
	h := newHarness(t, func(o *harnessOpts) {
		o.wrap = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if gate.Load() && r.URL.Path == "/v1/uploads" {
					select {
					case <-release:
					case <-r.Context().Done():
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		}
	})
	h.u.Select("Media")
	tl := h.u.timeline
	now := photos.PhotosDailyReset(time.Now()).Add(-23 * time.Hour)
	var mu sync.Mutex
	var waits []time.Duration
	tl.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tl.after = func(d time.Duration) <-chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return make(chan time.Time)
	}
	dir := t.TempDir()
	writeJPEG(t, filepath.Join(dir, "a.jpg"), 3000)
	writeJPEG(t, filepath.Join(dir, "b.jpg"), 3000)
	h.sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1})
	dropMedia(h, dir)
	test.Tap(tl.post)
	h.until("the batch on Media", func() bool { return tl.batch != nil })
	test.Tap(tl.clearFiles)
	if tl.batch != nil {
		t.Fatal("Clear left the batch on Media")
	}
	close(release) // the uploads go now, and the quota stops the second
	h.until("Transfers' row waiting", func() bool {
		r := h.onlyRow()
		return r != nil && strings.HasPrefix(r.state.Text, "Waiting: Google Photos' quota for today is used up. It resets at ")
	})
	h.until("the wait for the reset armed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(waits) == 1
	})
}

// The storage words name what the files are and what they need, in the
// number's form: "these videos", "this picture", "these 3 files".
func TestMediaStorageWords(t *testing.T) {
	for _, c := range []struct {
		free, need    int64
		count, videos int
		want          string
	}{
		{3 << 30, 7<<30 + 1<<29, 4, 4, "Google storage has 3.0 GiB free; these videos need 7.5 GiB."},
		{100, 2048, 1, 1, "Google storage has 100 bytes free; this video needs 2.0 KiB."},
		{100, 2048, 5, 0, "Google storage has 100 bytes free; these pictures need 2.0 KiB."},
		{100, 2048, 1, 0, "Google storage has 100 bytes free; this picture needs 2.0 KiB."},
		{0, 5 << 20, 3, 1, "Google storage has 0 bytes free; these 3 files need 5.0 MiB."},
	} {
		got := storageWords(c.free, c.need, c.count, c.videos)
		if !strings.HasPrefix(got, c.want+" Free some space") {
			t.Errorf("%d files, %d videos: %q, want %q", c.count, c.videos, got, c.want)
		}
	}
}

// The summary's counts each take their number's form, in every language:
// "41 files (40 pictures, 1 video)", never "1 videos"; Hebrew's dual and
// Arabic's six forms included.
func TestMediaSummaryPlurals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("plural rules follow the system's locale (README), which Windows takes from its settings, not from LANGUAGE or LC_ALL")
	}
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	for _, c := range []struct {
		lang          string
		count, videos int
		want          string
	}{
		{"en", 41, 1, "41 files (40 pictures, 1 video) · "},
		{"en", 1, 0, "1 file (1 picture, 0 videos) · "},
		{"en", 3, 2, "3 files (1 picture, 2 videos) · "},
		{"he", 2, 2, "שני קבצים (0 תמונות, שני סרטונים) · "},
		{"he", 3, 1, "3 קבצים (שתי תמונות, סרטון אחד) · "},
		{"ar", 12, 1, "12 ملفًا (11 صورة، فيديو واحد) · "},
		{"ar", 5, 2, "5 ملفات (3 صور، فيديوهان) · "},
		{"ar", 1, 0, "ملف واحد (صورة واحدة، لا فيديو) · "},
		{"fa", 41, 1, "41 پرونده (40 عکس، 1 ویدیو) · "},
	} {
		// The system's locale, since plural rules follow it (README).
		t.Setenv("LANGUAGE", c.lang)
		t.Setenv("LC_ALL", c.lang)
		if err := LoadTranslations(); err != nil {
			t.Fatal(err)
		}
		if got := mediaSummary(c.count, c.videos, 1000); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s, %d files, %d videos: %q, want it to begin %q", c.lang, c.count, c.videos, got, c.want)
		}
	}
}

// On the sandbox the Media screen offers the retired Mirror timeline
// beside Google Photos, labelled so; each destination lists what it
// takes and names what it refuses (the timeline its 10 MB, Photos sound),
// and posting to the timeline is the Mirror recipe: an item per file,
// its caption the description, its bytes the file's.
func TestMediaMirrorTimelineOnTheSandbox(t *testing.T) {
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	mirror := choiceNamed(tl.to, "Mirror timeline (retired by Google; sandbox only)")
	if !tl.to.Object.Visible() || mirror == nil || choiceNamed(tl.to, "Google Photos") == nil {
		t.Fatal("the sandbox offers no choice of the Mirror timeline")
	}
	dir := t.TempDir()
	writeJPEG(t, filepath.Join(dir, "a.jpg"), 2000)
	writeJPEG(t, filepath.Join(dir, "big.jpg"), 11<<20)
	os.WriteFile(filepath.Join(dir, "song.mp3"), append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), make([]byte, 300)...), 0o600)
	dropMedia(h, dir)
	if rows := rowTexts(tl); len(rows) != 2 || !strings.HasPrefix(rows[0], "a.jpg · picture") || !strings.HasPrefix(rows[1], "big.jpg · picture") {
		t.Fatalf("Photos' rows: %q", rows)
	}
	test.Tap(mirror)
	if !tl.toMirror() || tl.dest.Text != "Post to the Mirror timeline (the sandbox's, on this computer)" || tl.post.Text != "Post to the Mirror timeline" {
		t.Fatalf("the screen after choosing the timeline: %q, %q", tl.dest.Text, tl.post.Text)
	}
	if rows := rowTexts(tl); len(rows) != 2 || !strings.HasPrefix(rows[0], "a.jpg · picture") || !strings.HasPrefix(rows[1], "song.mp3 · sound") {
		t.Fatalf("the timeline's rows: %q", rows)
	}
	if want := "Not for the Mirror timeline: big.jpg is 11.0 MiB; the Mirror timeline takes at most 10.0 MiB a file"; tl.status.Text != want {
		t.Fatalf("the refusal: %q, want %q", tl.status.Text, want)
	}
	if !strings.HasPrefix(tl.info.Text, "2 files · ") || !strings.Contains(tl.info.Text, "up to 10.0 MiB a file") || tl.album.Visible() || tl.elseDrive.Visible() {
		t.Fatalf("the summary %q; album shown %v, Drive box shown %v", tl.info.Text, tl.album.Visible(), tl.elseDrive.Visible())
	}
	test.Type(tl.description, "From the hill")
	test.Tap(tl.post)
	h.until("the timeline posts queued: "+tl.status.Text, func() bool {
		return tl.status.Text == "Posting 2 files to the Mirror timeline; Transfers shows each one."
	})
	var list struct {
		Items []struct {
			Text        string
			Attachments []struct{ ContentURL string }
		}
	}
	h.until("two items on the timeline", func() bool {
		h.get("/mirror/v1/timeline", &list)
		return len(list.Items) == 2 && len(list.Items[0].Attachments) == 1 && len(list.Items[1].Attachments) == 1
	})
	got := map[string]bool{}
	for _, it := range list.Items {
		if it.Text != "From the hill" {
			t.Errorf("an item's caption: %q", it.Text)
		}
		u := it.Attachments[0].ContentURL
		body := h.get(u[strings.Index(u, "/mirror/"):], nil)
		for _, name := range []string{"a.jpg", "song.mp3"} {
			if sameBytes(t, filepath.Join(dir, name), body) {
				got[name] = true
			}
		}
	}
	if !got["a.jpg"] || !got["song.mp3"] {
		t.Fatalf("the timeline holds the bytes of %v", got)
	}
	for _, j := range h.q.Jobs() {
		if !strings.Contains(j.URL, "/upload/mirror/v1/timeline") {
			t.Fatalf("a job went to %s", j.URL)
		}
	}
}

// With a real Google account the Mirror timeline is not offered: Google
// no longer serves it, and posting there could only fail.
func TestMediaMirrorTimelineNotOfferedWithGoogle(t *testing.T) {
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) { d.Account = func() Account { return Account{Address: "you@example.com"} } }
	})
	h.u.Select("Media")
	tl := h.u.timeline
	if tl.to.Object.Visible() {
		t.Fatal("the Mirror timeline is offered with a Google account")
	}
	tl.to.chosen = 1 // even were it chosen somehow, posts go to Photos
	dir := t.TempDir()
	writeJPEG(t, filepath.Join(dir, "a.jpg"), 2000)
	dropMedia(h, dir)
	if tl.toMirror() || len(tl.mirror) != 0 || tl.dest.Text != "Post to Google Photos as you@example.com" || tl.post.Text != "Post to Google Photos" {
		t.Fatalf("to the timeline %v (%d files read for it); the screen says %q, %q", tl.toMirror(), len(tl.mirror), tl.dest.Text, tl.post.Text)
	}
}

// The wait for the daily quota outlives the window: Carrier closed while
// one batch waits (its uploads failed for the quota) and another is held
// before its first byte, the next start finds both in the journal, says
// when the quota resets, sends nothing before, and sends both batches on
// at the reset, the held one from its first byte.
func TestMediaQuotaWaitSurvivesARestart(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	var uploads atomic.Int32 // Photos upload requests, after the restart
	var counting, gate atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if counting.Load() && r.URL.Path == "/v1/uploads" {
			uploads.Add(1)
		}
		if gate.Load() && r.URL.Path == "/v1/uploads" {
			// A held batch never gets past here: a worker quicker than
			// the hold waits until its request is given up.
			<-r.Context().Done()
			return
		}
		sb.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	state := t.TempDir()
	start := func() (*harness, *app.Queue) {
		t.Helper()
		events := make(chan transfer.Event, 1024)
		q, err := app.OpenQueue(transfer.Config{StateDir: state, Auth: transfer.StaticToken(tok), Events: events, RetryBase: 10 * time.Millisecond}, app.NewSpool(app.SpoolDir(state)))
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, func(o *harnessOpts) {
			o.uploads, o.events = q, events
			o.deps = func(d *Deps) { d.Outbox, d.Endpoint = q, srv.URL }
		})
		h.url, h.sb, h.state = srv.URL, sb, state
		return h, q
	}
	now := photos.PhotosDailyReset(time.Now()).Add(-23 * time.Hour) // 01:00 Pacific today
	never := make(chan time.Time)

	h, q := start()
	tl := h.u.timeline
	tl.now = func() time.Time { return now }
	tl.after = func(time.Duration) <-chan time.Time { return never }
	h.u.Select("Media")
	dir := t.TempDir()
	writeJPEG(t, filepath.Join(dir, "a.jpg"), 3000)
	writeJPEG(t, filepath.Join(dir, "b.jpg"), 3000)
	sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1})
	dropMedia(h, dir)
	test.Tap(tl.post)
	h.until("the first batch waiting", func() bool {
		return strings.HasPrefix(tl.batchState.Text, "Waiting: Google Photos' quota")
	})
	first := tl.batch
	writeJPEG(t, filepath.Join(dir, "c.jpg"), 3000)
	dropMedia(h, filepath.Join(dir, "c.jpg"))
	gate.Store(true)
	test.Tap(tl.post)
	h.until("the second batch held", func() bool {
		if tl.batch == nil || tl.batch == first {
			return false
		}
		s, _ := tl.snap(tl.batch.b.Uploads[0])
		return s.State == transfer.StatePaused
	})
	gate.Store(false)
	all := append(first.b.Jobs(), tl.batch.b.Jobs()...)
	q.Close() // Carrier closed
	h.close()
	journal := func() map[string]transfer.Snapshot {
		recs, err := q.History()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]transfer.Snapshot{}
		for _, r := range recs {
			out[r.ID] = r
		}
		return out
	}
	var jobs []string // those the quota stopped: all but what went before it was used up
	for _, id := range all {
		if journal()[id].State != transfer.StateDone {
			jobs = append(jobs, id)
		}
	}
	if len(jobs) < 3 {
		t.Fatalf("only %d jobs wait for the quota", len(jobs))
	}

	reset := make(chan time.Time)
	var mu sync.Mutex
	var waits []time.Duration
	h, q = start()
	defer q.Close()
	tl = h.u.timeline
	tl.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tl.after = func(d time.Duration) <-chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return reset
	}
	counting.Store(true)
	if _, err := q.ResumeJournal(false); err != nil { // as the app's start does
		t.Fatal(err)
	}
	h.u.Select("Media")
	h.until("the wait said after the restart: "+tl.batchState.Text, func() bool {
		return strings.HasPrefix(tl.batchState.Text, "Waiting: Google Photos' quota for today is used up. It resets at ")
	})
	at := now.Add(23 * time.Hour).Local().Format("15:04 Mon 2 Jan")
	if !strings.Contains(tl.batchState.Text, at+" (in 23 h 0 min); the batch goes on by itself then.") {
		t.Fatalf("the words: %q, want the reset at %s", tl.batchState.Text, at)
	}
	h.until("the wait for the reset", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(waits) == 1
	})
	mu.Lock()
	if waits[0] != time.Minute { // a minute at a time: the wall clock is looked at after each
		t.Fatalf("the waits: %v", waits)
	}
	mu.Unlock()
	for _, id := range jobs {
		if s := journal()[id]; s.State != transfer.StateFailed && s.State != transfer.StatePaused && s.State != transfer.StateWaiting {
			t.Fatalf("%s (%s) went on before the reset: %s", id, s.Label, s.State)
		}
	}
	if n := uploads.Load(); n != 0 {
		t.Fatalf("%d upload requests before the reset", n)
	}

	sb.SetPhotosQuota(sandbox.PhotosQuota{})
	mu.Lock()
	now = now.Add(23 * time.Hour) // the reset, by the wall clock
	mu.Unlock()
	close(reset)
	for _, id := range jobs {
		h.until("every job of both batches done", func() bool { return journal()[id].State == transfer.StateDone })
	}
	h.until("the words gone", func() bool { return tl.batchState.Text == "" })
	if _, err := os.Stat(filepath.Join(state, "photos-quota.json")); !os.IsNotExist(err) {
		t.Fatalf("the held jobs' file stays: %v", err)
	}
}

// The Media screen says what a batch holds and what it needs of the day's
// quota, its counts grouped as the language groups them: a camera roll
// larger than a day's quota takes days, and says so.
func TestBatchWordsSayThePlan(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	b := &photos.PhotosBatch{AlbumTitle: "Roll", Already: 1214, Plan: photos.PlanPhotos(20000, 0, photos.PhotosDailyRequests, now)}
	got := batchWords(b)
	want := "1,214 already in the album Roll, 20,000 new. 20,000 files need 20,400 of Google Photos' 10,000 requests a day. About 3 days at Google Photos' daily limit: 9,800 today, the rest after midnight Pacific ("
	if !strings.HasPrefix(got, want) {
		t.Fatalf("the words: %q\nwant them to begin %q", got, want)
	}
	if got := batchWords(&photos.PhotosBatch{Already: 37}); got != "Nothing new to send: all 37 files are already in Google Photos." {
		t.Fatalf("nothing new: %q", got)
	}
	withLanguage(t, "fa", func() {
		got := batchWords(b)
		if !strings.Contains(got, "1٬214 پرونده از پیش در آلبوم Roll هست، 20٬000 تازه.") || !strings.Contains(got, "حدود 3 روز") {
			t.Fatalf("in Persian: %q", got)
		}
	})
}
