package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"carrier/transfer"
)

func labelsIn(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			b.WriteString(w.Text + "\n")
		case *wrapLabel:
			b.WriteString(w.Text + "\n")
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(w).Objects() {
				walk(c)
			}
		case *canvas.Text:
			b.WriteString(w.Text + "\n")
		}
	}
	walk(o)
	return b.String()
}

func drop(h *harness, paths ...string) {
	var uris []fyne.URI
	for _, p := range paths {
		uris = append(uris, storage.NewFileURI(p))
	}
	h.u.dropped(fyne.NewPos(10, 10), uris)
}

func TestComposeValidation(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.w.Canvas().Focus(c.to)
	test.Type(c.to, "not an address")
	if c.to.Validate() == nil || !c.sendBtn.Disabled() || !c.draftBtn.Disabled() {
		t.Fatal("an invalid To address must disable sending")
	}
	h.w.Canvas().Focus(c.cc) // leaving the field shows the problem next to it
	if text := labelsIn(c.form); !strings.Contains(text, "is not an address") {
		t.Fatalf("the form does not show the problem next to the field:\n%s", text)
	}
	c.to.SetText("Zoë <zoe@example.com>, bob@example.com")
	if c.to.Validate() != nil || c.sendBtn.Disabled() {
		t.Fatal("valid addresses must enable sending")
	}
	test.Type(c.bcc, "x@")
	if !c.sendBtn.Disabled() {
		t.Fatal("an invalid Bcc must disable sending")
	}
	c.bcc.SetText("")
	c.subject.SetText("line\nbreak")
	if c.subject.Validate() == nil || !c.sendBtn.Disabled() {
		t.Fatal("a subject with a line break must be refused")
	}
}

func TestComposeAttachmentsThroughDrop(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	a := writeFile(t, "résumé.pdf", bytes.Repeat([]byte("x"), 3000))
	b := writeFile(t, "notes.txt", []byte("hello"))
	drop(h, a, b, a)
	if len(c.attachments) != 2 {
		t.Fatalf("attachments %v", c.attachments)
	}
	text := labelsIn(c.attList)
	if !strings.Contains(text, "résumé.pdf") || !strings.Contains(text, "2.9 KiB") || !strings.Contains(text, "notes.txt") {
		t.Fatalf("attachment rows:\n%s", text)
	}
	// The remove button of the first row.
	row := c.attList.Objects[0].(*fyne.Container)
	var remove *iconButton
	for _, o := range row.Objects {
		if box, ok := o.(*fyne.Container); ok {
			for _, x := range box.Objects {
				if btn, ok := x.(*iconButton); ok {
					remove = btn
				}
			}
		}
	}
	test.Tap(remove)
	if len(c.attachments) != 1 || c.attachments[0] != b {
		t.Fatalf("after remove: %v", c.attachments)
	}
	drop(h, t.TempDir())
	if !strings.Contains(c.status.Text, "is a folder") {
		t.Fatalf("a dropped folder: %q", c.status.Text)
	}
	h.u.dropped(fyne.NewPos(1, 1), []fyne.URI{storage.NewURI("https://example.com/x.png")})
	if len(c.attachments) != 1 {
		t.Fatal("a web link was attached")
	}
}

// A file over 25 MB goes as a Drive link by itself; attached instead (the
// person's choice) it makes the message too large, and sending waits.
func TestComposeSizeMeter(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	c.to.SetText("a@example.com")
	big := filepath.Join(t.TempDir(), "video.mp4")
	f, _ := os.Create(big)
	f.Truncate(27 << 20)
	f.Close()
	drop(h, big)
	if c.sendBtn.Disabled() || c.meterNote.Visible() || c.attRows[big].how.Text != "Drive link · over 23.8 MiB" {
		t.Fatalf("a 27 MiB file: disabled=%v note %q, row %q", c.sendBtn.Disabled(), c.meterNote.Text, c.attRows[big].how.Text)
	}
	if !strings.HasPrefix(c.meterText, "1 file goes as a Drive link, 27.0 MiB; the message itself ") || c.meter.Value > 0.01 {
		t.Fatalf("meter %q %v", c.meterText, c.meter.Value)
	}
	test.Tap(c.attRows[big].toggle)
	if !c.sendBtn.Disabled() || !strings.Contains(c.meterNote.Text, "Too large to send") || !strings.Contains(c.meterNote.Text, "over the 35 MiB limit") || !c.meterNote.Visible() {
		t.Fatalf("attached anyway: disabled=%v note %q", c.sendBtn.Disabled(), c.meterNote.Text)
	}
	if c.meter.Value != 1 || c.attRows[big].how.Text != "Attached · your choice" || c.linkOpts.Visible() {
		t.Fatalf("attached anyway: meter %v, row %q, link options shown %v", c.meter.Value, c.attRows[big].how.Text, c.linkOpts.Visible())
	}
	c.remove(big)
	if c.sendBtn.Disabled() || c.meterNote.Text != "" || c.meter.Value > 0.01 {
		t.Fatalf("after removing: disabled=%v note %q meter %v", c.sendBtn.Disabled(), c.meterNote.Text, c.meter.Value)
	}
}

// A message written on the compose screen, with a dropped attachment, is
// sent through the queue and lands in the sandbox.
func TestComposeSendsThroughTheQueue(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	c.to.SetText("zoe@example.com")
	c.subject.SetText("Quarterly report")
	c.body.SetText("Here it is.")
	att := writeFile(t, "report.pdf", bytes.Repeat([]byte("%PDF"), 100000))
	drop(h, att)
	test.Tap(c.sendBtn)
	h.until("the transfers screen", func() bool { return h.u.tabs.Selected() == h.u.transfersTab })
	if c.to.Text != "" || len(c.attachments) != 0 {
		t.Fatal("the form was not cleared after sending")
	}
	var row *transferRow
	h.until("a finished transfer row", func() bool {
		for _, r := range h.u.transfers.rows {
			row = r
		}
		return row != nil && row.state.Text == "Sent"
	})
	if !strings.Contains(row.name.Text, "Quarterly report · to zoe@example.com") || !strings.Contains(row.dest.Text, "Gmail · send") {
		t.Fatalf("row: %q %q", row.name.Text, row.dest.Text)
	}
	if row.bar.confirmed != 1 || row.pause.Visible() || row.cancel.Visible() {
		t.Fatalf("a done row: bar %v, pause %v, cancel %v", row.bar.confirmed, row.pause.Visible(), row.cancel.Visible())
	}
	req, _ := http.NewRequest("GET", h.url+"/gmail/v1/users/me/messages", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Messages []struct{ ID string } }
	json.NewDecoder(resp.Body).Decode(&list)
	if len(list.Messages) != 1 {
		t.Fatalf("sandbox holds %d messages", len(list.Messages))
	}
	req, _ = http.NewRequest("GET", h.url+"/gmail/v1/users/me/messages/"+list.Messages[0].ID+"?format=full", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp2, _ := http.DefaultClient.Do(req)
	body, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if !bytes.Contains(body, []byte(`"filename": "report.pdf"`)) {
		t.Fatalf("the sent message has no report.pdf:\n%s", body)
	}
}

func TestTransferRowStates(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"j1": {ID: "j1", Label: "Holiday pictures · to mum@example.com", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 10 << 20, State: transfer.StateQueued, Created: time.Now()},
	}}
	events := make(chan transfer.Event, 64)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	h.u.transfers.now = func() time.Time { return now }
	row := h.u.transfers.rowOf("j1")
	if row == nil {
		t.Fatal("no row for a job of the journal")
	}
	set := func(st transfer.State) func(*transfer.Snapshot) {
		return func(s *transfer.Snapshot) { s.State = st }
	}
	steps := []struct {
		kind    transfer.EventKind
		change  func(*transfer.Snapshot)
		ev      transfer.Event // what the event adds to the snapshot
		state   string
		amount  string
		buttons string // visible ones
	}{
		{transfer.EventQueued, set(transfer.StateQueued), transfer.Event{}, "Queued", "0 bytes of 10.0 MiB", "pause cancel"},
		{transfer.EventStarted, set(transfer.StateRunning), transfer.Event{}, "Uploading", "", "pause cancel"},
		{transfer.EventProgress, func(s *transfer.Snapshot) { s.Sent, s.Confirmed, s.Rate = 6<<20, 4<<20, 1<<20 }, transfer.Event{}, "Uploading · 1.0 MiB/s · 6 s left", "4.0 MiB of 10.0 MiB (2.0 MiB sent, not yet confirmed)", "pause cancel"},
		{transfer.EventRetrying, set(transfer.StateRetrying), transfer.Event{Attempt: 2, Wait: 4 * time.Second, Reason: "the connection dropped: send bytes 0-9 to host/upload: connection reset"}, "The connection dropped; retrying in 4 s\n\u200ethe connection dropped: send bytes 0-9 to host/upload: connection reset", "", "pause cancel"},
		{transfer.EventRetrying, set(transfer.StateRetrying), transfer.Event{Woke: true, Reason: "the computer woke from sleep"}, "Resuming after sleep: asking the server where the upload stands", "", "pause cancel"},
		{transfer.EventPaused, func(s *transfer.Snapshot) { s.State, s.Sent, s.Rate = transfer.StatePaused, s.Confirmed, 0 }, transfer.Event{}, "Paused", "", "resume cancel"},
		{transfer.EventFailed, func(s *transfer.Snapshot) {
			s.State, s.Error = transfer.StateFailed, "Media type 'text/plain' is not supported"
		}, transfer.Event{}, "The upload failed. What went wrong is below.\n\u200eMedia type 'text/plain' is not supported", "", "retry cancel"},
		{transfer.EventDone, func(s *transfer.Snapshot) {
			s.State, s.Confirmed, s.Sent, s.Error, s.Response = transfer.StateDone, s.Size, s.Size, "", &transfer.Response{Status: 200}
		}, transfer.Event{}, "Sent", "10.0 MiB of 10.0 MiB", ""},
	}
	for _, s := range steps {
		ev := fu.event(s.kind, "j1", s.change)
		ev.Attempt, ev.Wait, ev.Reason, ev.Woke = s.ev.Attempt, s.ev.Wait, s.ev.Reason, s.ev.Woke
		events <- ev
		h.until(s.state, func() bool { return row.state.Text == s.state })
		if s.amount != "" && row.amount.Text != s.amount {
			t.Errorf("%s: amount %q, want %q", s.state, row.amount.Text, s.amount)
		}
		var visible []string
		for name, b := range map[string]*focusButton{"pause": row.pause, "resume": row.resume, "retry": row.retry, "cancel": row.cancel} {
			if b.Visible() {
				visible = append(visible, name)
			}
		}
		for _, want := range strings.Fields(s.buttons) {
			found := false
			for _, v := range visible {
				found = found || v == want
			}
			if !found {
				t.Errorf("%s: %s button hidden (visible: %v)", s.state, want, visible)
			}
		}
		if len(visible) != len(strings.Fields(s.buttons)) {
			t.Errorf("%s: visible buttons %v, want %q", s.state, visible, s.buttons)
		}
	}
	if row.bar.confirmed != 1 || !strings.Contains(row.dest.Text, "Gmail · send") {
		t.Errorf("done: bar %v dest %q", row.bar.confirmed, row.dest.Text)
	}
	test.Tap(h.u.transfers.clear)
	if _, ok := fu.Job("j1"); ok || len(h.u.transfers.rows) != 0 {
		t.Fatal("Clear finished kept the done job")
	}
}

func TestTransferRowButtonsAndThrottle(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"j2": {ID: "j2", Path: "/tmp/movie.mp4", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 100 << 20, State: transfer.StateQueued, Created: time.Now()},
	}}
	events := make(chan transfer.Event, 1024)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	row := h.u.transfers.rowOf("j2")
	test.Tap(row.pause)
	h.until("pause reaches the queue", func() bool {
		fu.mu.Lock()
		defer fu.mu.Unlock()
		return len(fu.calls) == 1 && fu.calls[0] == "pause j2"
	})
	if row.name.Text != "movie.mp4" || !strings.HasPrefix(row.dest.Text, "Timeline") {
		t.Errorf("row %q %q", row.name.Text, row.dest.Text)
	}
	// A burst of progress is drawn a few times, not once per event.
	drawsBefore := countDraws(h)
	for i := 1; i <= 500; i++ {
		events <- fu.event(transfer.EventProgress, "j2", func(s *transfer.Snapshot) {
			s.State, s.Sent, s.Confirmed, s.Rate = transfer.StateRunning, int64(i)<<18, int64(i)<<18, 5<<20
		})
	}
	h.until("the last progress drawn", func() bool {
		return row.amount.Text == "125.0 MiB of 100.0 MiB" || strings.HasPrefix(row.amount.Text, "100.0 MiB") || row.bar.confirmed == 1
	})
	if draws := countDraws(h) - drawsBefore; draws > 40 {
		t.Fatalf("500 progress events drew the row %d times", draws)
	}
}

func countDraws(h *harness) int { return h.u.transfers.draws }

func TestMailboxScreen(t *testing.T) {
	h := newHarness(t)
	put := func(path, ctype string, body []byte) {
		req, _ := http.NewRequest("POST", h.url+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	mail := "To: zoe@example.com\r\nSubject: With a file\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"plan.pdf\"\r\n\r\n%PDF\r\n--b--\r\n"
	put("/upload/gmail/v1/users/me/messages/send?uploadType=media", "message/rfc822", []byte(mail))
	time.Sleep(2 * time.Millisecond) // distinct internalDate for a stable order
	put("/upload/gmail/v1/users/me/drafts?uploadType=media", "message/rfc822", []byte("To: a@example.com\r\nSubject: Unfinished\r\n\r\ndraft\r\n"))
	time.Sleep(2 * time.Millisecond)
	put("/upload/mirror/v1/timeline?uploadType=multipart", "multipart/related; boundary=B",
		[]byte("--B\r\nContent-Type: application/json\r\n\r\n{\"text\":\"Dot\"}\r\n--B\r\nContent-Type: image/png\r\n\r\n"+string(pngDot)+"\r\n--B--\r\n"))
	h.u.Select("Mailbox")
	m := h.u.mailbox
	h.until("the mailbox loaded", func() bool { return len(m.items) == 3 })
	kinds := []string{m.items[0].Kind, m.items[1].Kind, m.items[2].Kind}
	if strings.Join(kinds, ",") != "Timeline,Draft,Sent" {
		t.Fatalf("order %v", kinds)
	}
	m.choose(2)
	h.until("the message opened", func() bool { return strings.Contains(labelsIn(m.detail.Box), "plan.pdf") })
	text := labelsIn(m.detail.Box)
	if !strings.Contains(text, "Subject: With a file") || !strings.Contains(text, "See attached.") || !strings.Contains(text, "To: zoe@example.com") || !strings.Contains(text, "1 attachment\n") {
		t.Fatalf("message detail:\n%s", text)
	}
	if strings.Index(text, "To: ") > strings.Index(text, "Subject: ") {
		t.Errorf("headers out of order:\n%s", text)
	}
	m.choose(0)
	h.until("the timeline item opened", func() bool {
		for _, o := range m.detail.Box.Objects {
			if _, ok := o.(*canvas.Image); ok {
				return true
			}
		}
		return false
	})
}

func TestAccountAndChaos(t *testing.T) {
	h := newHarness(t)
	a := h.u.account
	if a.who.Text != "Sandbox: messages stay on this computer" {
		t.Fatalf("account: %q", a.who.Text)
	}
	test.Tap(a.chaos)
	test.Tap(a.chaos)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.faults) != 2 || h.faults[0] != chaosFaults || h.faults[1] != "none" {
		t.Fatalf("faults set: %v", h.faults)
	}
}

func TestSignInAndOut(t *testing.T) {
	var signedIn string
	var gotSecret []byte
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			d.Account = func() Account {
				if signedIn != "" {
					return Account{Address: signedIn}
				}
				return Account{Sandbox: true}
			}
			d.SignIn = func(_ context.Context, secret []byte) (Account, error) {
				gotSecret = secret
				signedIn = "me@example.com"
				return Account{Address: signedIn}, nil
			}
			d.SignOut = func() error { signedIn = ""; return nil }
			d.Target = func() string {
				if signedIn != "" {
					return "https://www.googleapis.com"
				}
				return d.Endpoint
			}
		}
	})
	a := h.u.account
	if !a.signIn.Visible() || a.signOut.Visible() {
		t.Fatal("in sandbox mode, Sign in shows and Sign out does not")
	}
	a.signInWith([]byte(`{"installed":{}}`))
	h.until("signed in", func() bool { return strings.Contains(a.who.Text, "Signed in as me@example.com") })
	if string(gotSecret) != `{"installed":{}}` || a.signIn.Visible() || !a.signOut.Visible() {
		t.Fatalf("after sign-in: secret %q, sign in visible %v, sign out visible %v", gotSecret, a.signIn.Visible(), a.signOut.Visible())
	}
	if h.u.deps.Target() != "https://www.googleapis.com" {
		t.Fatal("uploads do not go to Google once signed in")
	}
	test.Tap(a.signOut)
	if a.who.Text != "Sandbox: messages stay on this computer" || !a.signIn.Visible() {
		t.Fatalf("after sign-out: %q", a.who.Text)
	}
}

func TestClosingTheWindow(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, make(chan transfer.Event) })
	var quit, hidden int
	q, hide := func() { quit++ }, func() { hidden++ }
	h.u.CloseRequested(false, q, hide)
	if quit != 1 {
		t.Fatal("with nothing uploading, closing quits")
	}
	fu.recs["j"] = transfer.Snapshot{ID: "j", State: transfer.StateQueued}
	h.u.CloseRequested(true, q, hide)
	if quit != 1 || hidden != 1 {
		t.Fatalf("uploading with a tray: quit %d hidden %d", quit, hidden)
	}
	h.u.CloseRequested(false, q, hide)
	if quit != 1 || hidden != 1 || h.w.Canvas().Overlays().Top() == nil {
		t.Fatal("uploading without a tray: closing must ask first")
	}
	if text := labelsIn(h.w.Canvas().Overlays().Top()); !strings.Contains(text, "Quit anyway?") {
		t.Fatalf("the question: %q", text)
	}
}

// At rest nothing runs: the redraw ticker starts when a job moves and stops
// once none does. A verified job says so in its row.
func TestTransfersTickerOnlyWhileMoving(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"a": {ID: "a", Path: "/tmp/a.bin", URL: "http://127.0.0.1:9/upload/storage/v1/b/b/o", Size: 10, State: transfer.StateQueued, Created: time.Now()},
		"b": {ID: "b", Path: "/tmp/b.bin", URL: "http://127.0.0.1:9/upload/storage/v1/b/b/o", Size: 10, State: transfer.StateQueued, Created: time.Now()},
	}}
	events := make(chan transfer.Event, 64)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	ticking := func() bool { return h.u.transfers.ticking.Load() }
	h.until("the screen follows the queue", func() bool { return h.u.transfers.rowOf("a") != nil })
	if ticking() {
		t.Fatal("the ticker runs with every job queued")
	}
	set := func(st transfer.State) func(*transfer.Snapshot) { return func(s *transfer.Snapshot) { s.State = st } }
	events <- fu.event(transfer.EventStarted, "a", set(transfer.StateRunning))
	h.until("the ticker to start", ticking)
	events <- fu.event(transfer.EventStarted, "b", set(transfer.StateRunning))
	events <- fu.event(transfer.EventRetrying, "b", set(transfer.StateRetrying))
	done := func(s *transfer.Snapshot) {
		s.State, s.Confirmed, s.Response, s.Verified = transfer.StateDone, s.Size, &transfer.Response{Status: 200}, transfer.SumCRC32C
	}
	events <- fu.event(transfer.EventDone, "a", done)
	row := h.u.transfers.rowOf("a")
	h.until("a done", func() bool { return row.state.Text == "Done · verified (crc32c)" })
	if !ticking() {
		t.Fatal("the ticker stopped while a job still retries")
	}
	events <- fu.event(transfer.EventDone, "b", done)
	h.until("the ticker to stop once every job is done", func() bool { return !ticking() })
}
