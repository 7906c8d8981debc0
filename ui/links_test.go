package ui

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/transfer"
)

// patterned writes n bytes no two files share, so that a file on Drive is
// known to be this one byte for byte.
func patterned(t *testing.T, name string, n int) string {
	t.Helper()
	r := rand.NewChaCha8([32]byte([]byte(name + strings.Repeat("-", 32))[:32]))
	data := make([]byte, n)
	r.Read(data)
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// get asks the sandbox for path with the test's token; v receives the JSON.
func (h *harness) get(path string, v any) []byte {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		h.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			h.t.Fatalf("GET %s: %v", path, err)
		}
	}
	return body
}

type sentMessage struct {
	id          string
	attachments []string // file names
	raw         string   // the message as Gmail holds it
}

// messages are the sandbox's sent messages, newest first.
func (h *harness) messages() []sentMessage {
	var list struct{ Messages []struct{ ID string } }
	h.get("/gmail/v1/users/me/messages", &list)
	var out []sentMessage
	for _, m := range list.Messages {
		var full struct{ Payload json.RawMessage }
		h.get("/gmail/v1/users/me/messages/"+m.ID+"?format=full", &full)
		var part struct {
			Filename string
			Parts    []json.RawMessage
		}
		sm := sentMessage{id: m.ID}
		var walk func(json.RawMessage)
		walk = func(raw json.RawMessage) {
			part.Filename, part.Parts = "", nil
			json.Unmarshal(raw, &part)
			if part.Filename != "" {
				sm.attachments = append(sm.attachments, part.Filename)
			}
			for _, c := range part.Parts {
				walk(c)
			}
		}
		walk(full.Payload)
		var raw struct{ Raw string }
		h.get("/gmail/v1/users/me/messages/"+m.ID+"?format=raw", &raw)
		b, err := base64.URLEncoding.DecodeString(raw.Raw)
		if err != nil {
			h.t.Fatal(err)
		}
		sm.raw = string(b)
		out = append(out, sm)
	}
	return out
}

type driveFileInfo struct {
	ID, Name, Size string
}

func (h *harness) driveFiles() []driveFileInfo {
	var list struct{ Files []driveFileInfo }
	h.get("/drive/v3/files?fields=files(id,name,size)", &list)
	return list.Files
}

type drivePerm struct{ Type, Role, EmailAddress string }

func (h *harness) drivePerms(id string) []drivePerm {
	var list struct{ Permissions []drivePerm }
	h.get("/drive/v3/files/"+id+"/permissions?fields=permissions(type,role,emailAddress)", &list)
	return list.Permissions
}

func sameBytes(t *testing.T, path string, got []byte) bool {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(want) == sha256.Sum256(got)
}

func (h *harness) writeMessage(to, subject string) {
	c := h.u.compose
	c.to.SetText(to)
	c.subject.SetText(subject)
	c.body.SetText("Here it is.")
}

// A 30 MB file and a 1 MB one, dropped on Compose: the large one goes as a
// Drive link, the small one attached, and the screen says so before
// sending. Sent, the sandbox holds one message with the small file and
// the link, and one Drive file with the large one's bytes, shared with the
// recipient; Transfers shows the message as one row with the upload
// beneath it.
func TestComposeSendsALargeFileAsADriveLink(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Holiday film")
	big := patterned(t, "holiday.mp4", 30_000_000)
	small := patterned(t, "notes.pdf", 1<<20)
	drop(h, big, small)
	if got := c.attRows[big].how.Text; got != "Drive link · over 23.8 MiB" {
		t.Errorf("the 30 MB file's row says %q", got)
	}
	if got := c.attRows[small].how.Text; got != "Attached" {
		t.Errorf("the 1 MB file's row says %q", got)
	}
	if !strings.HasPrefix(c.meterText, "1 file goes as a Drive link, 28.6 MiB; the message itself 1.") || !strings.HasSuffix(c.meterText, " MiB of 35.0 MiB") {
		t.Errorf("meter %q", c.meterText)
	}
	if !c.linkOpts.Visible() || c.sendBtn.Disabled() || c.meterNote.Visible() {
		t.Fatalf("link options shown %v, send disabled %v, note %q", c.linkOpts.Visible(), c.sendBtn.Disabled(), c.meterNote.Text)
	}
	test.Tap(c.sendBtn)
	var row *transferRow
	grouped := false
	h.until("the message sent", func() bool {
		row = h.onlyRow()
		if row != nil && len(row.partRows) == 1 {
			grouped = true
		}
		return row != nil && row.state.Text == "Sent"
	})
	if !grouped || len(h.u.transfers.rows) != 1 || len(row.partRows) != 1 {
		t.Fatalf("transfers: %d rows, the message's with %d parts", len(h.u.transfers.rows), len(row.partRows))
	}
	for _, p := range row.partRows {
		if p.name.Text != "holiday.mp4 · to Google Drive" || p.state.Text != "On Google Drive · shared with zoe@example.com" || p.bar.confirmed != 1 {
			t.Errorf("the upload's line: %q, %q, bar %v", p.name.Text, p.state.Text, p.bar.confirmed)
		}
	}
	if row.bar.confirmed != 1 || !strings.Contains(row.name.Text, "Holiday film") || row.cancel.Visible() {
		t.Errorf("the message's row: %q bar %v cancel %v", row.name.Text, row.bar.confirmed, row.cancel.Visible())
	}

	files := h.driveFiles()
	if len(files) != 1 || files[0].Name != "holiday.mp4" || files[0].Size != "30000000" {
		t.Fatalf("Drive holds %+v", files)
	}
	if !sameBytes(t, big, h.get("/drive/v3/files/"+files[0].ID+"?alt=media", nil)) {
		t.Fatal("the file on Drive is not the dropped file")
	}
	if perms := h.drivePerms(files[0].ID); !hasPerm(perms, "user", "zoe@example.com") || hasPerm(perms, "anyone", "") || len(perms) > 2 {
		t.Errorf("permissions %+v: want zoe's (and the owner's)", perms)
	}
	msgs := h.messages()
	if len(msgs) != 1 {
		t.Fatalf("the sandbox holds %d messages", len(msgs))
	}
	if strings.Join(msgs[0].attachments, ",") != "notes.pdf" {
		t.Errorf("the message's attachments: %v", msgs[0].attachments)
	}
	if !strings.Contains(msgs[0].raw, "/file/d/"+files[0].ID+"/view") {
		t.Errorf("the message has no link to the Drive file:\n%.3000s", msgs[0].raw)
	}
	if left := spoolLeft(t, h.state); len(left) != 0 {
		t.Errorf("the spool still holds %v", left)
	}
}

func hasPerm(perms []drivePerm, typ, email string) bool {
	for _, p := range perms {
		if p.Type == typ && strings.EqualFold(p.EmailAddress, email) {
			return true
		}
	}
	return false
}

// Each file's switch overrides Carrier's choice: the larger of two files
// that do not fit together attached by the person sends the other as the
// link; "Anyone with the link" makes one permission for anyone.
func TestComposeLinkChoices(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com, bob@example.com", "Scans")
	slides := patterned(t, "slides.pdf", 15_000_000)
	scan := patterned(t, "scan.pdf", 14_000_000)
	drop(h, slides, scan)
	if a, b := c.attRows[slides].how.Text, c.attRows[scan].how.Text; a != "Drive link · to fit Gmail's 35.0 MiB" || b != "Attached" {
		t.Fatalf("Carrier's plan: slides %q, scan %q", a, b)
	}
	if !c.expiry.Object.Visible() {
		t.Error("the expiry is for recipients, and recipients is the default")
	}
	test.Tap(c.attRows[slides].toggle)
	if a, b := c.attRows[slides].how.Text, c.attRows[scan].how.Text; a != "Attached · your choice" || b != "Drive link · to fit Gmail's 35.0 MiB" {
		t.Fatalf("slides attached by choice: slides %q, scan %q", a, b)
	}
	if c.sendBtn.Disabled() {
		t.Fatal("the message fits: Send must be enabled")
	}
	test.Tap(c.share.buttons[1])
	if c.share.chosen != 1 || c.expiry.Object.Visible() {
		t.Fatalf("anyone chosen %v, expiry shown %v", c.share.chosen, c.expiry.Object.Visible())
	}
	if n := c.share.buttons[1].AccessibilityLabel(); n != "Who can open the links: Anyone with the link (chosen)" {
		t.Errorf("read as %q", n)
	}
	test.Tap(c.sendBtn)
	h.until("the message sent", func() bool {
		row := h.onlyRow()
		return row != nil && row.state.Text == "Sent"
	})
	msgs := h.messages()
	if len(msgs) != 1 || strings.Join(msgs[0].attachments, ",") != "slides.pdf" {
		t.Fatalf("messages %d, attachments %v: want slides.pdf attached", len(msgs), msgs[0].attachments)
	}
	files := h.driveFiles()
	if len(files) != 1 || files[0].Name != "scan.pdf" || !sameBytes(t, scan, h.get("/drive/v3/files/"+files[0].ID+"?alt=media", nil)) {
		t.Fatalf("Drive holds %+v: want scan.pdf", files)
	}
	perms := h.drivePerms(files[0].ID)
	anyone := 0
	for _, p := range perms {
		if p.Type == "anyone" {
			anyone++
		}
		if p.Type == "user" && p.Role != "owner" {
			t.Errorf("shared with %s as well", p.EmailAddress)
		}
	}
	if anyone != 1 {
		t.Errorf("permissions %+v: want one for anyone", perms)
	}
}

// holdShares stands in front of the sandbox and keeps every share call
// waiting until release, so a message stays between its upload to Drive
// and its sending. Release before the test ends: the server waits for its
// handlers when it closes.
func holdShares() (opt func(*harnessOpts), release func()) {
	held := make(chan struct{})
	var once sync.Once
	return func(o *harnessOpts) {
		o.wrap = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/permissions") {
					select {
					case <-held:
					case <-r.Context().Done():
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		}
	}, func() { once.Do(func() { close(held) }) }
}

// Cancelling a message whose file is already on Drive asks what becomes of
// the file: deleted, it is gone from Drive; kept, it stays. Neither message
// is sent.
func TestCancelAsksAboutTheDriveFiles(t *testing.T) {
	hold, release := holdShares()
	defer release()
	h := newHarness(t, hold)
	c := h.u.compose
	send := func(name string) *transferRow {
		t.Helper()
		h.writeMessage("zoe@example.com", "Contract "+name)
		f := patterned(t, name, 1<<20)
		drop(h, f)
		test.Tap(c.attRows[f].toggle) // small, but sent as a link by choice
		if got := c.attRows[f].how.Text; got != "Drive link · your choice" {
			t.Fatalf("after the switch: %q", got)
		}
		test.Tap(c.sendBtn)
		var row *transferRow
		h.until("the file on Drive, its share held", func() bool {
			for _, r := range h.u.transfers.rows {
				if strings.Contains(r.name.Text, "Contract "+name) {
					row = r
				}
			}
			return row != nil && len(row.partRows) == 1 && row.state.Text == "Sharing the file on Google Drive"
		})
		return row
	}
	row := send("contract.pdf")
	h.confirmCancel(row)
	h.until("the question about the Drive file", func() bool { return h.u.transfers.ask != nil })
	if text := h.u.transfers.ask.text.Text; !strings.Contains(text, "contract.pdf is already on your Google Drive") {
		t.Fatalf("the question: %q", text)
	}
	test.Tap(h.u.transfers.ask.remove)
	h.until("the file deleted", func() bool { return row.state.Text == "Cancelled · the file deleted from Google Drive" })
	if files := h.driveFiles(); len(files) != 0 {
		t.Fatalf("Drive still holds %+v", files)
	}
	for _, p := range row.partRows {
		if p.state.Text != "Deleted from Google Drive" {
			t.Errorf("the file's line: %q", p.state.Text)
		}
	}

	row = send("draft.pdf")
	h.confirmCancel(row)
	h.until("the question about the Drive file", func() bool { return h.u.transfers.ask != nil })
	test.Tap(h.u.transfers.ask.keep)
	h.until("the file kept", func() bool { return row.state.Text == "Cancelled · the file kept on Google Drive" })
	if files := h.driveFiles(); len(files) != 1 || files[0].Name != "draft.pdf" {
		t.Fatalf("Drive holds %+v: want draft.pdf kept", files)
	}
	time.Sleep(100 * time.Millisecond) // nothing may go after a cancel
	if msgs := h.messages(); len(msgs) != 0 {
		t.Fatalf("a cancelled message was sent: %d", len(msgs))
	}
	test.Tap(h.u.transfers.clear)
	if len(h.u.transfers.rows) != 0 {
		t.Fatalf("Clear finished left %d rows", len(h.u.transfers.rows))
	}
}

// The message's row says where the whole message stands while its parts
// move, one line per file beneath it, and its buttons act on the parts.
func TestTransfersGroupAMessageWithItsParts(t *testing.T) {
	t0 := time.Now()
	drive := "http://127.0.0.1:9/upload/drive/v3/files?fields=id"
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"u1": {ID: "u1", Label: "a.mov · to Google Drive", URL: drive, Size: 100, State: transfer.StateQueued, Created: t0},
		"s1": {ID: "s1", Label: "a.mov · shared with zoe@example.com", Type: transfer.Call, URL: "http://127.0.0.1:9/drive/v3/files/A/permissions", Needs: []string{"u1"}, State: transfer.StateWaiting, Created: t0.Add(1)},
		"u2": {ID: "u2", Label: "b.mov · to Google Drive", URL: drive, Size: 100, State: transfer.StateQueued, Created: t0.Add(2)},
		"s2": {ID: "s2", Label: "b.mov · shared with zoe@example.com", Type: transfer.Call, URL: "http://127.0.0.1:9/drive/v3/files/B/permissions", Needs: []string{"u2"}, State: transfer.StateWaiting, Created: t0.Add(3)},
		"m": {ID: "m", Label: "Films · to zoe@example.com", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 50,
			Needs: []string{"s1", "s2", "u1", "u2"}, State: transfer.StateWaiting, Created: t0.Add(4)},
	}}
	events := make(chan transfer.Event, 64)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	row := h.u.transfers.rowOf("m")
	if row == nil || len(h.u.transfers.rows) != 1 || len(row.partRows) != 2 {
		t.Fatalf("%d rows; the message's has %v", len(h.u.transfers.rows), row)
	}
	// Each step waits for what it changes; words are the row's, whole.
	step := func(words string, kind transfer.EventKind, id string, change func(*transfer.Snapshot), also ...func() bool) {
		t.Helper()
		events <- fu.event(kind, id, change)
		h.until(words, func() bool {
			for _, f := range also {
				if !f() {
					return false
				}
			}
			return row.state.Text == words
		})
	}
	part := func(id, words string) func() bool {
		return func() bool { return row.partRows[id].state.Text == words }
	}
	state := func(st transfer.State) func(*transfer.Snapshot) { return func(s *transfer.Snapshot) { s.State = st } }
	done := func(s *transfer.Snapshot) { s.State, s.Confirmed, s.Sent = transfer.StateDone, s.Size, s.Size }
	if row.state.Text != "Queued: 2 files go to Google Drive first, then the message" {
		t.Fatalf("queued: %q", row.state.Text)
	}
	step("Uploading 1 of 2 files to Google Drive · 10 bytes/s · 20 s left", transfer.EventProgress, "u1", func(s *transfer.Snapshot) {
		s.State, s.Confirmed, s.Sent, s.Rate = transfer.StateRunning, 50, 60, 10
	})
	if row.bar.confirmed != 0.2 || row.bar.sent != 0.24 || row.partRows["u1"].bar.confirmed != 0.5 {
		t.Errorf("bars: message %v/%v, a.mov %v", row.bar.confirmed, row.bar.sent, row.partRows["u1"].bar.confirmed)
	}
	step("Uploading 2 of 2 files to Google Drive", transfer.EventDone, "u1", done, part("u1", "On Google Drive · sharing"))
	step("Uploading 2 of 2 files to Google Drive", transfer.EventStarted, "u2", state(transfer.StateRunning), part("u2", "Uploading"))
	// The failure is said once, by the message's row, naming the file;
	// the file's line only says it failed (issue 32).
	step("b.mov · to Google Drive failed:\nThe server or the network kept failing, so Carrier stopped trying. Press Retry to go on where it stopped.\n\u200egave up", transfer.EventFailed, "u2", func(s *transfer.Snapshot) {
		s.State, s.Error, s.Cause, s.Failure = transfer.StateFailed, "gave up", transfer.ErrGaveUp, &transfer.Failure{Code: transfer.FailGaveUp}
	}, part("u2", "Failed"))
	if text := labelsIn(row.object); strings.Count(text, "Carrier stopped trying") != 1 || strings.Contains(text, "Waiting:") {
		t.Errorf("the failure is not said once:\n%s", text)
	}
	if !row.retry.Visible() || !row.cancel.Visible() {
		t.Errorf("with a part failed: retry %v cancel %v", row.retry.Visible(), row.cancel.Visible())
	}
	test.Tap(row.retry)
	h.until("the retry of the failed part", func() bool {
		fu.mu.Lock()
		defer fu.mu.Unlock()
		return strings.Join(fu.calls, ",") == "retry u2"
	})
	step("Uploading 2 of 2 files to Google Drive", transfer.EventStarted, "u2", state(transfer.StateRunning))
	step("Sharing the files on Google Drive", transfer.EventDone, "u2", done)
	step("Sharing the files on Google Drive", transfer.EventDone, "s1", state(transfer.StateDone), part("u1", "On Google Drive · shared with zoe@example.com"))
	if b := row.partRows["u2"].state.Text; b != "On Google Drive · sharing" {
		t.Errorf("b.mov's line: %q", b)
	}
	step("Queued to send", transfer.EventDone, "s2", state(transfer.StateDone), part("u2", "On Google Drive · shared with zoe@example.com"))
	step("Sending", transfer.EventStarted, "m", state(transfer.StateRunning))
	step("Sent", transfer.EventDone, "m", done)
	if row.bar.confirmed != 1 || row.cancel.Visible() || len(h.u.transfers.rows) != 1 {
		t.Errorf("sent: bar %v, cancel %v, rows %d", row.bar.confirmed, row.cancel.Visible(), len(h.u.transfers.rows))
	}
	if text := labelsIn(row.object); !strings.Contains(text, "a.mov · to Google Drive") || !strings.Contains(text, "b.mov · to Google Drive") || strings.Contains(text, "a.mov · shared with") {
		t.Errorf("the row reads:\n%s", text)
	}
}
