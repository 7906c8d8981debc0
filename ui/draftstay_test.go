package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// Save as draft keeps the person in Compose, saying where the draft went;
// Send goes to Transfers, where the message is seen going.
func TestSaveAsDraftStaysSendShowsTransfers(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Minutes")
	test.Tap(c.draftBtn)
	h.until("the draft saved, the form emptied and the word said", func() bool {
		return h.doneRows() == 1 && c.blank() && strings.HasPrefix(c.status.Text, "Saved as a draft")
	})
	if h.u.tabs.Selected() != h.u.composeTab {
		t.Errorf("Save as draft left Compose for %q", h.u.tabs.Selected().Text)
	}
	h.writeMessage("zoe@example.com", "Agenda")
	test.Tap(c.sendBtn)
	h.until("the message sent and Transfers shown", func() bool {
		return h.doneRows() == 2 && h.u.tabs.Selected() == h.u.transfersTab
	})
}
