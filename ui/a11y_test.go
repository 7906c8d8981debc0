package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// spoken is what a screen reader hears of the window, walked as Fyne 2.8's
// bridge walks it (-tags accessibility, Windows and macOS): visible objects
// in containers, accessible ones named, nothing inside other widgets.
func spoken(o fyne.CanvasObject, out map[fyne.CanvasObject]string) {
	if o == nil || !o.Visible() {
		return
	}
	if a, ok := o.(fyne.Accessible); ok && a.AccessibilityRole() != fyne.AccessibleRoleContainer {
		out[o] = a.AccessibilityLabel()
	}
	if c, ok := o.(*fyne.Container); ok {
		for _, child := range c.Objects {
			spoken(child, out)
		}
	}
}

// controls are the visible things a person acts on, wherever they sit:
// in containers, or inside widgets (a Scroll, a List, a Split), which
// Fyne 2.8's bridge does not enter.
func controls(o fyne.CanvasObject, out *[]fyne.CanvasObject) {
	if o == nil || !o.Visible() {
		return
	}
	switch o.(type) {
	case *widget.Button, *widget.Entry, *widget.Check, *widget.Select, *namedEntry, *namedCheck, *iconButton, *choiceButton, *dualBar, *focusButton, *sizeMeter, *widget.ProgressBar:
		*out = append(*out, o)
		return
	}
	switch w := o.(type) {
	case *fyne.Container:
		for _, c := range w.Objects {
			controls(c, out)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(w).Objects() {
			controls(c, out)
		}
	}
}

// Every control of every screen, the Transfers rows and the Mailbox's
// list and opened message included, has a name a screen reader can say:
// Compose with a file that goes as a Drive link (its switch, who can open
// the links, until when) and Transfers with that message's row and the
// upload beneath it.
func TestEveryControlHasAName(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	report := writeFile(t, "report.pdf", []byte("%PDF"))
	h.u.compose.attach(report, writeFile(t, "notes.txt", []byte("notes")))
	test.Tap(c.attRows[report].toggle) // as a Drive link
	if !c.linkOpts.Visible() {
		t.Fatal("the link options are hidden with a file going as a link")
	}
	check := func(tb *tab) {
		names := map[fyne.CanvasObject]string{}
		spoken(h.w.Canvas().Content(), names)
		var cs []fyne.CanvasObject
		controls(tb.content, &cs)
		if len(cs) == 0 {
			t.Fatalf("%s: no controls found", tb.Text)
		}
		for _, c := range cs {
			name, reached := names[c]
			switch {
			case !reached:
				t.Errorf("%s: a %T is out of a screen reader's reach", tb.Text, c)
			case strings.TrimSpace(name) == "" || strings.Contains(name, ".svg") || strings.Contains(name, ".png"):
				t.Errorf("%s: a %T is named %q", tb.Text, c, name)
			}
		}
		for _, other := range h.u.tabs.Items { // the tab buttons too
			if n := names[other.button]; n != other.Text {
				t.Errorf("tab button %q is read as %q", other.Text, n)
			}
		}
	}
	h.u.tabs.Select(h.u.composeTab)
	check(h.u.composeTab)
	names := map[fyne.CanvasObject]string{}
	spoken(h.w.Canvas().Content(), names)
	for _, want := range []string{"Send report.pdf as a Google Drive link", "Attach report.pdf to the message instead", "Who can open the links: Recipients (chosen)", "Who can open the links: Anyone with the link", "Access ends: Never (chosen)", "Access ends: 1 year"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if found == (want == "Send report.pdf as a Google Drive link") {
			t.Errorf("Compose: %q read %v", want, found)
		}
	}
	h.sendMessage(t)
	if row := h.onlyRow(); row == nil || len(row.partRows) != 1 {
		for id, r := range h.u.transfers.rows {
			t.Logf("%s: %q %q %d", id, r.name.Text, r.state.Text, len(r.partRows))
		}
		t.Fatal("the message with a link is not one row with its upload beneath")
	}
	test.Tap(choiceNamed(h.u.transfers.network.speed, speedCustom)) // the limit typed shows too
	h.u.Select("Mailbox")
	h.until("the mailbox loaded", func() bool { return len(h.u.mailbox.items) > 0 })
	h.u.mailbox.choose(0)
	h.until("the message opened", func() bool { return strings.Contains(labelsIn(h.u.mailbox.detail.Box), "Subject: ") })
	for _, tb := range h.u.tabs.Items {
		h.u.tabs.Select(tb)
		check(tb)
		if tb != h.u.transfersTab {
			continue
		}
		names := map[fyne.CanvasObject]string{}
		spoken(h.w.Canvas().Content(), names)
		found := false
		for _, n := range names {
			found = found || n == "Upload of report.pdf · to Google Drive: 100% confirmed by the server, 100% sent"
		}
		if !found {
			t.Errorf("Transfers: the upload's bar is not read by its file: %v", names)
		}
	}
}
