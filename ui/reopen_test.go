package ui

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// holdMessages holds every upload of a Gmail message at the sandbox until
// release: the message stays unfinished for as long as the test needs.
func holdMessages() (opt func(*harnessOpts), release func()) {
	held := make(chan struct{})
	var once sync.Once
	return func(o *harnessOpts) {
		o.wrap = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/upload/gmail/") {
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

// confirmCancel presses a row's Cancel and answers the question with
// Cancel upload.
func (h *harness) confirmCancel(row *transferRow) {
	h.t.Helper()
	test.Tap(row.cancel)
	a := h.u.transfers.cancelling
	if a == nil {
		h.t.Fatal("Cancel cancelled without asking")
	}
	test.Tap(a.stop)
}

// rowNamed is the row whose name begins with prefix, or nil.
func (h *harness) rowNamed(prefix string) *transferRow {
	for _, r := range h.u.transfers.rows {
		if strings.HasPrefix(r.name.Text, prefix) {
			return r
		}
	}
	return nil
}

// stateOf is a job's state as the queue has it.
func (h *harness) stateOf(id string) transfer.State {
	if r, ok := h.q.Job(id); ok {
		return r.State
	}
	return ""
}

// Cancel on a row asks first, naming the message and saying it can be
// reopened; Keep uploading is the default (it has the focus) and keeps
// the upload going: the message arrives, once.
func TestCancelAsksAndKeepKeeps(t *testing.T) {
	hold, release := holdMessages()
	defer release()
	h := newHarness(t, hold)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Quarterly report")
	test.Tap(c.sendBtn)
	var row *transferRow
	h.until("the message's row", func() bool { row = h.onlyRow(); return row != nil && row.cancel.Visible() })
	test.Tap(row.cancel)
	a := h.u.transfers.cancelling
	if a == nil {
		t.Fatal("Cancel did not ask")
	}
	if want := "Cancel 'Quarterly report' to zoe@example.com? Its upload stops; you can reopen it in Compose."; a.text.Text != want {
		t.Errorf("the question: %q\nwant %q", a.text.Text, want)
	}
	if f := h.w.Canvas().Focused(); f != a.keep {
		t.Errorf("the focus is on %T, not Keep uploading", f)
	}
	if st := h.stateOf(row.id); st == transfer.StateCancelled {
		t.Fatal("cancelled before the answer")
	}
	test.Tap(a.keep)
	if h.u.transfers.cancelling != nil {
		t.Error("the question stays open after Keep uploading")
	}
	release()
	h.until("the message sent", func() bool { return row.state.Text == "Sent" })
	if msgs := h.messages(); len(msgs) != 1 {
		t.Fatalf("%d messages: want the one kept", len(msgs))
	}
}

// A message cancelled on its row opens again in Compose with its
// recipients, subject, text and attachments; after a restart (a new
// window and queue on the same folders) too, and a file deleted
// meanwhile is named as no longer there. Sent again, it arrives with what
// it has; once sent and cleared, nothing of it is kept.
func TestACancelledMessageReopens(t *testing.T) {
	hold, release := holdMessages()
	defer release()
	state := t.TempDir()
	withState := func(o *harnessOpts) { o.state = state }
	h := newHarness(t, hold, withState)
	c := h.u.compose
	c.to.SetText("zoe@example.com, Max <max@example.com>")
	c.cc.SetText("ann@example.com")
	c.bcc.SetText("boss@example.com")
	c.subject.SetText("Plans")
	c.body.SetText("Line one.\n\nLine two.")
	notes := writeFile(t, "notes.txt", []byte("the notes"))
	plan := writeFile(t, "plan.pdf", []byte("%PDF the plan"))
	drop(h, notes, plan)
	test.Tap(c.sendBtn)
	var row *transferRow
	h.until("the message's row", func() bool { row = h.onlyRow(); return row != nil && row.cancel.Visible() })
	// The row comes with the engine's event, the emptied form once Send
	// hears the message is queued: either may be first.
	h.until("the form emptied once the message was queued", func() bool { return c.to.Text == "" && len(c.attachments) == 0 })
	if row.reopen.Visible() {
		t.Error("Reopen is offered while the message is on its way")
	}
	h.confirmCancel(row)
	h.until("the message cancelled", func() bool { return row.state.Text == "Cancelled" })
	if !row.reopen.Visible() || row.retry.Visible() {
		t.Fatalf("a cancelled message's row: reopen %v, retry %v", row.reopen.Visible(), row.retry.Visible())
	}
	check := func(attached ...string) {
		t.Helper()
		for e, want := range map[*namedEntry]string{c.to: "zoe@example.com, Max <max@example.com>", c.cc: "ann@example.com", c.bcc: "boss@example.com", c.subject: "Plans", c.body: "Line one.\n\nLine two."} {
			if e.Text != want {
				t.Errorf("%s: %q, want %q", e.name, e.Text, want)
			}
		}
		if strings.Join(c.attachments, "|") != strings.Join(attached, "|") {
			t.Errorf("attachments %q, want %q", c.attachments, attached)
		}
		if h.u.tabs.Selected() != h.u.composeTab {
			t.Error("Compose is not showing")
		}
	}
	test.Tap(row.reopen)
	h.until("the message back in Compose", func() bool { return c.subject.Text != "" })
	check(notes, plan)
	if !strings.HasPrefix(c.status.Text, "Reopened: 'Plans'.") {
		t.Errorf("Compose says %q", c.status.Text)
	}
	c.clear()

	// A restart: the window and the queue go, new ones open on the folders.
	h.close()
	if err := os.Remove(plan); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, hold, withState)
	c = h.u.compose
	row = h.onlyRow()
	if row == nil || row.state.Text != "Cancelled" || !row.reopen.Visible() {
		t.Fatal("after the restart the cancelled message cannot be reopened")
	}
	test.Tap(row.reopen)
	h.until("the message back in Compose", func() bool { return c.subject.Text != "" })
	check(notes)
	if !strings.Contains(c.status.Text, "Not attached: plan.pdf (was in "+filepath.Dir(plan)+") is no longer there.") {
		t.Errorf("Compose does not name the missing file: %q", c.status.Text)
	}

	release()
	test.Tap(c.sendBtn)
	h.until("the reopened message sent", func() bool {
		for _, r := range h.u.transfers.rows {
			if r != row && r.state.Text == "Sent" {
				return true
			}
		}
		return false
	})
	msgs := h.messages()
	if len(msgs) != 1 || strings.Join(msgs[0].attachments, ",") != "notes.txt" || !strings.Contains(msgs[0].raw, "Line two.") {
		t.Fatalf("sent: %+v", msgs)
	}
	// Issue 32: reopened and sent, the cancelled one is not offered again
	// (once Compose hears it was queued, which may come after it went).
	h.until("the cancelled message's row no longer offers Reopen in Compose", func() bool { return !row.reopen.Visible() })
	test.Tap(h.u.transfers.clear)
	if kept, _ := os.ReadDir(app.ComposedDir(state)); len(kept) != 0 {
		t.Errorf("sent and cleared, yet kept: %v", kept)
	}
}

// While a message is being prepared the person may go on typing: once it
// is queued, what they typed meanwhile stays in the form.
func TestEditsMadeWhileQueuingStay(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "First")
	test.Tap(c.sendBtn)
	// The queuing runs in the background; its result comes through the
	// harness's UI thread, which has not run yet.
	c.subject.SetText("Second")
	h.until("the first message queued", func() bool { return h.onlyRow() != nil })
	if c.subject.Text != "Second" || c.to.Text != "zoe@example.com" {
		t.Fatalf("the form lost what was typed while queuing: to %q, subject %q", c.to.Text, c.subject.Text)
	}
}

// Reopen in Compose is offered for a message that failed or was
// cancelled, or waits for a part that failed in a way Retry cannot mend,
// not for one on its way or sent, nor for a timeline post.
func TestWhichRowsReopen(t *testing.T) {
	h := newHarness(t)
	gmail, timeline := h.url+"/upload/gmail/v1/users/me/messages/send", h.url+"/upload/mirror/v1/timeline"
	for _, c := range []struct {
		url   string
		state transfer.State
		want  bool
	}{
		{gmail, transfer.StateFailed, true},
		{gmail, transfer.StateCancelled, true},
		{gmail, transfer.StateRunning, false},
		{gmail, transfer.StatePaused, false},
		{gmail, transfer.StateDone, false},
		{timeline, transfer.StateFailed, false},
		{timeline, transfer.StateCancelled, false},
	} {
		if got := reopenable(standingOf(transfer.Snapshot{ID: "m", URL: c.url, State: c.state})); got != c.want {
			t.Errorf("%s %s: reopen %v, want %v", c.url, c.state, got, c.want)
		}
	}
	// A message that waits for a part: reopened only when the part
	// failed in a way Retry cannot mend (its file changed).
	waiting := transfer.Snapshot{ID: "m", URL: gmail, State: transfer.StateWaiting, Needs: []string{"f"}}
	changed := transfer.Snapshot{ID: "f", URL: h.url + "/upload/drive/v3/files", State: transfer.StateFailed, Cause: transfer.ErrSourceChanged, Failure: &transfer.Failure{Code: transfer.FailSourceChanged}}
	gaveUp := transfer.Snapshot{ID: "f", URL: h.url + "/upload/drive/v3/files", State: transfer.StateFailed, Cause: transfer.ErrGaveUp, Failure: &transfer.Failure{Code: transfer.FailGaveUp}}
	alone := transfer.Snapshot{ID: "m", URL: gmail, State: transfer.StateWaiting}
	if !reopenable(standingOf(waiting, changed)) || reopenable(standingOf(waiting, gaveUp)) || reopenable(standingOf(alone)) {
		t.Errorf("a waiting message: reopen with a changed part %v, with one that gave up %v, alone %v; want true, false, false",
			reopenable(standingOf(waiting, changed)), reopenable(standingOf(waiting, gaveUp)), reopenable(standingOf(alone)))
	}
	if got := cancelQuestion("dot.png · to the timeline", false); got != "Cancel 'dot.png · to the timeline'? Its upload stops." {
		t.Errorf("a post's question: %q", got)
	}
}

// holdDriveUploads keeps every request of a Drive upload waiting until
// release, so a test may change a file between its queuing and its bytes.
func holdDriveUploads() (opt func(*harnessOpts), release func()) {
	held := make(chan struct{})
	var once sync.Once
	return func(o *harnessOpts) {
		o.wrap = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/upload/drive/") {
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

// Issue 32: a file going as a Drive link saved again after its message
// was queued (the same bytes, a new modification time) stops its upload
// for good. The message's row says which file changed and how, offers no
// Retry (it would stop the same way) but Reopen in Compose; the message
// reopened and sent arrives once, and the old row then no longer offers
// Reopen in Compose, so it cannot be sent twice.
func TestAChangedFileOffersReopenNotRetryAndOnlyOnce(t *testing.T) {
	hold, release := holdDriveUploads()
	defer release()
	h := newHarness(t, hold)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Scans")
	scan := patterned(t, "scan.pdf", 1<<20)
	drop(h, scan)
	test.Tap(c.attRows[scan].toggle) // as a Drive link
	test.Tap(c.sendBtn)
	var row *transferRow
	// Compose is done with the message (its form emptied) only after its
	// row shows: wait for both, or the form still holding it would pass
	// for the reopened one below.
	h.until("the message's row, and Compose done with it", func() bool {
		row = h.onlyRow()
		return row != nil && len(row.partRows) == 1 && !c.busy && c.blank()
	})
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(scan, later, later); err != nil {
		t.Fatal(err)
	}
	release()
	// The row looks at the file: the same size, nothing of it sent yet, so
	// Use this file is offered beside Reopen in Compose (usefile_test.go
	// takes it).
	h.until("the upload stopped, its file looked at", func() bool {
		return strings.Contains(row.state.Text, "failed") && row.useFile.Visible()
	})
	if want := "scan.pdf was saved again after its upload began"; !strings.Contains(row.state.logical, want) {
		t.Errorf("the row says %q, want %q", row.state.logical, want)
	}
	if row.retry.Visible() || !row.reopen.Visible() {
		t.Fatalf("a message whose file changed: Retry %v, Reopen in Compose %v; want Reopen and no Retry", row.retry.Visible(), row.reopen.Visible())
	}
	test.Tap(row.reopen)
	h.until("the message back in Compose", func() bool { return c.subject.Text == "Scans" && len(c.attachments) == 1 })
	test.Tap(c.sendBtn)
	h.until("the reopened message sent", func() bool {
		for _, r := range h.u.transfers.rows {
			if r != row && r.state.Text == "Sent" {
				return true
			}
		}
		return false
	})
	h.until("the old row no longer offers to reopen", func() bool { return !row.reopen.Visible() })
	if row.retry.Visible() {
		t.Error("the old row offers Retry")
	}
	if msgs := h.messages(); len(msgs) != 1 {
		t.Fatalf("the sandbox holds %d messages, want the reopened one", len(msgs))
	}
}

// standingOf is the one delivery jobs make (joined by what they need) and
// where it stands.
func standingOf(jobs ...transfer.Snapshot) (delivery.Delivery, delivery.Standing) {
	d := delivery.Of(jobs, nil)[0]
	return d, delivery.Status(d, delivery.ByJob(jobs))
}
