package ui

import (
	"carrier/internal/app/message"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// unsentPath is where the harness's Compose keeps its copy.
func unsentPath(state string) string { return message.NewUnsentStore(state).Path() }

// A filled Compose (sender, recipients, subject, body, attachments, a
// file's way, the links' expiry, the draft it edits) whose window closes
// the moment the last key is typed comes back whole in a new window on
// the same folders, which says so; the copy is private.
func TestComposeKeptAcrossRestart(t *testing.T) {
	state := t.TempDir()
	accts := &fakeAccounts{list: []string{"work@example.com", "home@example.com"}}
	opts := []func(*harnessOpts){
		func(o *harnessOpts) { o.state = state },
		func(o *harnessOpts) { o.deps = func(d *Deps) { d.Accounts = accts } },
	}
	h := newHarness(t, opts...)
	c := h.u.compose
	notes := writeFile(t, "notes.txt", []byte("the notes"))
	plan := writeFile(t, "plan.pdf", []byte("%PDF-1.4 the plan"))
	test.Tap(c.from.c.buttons[1])
	c.draft = "r-draft-7"
	c.to.SetText("zoe@example.com, Max <max@example.com>")
	c.cc.SetText("ann@example.com")
	c.bcc.SetText("boss@example.com")
	c.subject.SetText("Plans")
	c.attach(notes, plan)
	c.flip(plan) // a Drive link, by the person's choice
	c.expiry.choose(2)
	c.body.SetText("Line one.\n\nLine two")
	typeInto(c.body, ".") // the last key, typed as the window closes
	h.close()

	fi, err := os.Stat(unsentPath(state))
	if err != nil {
		t.Fatalf("nothing kept on closing: %v", err)
	}
	// Windows keeps it private by its access list, which Wine does not
	// keep (internal/platform's tests say so); mode bits elsewhere.
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the copy is readable by others: %v", fi.Mode())
	}

	h = newHarness(t, opts...)
	c = h.u.compose
	for e, want := range map[*namedEntry]string{c.to: "zoe@example.com, Max <max@example.com>", c.cc: "ann@example.com", c.bcc: "boss@example.com", c.subject: "Plans", c.body: "Line one.\n\nLine two."} {
		if e.Text != want {
			t.Errorf("%s: %q, want %q", e.name, e.Text, want)
		}
	}
	if strings.Join(c.attachments, "|") != notes+"|"+plan {
		t.Errorf("attachments %q", c.attachments)
	}
	if link, chosen := c.choice[plan]; !link || !chosen {
		t.Errorf("the plan's way was not kept: %v", c.choice)
	}
	if c.expiry.chosen != 2 || c.draft != "r-draft-7" || c.from.sender() != "home@example.com" {
		t.Errorf("expiry %d, draft %q, from %q", c.expiry.chosen, c.draft, c.from.sender())
	}
	if want := "Restored what you were writing when Carrier closed: 'Plans'. Save as draft updates the draft; Send sends it. Discard empties Compose."; c.status.Text != want {
		t.Errorf("Compose says %q, want %q", c.status.Text, want)
	}
	if h.u.tabs.Selected() != h.u.composeTab || h.w.Canvas().Focused() != c.to {
		t.Error("the restored Compose is not showing with the focus in To")
	}
}

// typeInto types text into e as the keyboard does.
func typeInto(e *namedEntry, text string) {
	e.CursorRow, e.CursorColumn = len(strings.Split(e.Text, "\n"))-1, len([]rune(e.Text[strings.LastIndex(e.Text, "\n")+1:]))
	for _, r := range text {
		e.TypedRune(r)
	}
}

// An attachment gone from its folder by the next start is named in
// words, not silently dropped; the others come back.
func TestComposeRestoreNamesAMissingFile(t *testing.T) {
	state := t.TempDir()
	withState := func(o *harnessOpts) { o.state = state }
	h := newHarness(t, withState)
	c := h.u.compose
	notes := writeFile(t, "notes.txt", []byte("the notes"))
	plan := writeFile(t, "plan.pdf", []byte("%PDF-1.4 the plan"))
	h.writeMessage("zoe@example.com", "Plans")
	c.attach(notes, plan)
	h.close()
	if err := os.Remove(plan); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, withState)
	c = h.u.compose
	if strings.Join(c.attachments, "|") != notes || c.subject.Text != "Plans" {
		t.Fatalf("restored: attachments %q, subject %q", c.attachments, c.subject.Text)
	}
	if want := "Not attached: plan.pdf (was in " + filepath.Dir(plan) + ") is no longer there."; !strings.Contains(c.status.Text, want) {
		t.Errorf("Compose does not name the missing file: %q", c.status.Text)
	}
}

// The copy is written while the person types, without waiting for the
// window to close (a crash loses at most keepDelay), and goes once the
// message is queued: before the form is emptied on the UI thread, so a
// quit in between brings nothing back to send twice. The next start
// finds Compose empty.
func TestComposeCopyGoesWhenSent(t *testing.T) {
	state := t.TempDir()
	withState := func(o *harnessOpts) { o.state = state }
	h := newHarness(t, withState)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Quarterly report")
	h.until("the copy written while typing", func() bool {
		_, err := os.Stat(unsentPath(state))
		return err == nil
	})
	test.Tap(c.sendBtn)
	// The UI thread's work is not run here: the form still holds the
	// message, as it would if the window quit now.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(unsentPath(state)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the copy stays after the message was queued")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c.subject.Text != "Quarterly report" {
		t.Fatal("the form was emptied before the copy went: the test shows nothing")
	}
	h.until("the form emptied", func() bool { return c.subject.Text == "" })
	h.close()
	if _, err := os.Stat(unsentPath(state)); !os.IsNotExist(err) {
		t.Fatalf("a copy is back after closing: %v", err)
	}
	h = newHarness(t, withState)
	if c := h.u.compose; !c.blank() || c.status.Visible() {
		t.Fatalf("Compose after a restart: subject %q, says %q", c.subject.Text, c.status.Text)
	}
}

// Discard asks, then empties Compose and its copy; No keeps both.
func TestComposeDiscard(t *testing.T) {
	state := t.TempDir()
	h := newHarness(t, func(o *harnessOpts) { o.state = state })
	c := h.u.compose
	cv := h.w.Canvas()
	if !c.discardBtn.Disabled() {
		t.Error("Discard is offered on an empty Compose")
	}
	h.writeMessage("zoe@example.com", "Plans")
	c.attach(writeFile(t, "notes.txt", []byte("the notes")))
	h.close() // written now, whatever the delay
	h = newHarness(t, func(o *harnessOpts) { o.state = state })
	c, cv = h.u.compose, h.w.Canvas()
	test.Tap(c.discardBtn)
	pressKey(cv, fyne.KeyReturn) // No, the default
	if c.subject.Text != "Plans" || cv.Overlays().Top() != nil {
		t.Fatalf("No discarded: subject %q, dialog open %v", c.subject.Text, cv.Overlays().Top() != nil)
	}
	test.Tap(c.discardBtn)
	cv.FocusNext() // from No to Yes
	if b, ok := cv.Focused().(*dialogButton); !ok || b.Text != "Yes" {
		t.Fatalf("Tab from No reached %T", cv.Focused())
	}
	pressKey(cv, fyne.KeyReturn)
	if !c.blank() || c.status.Visible() || cv.Focused() != c.to {
		t.Fatalf("Discard left subject %q, attachments %v, words %q", c.subject.Text, c.attachments, c.status.Text)
	}
	h.until("the copy gone", func() bool {
		_, err := os.Stat(unsentPath(state))
		return os.IsNotExist(err)
	})
}

// A copy that is not a message is said in words at the start and set
// aside whole, not written over.
func TestComposeDamagedCopyIsKept(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(unsentPath(state), []byte(`{"To":["zoe@exa`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *harnessOpts) { o.state = state })
	c := h.u.compose
	if !strings.HasPrefix(c.status.Text, "What you were writing when Carrier closed could not be read back (") {
		t.Fatalf("Compose says %q", c.status.Text)
	}
	h.writeMessage("zoe@example.com", "New")
	h.close()
	aside, _ := filepath.Glob(unsentPath(state) + ".damaged-*")
	if len(aside) != 1 || !strings.Contains(c.status.Text, aside[0]) {
		t.Fatalf("set aside as %v; Compose said %q", aside, c.status.Text)
	}
	if data, _ := os.ReadFile(aside[0]); string(data) != `{"To":["zoe@exa` {
		t.Errorf("the damaged copy holds %q", data)
	}
}

// Compose opens with the focus in To: at the start, when its tab is
// chosen, and after Send emptied it; what is typed at once lands in To,
// and the first Tab goes on to Cc.
func TestComposeOpensWithFocusOnTo(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	cv := h.w.Canvas()
	if cv.Focused() != c.to {
		t.Fatalf("at the start the focus is on %T", cv.Focused())
	}
	for _, r := range "zoe@example.com" {
		cv.Focused().TypedRune(r)
	}
	pressTab(cv, false)
	if c.to.Text != "zoe@example.com" || cv.Focused() != c.cc {
		t.Fatalf("typed at once: To %q, then Tab reached %T", c.to.Text, cv.Focused())
	}
	test.Tap(h.u.transfersTab.button)
	cv.Focus(h.u.transfersTab.button)
	test.Tap(h.u.composeTab.button)
	if cv.Focused() != c.to {
		t.Fatalf("Compose chosen: the focus is on %T", cv.Focused())
	}
	h.sendMessage(t)
	// The row may say Done before the form is emptied and Transfers shown.
	h.until("the form emptied and Transfers shown", func() bool { return c.blank() && h.u.tabs.Selected() == h.u.transfersTab })
	test.Tap(h.u.composeTab.button)
	if cv.Focused() != c.to {
		t.Fatalf("after Send: the focus on %T", cv.Focused())
	}
}

// Return presses a focused button of Compose, as Space does: a file's
// way, a choice, Discard and Send.
func TestComposeButtonsTakeReturn(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	cv := h.w.Canvas()
	h.writeMessage("zoe@example.com", "By Return")
	att := writeFile(t, "notes.txt", []byte("notes"))
	c.attach(att)
	cv.Focus(c.attRows[att].toggle)
	pressKey(cv, fyne.KeyReturn)
	if !c.choice[att] {
		t.Error("Return on Send as link did nothing")
	}
	cv.Focus(c.share.buttons[1])
	pressKey(cv, fyne.KeyReturn)
	if c.share.chosen != 1 {
		t.Error("Return on a choice did nothing")
	}
	cv.Focus(c.discardBtn)
	pressKey(cv, fyne.KeyReturn)
	if cv.Overlays().Top() == nil {
		t.Fatal("Return on Discard did not ask")
	}
	pressKey(cv, fyne.KeyEscape)
	cv.Focus(c.sendBtn)
	pressKey(cv, fyne.KeyReturn)
	h.until("the message sent by Return", func() bool { return h.u.tabs.Selected() == h.u.transfersTab })
}
