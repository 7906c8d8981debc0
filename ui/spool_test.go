package ui

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/sandbox"
	"carrier/transfer"
)

func spoolLeft(t *testing.T, state string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(app.SpoolDir(state), "*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// onlyRow is the transfers screen's one row, or nil.
func (h *harness) onlyRow() *transferRow {
	if len(h.u.transfers.rows) != 1 {
		return nil
	}
	for _, r := range h.u.transfers.rows {
		return r
	}
	return nil
}

// A message sent from the compose screen leaves nothing in the spool once
// its row says it is done.
func TestSendingLeavesNothingInTheSpool(t *testing.T) {
	h := newHarness(t)
	for entry, text := range map[*namedEntry]string{h.u.compose.to: "zoe@example.com", h.u.compose.subject: "No leftovers", h.u.compose.body: "Gone once sent."} {
		entry.SetText(text)
	}
	drop(h, writeFile(t, "notes.txt", []byte("attached")))
	test.Tap(h.u.compose.sendBtn)
	h.until("the message sent", func() bool {
		row := h.onlyRow()
		return row != nil && row.state.Text == "Sent"
	})
	if left := spoolLeft(t, h.state); len(left) != 0 {
		t.Fatalf("sent, and the spool still holds %v", left)
	}
}

// A finished job whose spool outlived it (a crash between the end and the
// clean-up, or a Carrier before this one) loses it on "Clear finished".
func TestClearFinishedEmptiesTheSpool(t *testing.T) {
	state := t.TempDir()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	defer sb.Close()
	// The bare engine, without the app around it, finishes a message and
	// leaves its spool.
	raw, err := transfer.New(transfer.Config{StateDir: state, Auth: transfer.StaticToken(tok)})
	if err != nil {
		t.Fatal(err)
	}
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Old", Text: "x"}
	sp, err := compose.Build(context.Background(), msg, compose.Send, app.SpoolDir(state))
	if err != nil {
		t.Fatal(err)
	}
	up, _ := app.Message(msg, compose.Send, app.GmailOptions{})
	spec := up.Spec(srv.URL)
	spec.Path, spec.SHA256 = sp.Path, sp.SHA256
	id, err := raw.Add(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if rec, err := raw.Wait(ctx, id); err != nil || rec.State != transfer.StateDone {
		t.Fatalf("the first run: %v %v", rec.State, err)
	}
	raw.Close()
	if left := spoolLeft(t, state); len(left) != 1 {
		t.Fatalf("the first run should leave its spool: %v", left)
	}

	h := newHarness(t, func(o *harnessOpts) { o.state = state })
	row := h.u.transfers.rowOf(id)
	if row == nil || row.state.Text != "Sent" {
		t.Fatal("no done row for the first run's job")
	}
	test.Tap(h.u.transfers.clear)
	if len(h.u.transfers.rows) != 0 {
		t.Fatal("Clear finished kept the row")
	}
	if left := spoolLeft(t, state); len(left) != 0 {
		t.Fatalf("cleared, and the spool still holds %v", left)
	}
}

// A crash's leftovers (a half-written message, a message no job refers
// to) are gone when the app starts again.
func TestStartSweepsCrashLeftovers(t *testing.T) {
	state := t.TempDir()
	dir := app.SpoolDir(state)
	os.MkdirAll(dir, 0o700)
	old := time.Now().Add(-2 * app.SweepGrace)
	for _, name := range []string{"msg-123.eml.tmp", "msg-456.eml"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("From: crash\r\n"), 0o600)
		os.Chtimes(p, old, old)
	}
	newHarness(t, func(o *harnessOpts) { o.state = state })
	if left := spoolLeft(t, state); len(left) != 0 {
		t.Fatalf("after a restart the spool still holds %v", left)
	}
}
