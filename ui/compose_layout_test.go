package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// inWindow fails unless o is shown and lies wholly inside the window.
func inWindow(t *testing.T, h *harness, name string, o fyne.CanvasObject) {
	t.Helper()
	if !o.Visible() {
		t.Errorf("%s is hidden", name)
		return
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	size, win := o.Size(), h.w.Canvas().Size()
	if pos.X < 0 || pos.Y < 0 || pos.X+size.Width > win.Width+0.5 || pos.Y+size.Height > win.Height+0.5 || size.Width <= 0 || size.Height <= 0 {
		t.Errorf("%s lies at %v size %v, outside the %v window", name, pos, size, win)
	}
}

// At 1024x700, ten attachments and a long To list with a typo leave
// every control of Compose inside the window, and the window's minimum
// size never depends on what was typed or attached.
func TestComposeLayoutFitsAt1024x700(t *testing.T) {
	h := newHarness(t)
	fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme())
	win := fyne.NewSize(1024, 700)
	h.w.Resize(win)
	c := h.u.compose
	empty := h.w.Content().MinSize()
	var files []string
	for i := range 10 {
		files = append(files, writeFile(t, fmt.Sprintf("attachment-%02d-with-a-fairly-long-name.pdf", i), []byte("%PDF-1.4 x")))
	}
	drop(h, files...)
	if len(c.attachments) != 10 {
		t.Fatalf("%d attachments", len(c.attachments))
	}
	var list []string
	for i := range 40 {
		list = append(list, fmt.Sprintf("Recipient Number %d <recipient.number.%d@example.com>", i, i))
	}
	list[17] = "bob@"
	h.w.Canvas().Focus(c.to)
	c.to.SetText(strings.Join(list, ", "))
	h.w.Canvas().Focus(c.subject)
	check := func(when string) {
		t.Helper()
		if m := h.w.Content().MinSize(); m.Width > win.Width || m.Height > win.Height || m != empty {
			t.Errorf("%s: the window's minimum size is %v, over %v or not the empty form's %v", when, m, win, empty)
		}
		for _, o := range []struct {
			name string
			o    fyne.CanvasObject
		}{{"Send", c.sendBtn}, {"Save as draft", c.draftBtn}, {"the size meter", c.meter}, {"Attach…", c.attachBtn}, {"the body", c.body}, {"To", c.to}} {
			inWindow(t, h, when+": "+o.name, o.o)
		}
		// And every other control on the screen: the attachments' rows
		// shown, their page buttons.
		var all []fyne.CanvasObject
		controls(c.content, &all)
		if len(all) < 12 {
			t.Errorf("%s: only %d controls found", when, len(all))
		}
		for _, o := range all {
			inWindow(t, h, sprintf("%s: a %T", when, o), o)
		}
		if b := c.body.Size().Height; b < 3*theme.TextSize() {
			t.Errorf("%s: the body is %v high, under three lines", when, b)
		}
		if !strings.Contains(c.attPaged.where.Text, "of 10 attachments") {
			t.Errorf("%s: the attachments do not turn pages: %q", when, c.attPaged.where.Text)
		}
		t.Logf("%s: minimum %v, body %v, Send at %v", when, h.w.Content().MinSize(), c.body.Size(), fyne.CurrentApp().Driver().AbsolutePositionForObject(c.sendBtn))
	}
	check("with a bad address")
	if c.to.Validate() == nil {
		t.Fatal("bob@ passed the check")
	}
	list[17] = "bob@example.com"
	c.to.SetText(strings.Join(list, ", "))
	check("after the fix")
}

// With everything Compose can show at once (a named mistake under To, a
// file going as a Drive link and its options, the message over the limit
// and why, a line under the buttons, ten attachments), at 1024x700 every
// control is still inside the window and none covers another: the body
// and the attachment list give up room first.
func TestComposeLayoutWithEverythingShown(t *testing.T) {
	h := newHarness(t)
	fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme())
	win := fyne.NewSize(1024, 700)
	h.w.Resize(win)
	c := h.u.compose
	var files []string
	for i := range 8 {
		files = append(files, writeFile(t, fmt.Sprintf("page-%02d.pdf", i), []byte("%PDF-1.4 x")))
	}
	for _, size := range []int64{30 << 20, 20 << 20} {
		p := filepath.Join(t.TempDir(), fmt.Sprintf("film-%d.mp4", size>>20))
		f, _ := os.Create(p)
		f.Truncate(size)
		f.Close()
		files = append(files, p)
	}
	drop(h, files...)
	big, mid := files[8], files[9]
	test.Tap(c.attRows[big].toggle) // attached by choice: over the limit
	if c.attRows[mid].how.Text == "Attached" {
		test.Tap(c.attRows[mid].toggle)
	}
	h.w.Canvas().Focus(c.to)
	c.to.SetText("zoe@example.com, bob@")
	h.w.Canvas().Focus(c.subject)
	drop(h, t.TempDir()) // a folder: "Not attached: … is a folder"
	if !c.linkOpts.Visible() || !c.meterNote.Visible() || !c.status.Visible() || !c.meter.over {
		t.Fatalf("not everything shows: link options %v, meter note %v, status %v, over %v", c.linkOpts.Visible(), c.meterNote.Visible(), c.status.Visible(), c.meter.over)
	}
	var all []fyne.CanvasObject
	controls(c.content, &all)
	for _, o := range all {
		inWindow(t, h, sprintf("a %T", o), o)
	}
	d := fyne.CurrentApp().Driver()
	for i, a := range all {
		for _, b := range all[i+1:] {
			pa, pb := d.AbsolutePositionForObject(a), d.AbsolutePositionForObject(b)
			sa, sb := a.Size(), b.Size()
			if pa.X+sa.Width > pb.X+1 && pb.X+sb.Width > pa.X+1 && pa.Y+sa.Height > pb.Y+1 && pb.Y+sb.Height > pa.Y+1 {
				t.Errorf("a %T at %v %v covers a %T at %v %v", a, pa, sa, b, pb, sb)
			}
		}
	}
	if b := c.body.Size().Height; b < 2*theme.TextSize() {
		t.Errorf("the body is %v high, under two lines", b)
	}
	if c.attPaged.layout.shown < 1 {
		t.Error("no attachment row shows")
	}
	t.Logf("body %v high, %d of %d attachment rows shown, Send at %v", c.body.Size().Height, c.attPaged.layout.shown, len(c.attachments), d.AbsolutePositionForObject(c.sendBtn))
}
