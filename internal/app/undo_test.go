package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"carrier/compose"
	"carrier/transfer"
)

// undoEnv is the embedded sandbox and a queue on a fake clock whose tick
// the test moves.
type undoEnv struct {
	sb     *Embedded
	q      *Queue
	clock  *transfer.FakeClock
	events chan transfer.Event
}

func newUndoEnv(t *testing.T) *undoEnv {
	t.Helper()
	e := &undoEnv{sb: testSandbox(t), clock: transfer.NewFakeClock(time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)), events: make(chan transfer.Event, 1024)}
	q, err := OpenQueue(transfer.Config{StateDir: t.TempDir(), Auth: transfer.StaticToken(e.sb.Token), Events: e.events, Clock: e.clock, WakeCheck: time.Second, StallTimeout: time.Hour, MinSpeed: transfer.MinSpeed{Rate: -1}}, NewSpool(SpoolDir(t.TempDir())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	e.q = q
	return e
}

// messages counts the messages in the sandbox's mailbox.
func (e *undoEnv) messages(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.sb.URL+"/gmail/v1/users/me/messages", nil)
	req.Header.Set("Authorization", "Bearer "+e.sb.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct{ Messages []struct{ ID string } }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&l) != nil {
		t.Fatalf("the mailbox: %s", resp.Status)
	}
	return len(l.Messages)
}

// send sends msg with an undo window of d, as Compose does.
func (e *undoEnv) send(t *testing.T, msg *compose.Message, opts LinkOptions, d time.Duration) []string {
	t.Helper()
	up, err := Message(msg, compose.Send, GmailOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts.SendAt = SendAfter(e.clock.Now(), d)
	ids, err := e.q.SendWithLinks(context.Background(), Drive{Root: e.sb.URL, Auth: transfer.StaticToken(e.sb.Token)}, msg, compose.Send, up, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// advance moves the clock by d once the queue's tick waits on it.
func (e *undoEnv) advance(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		added := e.clock.TimerAdded()
		if n, _ := e.clock.Timers(); n > 0 {
			break
		}
		select {
		case <-added:
		case <-time.After(time.Until(deadline)):
			t.Fatal("the queue's tick never waited on the clock")
		}
	}
	e.clock.Advance(d)
}

func attachment(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Undo within the window: the message never reaches the server, its
// session is deleted with the server's word (no note of a failure to tell
// it), and what was composed comes back whole, attachments included.
func TestUndoWithinTheWindowSendsNothingAndGivesTheMessageBack(t *testing.T) {
	e := newUndoEnv(t)
	notes := attachment(t, "notes.txt", "notes")
	msg := &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Cc: []string{"ann@example.com"}, Bcc: []string{"boss@example.com"}, Subject: "Oops", Text: "Not yet.", Attachments: []string{notes}}
	ids := e.send(t, msg, LinkOptions{}, 10*time.Second)
	id := ids[len(ids)-1]
	next(t, e.events, id, transfer.EventScheduled)

	undone, err := e.q.Undo(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.q.Job(id)
	if s.State != transfer.StateCancelled || s.Error != "" {
		t.Fatalf("undone, the message is %s (%q): want cancelled, the server told", s.State, s.Error)
	}
	k := undone.Composed
	if k == nil || !slices.Equal(k.To, msg.To) || !slices.Equal(k.Cc, msg.Cc) || !slices.Equal(k.Bcc, msg.Bcc) || k.Subject != "Oops" || k.Text != "Not yet." || !slices.Equal(k.Attachments, []string{notes}) {
		t.Fatalf("Undo gave back %+v", k)
	}
	e.advance(t, time.Minute)
	if n := e.messages(t); n != 0 {
		t.Fatalf("%d messages after Undo, want none", n)
	}
	if _, err := e.q.Undo(context.Background(), id); err != nil {
		t.Fatalf("a second Undo: %v", err)
	}
}

// Without Undo the message leaves at the end of the window, once.
func TestNoUndoSendsOnceAfterTheWindow(t *testing.T) {
	e := newUndoEnv(t)
	ids := e.send(t, &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "Go", Text: "Now."}, LinkOptions{}, 10*time.Second)
	id := ids[len(ids)-1]
	next(t, e.events, id, transfer.EventScheduled)
	if n := e.messages(t); n != 0 {
		t.Fatalf("%d messages within the window, want none", n)
	}
	e.advance(t, 10*time.Second)
	next(t, e.events, id, transfer.EventDone)
	if n := e.messages(t); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
	if _, err := e.q.Undo(context.Background(), id); err != ErrTooLateToUndo {
		t.Fatalf("Undo of a sent message: %v, want ErrTooLateToUndo", err)
	}
}

// A message with a Drive link: Undo stops it and lists the file its link
// already put on Drive, for the person to keep or delete as after Cancel.
func TestUndoOfAMessageWithLinksListsItsDriveFiles(t *testing.T) {
	e := newUndoEnv(t)
	film := attachment(t, "film.mov", strings.Repeat("film ", 60000))
	ids := e.send(t, &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "Film", Text: "Here.", Attachments: []string{film}}, LinkOptions{Policy: compose.LinksAlways}, 20*time.Second)
	id := ids[len(ids)-1]
	next(t, e.events, id, transfer.EventScheduled)

	undone, err := e.q.Undo(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(undone.Files) != 1 || undone.Files[0].Name != "film.mov" {
		t.Fatalf("Undo lists the Drive files %+v, want film.mov", undone.Files)
	}
	if undone.Composed == nil || !slices.Equal(undone.Composed.Attachments, []string{film}) {
		t.Fatalf("Undo gave back %+v", undone.Composed)
	}
	if n := e.messages(t); n != 0 {
		t.Fatalf("%d messages after Undo, want none", n)
	}
}

// A draft saved is not held: the window is for what reaches people.
func TestADraftIsNotHeld(t *testing.T) {
	e := newUndoEnv(t)
	msg := &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "Later", Text: "Draft."}
	up, err := Message(msg, compose.Draft, GmailOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := e.q.SendWithLinks(context.Background(), Drive{Root: e.sb.URL, Auth: transfer.StaticToken(e.sb.Token)}, msg, compose.Draft, up, LinkOptions{SendAt: SendAfter(e.clock.Now(), 10*time.Second)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	next(t, e.events, ids[0], transfer.EventDone)
}

// Send later with the computer asleep across the time: the message goes
// once at the first tick after the wake, and how late it went is what the
// front ends put in words (Lateness of its snapshot).
func TestSendLaterSleptThroughSendsAtWakeAndSaysHowLate(t *testing.T) {
	e := newUndoEnv(t)
	ids := e.send(t, &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "At ten", Text: "Sent at its time, or said late."}, LinkOptions{}, time.Hour)
	id := ids[len(ids)-1]
	next(t, e.events, id, transfer.EventScheduled)
	at := e.clock.Now().Add(time.Hour)
	if s, _ := e.q.Job(id); !s.SendAt.Equal(at) {
		t.Fatalf("scheduled for %s, want %s", s.SendAt, at)
	}

	e.advance(t, 30*time.Minute)
	e.clock.Suspend(2 * time.Hour) // the lid closed half an hour before the time, opened 90 min after
	if n := e.messages(t); n != 0 {
		t.Fatalf("%d messages while asleep, want none", n)
	}
	e.advance(t, time.Second)
	next(t, e.events, id, transfer.EventDone)
	if n := e.messages(t); n != 1 {
		t.Fatalf("%d messages after the wake, want exactly one", n)
	}
	s, _ := e.q.Job(id)
	if late := Lateness(s.SendAt, s.Updated); late != 90*time.Minute {
		t.Errorf("sent %v late by its snapshot, want 1h30m", late)
	}
}
