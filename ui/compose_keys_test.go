package ui

import (
	"fmt"
	"image"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// pressTab is the Tab key as the desktop driver handles it: a focused
// widget that accepts tabs gets the key, otherwise focus moves.
func pressTab(c fyne.Canvas, shift bool) {
	if t, ok := c.Focused().(fyne.Tabbable); ok && t.AcceptsTab() {
		c.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyTab})
		return
	}
	if shift {
		c.FocusPrevious()
	} else {
		c.FocusNext()
	}
}

// pressCtrlEnter is Ctrl+Enter as the desktop driver delivers it: to the
// focused widget when it takes shortcuts (an entry does), else to the
// canvas's shortcuts.
// window are the shortcuts the screen put on the window (the test canvas
// cannot be asked for them).
func pressCtrlEnter(c fyne.Canvas, window *fyne.ShortcutHandler) {
	s := &desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierControl}
	if f, ok := c.Focused().(fyne.Shortcutable); ok {
		f.TypedShortcut(s)
		return
	}
	window.TypedShortcut(s)
}

// Ctrl+Enter sends from every field and button of Compose, the text
// fields (which take shortcuts themselves) included.
func TestComposeCtrlEnterSendsFromAnyField(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	att := writeFile(t, "notes.txt", []byte("notes"))
	cv := h.w.Canvas()
	var window fyne.ShortcutHandler
	c.addShortcuts(&window)
	for i, f := range []struct {
		name string
		o    fyne.Focusable
	}{{"To", c.to}, {"Cc", c.cc}, {"Bcc", c.bcc}, {"Subject", c.subject}, {"the body", c.body}, {"Attach…", c.attachBtn}, {"Save as draft", c.draftBtn}, {"Send", c.sendBtn}} {
		h.u.tabs.Select(h.u.composeTab)
		subject := fmt.Sprintf("Sent from %s", f.name)
		c.to.SetText("zoe@example.com")
		c.subject.SetText(subject)
		c.body.SetText("Line one")
		c.attach(att)
		cv.Focus(f.o)
		if cv.Focused() != f.o {
			t.Fatalf("%s cannot take focus", f.name)
		}
		pressCtrlEnter(cv, &window)
		h.until("Ctrl+Enter in "+f.name+" to send", func() bool { return h.u.tabs.Selected() == h.u.transfersTab })
		if c.body.Text != "" {
			t.Fatalf("%s: the form was not sent and cleared (body %q)", f.name, c.body.Text)
		}
		h.until("the row of message "+fmt.Sprint(i+1), func() bool {
			for _, r := range h.u.transfers.rows {
				if r.name.Text != "" && len(r.name.Text) >= len(subject) && r.name.Text[:len(subject)] == subject {
					return true
				}
			}
			return false
		})
	}
	// Not while Send cannot be pressed: an invalid address keeps the form.
	h.u.tabs.Select(h.u.composeTab)
	c.to.SetText("bob@")
	cv.Focus(c.subject)
	pressCtrlEnter(cv, &window)
	if h.u.tabs.Selected() != h.u.composeTab || c.to.Text != "bob@" {
		t.Fatal("Ctrl+Enter sent a message with a bad address")
	}
}

// Tab walks To, Cc, Bcc, Subject, the body, the attachments' buttons,
// Discard, Save as draft and Send, in that order; in the body Tab inserts
// nothing and leaves, and Shift+Tab goes back to Subject.
func TestComposeTabOrder(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	att := writeFile(t, "notes.txt", []byte("notes"))
	c.attach(att)
	row := c.attRows[att]
	cv := h.w.Canvas()
	want := []struct {
		name string
		o    fyne.Focusable
	}{{"To", c.to}, {"Cc", c.cc}, {"Bcc", c.bcc}, {"Subject", c.subject}, {"the body", c.body}, {"Attach…", c.attachBtn}, {"the file's way", row.toggle}, {"the file's Remove", row.remove}, {"Discard", c.discardBtn}, {"Save as draft", c.draftBtn}, {"Send", c.sendBtn}}
	cv.Focus(c.to)
	next := 1
	for range 40 {
		pressTab(cv, false)
		if next < len(want) && cv.Focused() == want[next].o {
			next++
		}
		if cv.Focused() == c.to {
			break
		}
	}
	if next < len(want) {
		t.Fatalf("Tab from To never reached %s after %s, in order", want[next].name, want[next-1].name)
	}
	c.body.SetText("Dear Zoe,")
	cv.Focus(c.body)
	pressTab(cv, false)
	if cv.Focused() != c.attachBtn || c.body.Text != "Dear Zoe," {
		t.Fatalf("Tab in the body: focus on %T, body %q", cv.Focused(), c.body.Text)
	}
	cv.Focus(c.body)
	pressTab(cv, true)
	if cv.Focused() != c.subject || c.body.Text != "Dear Zoe," {
		t.Fatalf("Shift+Tab in the body: focus on %T, body %q", cv.Focused(), c.body.Text)
	}
}

// Keyboard focus can be seen on every kind of control Compose has, Send
// included: focused, each is drawn differently.
// Fyne's own primary button blends its focus colour into a background of
// the same colour, and looks the same either way.
func TestComposeControlsShowFocus(t *testing.T) {
	test.NewTempApp(t)
	for _, v := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
		fyne.CurrentApp().Settings().SetTheme(variantTheme{newTheme(), v}) // the app's theme, in each variant
		sendShowsFocus(t, v)
	}
}

func sendShowsFocus(t *testing.T, v fyne.ThemeVariant) {
	for _, c := range []struct {
		name string
		b    interface {
			fyne.Focusable
			fyne.Widget
		}
	}{
		{"Send", newFocusButton("Send", nil, func() {})},
		{"Save as draft", widget.NewButton("Save as draft", func() {})},
		{"a file's Remove", newIconButton("Remove", theme.DeleteIcon(), func() {})},
		{"a choice", newChoices("Access ends", []string{"Never"}, nil).buttons[0]},
		{"To", newNamedEntry("To", false)},
		{"the body", newNamedEntry("Message", true)},
	} {
		if fb, ok := c.b.(*focusButton); ok {
			fb.Importance = widget.HighImportance
		}
		w := test.NewTempWindow(t, c.b)
		w.Resize(fyne.NewSize(160, 60))
		before := w.Canvas().Capture()
		w.Canvas().Focus(c.b)
		after := w.Canvas().Capture()
		if n := pixelsDiffering(before, after); n < 100 {
			t.Errorf("variant %v: %s focused differs from %s unfocused in %d pixels only", v, c.name, c.name, n)
		}
	}
}

func pixelsDiffering(a, b image.Image) int {
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, _ := a.At(x, y).RGBA()
			br, bg, bb, _ := b.At(x, y).RGBA()
			if d := absDiff(ar, br) + absDiff(ag, bg) + absDiff(ab, bb); d > 3*0x0800 {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
