package ui

import (
	"encoding/base64"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// Saving a draft with a large file from Compose puts the file on Drive,
// so the draft's link is real, but shares it with nobody: the recipients
// are not shown a file before the person decides to send. Transfers says
// so in words.
func TestSavingADraftSharesNothing(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Later")
	big := patterned(t, "plans.mov", 26_000_000)
	drop(h, big)
	if got := c.attRows[big].how.Text; got != "Drive link · over 23.8 MiB" {
		t.Fatalf("the file's row says %q", got)
	}
	test.Tap(c.draftBtn)
	var row *transferRow
	h.until("the draft saved", func() bool {
		row = h.onlyRow()
		return row != nil && len(row.partRows) == 1 && row.state.Text == "Saved as a draft"
	})
	for _, p := range row.partRows {
		if p.state.Text != "On Google Drive · shared with nobody until the draft is sent" {
			t.Errorf("the file's line: %q", p.state.Text)
		}
	}
	files := h.driveFiles()
	if len(files) != 1 || !sameBytes(t, big, h.get("/drive/v3/files/"+files[0].ID+"?alt=media", nil)) {
		t.Fatalf("Drive holds %+v", files)
	}
	if perms := h.drivePerms(files[0].ID); len(perms) != 1 || perms[0].Role != "owner" {
		t.Fatalf("a saved draft's file is shared: %+v", perms)
	}
	var drafts struct{ Drafts []struct{ ID string } }
	h.get("/gmail/v1/users/me/drafts", &drafts)
	if len(drafts.Drafts) != 1 {
		t.Fatalf("%d drafts", len(drafts.Drafts))
	}
	var d struct{ Message struct{ Raw string } }
	h.get("/gmail/v1/users/me/drafts/"+drafts.Drafts[0].ID+"?format=raw", &d)
	if !strings.Contains(decodeRaw(t, d.Message.Raw), "/file/d/"+files[0].ID+"/view") {
		t.Error("the draft does not link to its Drive file")
	}
}

func decodeRaw(t testing.TB, raw string) string {
	t.Helper()
	b, err := base64.URLEncoding.DecodeString(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
