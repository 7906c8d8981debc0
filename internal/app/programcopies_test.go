package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"carrier/compose"
	"carrier/internal/app/message"
	"carrier/transfer"
)

// programCopy makes a copy as the MAPI DLL does: DIR\<message>\<n>\<name>.
func programCopy(t *testing.T, dir, message string, n int, name string) string {
	t.Helper()
	p := filepath.Join(dir, message, string(rune('0'+n)), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("bytes of "+name), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// age makes a message's folder and its files' folders look days old.
func age(t *testing.T, dir, message string, by time.Duration) {
	t.Helper()
	then := time.Now().Add(-by)
	md := filepath.Join(dir, message)
	entries, _ := os.ReadDir(md)
	for _, e := range entries {
		os.Chtimes(filepath.Join(md, e.Name()), then, then)
	}
	if err := os.Chtimes(md, then, then); err != nil {
		t.Fatal(err)
	}
}

// failedMessage queues msg to a thread that does not exist: the message
// fails, and its fields are kept to reopen it.
func failedMessage(t *testing.T, q *Queue, root string, events chan transfer.Event, msg *compose.Message) string {
	t.Helper()
	up, _ := Message(msg, compose.Send, GmailOptions{Thread: "no-such-thread"})
	id, err := q.AddMessage(context.Background(), up.Spec(root), msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	next(t, events, id, transfer.EventFailed)
	q.Wait(context.Background(), id)
	return id
}

// A program's attachment goes once nothing names it: taken out of
// Compose, it goes; held by Compose's copy, or by a message kept to
// reopen, it stays, and goes when that message is forgotten; carried by a
// message that was sent, it goes with the message's kept fields, unless
// Compose holds it again. Its folders go with the last file.
func TestProgramCopiesGoWhenNothingNamesThem(t *testing.T) {
	sb, state := testSandbox(t), t.TempDir()
	dir := ProgramCopiesDir(t.TempDir())
	events := make(chan transfer.Event, 256)
	q := openTestQueue(t, state, sb.Token, events)
	unsent := message.NewUnsentStore(state)
	a := programCopy(t, dir, "20261128-101010-42-1", 1, "Q3 report.pdf")
	b := programCopy(t, dir, "20261128-101010-42-1", 2, "scan.jpg")
	c := programCopy(t, dir, "20261128-101111-42-2", 1, "sent.pdf")
	d := programCopy(t, dir, "20261128-101111-42-2", 2, "sent and held.pdf")
	mine := filepath.Join(t.TempDir(), "mine.txt") // the person's own file: never touched
	os.WriteFile(mine, []byte("mine"), 0o600)
	q.UseProgramCopies(dir, unsent)
	q.releasing.Wait()
	for _, p := range []string{a, b, c, d} {
		if !exists(p) {
			t.Fatalf("the sweep at start took %s, made a moment ago", p)
		}
	}

	// Compose holds a and b, then lets go of b.
	held := func(files ...string) *message.Unsent {
		return &message.Unsent{Composed: message.Composed{Subject: "Report", Attachments: files}}
	}
	if err := unsent.Save(held(a, b, mine)); err != nil {
		t.Fatal(err)
	}
	if err := unsent.Save(held(a, mine)); err != nil {
		t.Fatal(err)
	}
	q.releasing.Wait()
	if exists(b) || exists(filepath.Dir(b)) {
		t.Errorf("taken out of Compose, %s is still there", b)
	}
	if !exists(a) {
		t.Fatalf("%s went while Compose holds it", a)
	}

	// Sent, and failed: the fields kept to reopen it hold a after Compose
	// is emptied; forgotten, a goes, and its message's folder.
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Report", Text: "Here.", Attachments: []string{a, mine}}
	failed := failedMessage(t, q, sb.URL, events, msg)
	if err := unsent.Save(nil); err != nil {
		t.Fatal(err)
	}
	q.releasing.Wait()
	if !exists(a) {
		t.Fatalf("%s went while a failed message that may be reopened names it", a)
	}
	if err := q.Forget(failed); err != nil {
		t.Fatal(err)
	}
	q.releasing.Wait()
	if exists(a) || exists(filepath.Join(dir, "20261128-101010-42-1")) {
		t.Errorf("the message forgotten, %s or its folder is still there", a)
	}

	// Sent: c goes with it; d stays, Compose holding it again.
	if err := unsent.Save(held(d)); err != nil {
		t.Fatal(err)
	}
	sent, err := q.SendMessage(context.Background(), sb.URL, &compose.Message{To: []string{"zoe@example.com"}, Subject: "Sent", Text: "Both.", Attachments: []string{c, d}}, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	next(t, events, sent, transfer.EventDone)
	q.releasing.Wait()
	if exists(c) {
		t.Errorf("the message sent, %s is still there", c)
	}
	if !exists(d) {
		t.Errorf("%s went with the message sent while Compose holds it", d)
	}
	if !exists(mine) {
		t.Fatal("the person's own file was removed")
	}
}

// At the start, the copies nothing names go once their folder is old
// enough; those Compose's copy, a job not ended or a message kept to
// reopen names stay, as
// do young ones (the window may not have been handed them yet) and
// anything not laid out as the DLL lays its copies.
func TestProgramCopiesSweptAtStart(t *testing.T) {
	sb, state := testSandbox(t), t.TempDir()
	dir := ProgramCopiesDir(t.TempDir())
	events := make(chan transfer.Event, 256)
	q := openTestQueue(t, state, sb.Token, events)
	old := programCopy(t, dir, "20260101-080000-7-1", 1, "old.pdf")
	oldHeld := programCopy(t, dir, "20260101-080000-7-2", 1, "held by Compose.pdf")
	oldBeside := programCopy(t, dir, "20260101-080000-7-2", 2, "beside it.pdf")
	oldKept := programCopy(t, dir, "20260101-080000-7-3", 1, "in a failed message.pdf")
	oldRead := programCopy(t, dir, "20260101-080000-7-5", 1, "read by a job.bin")
	young := programCopy(t, dir, "20261128-101010-9-1", 1, "young.pdf")
	stray := filepath.Join(dir, "20260101-080000-7-4", "not a copy.txt")
	os.MkdirAll(filepath.Dir(stray), 0o700)
	os.WriteFile(stray, []byte("?"), 0o600)
	failedMessage(t, q, sb.URL, events, &compose.Message{To: []string{"zoe@example.com"}, Subject: "Failed", Text: "x", Attachments: []string{oldKept}})
	// A job that reads its file in place (a Drive link's), not ended.
	if _, err := q.Add(transfer.Spec{URL: "http://127.0.0.1:1/upload", Path: oldRead, ContentType: "application/octet-stream"}); err != nil {
		t.Fatal(err)
	}
	unsent := message.NewUnsentStore(state)
	if err := unsent.Save(&message.Unsent{Composed: message.Composed{Attachments: []string{oldHeld}}}); err != nil {
		t.Fatal(err)
	}
	q.Close()
	for _, m := range []string{"20260101-080000-7-1", "20260101-080000-7-2", "20260101-080000-7-3", "20260101-080000-7-4", "20260101-080000-7-5"} {
		age(t, dir, m, ProgramCopiesGrace+time.Hour)
	}
	age(t, dir, "20261128-101010-9-1", ProgramCopiesGrace-time.Hour)

	// Long links' files never read: an old one goes, a young one stays.
	links := MailLinksDir(filepath.Dir(dir))
	os.MkdirAll(links, 0o700)
	oldLink := filepath.Join(links, "20260101-080000-7-1.txt")
	youngLink := filepath.Join(links, "20261128-101010-9-1.txt")
	for _, p := range []string{oldLink, youngLink} {
		os.WriteFile(p, []byte("mailto:zoe@example.com"), 0o600)
	}
	then := time.Now().Add(-ProgramCopiesGrace - time.Hour)
	os.Chtimes(oldLink, then, then)

	q = openTestQueue(t, state, sb.Token, nil)
	q.UseProgramCopies(dir, message.NewUnsentStore(state))
	q.releasing.Wait()
	for p, want := range map[string]bool{old: false, filepath.Dir(filepath.Dir(old)): false, oldBeside: false,
		oldHeld: true, oldKept: true, oldRead: true, young: true, stray: true, oldLink: false, youngLink: true} {
		if exists(p) != want {
			t.Errorf("%s there after the sweep: %v, want %v", p, exists(p), want)
		}
	}
}

// Only DIR\<message>\<n>\<name> is a copy.
func TestIsCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Attachments from programs")
	for p, want := range map[string]bool{
		filepath.Join(dir, "m", "1", "a.pdf"):      true,
		filepath.Join(dir, "m", "a.pdf"):           false,
		filepath.Join(dir, "m", "1", "x", "a.pdf"): false,
		filepath.Join(dir, "..", "m", "1", "a"):    false,
		filepath.Join(dir+"x", "m", "1", "a.pdf"):  false,
		"m/1/a.pdf": false,
	} {
		if isCopy(dir, p) != want {
			t.Errorf("isCopy(%s) = %v", p, !want)
		}
	}
}
