package ui

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/internal/app"
)

// The Timeline screen takes a dropped folder of pictures, refuses what
// Photos would (sound, text, whatever the names say) with the reason, and
// queues one Photos batch into a new album: a row per file's upload and
// per step, named, all done, the items in the sandbox's Photos.
func TestTimelineScreenPostsToPhotos(t *testing.T) {
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	if !strings.Contains(tl.dest.Text, "Google Photos") || !tl.post.Disabled() {
		t.Fatalf("the screen: %q, post disabled %v", tl.dest.Text, tl.post.Disabled())
	}
	dir := t.TempDir()
	for i := range 3 {
		b := make([]byte, 4000)
		rand.Read(b)
		copy(b, "\xff\xd8\xff\xe0")
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("pic%d.jpg", i+1)), b, 0o600)
	}
	os.WriteFile(filepath.Join(dir, "song.png"), append([]byte("ID3\x04"), make([]byte, 100)...), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.jpg"), []byte("only text"), 0o600)
	dropMedia(h, dir)
	if len(tl.files) != 3 || tl.post.Disabled() {
		t.Fatalf("%d files chosen, post disabled %v", len(tl.files), tl.post.Disabled())
	}
	if !strings.Contains(tl.status.Text, "song.png is sound") || !strings.Contains(tl.status.Text, "notes.jpg is no picture or video") {
		t.Fatalf("the refusals: %q", tl.status.Text)
	}
	if !strings.Contains(tl.info.Text, "3 files (3 pictures, 0 videos)") {
		t.Fatalf("the summary: %q", tl.info.Text)
	}
	if len(h.u.compose.attachments) != 0 {
		t.Fatal("files dropped on the timeline were attached to the message")
	}
	test.Type(tl.album, "Summer")
	test.Tap(tl.post)
	// The batch (three uploads, one batchCreate) is one row, named by
	// its count and album.
	var row *transferRow
	h.until("the batch done", func() bool {
		row = h.onlyRow()
		return row != nil && row.state.Text == "Done: all 3 files are in Google Photos" &&
			strings.Contains(tl.status.Text, "into the new album Summer") && tl.post.Disabled() && len(tl.files) == 0
	})
	if !strings.Contains(tl.status.Text, "into the new album Summer") {
		t.Errorf("the screen says %q", tl.status.Text)
	}
	if row.name.Text != "3 files into Summer · Google Photos" {
		t.Errorf("the batch's row is named %q", row.name.Text)
	}
	if !tl.post.Disabled() || len(tl.files) != 0 {
		t.Fatal("the screen kept the posted files")
	}

	// The album made is offered to add to; the next post goes there.
	test.Tap(tl.albums)
	h.until("Carrier's albums listed", func() bool {
		return tl.albumChoice != nil && slices.Contains(tl.albumChoice.Options, "Summer")
	})
	var use *widget.Button
	tl.albumChoice.SetSelected("Summer")
	if top := h.w.Canvas().Overlays().Top(); top != nil {
		use = buttonIn(top, "Use")
	}
	if use == nil {
		t.Fatal("no Use button")
	}
	test.Tap(use)
	if tl.album.Text != "Summer" {
		t.Fatalf("the album's field holds %q", tl.album.Text)
	}
	h.u.Select("Media") // queueing showed Transfers
	// pic1.jpg is in the album already: only the new picture goes, and
	// the screen says so (issue 29).
	b := make([]byte, 4000)
	rand.Read(b)
	copy(b, "\xff\xd8\xff\xe0")
	pic4 := filepath.Join(t.TempDir(), "pic4.jpg")
	os.WriteFile(pic4, b, 0o600)
	dropMedia(h, filepath.Join(dir, "pic1.jpg"), pic4)
	if tl.post.Disabled() {
		t.Fatalf("post disabled: %q", tl.status.Text)
	}
	test.Tap(tl.post)
	h.until("the second post queued: "+tl.status.Text, func() bool {
		return strings.Contains(tl.status.Text, "into Carrier's album Summer")
	})
	want := "1 already in the album Summer, 1 new. 1 file needs 2 of Google Photos' 10,000 requests a day."
	if !strings.Contains(tl.status.Text, want) || len(tl.batch.rows) != 1 {
		t.Fatalf("the second post says %q with %d rows; want %q and the new file's row", tl.status.Text, len(tl.batch.rows), want)
	}
	// Posted a third time, once the second is in, nothing is new: nothing
	// is queued.
	h.until("the second post done", func() bool { return tl.batch != nil && tl.batch.ended })
	h.u.Select("Media")
	dropMedia(h, filepath.Join(dir, "pic1.jpg"), pic4)
	tl.album.SetText("Summer")
	test.Tap(tl.post)
	h.until("the third post: "+tl.status.Text, func() bool {
		return tl.status.Text == "Nothing new to send: all 2 files are already in the album Summer."
	})
}

// dropMedia drops paths on the Media screen and waits for them read.
func dropMedia(h *harness, paths ...string) {
	h.t.Helper()
	drop(h, paths...)
	h.until("the dropped files read", func() bool { return h.u.timeline.reading == 0 })
}

// rowTexts are the Media list's rows as read: a file's name and its state.
func rowTexts(tl *timelineScreen) []string {
	var out []string
	for _, o := range tl.list.Box.Objects {
		out = append(out, strings.Join(mediaLabels(o), " · "))
	}
	return out
}

// mediaLabels are the texts of the labels in o, in order.
func mediaLabels(o fyne.CanvasObject) []string {
	switch w := o.(type) {
	case *widget.Label:
		return []string{w.Text}
	case *wrapLabel:
		return []string{w.Text}
	case *fyne.Container:
		var out []string
		for _, c := range w.Objects {
			out = append(out, mediaLabels(c)...)
		}
		return out
	}
	return nil
}

// buttonIn finds the button labelled text in o.
func buttonIn(o fyne.CanvasObject, text string) *widget.Button {
	switch w := o.(type) {
	case *widget.Button:
		if w.Text == text {
			return w
		}
	case *dialogButton:
		if w.Text == text {
			return &w.Button
		}
	case *focusButton:
		if w.Text == text {
			return &w.Button
		}
	case *fyne.Container:
		for _, c := range w.Objects {
			if b := buttonIn(c, text); b != nil {
				return b
			}
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(w).Objects() {
			if b := buttonIn(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

// A sign-in without Photos is asked to allow it (incremental consent)
// before anything is queued; once allowed, the batch goes.
func TestTimelineScreenAsksForPhotos(t *testing.T) {
	var mu sync.Mutex
	allowed, asked := false, 0
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			d.May = func(ctx context.Context, k auth.Kind) error {
				mu.Lock()
				defer mu.Unlock()
				if k == auth.Photos && !allowed {
					return &app.NotAllowedError{Address: "you@example.com", Endpoint: "https://www.googleapis.com", Kind: k}
				}
				return nil
			}
			d.Allow = func(ctx context.Context, k auth.Kind) error {
				mu.Lock()
				defer mu.Unlock()
				asked++
				allowed = k == auth.Photos
				return nil
			}
		}
	})
	h.u.Select("Media")
	tl := h.u.timeline
	b := make([]byte, 4000)
	rand.Read(b)
	copy(b, "\x89PNG\r\n\x1a\n")
	dropMedia(h, writeFile(t, "one.png", b))
	test.Tap(tl.post)
	var yes *widget.Button
	h.until("the question", func() bool {
		if top := h.w.Canvas().Overlays().Top(); top != nil {
			yes = buttonIn(top, "Yes")
		}
		return yes != nil
	})
	if text := labelsIn(h.w.Canvas().Overlays().Top()); !strings.Contains(text, "upload to Google Photos") {
		t.Fatalf("the question: %q", text)
	}
	if h.q != nil {
		if jobs, _ := h.q.History(); len(jobs) != 0 {
			t.Fatal("jobs were queued before Photos was allowed")
		}
	}
	test.Tap(yes)
	h.until("the batch queued", func() bool { return strings.HasPrefix(tl.status.Text, "Queued 1 file for") })
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Fatalf("Allow was asked %d times", asked)
	}
}

// With the box ticked, a file Photos refuses by its type goes to Drive
// instead, and the picture beside it to Photos; unticked, it is left out.
func TestTimelineScreenSendsRefusedToDrive(t *testing.T) {
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dir := t.TempDir()
	b := make([]byte, 4000)
	rand.Read(b)
	copy(b, "\xff\xd8\xff\xe0")
	os.WriteFile(filepath.Join(dir, "pic.jpg"), b, 0o600)
	os.WriteFile(filepath.Join(dir, "song.png"), append([]byte("ID3\x04"), make([]byte, 100)...), 0o600)
	dropMedia(h, dir)
	if len(tl.files) != 1 || len(tl.toDrive()) != 0 {
		t.Fatalf("unticked: %d for Photos, %d for Drive", len(tl.files), len(tl.toDrive()))
	}
	test.Tap(tl.elseDrive)
	if rows := rowTexts(tl); !slices.Contains(rows, "song.png · to Google Drive") || !strings.Contains(tl.info.Text, "1 more to Google Drive") {
		t.Fatalf("the list %q, the summary %q", rows, tl.info.Text)
	}
	test.Tap(tl.post)
	h.until("the song in Drive and the picture in Photos", func() bool {
		files := h.driveFiles()
		return len(files) == 1 && files[0].Name == "song.png" && strings.Contains(tl.status.Text, "Queued 1 file for Google Photos")
	})
	id := h.driveFiles()[0].ID
	h.until("the song's bytes in Drive", func() bool {
		var f struct{ Size string }
		h.get("/drive/v3/files/"+id+"?fields=size", &f)
		return f.Size == "104"
	})
	if !sameBytes(t, filepath.Join(dir, "song.png"), h.get("/drive/v3/files/"+id+"?alt=media", nil)) {
		t.Fatal("Drive's song is not the file's bytes")
	}
}
