package ui

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
)

// fileURI is the file: URI a file manager writes for p.
func fileURI(p string) string {
	s := filepath.ToSlash(p)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s // C:/x on Windows
	}
	return (&url.URL{Scheme: "file", Path: s}).String()
}

// What a file manager's copy looks like is read as files; anything else
// is text, and whatever names no file here is refused in words.
func TestFilesOnClipboard(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	spaced := filepath.Join(dir, "b c é.pdf")
	sub := filepath.Join(dir, "sub")
	for _, p := range []string{a, spaced} {
		os.WriteFile(p, []byte("x"), 0o600)
	}
	os.Mkdir(sub, 0o700)
	missing := filepath.Join(dir, "missing.txt")
	parent := fileURI(dir) + "/../" + filepath.Base(dir) + "/a.txt"
	many := "copy\n" + strings.Repeat(fileURI(a)+"\n", maxPastedFiles+1)
	cases := []struct {
		name      string
		text      string
		withPaths bool
		ok        bool
		paths     []string
		refused   []string // a part of each refusal's words, in order
	}{
		{"GNOME's copied files", "copy\n" + fileURI(a) + "\n" + fileURI(spaced), false, true, []string{a, spaced}, nil},
		{"GNOME's cut files", "cut\n" + fileURI(a), false, true, []string{a}, nil},
		{"GNOME Files 3.x's text", "x-special/nautilus-clipboard\ncopy\n" + fileURI(a) + "\n" + fileURI(spaced) + "\n", false, true, []string{a, spaced}, nil},
		{"GNOME Files 3.x's line alone", "x-special/nautilus-clipboard\n", true, false, nil, nil},
		{"a uri-list with a comment, CRLF and a NUL", "# from the file manager\r\n" + fileURI(a) + "\r\n" + fileURI(spaced) + "\x00", false, true, []string{a, spaced}, nil},
		{"a folder is named, for Compose to refuse and Media to walk", fileURI(sub), false, true, []string{sub}, nil},
		{"the same file twice is one", "copy\n" + fileURI(a) + "\n" + fileURI(a), false, true, []string{a}, nil},
		{"hostile lines among files", strings.Join([]string{fileURI(a), "http://example.com/a.txt", "javascript:alert(1)", "file://elsewhere.example" + filepath.ToSlash(a),
			"file:a.txt", parent, fileURI(missing), fileURI(a) + "?x=1", "relative/a.txt"}, "\n"), false, true, []string{a},
			[]string{"http://example.com/a.txt: is not a file on this computer", "javascript:alert(1): is not a file on this computer", "is on another computer",
				"file:a.txt: is not a full path", "names a parent folder (..)", missing + ": there is no such file", "is not a file address", "relative/a.txt: is not a full path"}},
		{"nothing but a link", "copy\nhttp://example.com/x", false, true, nil, []string{"is not a file on this computer"}},
		{"too many", many, false, true, nil, []string{"More than 1000 files"}},
		{"ordinary text", "hello world", true, false, nil, nil},
		{"a link pasted as text", "https://example.com/a.pdf", true, false, nil, nil},
		{"a path in a text field is text", a, false, false, nil, nil},
		{"a path elsewhere is a file", a + "\n" + spaced, true, true, []string{a, spaced}, nil},
		{"a missing path is text", missing, true, false, nil, nil},
		{"a path with .. is text", filepath.Join(dir, "sub") + string(filepath.Separator) + ".." + string(filepath.Separator) + "a.txt", true, false, nil, nil},
		{"a relative path is text", "a.txt", true, false, nil, nil},
		{"a path among words is text", a + "\nand more", true, false, nil, nil},
		{"copy alone", "copy\n", false, false, nil, nil},
		{"empty", " \n\r\n", true, false, nil, nil},
		{"huge", "copy\n" + fileURI(a) + "\n" + strings.Repeat("x", maxPastedBytes), false, false, nil, nil},
	}
	for _, c := range cases {
		pf, ok := filesOnClipboard(c.text, c.withPaths)
		if ok != c.ok || !slices.Equal(pf.paths, c.paths) {
			t.Errorf("%s: ok %v, paths %q; want %v, %q", c.name, ok, pf.paths, c.ok, c.paths)
		}
		if len(pf.refused) != len(c.refused) {
			t.Errorf("%s: refused %q, want %d refusals", c.name, pf.refused, len(c.refused))
			continue
		}
		for i, want := range c.refused {
			if !strings.Contains(pf.refused[i], want) {
				t.Errorf("%s: refusal %d is %q, want %q in it", c.name, i, pf.refused[i], want)
			}
		}
	}
}

// Ctrl+V of files copied in a file manager attaches them, from a text
// field of Compose too (which pastes ordinary text as text), says what was
// not a file, and in Media adds them to the batch.
func TestPasteAttachesFiles(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	clip := fyne.CurrentApp().Clipboard()
	a := writeFile(t, "report.pdf", []byte("%PDF-1.4 report"))
	b := writeFile(t, "notes.txt", []byte("notes"))

	h.w.Canvas().Focus(c.body)
	clip.SetContent("copy\n" + fileURI(a) + "\nhttp://example.com/x")
	c.body.TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
	if !slices.Equal(c.attachments, []string{a}) || c.body.Text != "" {
		t.Fatalf("after pasting files in the body: attachments %q, body %q", c.attachments, c.body.Text)
	}
	if words := overlayWords(h.w); !strings.Contains(words, "http://example.com/x: is not a file on this computer") {
		t.Errorf("the refusal: %q", words)
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())

	// Ordinary text, and a path, go into the field as text.
	clip.SetContent("see " + b)
	c.body.TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
	clip.SetContent(b)
	c.subject.TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
	if c.body.Text != "see "+b || c.subject.Text != b || len(c.attachments) != 1 {
		t.Fatalf("text pasted: body %q, subject %q, attachments %q", c.body.Text, c.subject.Text, c.attachments)
	}

	// With no text field focused (the window's shortcut), a plain path
	// is a file.
	h.w.Canvas().Unfocus()
	h.u.pasteShortcut(&fyne.ShortcutPaste{Clipboard: clip})
	if !slices.Equal(c.attachments, []string{a, b}) {
		t.Fatalf("after the window's paste: %q", c.attachments)
	}

	// In Media, the files go to the batch.
	h.u.tabs.Select(h.u.timelineTab)
	pic := writeFile(t, "dot.png", pngDot)
	clip.SetContent("copy\n" + fileURI(pic))
	h.w.Canvas().Focus(h.u.timeline.description)
	h.u.timeline.description.TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
	h.until("the picture in Media", func() bool { return h.u.timeline.reading == 0 && len(h.u.timeline.files) == 1 })
	if len(c.attachments) != 2 || h.u.timeline.description.Text != "" {
		t.Errorf("Media's paste: attachments %q, description %q", c.attachments, h.u.timeline.description.Text)
	}
}
