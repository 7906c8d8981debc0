package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
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
