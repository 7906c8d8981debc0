package ui

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
)

// shownText is every visible wrapping label's text under o, in reading
// order: what the person reads.
func shownText(o fyne.CanvasObject) []string {
	if o == nil || !o.Visible() {
		return nil
	}
	switch x := o.(type) {
	case *wrapLabel:
		return []string{x.logical}
	case *fyne.Container:
		var out []string
		for _, c := range x.Objects {
			out = append(out, shownText(c)...)
		}
		return out
	case *container.Scroll:
		return shownText(x.Content)
	}
	return nil
}

// A refused client file is said once: the person's sentence, and the
// check's own words only behind Details (they said the same thing a
// second time under every verdict).
func TestAssistantSaysEachVerdictOnce(t *testing.T) {
	const check = `the client secret file is for a "Web application" client: its sign-ins cannot come back to Carrier; make a "Desktop app" client`
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			d.CheckClient = func([]byte) (string, error) { return "", errors.New(check) }
		}
	})
	h.u.account.openAssistant()
	s := h.u.account.assistant
	s.paste.SetText(`{"web":{"client_id":"x"}}`)
	count := func(part string) int {
		n := 0
		for _, t := range shownText(s.content) {
			n += strings.Count(t, part)
		}
		return n
	}
	if n := count("Not this file"); n != 1 {
		t.Errorf("the verdict's sentence is shown %d times", n)
	}
	if n := count("cannot come back to Carrier"); n != 0 {
		t.Errorf("the check's words are shown %d times before Details is pressed: %q", n, shownText(s.content))
	}
	if !s.details.Visible() {
		t.Fatal("no Details under a refusal")
	}
	test.Tap(s.details)
	if n := count("cannot come back to Carrier"); n != 1 {
		t.Errorf("after Details, the check's words are shown %d times", n)
	}
	if n := count("Not this file"); n != 1 {
		t.Errorf("after Details, the sentence is shown %d times", n)
	}
	// Copy carries both, once each: what a person asks for help with.
	if strings.Count(s.said, "Not this file") != 1 || strings.Count(s.said, "cannot come back to Carrier") != 1 {
		t.Errorf("Copy gives %q", s.said)
	}
	// A file taken has nothing more to say: no Details.
	h.u.deps.CheckClient = func([]byte) (string, error) { return "id", nil }
	s.paste.SetText(`{"installed":{"client_id":"id"}}`)
	if s.details.Visible() || s.detail.Visible() {
		t.Error("Details offered under a client taken")
	}
}

// inside reports whether o lies wholly within the rectangle at pos of
// size.
func inside(o fyne.CanvasObject, pos fyne.Position, size fyne.Size) bool {
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	z := o.Size()
	return z.Width > 0 && z.Height > 0 && p.X >= pos.X && p.Y >= pos.Y && p.X+z.Width <= pos.X+size.Width+0.5 && p.Y+z.Height <= pos.Y+size.Height+0.5
}

// The assistant fits its window at the default size and at the smallest
// the window allows: Choose the file…, the paste box and the buttons are
// wholly in sight without scrolling (Choose the file… was cut in half by
// the scrolled text's edge), and the text grows with the dialog rather
// than leaving an empty band under a small scroll area.
func TestAssistantFitsItsWindow(t *testing.T) {
	h := newHarness(t)
	smallest := h.w.Content().MinSize()
	heights := map[string]float32{}
	for _, c := range []struct {
		name string
		size fyne.Size
	}{{"1100x720", fyne.NewSize(1100, 720)}, {"the smallest window", smallest}} {
		h.w.Resize(c.size)
		h.u.account.openAssistant()
		s := h.u.account.assistant
		s.paste.SetText(`{"web":{"client_id":"x"}}`) // a verdict of two lines
		canvas := h.w.Canvas().Size()
		dpos := fyne.CurrentApp().Driver().AbsolutePositionForObject(s.content)
		dsize := s.content.Size()
		if dpos.X < 0 || dpos.Y < 0 || dpos.X+dsize.Width > canvas.Width || dpos.Y+dsize.Height > canvas.Height {
			t.Errorf("%s: the assistant (%v at %v) overflows the window %v", c.name, dsize, dpos, canvas)
		}
		// The dialog takes the window's height but for its margin.
		if want := canvas.Height - 2*assistantMargin - 120; dsize.Height < want {
			t.Errorf("%s: the assistant's content is %v high in a window %v high", c.name, dsize.Height, canvas.Height)
		}
		var scroll *container.Scroll
		for _, o := range s.content.Objects {
			if sc, ok := o.(*container.Scroll); ok {
				scroll = sc
			}
		}
		if scroll == nil {
			t.Fatalf("%s: no scrolled text", c.name)
		}
		heights[c.name] = scroll.Size().Height
		for name, o := range map[string]fyne.CanvasObject{"Choose the file…": s.chooser, "the paste box": s.paste, "Sign in with Google": s.signIn, "the verdict": s.verdict} {
			if !inside(o, dpos, dsize) {
				t.Errorf("%s: %s (%v at %v) is not wholly inside the assistant (%v at %v)", c.name, name, o.Size(), fyne.CurrentApp().Driver().AbsolutePositionForObject(o), dsize, dpos)
			}
			if !inside(o, fyne.NewPos(0, 0), canvas) {
				t.Errorf("%s: %s is not wholly inside the window %v", c.name, name, canvas)
			}
			if isUnder(scroll, o) {
				t.Errorf("%s: %s scrolls with the text", c.name, name)
			}
		}
		s.close()
	}
	if heights["1100x720"] <= heights["the smallest window"] && smallest.Height < 720 {
		t.Errorf("the text does not grow with the dialog: %v", heights)
	}
}

// isUnder reports whether o is held somewhere under root.
func isUnder(root, o fyne.CanvasObject) bool {
	if root == o {
		return true
	}
	switch x := root.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			if isUnder(c, o) {
				return true
			}
		}
	case *container.Scroll:
		return isUnder(x.Content, o)
	}
	return false
}

// The mouse wheel scrolls the assistant's text wherever the pointer is:
// no multi-line entry, which keeps the wheel for itself, lies in the
// scrolled text.
func TestAssistantPasteBoxDoesNotTrapTheWheel(t *testing.T) {
	h := newHarness(t)
	h.u.account.openAssistant()
	s := h.u.account.assistant
	for _, o := range s.content.Objects {
		if sc, ok := o.(*container.Scroll); ok && isUnder(sc, s.paste) {
			t.Error("the paste box lies in the scrolled text: the wheel stops over it")
		}
	}
}

// The permissions are said in words, with no command line in them.
func TestAssistantPermissionsSpeakNoCommandLine(t *testing.T) {
	for _, tag := range []string{"en", "fa", "he", "ar"} {
		withLanguage(t, tag, func() {
			text := scopeText()
			for _, jargon := range []string{"carrier send", "--as", "insert or import"} {
				if strings.Contains(text, jargon) {
					t.Errorf("%s: the permissions say %q: %q", tag, jargon, text)
				}
			}
		})
	}
}

// A client the sandbox takes, standing in for Google, is said to sign in
// through the sandbox on this computer, not with Google's addresses.
func TestAssistantNamesTheSandboxStandIn(t *testing.T) {
	for _, standIn := range []bool{true, false} {
		h := newHarness(t, func(o *harnessOpts) {
			o.deps = func(d *Deps) {
				d.StandIn = standIn
				d.CheckClient = func([]byte) (string, error) { return "carrier-sandbox", nil }
			}
		})
		h.u.account.openAssistant()
		s := h.u.account.assistant
		s.paste.SetText(`{"installed":{"client_id":"carrier-sandbox"}}`)
		sandbox := strings.Contains(s.verdict.logical, "sandbox on this computer")
		google := strings.Contains(s.verdict.logical, "Google's own sign-in addresses")
		if sandbox != standIn || google == standIn || !strings.HasPrefix(s.verdict.logical, "A Desktop app client (carrier-sandbox)") {
			t.Errorf("stand-in %v: %q", standIn, s.verdict.logical)
		}
	}
}

// withLanguage runs f with Carrier's words in language tag, then puts the
// system's back.
func withLanguage(t *testing.T, tag string, f func()) {
	t.Helper()
	useLanguage(tag)
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}

// In Persian the console's link stands at the right, where the lines
// around it start, though its words are Latin.
func TestAssistantLinkAtTheRightInPersian(t *testing.T) {
	inLanguage(t, "fa")
	h := newHarness(t)
	h.u.account.openAssistant()
	var link *dialogLink
	var find func(o fyne.CanvasObject)
	find = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *dialogLink:
			link = x
		case *fyne.Container:
			for _, c := range x.Objects {
				find(c)
			}
		case *container.Scroll:
			find(x.Content)
		}
	}
	find(h.u.account.assistant.content)
	if link == nil || link.Alignment != fyne.TextAlignTrailing {
		t.Errorf("the console's link is not at the right: %+v", link)
	}
}
