package cli

import (
	"bytes"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"strings"
	"testing"
)

// readers are the addresses a Drive file is shared with, and whether
// anyone with the link may open it.
func (e *sendEnv) readers(id string) (who []string, anyone bool) {
	e.t.Helper()
	for _, p := range e.get("/drive/v3/files/" + id + "/permissions?fields=permissions(type,role,emailAddress)")["permissions"].([]any) {
		pm := p.(map[string]any)
		switch {
		case pm["role"] == "owner":
		case pm["type"] == "anyone":
			anyone = true
		default:
			who = append(who, pm["emailAddress"].(string))
		}
	}
	return who, anyone
}

// A draft with a large file: the file goes to Drive (the draft's link is
// real) but is shared with nobody, and a recipient opening the link
// meets Drive's "You need access". Sending the draft from Carrier shares
// it with the draft's recipients first, then sends: the message that
// arrives links to a file its recipients can open.
func TestDraftLinksAreSharedWhenSent(t *testing.T) {
	e := newSendEnv(t)
	big, data := namedRandomFile(t, "plans.mov", 26<<20)
	d, errs, code := e.run("send", "--as", "draft", "--to", "zoe@example.com", "--cc", "Max <max@example.com>", "--subject", "Plans", "--body", "Later.", "--attach", big)
	if code != 0 {
		t.Fatalf("save draft: %s", errs)
	}
	files := e.get("/drive/v3/files?fields=files(id)")["files"].([]any)
	if len(files) != 1 {
		t.Fatalf("%d Drive files", len(files))
	}
	id := files[0].(map[string]any)["id"].(string)
	if !bytes.Equal(e.getBytes("/drive/v3/files/"+id+"?alt=media"), data) {
		t.Fatal("the draft's Drive file is not the file")
	}
	if who, anyone := e.readers(id); len(who) != 0 || anyone {
		t.Fatalf("saving a draft shared its file: %v, anyone %v", who, anyone)
	}
	for _, r := range e.records() {
		if strings.Contains(r.Label, "shared with") {
			t.Fatalf("a draft queued a share: %s", r.Label)
		}
	}
	// The draft is in Gmail: cancelling it now is refused, saying so.
	if _, errs, code := e.run("cancel", e.lastRecord().ID); code != 1 || !strings.Contains(errs, "shared with nobody") {
		t.Errorf("cancel of a saved draft: %d %q", code, errs)
	}
	// What a recipient meets, following the draft's link without a
	// Drive sign-in of the sender's.
	resp, err := http.Get(e.url + "/file/d/" + id + "/view")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the draft's link opens for anyone: %d", resp.StatusCode)
	}

	sent, errs, code := e.run("send", "--send-draft", d["id"].(string))
	if code != 0 {
		t.Fatalf("send the draft: %s", errs)
	}
	if !strings.Contains(errs, "shared plans.mov on Google Drive with the draft's recipients") {
		t.Errorf("send said: %s", errs)
	}
	who, anyone := e.readers(id)
	if len(who) != 2 || anyone || !strings.Contains(strings.Join(who, " "), "zoe@example.com") || !strings.Contains(strings.Join(who, " "), "max@example.com") {
		t.Fatalf("after sending the draft, readers %v, anyone %v", who, anyone)
	}
	m := driveLink.FindSubmatch(e.raw(sent["id"].(string)))
	if m == nil || string(m[1]) != id {
		t.Fatal("the sent message does not link to the draft's Drive file")
	}
}

// --share anyone when the draft is sent: one permission for anyone.
func TestDraftLinksSharedWithAnyoneWhenSent(t *testing.T) {
	e := newSendEnv(t)
	big, _ := namedRandomFile(t, "plans.mov", 26<<20)
	d, errs, code := e.run("send", "--as", "draft", "--to", "zoe@example.com", "--attach", big, "--share", "anyone")
	if code != 0 {
		t.Fatalf("save draft: %s", errs)
	}
	id := e.get("/drive/v3/files?fields=files(id)")["files"].([]any)[0].(map[string]any)["id"].(string)
	if who, anyone := e.readers(id); len(who) != 0 || anyone {
		t.Fatalf("saving a draft shared its file: %v, anyone %v", who, anyone)
	}
	if _, errs, code = e.run("send", "--send-draft", d["id"].(string), "--share", "anyone"); code != 0 {
		t.Fatalf("send the draft: %s", errs)
	}
	if who, anyone := e.readers(id); len(who) != 0 || !anyone {
		t.Fatalf("readers %v, anyone %v", who, anyone)
	}
}

// A draft sent with its message given again (`--send-draft` with fields,
// as the window sends a draft it edited): the Drive file its text links
// to, saved with the draft and shared with nobody, is shared with the
// recipients as they stand before the message goes, as the window does
// (one Submit for both).
func TestDraftSentWithItsMessageSharesItsLinks(t *testing.T) {
	e := newSendEnv(t)
	big, _ := namedRandomFile(t, "plans.mov", 26<<20)
	d, errs, code := e.run("send", "--as", "draft", "--to", "zoe@example.com", "--subject", "Plans", "--body", "Later.", "--attach", big)
	if code != 0 {
		t.Fatalf("save draft: %s", errs)
	}
	id := e.get("/drive/v3/files?fields=files(id)")["files"].([]any)[0].(map[string]any)["id"].(string)
	draftMsg := d["message"].(map[string]any)["id"].(string)
	m := driveLink.FindSubmatch(e.raw(draftMsg))
	if m == nil || string(m[1]) != id {
		t.Fatal("the draft does not link to its Drive file")
	}
	link := e.url + "/file/d/" + id + "/view"
	sent, errs, code := e.run("send", "--send-draft", d["id"].(string), "--to", "zoe@example.com, amy@example.com", "--subject", "Plans",
		"--body", "Here it is: "+link)
	if code != 0 {
		t.Fatalf("send the draft with its message: %s", errs)
	}
	who, anyone := e.readers(id)
	if len(who) != 2 || anyone || !strings.Contains(strings.Join(who, " "), "zoe@example.com") || !strings.Contains(strings.Join(who, " "), "amy@example.com") {
		t.Fatalf("after sending the draft, readers %v, anyone %v", who, anyone)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(e.raw(sent["id"].(string))))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if !strings.Contains(string(body), link) {
		t.Fatalf("the sent message does not link to the Drive file:\n%s", body)
	}
}
