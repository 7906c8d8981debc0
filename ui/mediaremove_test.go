package ui

import (
	"bytes"
	"image"
	"image/jpeg"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
)

// removeButtons are the Remove buttons of the Media list's rows.
func removeButtons(tl *timelineScreen) []*iconButton {
	var out []*iconButton
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *iconButton:
			out = append(out, x)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		}
	}
	for _, o := range tl.list.Box.Objects {
		walk(o)
	}
	return out
}

// Issue 32: one file chosen by mistake could only go with all the others
// (Clear). Each chosen file's row has a Remove button, named after its
// file for a screen reader, which takes that file alone off the list; the
// last one removed leaves nothing to post.
func TestMediaRemovesOneFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jpg"), filepath.Join(dir, "b.jpg")
	writeJPEG(t, a, 2000)
	writeJPEG(t, b, 2000)
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dropMedia(h, a, b)
	buttons := removeButtons(tl)
	if len(buttons) != 2 || buttons[0].AccessibilityLabel() != "Remove a.jpg from the files to post" {
		t.Fatalf("the rows' Remove buttons: %d", len(buttons))
	}
	test.Tap(buttons[0])
	if len(tl.files) != 1 || tl.files[0].Path != b {
		t.Fatalf("after removing a.jpg the files are %v", tl.files)
	}
	if rows := rowTexts(tl); len(rows) != 1 || !strings.HasPrefix(rows[0], "b.jpg · picture") {
		t.Fatalf("the rows: %q", rows)
	}
	if !strings.Contains(tl.info.Text, "1 file") || tl.post.Disabled() {
		t.Fatalf("the summary %q, Post disabled %v", tl.info.Text, tl.post.Disabled())
	}
	test.Tap(removeButtons(tl)[0])
	if len(tl.files) != 0 || !tl.post.Disabled() || len(removeButtons(tl)) != 0 {
		t.Fatalf("after removing both: %d files, Post disabled %v", len(tl.files), tl.post.Disabled())
	}
}

// thumbsOf are the images before the Media list's rows' names.
func thumbsOf(tl *timelineScreen) []*canvas.Image {
	var out []*canvas.Image
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *canvas.Image:
			out = append(out, x)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		}
	}
	for _, o := range tl.list.Box.Objects {
		walk(o)
	}
	return out
}

// Issue 32: the Media list named the files and showed none of them. A
// chosen picture shows small before its name, read in the background; a
// picture that cannot be read, or a video, shows its kind's icon; the rows
// are no taller than before.
func TestMediaShowsThumbnails(t *testing.T) {
	dir := t.TempDir()
	bad, pic, clip := filepath.Join(dir, "a bad.jpg"), filepath.Join(dir, "pic.jpg"), filepath.Join(dir, "clip.mp4")
	writeJPEG(t, bad, 2000) // says JPEG, holds noise
	src := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for i := range src.Pix {
		src.Pix[i] = byte(i)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, src, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pic, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	writeMP4(t, clip, 5000)
	h := newHarness(t)
	h.u.Select("Media")
	tl := h.u.timeline
	dropMedia(h, bad, pic, clip)
	// The pictures are read one after the other: the second made small,
	// the first was read before it.
	h.until("the picture made small", func() bool {
		th := thumbsOf(tl)
		return len(th) == 3 && th[1].Resource == nil && th[1].Image != nil
	})
	th := thumbsOf(tl)
	if b := th[1].Image.Bounds(); b.Dx() != thumbPixels || b.Dy() != thumbPixels*3/4 {
		t.Errorf("the thumbnail is %v, want %dx%d", b, thumbPixels, thumbPixels*3/4)
	}
	if th[0].Resource == nil || th[2].Resource == nil {
		t.Errorf("an unreadable picture or a video shows no icon: %v, %v", th[0].Resource, th[2].Resource)
	}
	plain := newMediaRow("pic.jpg", "picture · 2.0 KiB")
	if got, want := tl.list.Box.Objects[1].MinSize().Height, plain.object.MinSize().Height; got > want+1 {
		t.Errorf("a row with its thumbnail is %.0f high, one without %.0f", got, want)
	}
}

// A file of a Media batch that failed says so on its row in a word; why,
// and what to do, is the batch's line, which wraps: the whole sentence on
// the row's one line made the window wider than the screen. A file that
// changed is not one the Transfers screen can retry.
func TestMediaFailedFileKeepsTheWindowsWidth(t *testing.T) {
	held := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(held) }) }
	defer release()
	h := newHarness(t, func(o *harnessOpts) {
		o.wrap = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v1/uploads" {
					select {
					case <-held:
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
	pic := filepath.Join(t.TempDir(), "a picture with a rather long name, taken on the harbour wall at dusk.jpg")
	writeJPEG(t, pic, 3000)
	dropMedia(h, pic)
	test.Tap(tl.post)
	h.until("the batch on the screen", func() bool { return tl.batch != nil })
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(pic, later, later); err != nil {
		t.Fatal(err)
	}
	release()
	h.until("the batch failed: "+tl.batchState.Text, func() bool { return strings.Contains(tl.batchState.Text, "not in Google Photos") })
	if rows := rowTexts(tl); len(rows) != 1 || !strings.HasSuffix(rows[0], " · Failed") {
		t.Errorf("the row: %q", rows)
	}
	if !strings.Contains(tl.batchState.Text, "The Transfers screen says what can be done") {
		t.Errorf("the batch's line: %q", tl.batchState.Text)
	}
	if w := tl.content.MinSize().Width; w > 1000 {
		t.Errorf("the Media screen asks for %.0f of width", w)
	}
}
