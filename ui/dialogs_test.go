package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/app/photos"
	"carrier/transfer"
)

// pressKey is a key as the desktop driver delivers it: to the focused
// widget, or to the canvas when nothing has focus.
func pressKey(c fyne.Canvas, name fyne.KeyName) {
	ev := &fyne.KeyEvent{Name: name}
	if f := c.Focused(); f != nil {
		f.TypedKey(ev)
		return
	}
	if k := c.OnTypedKey(); k != nil {
		k(ev)
	}
}

// dialogFocusables are what Tab reaches in the top-most dialog, in order.
func dialogFocusables(c fyne.Canvas) []fyne.Focusable {
	c.Unfocus()
	var all []fyne.Focusable
	for {
		c.FocusNext()
		f := c.Focused()
		if f == nil || len(all) > 0 && f == all[0] {
			break
		}
		all = append(all, f)
		if len(all) > 40 {
			break
		}
	}
	c.Unfocus()
	return all
}

// dialogCase opens one kind of Carrier's dialog; safe reports what is
// wrong after it was dismissed (nil when its safe answer was given).
type dialogCase struct {
	name string
	open func()
	safe func() error
	// fyneWidgets: the dialog is Fyne's file dialog, whose own widgets
	// Carrier cannot teach Escape; only with nothing focused is it tried.
	fyneWidgets bool
}

// dialogCases are every kind of dialog Carrier shows, on h.
func dialogCases(t *testing.T, h *harness, fu *fakeUploads, accts *fakeAccounts, allowed *allowRecord) []dialogCase {
	u := h.u
	c := u.compose
	quits := 0
	var asked *driveAsk
	return []dialogCase{
		{name: "Cancel this upload?", open: func() { u.transfers.askCancel("j") }, safe: func() error {
			if u.transfers.cancelling != nil {
				return errors.New("the question is still recorded as open")
			}
			if len(fu.calls) > 0 {
				return fmt.Errorf("the queue was told %v", fu.calls)
			}
			return nil
		}},
		{name: "the quit question", open: func() { u.askQuit(func() { quits++ }) }, safe: func() error {
			if quits != 0 {
				return errors.New("Carrier quit")
			}
			return nil
		}},
		{name: "an error", open: func() { u.showError("Cannot reopen this message", "It is gone.") }, safe: func() error { return nil }},
		{name: "Replace the message in Compose?", open: func() {
			h.writeMessage("zoe@example.com", "What I wrote")
			c.reopen(&message.Composed{Subject: "Another"}, "Reopened")
		}, safe: func() error {
			if c.subject.Text != "What I wrote" {
				return fmt.Errorf("Compose holds %q", c.subject.Text)
			}
			return nil
		}},
		{name: "Discard this message?", open: func() {
			h.writeMessage("zoe@example.com", "Keep me")
			c.askDiscard()
		}, safe: func() error {
			if c.subject.Text != "Keep me" {
				return fmt.Errorf("Compose holds %q", c.subject.Text)
			}
			return nil
		}},
		{name: "Send large files through Google Drive?", open: func() {
			h.writeMessage("zoe@example.com", "Big")
			big := writeFile(t, "big.bin", []byte("big"))
			c.attach(big)
			c.busy = true
			c.askDrive(compose.Send, app.GmailOptions{}, c.message(), app.LinkOptions{}, []string{big}, &app.NotAllowedError{Address: "me@example.com"})
		}, safe: func() error {
			if c.consent != nil || allowed.count() > 0 || c.subject.Text != "Big" || c.busy {
				return fmt.Errorf("question open %v, allowed %d times, subject %q, busy %v", c.consent != nil, allowed.count(), c.subject.Text, c.busy)
			}
			return nil
		}},
		{name: "Files on Google Drive", open: func() {
			u.transfers.askDrive("j", []driveFile{{Job: "d1", Name: "film.mp4"}})
			asked = u.transfers.ask
		}, safe: func() error {
			if gone, ok := u.transfers.deleted["d1"]; !ok || gone || u.transfers.ask != nil || asked == nil {
				return fmt.Errorf("deleted %v (%v), question open %v", gone, ok, u.transfers.ask != nil)
			}
			return nil
		}},
		{name: "Sign out?", open: func() { u.account.accounts.askSignOut("work@example.com") }, safe: func() error {
			if s := accts.signOuts(); len(s) > 0 {
				return fmt.Errorf("signed out: %v", s)
			}
			return nil
		}},
		{name: "the set-up assistant", open: func() { u.account.openAssistant() }, safe: func() error {
			if accts.addedCount() > 0 {
				return fmt.Errorf("signed in: %v", accts.addedCount())
			}
			return nil
		}},
		{name: "Allow Google Photos?", open: func() {
			u.timeline.askAllow(nil, photos.Photos{}, nil, photos.PhotosOptions{})
		}, safe: func() error {
			if allowed.count() > 0 || !strings.HasPrefix(u.timeline.status.Text, "Not posted") {
				return fmt.Errorf("allowed %d times; %q", allowed.count(), u.timeline.status.Text)
			}
			return nil
		}},
		{name: "Add to an album Carrier made", open: func() {
			u.timeline.album.SetText("")
			u.timeline.showAlbums([]photos.PhotosAlbum{{Title: "Summer"}})
			u.timeline.albumChoice.SetSelected("Summer")
		}, safe: func() error {
			if u.timeline.album.Text != "" {
				return fmt.Errorf("the album chosen: %q", u.timeline.album.Text)
			}
			return nil
		}},
		{name: "Attach… (a file dialog)", fyneWidgets: true, open: func() { c.clear(); c.pickFile() }, safe: func() error {
			if len(c.attachments) > 0 {
				return fmt.Errorf("attached %v", c.attachments)
			}
			return nil
		}},
		{name: "Save… (a file dialog)", fyneWidgets: true, open: func() {
			fileSaveDialog(u)("plan.pdf", func(w fyne.URIWriteCloser, err error) {
				if w != nil || err != nil {
					t.Errorf("the save dialog answered %v, %v", w, err)
				}
			})
		}, safe: func() error { return nil }},
	}
}

func (f *fakeAccounts) addedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.added)
}

// dialogHarness is a window whose dialogs can all be opened: a fake
// queue with one running job, a signed-in account with an unfinished
// upload, and Allow recorded.
func dialogHarness(t *testing.T) (*harness, *fakeUploads, *fakeAccounts, *allowRecord) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{"j": {ID: "j", State: transfer.StateRunning, URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send"}}}
	accts := &fakeAccounts{list: []string{"work@example.com"}, unfinished: map[string]app.Waiting{"work@example.com": {Messages: 1}}}
	allowed := &allowRecord{}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = fu
		o.deps = func(d *Deps) {
			d.Accounts = accts
			d.Allow = func(_ context.Context, k auth.Kind) error {
				allowed.mu.Lock()
				defer allowed.mu.Unlock()
				allowed.kinds = append(allowed.kinds, k)
				// Allowed or not, what follows is other tests' concern.
				return errors.New("not in this test")
			}
		}
	})
	return h, fu, accts, allowed
}

// allowRecord is what Allow was asked for.
type allowRecord struct {
	mu    sync.Mutex
	kinds []auth.Kind
}

func (a *allowRecord) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.kinds)
}

// Escape closes every kind of Carrier's dialog with its safe answer,
// whether nothing in it has focus (the key goes to the window's canvas)
// or any of its widgets has (the key goes to that widget).
func TestEscapeGivesEveryDialogsSafeAnswer(t *testing.T) {
	h, fu, accts, allowed := dialogHarness(t)
	cv := h.w.Canvas()
	for _, dc := range dialogCases(t, h, fu, accts, allowed) {
		dc.open()
		if cv.Overlays().Top() == nil {
			t.Fatalf("%s: no dialog", dc.name)
		}
		focusables := []fyne.Focusable{nil}
		if !dc.fyneWidgets {
			focusables = append(focusables, dialogFocusables(cv)...)
		}
		cv.Overlays().Remove(cv.Overlays().Top())
		var names []string
		for _, f := range focusables[1:] {
			names = append(names, fmt.Sprintf("%T %q", f, nameOf(f)))
		}
		t.Logf("%s: Escape with nothing focused, and in %s", dc.name, strings.Join(names, ", "))
		for i, f := range focusables {
			if i > 0 {
				dc.open()
				// Reached with Tab, as a person would.
				cv.Unfocus()
				for range i {
					cv.FocusNext()
				}
				// Each opening makes its widgets anew: they are told
				// apart by kind and words.
				if g := cv.Focused(); fmt.Sprintf("%T", g) != fmt.Sprintf("%T", f) || nameOf(g) != nameOf(f) {
					t.Fatalf("%s: Tab %d reached %T %q, not %T %q", dc.name, i, g, nameOf(g), f, nameOf(f))
				}
				f = cv.Focused()
			} else {
				dc.open()
				cv.Unfocus()
			}
			where := "with nothing focused"
			if f != nil {
				where = fmt.Sprintf("in %T %q", f, nameOf(f))
			}
			pressKey(cv, fyne.KeyEscape)
			if top := cv.Overlays().Top(); top != nil {
				t.Fatalf("%s: Escape %s left the dialog open:\n%s", dc.name, where, labelsIn(top))
			}
			h.until("the answer's work", func() bool { return len(h.calls) == 0 })
			if err := dc.safe(); err != nil {
				t.Fatalf("%s: Escape %s: %v", dc.name, where, err)
			}
		}
	}
}

// nameOf is a widget's words, for messages.
func nameOf(f fyne.Focusable) string {
	switch f := f.(type) {
	case *dialogButton:
		return f.Text
	case *dialogLink:
		return f.Text
	case *namedEntry:
		return f.name
	case *namedCheck:
		return f.Text
	}
	return ""
}

// Enter presses the focused button, or with nothing focused the
// dialog's default: the answer that loses nothing where Yes would
// (Replace the message in Compose?), the marked one elsewhere.
func TestEnterPressesTheDefaultOrFocusedButton(t *testing.T) {
	h, fu, accts, allowed := dialogHarness(t)
	cv := h.w.Canvas()
	u := h.u

	// Quit: Keep uploading is the default and has the focus.
	quits := 0
	u.askQuit(func() { quits++ })
	if cv.Focused() != fyne.Focusable(u.quitAsked.keep) {
		t.Fatalf("the quit question opens with %T focused", cv.Focused())
	}
	pressKey(cv, fyne.KeyReturn)
	if quits != 0 || cv.Overlays().Top() != nil {
		t.Fatalf("Enter on Keep uploading: quit %d, open %v", quits, cv.Overlays().Top() != nil)
	}
	// Enter on the check box is the default's too.
	u.askQuit(func() { quits++ })
	cv.Focus(u.quitAsked.again)
	pressKey(cv, fyne.KeyEnter)
	if quits != 0 || cv.Overlays().Top() != nil {
		t.Fatalf("Enter on the check box: quit %d, open %v", quits, cv.Overlays().Top() != nil)
	}
	// Quit reached with Tab and pressed with Enter quits.
	u.askQuit(func() { quits++ })
	cv.Focus(u.quitAsked.quit)
	pressKey(cv, fyne.KeyReturn)
	if quits != 1 {
		t.Fatalf("Enter on Quit: quit %d times", quits)
	}

	// Replace the message? Enter with nothing focused keeps the form.
	c := u.compose
	h.writeMessage("zoe@example.com", "What I wrote")
	c.reopen(&message.Composed{Subject: "Another"}, "Reopened")
	cv.Unfocus()
	pressKey(cv, fyne.KeyReturn)
	if c.subject.Text != "What I wrote" || cv.Overlays().Top() != nil {
		t.Fatalf("Enter on Replace the message?: Compose holds %q, open %v", c.subject.Text, cv.Overlays().Top() != nil)
	}

	// Allow Google Photos? Enter with nothing focused allows.
	u.timeline.askAllow(nil, photos.Photos{}, nil, photos.PhotosOptions{})
	cv.Unfocus()
	pressKey(cv, fyne.KeyReturn)
	h.until("Photos allowed", func() bool { return allowed.count() == 1 })

	// Cancel this upload? Cancel upload reached with Tab, then Enter.
	u.transfers.askCancel("j")
	cv.Focus(u.transfers.cancelling.stop)
	pressKey(cv, fyne.KeyReturn)
	h.until("the job cancelled", func() bool {
		fu.mu.Lock()
		defer fu.mu.Unlock()
		return len(fu.calls) == 1 && fu.calls[0] == "cancel j"
	})

	// The assistant's default, Sign in with Google, waits for a client
	// file: until then Enter does nothing.
	u.account.openAssistant()
	cv.Unfocus()
	pressKey(cv, fyne.KeyReturn)
	if cv.Overlays().Top() == nil || accts.addedCount() > 0 {
		t.Fatal("Enter signed in without a client file")
	}
	pressKey(cv, fyne.KeyEscape)
}

// When a dialog closes, the focus goes back to what had it: the field
// being typed in, or nothing when that widget has gone meanwhile.
func TestFocusComesBackWhenADialogCloses(t *testing.T) {
	h, _, _, _ := dialogHarness(t)
	cv := h.w.Canvas()
	c := h.u.compose
	h.u.tabs.Select(h.u.composeTab)
	cv.Focus(c.subject)
	h.u.showError("Compose is busy", "Open it later.")
	if cv.Focused() == fyne.Focusable(c.subject) {
		t.Fatal("the field under the dialog still takes the keys")
	}
	pressKey(cv, fyne.KeyEscape)
	if cv.Focused() != fyne.Focusable(c.subject) {
		t.Fatalf("after the dialog, %T has the focus, not Subject", cv.Focused())
	}
	test.Type(cv.Focused(), "Hello")
	if c.subject.Text != "Hello" {
		t.Fatalf("typed into Subject after the dialog: %q", c.subject.Text)
	}

	// The Transfers row's button that asked is gone once the answer
	// came: the focus goes nowhere rather than to it.
	h.u.tabs.Select(h.u.transfersTab)
	gone := newDialogButton("Cancel", nil, nil)
	h.u.transfers.content.(*fyne.Container).Add(gone)
	cv.Focus(gone)
	if cv.Focused() != fyne.Focusable(gone) {
		t.Fatal("the button cannot take focus")
	}
	h.u.showError("Cannot reopen this message", "It is gone.")
	h.u.transfers.content.(*fyne.Container).Remove(gone)
	pressKey(cv, fyne.KeyEscape)
	if f := cv.Focused(); f != nil {
		t.Fatalf("after the dialog, the focus is on %T %q, which has gone", f, nameOf(f))
	}
}

// A question Fyne asks itself (the save dialog's "Overwrite?") is
// answered No by Escape, and Yes, its marked default, by Enter.
func TestEscapeAnswersNoToFynesOwnQuestion(t *testing.T) {
	h, _, _, _ := dialogHarness(t)
	cv := h.w.Canvas()
	var answers []bool
	for _, key := range []fyne.KeyName{fyne.KeyEscape, fyne.KeyReturn} {
		dialog.ShowConfirm("Overwrite?", "Are you sure you want to overwrite the file?", func(ok bool) { answers = append(answers, ok) }, h.w)
		pressKey(cv, key)
		if cv.Overlays().Top() != nil {
			t.Fatalf("%s left Fyne's question open", key)
		}
	}
	if fmt.Sprint(answers) != "[false true]" {
		t.Fatalf("Escape, then Enter, answered %v", answers)
	}
}
