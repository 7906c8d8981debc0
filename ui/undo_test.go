package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"carrier/internal/app"
	"carrier/transfer"
)

// undoAfter sets Undo send's delay to app.UndoWindows[i].
func undoAfter(i int) { fyne.CurrentApp().Preferences().SetInt(prefUndoWindow, i) }

// Send with Undo send on: the row says "Sending in … s" and offers Undo;
// Undo cancels the message (nothing reaches the mailbox) and Compose holds
// it again, recipients, subject, text and attachment.
func TestUndoSendReopensTheMessageAndSendsNothing(t *testing.T) {
	h := newHarness(t)
	undoAfter(len(app.UndoWindows) - 1) // 30 s: ample for the test to press Undo
	c := h.u.compose
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.writeMessage("zoe@example.com", "Oops")
	c.cc.SetText("ann@example.com")
	c.attach(notes)
	test.Tap(c.sendBtn)

	var row *transferRow
	// The count starts once every byte but the last is in Gmail.
	h.until("the row offers Undo and counts down", func() bool {
		row = h.onlyRow()
		return row != nil && row.undo.Visible() && strings.HasPrefix(row.state.Text, "Sending in ") && strings.HasSuffix(row.state.Text, " s")
	})
	h.until("Compose is emptied by Send", func() bool { return c.subject.Text == "" })
	test.Tap(row.undo)
	h.until("Compose holds the message again", func() bool { return c.subject.Text == "Oops" })
	if c.to.Text != "zoe@example.com" || c.cc.Text != "ann@example.com" || c.body.Text != "Here it is." || !slices.Contains(c.attachments, notes) {
		t.Errorf("Compose holds to %q, cc %q, text %q, attachments %v", c.to.Text, c.cc.Text, c.body.Text, c.attachments)
	}
	var msg transfer.Snapshot
	for _, s := range h.q.Jobs() {
		msg = s
	}
	if msg.State != transfer.StateCancelled {
		t.Fatalf("the message is %s after Undo", msg.State)
	}
	h.until("the row no longer offers Undo", func() bool { return !row.undo.Visible() })
	if n := len(h.messages()); n != 0 {
		t.Fatalf("%d messages in the mailbox after Undo, want none", n)
	}
}

// Without Undo the message leaves when the delay is over, once, and the
// row stops offering Undo.
func TestUndoSendWithoutUndoSendsOnce(t *testing.T) {
	h := newHarness(t)
	undoAfter(1) // 5 s
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Goes")
	test.Tap(c.sendBtn)
	var row *transferRow
	h.until("the row offers Undo", func() bool { row = h.onlyRow(); return row != nil && row.undo.Visible() })
	h.until("the message is sent", func() bool { return h.doneRows() == 1 })
	if row.undo.Visible() {
		t.Error("a sent message still offers Undo")
	}
	if n := len(h.messages()); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
}

// The setting offers off, 5, 10, 20 and 30 s, 10 s until chosen.
func TestUndoSettingDefaultsToTenSeconds(t *testing.T) {
	h := newHarness(t)
	fyne.CurrentApp().Preferences().RemoveValue(prefUndoWindow)
	if d := h.u.undoWindow(); d != app.DefaultUndoWindow || d.Seconds() != 10 {
		t.Fatalf("the default delay is %s", d)
	}
	c := h.u.undoSetting()
	if len(c.buttons) != 5 || c.chosen != 2 {
		t.Fatalf("%d answers, chosen %d", len(c.buttons), c.chosen)
	}
	test.Tap(c.buttons[0])
	if d := h.u.undoWindow(); d != 0 {
		t.Fatalf("Off keeps a delay of %s", d)
	}
}

// The tray offers "Undo sending '…'" while the message is held; chosen,
// it undoes it as the row's Undo does, and the item goes.
func TestTrayUndoesAHeldMessage(t *testing.T) {
	h := newHarness(t)
	undoAfter(len(app.UndoWindows) - 1)
	menu := h.u.TrayMenu(TrayHooks{Show: func() {}, Quit: func() {}})
	undoItem := func() *fyne.MenuItem {
		for _, it := range menu.Items {
			if strings.HasPrefix(it.Label, "Undo sending 'Oops") {
				return it
			}
		}
		return nil
	}
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Oops")
	test.Tap(c.sendBtn)
	var item *fyne.MenuItem
	h.until("the tray offers Undo", func() bool { item = undoItem(); return item != nil })
	h.until("Compose is emptied by Send", func() bool { return c.subject.Text == "" })
	item.Action()
	h.until("Compose holds the message again", func() bool { return c.subject.Text == "Oops" })
	h.until("the tray's Undo goes", func() bool { return undoItem() == nil })
	if n := len(h.messages()); n != 0 {
		t.Fatalf("%d messages after Undo from the tray, want none", n)
	}
}
