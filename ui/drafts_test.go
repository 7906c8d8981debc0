package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

type draftInfo struct {
	id, raw string
}

// drafts are the sandbox's drafts, each with its message raw.
func (h *harness) drafts() []draftInfo {
	var list struct{ Drafts []struct{ ID string } }
	h.get("/gmail/v1/users/me/drafts", &list)
	var out []draftInfo
	for _, d := range list.Drafts {
		var full struct{ Message struct{ Raw string } }
		h.get("/gmail/v1/users/me/drafts/"+d.ID+"?format=raw", &full)
		out = append(out, draftInfo{id: d.ID, raw: decodeRaw(h.t, full.Message.Raw)})
	}
	return out
}

// labelled counts the sandbox's messages that carry label.
func (h *harness) labelled(label string) int {
	var list struct{ Messages []struct{ ID string } }
	h.get("/gmail/v1/users/me/messages", &list)
	n := 0
	for _, m := range list.Messages {
		var meta struct{ LabelIDs []string }
		h.get("/gmail/v1/users/me/messages/"+m.ID+"?format=minimal", &meta)
		if contains(meta.LabelIDs, label) {
			n++
		}
	}
	return n
}

// mailboxRead shows the Mailbox and waits until it has read the sandbox.
func (h *harness) mailboxRead() {
	h.t.Helper()
	m := h.u.mailbox
	h.until("the mailbox idle", func() bool { return !m.loading })
	m.drafts = nil
	m.refresh()
	h.until("the mailbox read", func() bool { return !m.loading })
}

// doneRows counts the rows that say their upload is done.
func (h *harness) doneRows() int {
	n := 0
	for _, r := range h.u.transfers.rows {
		if r.state.Text == "Done" || r.state.Text == "Sent" || r.state.Text == "Saved as a draft" {
			n++
		}
	}
	return n
}

// A draft saved from Compose opens from the Mailbox with Edit: its
// fields, and its attachment as a file with the same bytes. Saved again,
// the same draft holds the new text (drafts.update: one draft, same id);
// opened again and sent, it goes as one message and no draft is left.
func TestADraftEditedAndSent(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com, Max <max@example.com>", "Draft one")
	c.cc.SetText("ann@example.com")
	drop(h, writeFile(t, "notes.txt", []byte("the notes")))
	test.Tap(c.draftBtn)
	h.until("the draft saved", func() bool { return h.doneRows() == 1 })
	saved := h.drafts()
	if len(saved) != 1 {
		t.Fatalf("%d drafts", len(saved))
	}
	id := saved[0].id

	edit := func() {
		t.Helper()
		h.mailboxRead()
		a := h.u.mailbox.drafts[id]
		if a == nil {
			t.Fatalf("the Mailbox offers no Edit for draft %s", id)
		}
		test.Tap(a.edit)
		h.until("the draft in Compose", func() bool { return c.subject.Text != "" })
		if c.draft != id {
			t.Fatalf("Compose edits draft %q, want %q", c.draft, id)
		}
		if c.to.Text != "zoe@example.com, Max <max@example.com>" || c.cc.Text != "ann@example.com" || c.subject.Text != "Draft one" {
			t.Errorf("the draft's fields: to %q, cc %q, subject %q", c.to.Text, c.cc.Text, c.subject.Text)
		}
		if len(c.attachments) != 1 || filepath.Base(c.attachments[0]) != "notes.txt" {
			t.Fatalf("the draft's attachments: %q", c.attachments)
		}
		if b, err := os.ReadFile(c.attachments[0]); err != nil || string(b) != "the notes" {
			t.Errorf("the attachment opened holds %q (%v)", b, err)
		}
		if want := "Editing the draft: 'Draft one'. Save as draft updates the draft; Send sends it."; c.status.Text != want {
			t.Errorf("Compose says %q", c.status.Text)
		}
	}
	edit()
	if c.body.Text != "Here it is." {
		t.Errorf("the draft's text: %q", c.body.Text)
	}
	c.body.SetText("Second text")
	test.Tap(c.draftBtn)
	// The row can end before the form is emptied: the queuing goroutine
	// hands the emptying to the UI thread after the job is queued, and the
	// job may finish first on a loaded machine.
	h.until("the draft updated and the form emptied", func() bool { return h.doneRows() == 2 && c.subject.Text == "" })
	saved = h.drafts()
	if len(saved) != 1 || saved[0].id != id {
		t.Fatalf("after saving again: %d drafts (%+v); want draft %s alone", len(saved), saved, id)
	}
	if raw := saved[0].raw; !strings.Contains(raw, "Second text") || strings.Contains(raw, "Here it is.") || !strings.Contains(raw, "notes.txt") {
		t.Errorf("the updated draft:\n%s", raw)
	}
	if c.draft != "" || c.subject.Text != "" {
		t.Error("the form still edits the draft once it is saved")
	}

	edit()
	if c.body.Text != "Second text" {
		t.Errorf("the draft's text: %q", c.body.Text)
	}
	test.Tap(c.sendBtn)
	h.until("the draft sent", func() bool { return h.doneRows() == 3 })
	if left := h.drafts(); len(left) != 0 {
		t.Errorf("sent, and %d drafts are left", len(left))
	}
	msgs := h.messages()
	if len(msgs) != 1 || h.labelled("SENT") != 1 || strings.Join(msgs[0].attachments, ",") != "notes.txt" || !strings.Contains(msgs[0].raw, "Second text") {
		t.Fatalf("sent: %d messages, %d SENT: %+v", len(msgs), h.labelled("SENT"), msgs)
	}
}

// Send on a draft in the Mailbox sends it as it stands (drafts.send): its
// file saved on Drive unshared is shared with its recipients first; one
// message goes, no draft is left, and the Mailbox reads again.
func TestADraftSentFromTheMailbox(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Later")
	f := patterned(t, "plans.pdf", 1<<20)
	drop(h, f)
	test.Tap(c.attRows[f].toggle) // as a Drive link, by choice
	test.Tap(c.draftBtn)
	h.until("the draft saved", func() bool {
		row := h.onlyRow()
		return row != nil && row.state.Text == "Saved as a draft"
	})
	files := h.driveFiles()
	if len(files) != 1 || len(h.drivePerms(files[0].ID)) != 1 {
		t.Fatalf("Drive holds %+v, shared %+v", files, h.drivePerms(files[0].ID))
	}
	saved := h.drafts()
	if len(saved) != 1 {
		t.Fatalf("%d drafts", len(saved))
	}
	h.mailboxRead()
	a := h.u.mailbox.drafts[saved[0].id]
	if a == nil {
		t.Fatal("the Mailbox offers no Send for the draft")
	}
	test.Tap(a.send)
	h.until("the Mailbox read again without the draft", func() bool {
		if h.u.mailbox.loading {
			return false
		}
		for _, it := range h.u.mailbox.items {
			if it.Kind == "Sent" {
				return true
			}
		}
		return strings.HasPrefix(h.u.mailbox.status.Text, "Could not")
	})
	if strings.HasPrefix(h.u.mailbox.status.Text, "Could not") {
		t.Fatal(h.u.mailbox.status.Text)
	}
	if left := h.drafts(); len(left) != 0 {
		t.Errorf("%d drafts left", len(left))
	}
	if n := h.labelled("SENT"); n != 1 {
		t.Errorf("%d messages sent", n)
	}
	var zoe bool
	for _, p := range h.drivePerms(files[0].ID) {
		zoe = zoe || p.EmailAddress == "zoe@example.com" && p.Role == "reader"
	}
	if !zoe {
		t.Errorf("the draft's Drive file is not shared with its recipient: %+v", h.drivePerms(files[0].ID))
	}
}

// A draft whose file went to Drive as a link, opened with Edit and sent
// from Compose: the link saved in its text names a file shared with
// nobody, shared with the recipients as it goes.
func TestAnEditedDraftSharesItsLinksWhenSent(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Later")
	f := patterned(t, "plans.pdf", 1<<20)
	drop(h, f)
	test.Tap(c.attRows[f].toggle)
	test.Tap(c.draftBtn)
	h.until("the draft saved", func() bool { return h.doneRows() == 1 })
	files := h.driveFiles()
	saved := h.drafts()
	if len(files) != 1 || len(saved) != 1 {
		t.Fatalf("Drive holds %+v, %d drafts", files, len(saved))
	}
	h.mailboxRead()
	test.Tap(h.u.mailbox.drafts[saved[0].id].edit)
	h.until("the draft in Compose", func() bool { return c.subject.Text != "" })
	if !strings.Contains(c.body.Text, "/file/d/"+files[0].ID+"/view") {
		t.Fatalf("the draft's text has no link: %q", c.body.Text)
	}
	test.Tap(c.sendBtn)
	h.until("the draft sent", func() bool { return h.doneRows() == 2 })
	if left := h.drafts(); len(left) != 0 || h.labelled("SENT") != 1 {
		t.Fatalf("%d drafts left, %d sent", len(left), h.labelled("SENT"))
	}
	var zoe bool
	for _, p := range h.drivePerms(files[0].ID) {
		zoe = zoe || p.EmailAddress == "zoe@example.com" && p.Role == "reader"
	}
	if !zoe {
		t.Errorf("the draft's Drive file is not shared with its recipient: %+v", h.drivePerms(files[0].ID))
	}
}

// A draft sent while the person goes on typing: the form keeps what they
// typed, as a new message, no longer tied to the draft that went.
func TestTypingWhileADraftIsSentStartsANewMessage(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Draft")
	test.Tap(c.draftBtn)
	h.until("the draft saved", func() bool { return h.doneRows() == 1 })
	saved := h.drafts()
	if len(saved) != 1 {
		t.Fatalf("%d drafts", len(saved))
	}
	h.mailboxRead()
	test.Tap(h.u.mailbox.drafts[saved[0].id].edit)
	h.until("the draft in Compose", func() bool { return c.draft != "" })
	test.Tap(c.sendBtn)
	c.subject.SetText("Follow-up")
	// The form lets go of the draft once the send is queued, handed to
	// the window after that: on a loaded machine the send may be done
	// first, so wait for both.
	h.until("the draft sent and the form free of it", func() bool { return h.doneRows() == 2 && c.draft == "" })
	if c.subject.Text != "Follow-up" || c.draft != "" {
		t.Fatalf("the form: subject %q, draft %q; want the new subject, no draft", c.subject.Text, c.draft)
	}
}
