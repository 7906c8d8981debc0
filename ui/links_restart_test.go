package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/internal/app"
	"carrier/sandbox"
	"carrier/transfer"
)

// A message with a Drive link, its queue stopped while the file is on
// its way to Drive (the app killed): a new window on the same folders
// shows the message as one row with its part, in words, and once the
// journal is taken up again the upload goes on from where the server
// stands, the file is shared as chosen, and one message goes with the
// link.
func TestAMessageWithALinkGoesOnAfterARestart(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	// The second request of the Drive upload is held (the server has the
	// first) until its client goes away: the moment of the crash.
	var (
		hold    atomic.Bool
		puts    atomic.Int32
		once    sync.Once
		holding = make(chan struct{})
	)
	hold.Store(true)
	inner := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/upload/drive/") && hold.Load() && puts.Add(1) == 2 {
			io.Copy(io.Discard, r.Body)
			once.Do(func() { close(holding) })
			<-r.Context().Done()
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	state := t.TempDir()
	start := func() (*harness, *app.Queue) {
		t.Helper()
		events := make(chan transfer.Event, 1024)
		q, err := app.OpenQueue(transfer.Config{StateDir: state, Auth: transfer.StaticToken(tok), Events: events, RetryBase: 10 * time.Millisecond}, app.NewSpool(app.SpoolDir(state)))
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, func(o *harnessOpts) {
			o.uploads, o.events = q, events
			o.deps = func(d *Deps) { d.Outbox, d.Endpoint = q, srv.URL }
		})
		h.url, h.sb, h.state = srv.URL, sb, state
		return h, q
	}

	h, q := start()
	h.writeMessage("zoe@example.com, max@example.com", "Film")
	big := patterned(t, "film.mov", 30_000_000)
	drop(h, big)
	if got := h.u.compose.attRows[big].how.Text; got != "Drive link · over 23.8 MiB" {
		t.Fatalf("the file's row says %q", got)
	}
	test.Tap(h.u.compose.sendBtn)
	h.until("the Drive upload under way", func() bool {
		select {
		case <-holding:
			return true
		default:
			return false
		}
	})
	// The upload starts as soon as it is queued, before its shares and
	// the message are: the crash comes once the whole message is recorded
	// (its row, grouped by the ids SendWithLinks returned), or a Close
	// that beat the last of them would have undone the message instead.
	h.until("the message recorded", func() bool {
		r := h.onlyRow()
		return r != nil && len(r.partRows) == 1
	})
	q.Close() // the crash: the engine stops where it stands, the journal stays
	h.close()
	hold.Store(false)

	var upload *transfer.Record
	j, err := transfer.OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := j.List()
	for _, r := range recs {
		if strings.HasSuffix(r.Label, "to Google Drive") {
			upload = r
		}
		if r.State == transfer.StateDone {
			t.Fatalf("%s (%s) finished before the crash", r.ID, r.Label)
		}
	}
	if upload == nil || upload.Confirmed == 0 || upload.Confirmed >= upload.Size {
		t.Fatalf("the Drive upload in the journal: %+v", upload)
	}

	h, q = start()
	defer q.Close()
	var row *transferRow
	h.until("the message's row from the journal", func() bool {
		row = h.onlyRow()
		return row != nil && len(row.partRows) == 1
	})
	if len(h.u.transfers.rows) != 1 {
		t.Fatalf("%d rows after the restart", len(h.u.transfers.rows))
	}
	words := row.state.Text
	t.Logf("after the restart: %q", words)
	if !strings.HasPrefix(words, "Uploading the file to Google Drive") && !strings.HasPrefix(words, "Queued: 1 file goes to Google Drive first") {
		t.Errorf("after the restart the row says %q", words)
	}
	for _, p := range row.partRows {
		if p.name.Text != "film.mov · to Google Drive" || p.bar.confirmed <= 0 || p.bar.confirmed >= 1 {
			t.Errorf("the part: %q, bar %v (the server held part of it)", p.name.Text, p.bar.confirmed)
		}
	}
	if _, err := q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	h.until("the message sent", func() bool { return row.state.Text == "Sent" })
	for _, p := range row.partRows {
		if p.state.Text != "On Google Drive · shared with zoe@example.com, max@example.com" && p.state.Text != "On Google Drive · shared with max@example.com, zoe@example.com" {
			t.Errorf("the part says %q", p.state.Text)
		}
	}
	files := h.driveFiles()
	if len(files) != 1 || files[0].Name != "film.mov" || !sameBytes(t, big, h.get("/drive/v3/files/"+files[0].ID+"?alt=media", nil)) {
		t.Fatalf("Drive holds %+v", files)
	}
	perms := h.drivePerms(files[0].ID)
	if !hasPerm(perms, "user", "zoe@example.com") || !hasPerm(perms, "user", "max@example.com") || hasPerm(perms, "anyone", "") || len(perms) != 3 {
		t.Errorf("permissions %+v: want zoe's, max's and the owner's", perms)
	}
	msgs := h.messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].raw, "/file/d/"+files[0].ID+"/view") {
		t.Fatalf("%d messages; the first links to the file: %v", len(msgs), len(msgs) == 1 && strings.Contains(msgs[0].raw, files[0].ID))
	}
}
