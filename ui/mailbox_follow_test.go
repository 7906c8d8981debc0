package ui

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// putDraft files a raw message as a draft, or as draft id's new content,
// and returns the draft's id.
func (h *harness) putDraft(id, raw string) string {
	h.t.Helper()
	method, path := "POST", "/upload/gmail/v1/users/me/drafts?uploadType=media"
	if id != "" {
		method, path = "PUT", "/upload/gmail/v1/users/me/drafts/"+id+"?uploadType=media"
	}
	req, _ := http.NewRequest(method, h.url+path, strings.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "message/rfc822")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		h.t.Fatalf("filing a draft: %v %v", resp, err)
	}
	defer resp.Body.Close()
	var d struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&d)
	return d.ID
}

// The reading pane follows the list: a draft saved again shows its new
// words once the list is read again, and a draft sent (gone from the
// list) leaves the pane rather than stay there with its old subject.
func TestReadingPaneFollowsTheList(t *testing.T) {
	h := newHarness(t)
	id := h.putDraft("", "To: zoe@example.com\r\nSubject: Old words\r\n\r\nThe old text.\r\n")
	m := h.openMail("Old words")
	h.until("the draft shown", func() bool { return strings.Contains(labelsIn(m.detail.Box), "The old text.") })

	h.putDraft(id, "To: zoe@example.com\r\nSubject: New words\r\n\r\nThe new text.\r\n")
	h.mailboxRead()
	h.until("the new words shown", func() bool {
		text := labelsIn(m.detail.Box)
		return strings.Contains(text, "Subject: New words") && strings.Contains(text, "The new text.")
	})
	if m.opened < 0 || m.items[m.opened].ID != id {
		t.Errorf("the draft is no longer marked open in the list: %d", m.opened)
	}

	test.Tap(m.drafts[id].send)
	h.until("the draft sent and the list read", func() bool {
		return !m.loading && len(m.items) == 1 && m.items[0].Kind == "Sent"
	})
	text := labelsIn(m.detail.Box)
	if strings.Contains(text, "words") || strings.Contains(text, "text.") {
		t.Fatalf("the pane still shows the draft sent:\n%s", text)
	}
	if text != "Choose a message or a timeline item\n" || m.opened != -1 {
		t.Errorf("pane %q, opened %d", text, m.opened)
	}
}

// An empty Mailbox says so once, where its items would be, and says
// where pictures and videos go, since Google Photos posts are not
// listed: not a word in the middle and another at the bottom.
func TestEmptyMailboxSaysWherePicturesGo(t *testing.T) {
	h := newHarness(t)
	h.u.Select("Mailbox")
	m := h.u.mailbox
	h.until("the mailbox read", func() bool { return !m.loading && m.status.Text != "Loading…" })
	list := labelsIn(m.list.Box)
	if !strings.Contains(list, "Nothing yet") || !strings.Contains(list, "Google Photos, not here") || !strings.Contains(list, "Media screen") {
		t.Errorf("the list says %q", list)
	}
	if pane := labelsIn(m.detail.Box); pane != "" || m.status.Text != "" {
		t.Errorf("more is said: pane %q, status %q", pane, m.status.Text)
	}
	if strings.Contains(list, "pictures you post show up here") {
		t.Error("it still says pictures show up here")
	}
}
