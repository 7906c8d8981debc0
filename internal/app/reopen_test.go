package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"carrier/compose"
	"carrier/internal/apptest"
	"carrier/internal/delivery"
	"carrier/transfer"
)

func keptFiles(state string) []string {
	names, _ := filepath.Glob(filepath.Join(ComposedDir(state), "*"))
	return names
}

// A message's fields as written are kept while it may be reopened: gone
// once it is sent, kept while it is failed or cancelled (across a
// restart), gone when it is forgotten. The file is the person's alone.
func TestKeptFieldsFollowTheJob(t *testing.T) {
	sb, state := testSandbox(t), t.TempDir()
	events := make(chan transfer.Event, 256)
	q := openTestQueue(t, state, sb.Token, events)
	notes := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notes, []byte("notes"), 0o600)
	msg := &compose.Message{To: []string{"zoe@example.com"}, Bcc: []string{"boss@example.com"}, Subject: "Hello", Text: "Hi", Attachments: []string{notes}}

	sent, err := q.SendMessage(context.Background(), sb.URL, msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	next(t, events, sent, transfer.EventDone)
	if _, err := q.Composed(sent); !errors.Is(err, ErrNotKept) {
		t.Fatalf("a sent message can be reopened: %v", err)
	}
	if left := keptFiles(state); len(left) != 0 {
		t.Fatalf("sent, and kept: %v", left)
	}

	up, _ := Message(msg, compose.Send, GmailOptions{Thread: "no-such-thread"})
	failed, err := q.AddMessage(context.Background(), up.Spec(sb.URL), msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	next(t, events, failed, transfer.EventFailed)
	q.Wait(context.Background(), failed)
	k, err := q.Composed(failed)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k.To, msg.To) || !slices.Equal(k.Bcc, msg.Bcc) || k.Subject != "Hello" || k.Text != "Hi" || !slices.Equal(k.Attachments, []string{notes}) || k.Method != compose.Send {
		t.Fatalf("kept %+v", k)
	}
	// Kept in the message's delivery (a private file of the store), not
	// beside the journal.
	if files := keptFiles(state); len(files) != 0 {
		t.Fatalf("kept beside the journal: %v", files)
	}
	d, err := q.dl.store.Get(apptest.JobOf(t, q, failed).Owner)
	if err != nil || d.Composed == nil || d.Composed.Subject != "Hello" || !slices.Equal(d.Composed.Bcc, msg.Bcc) {
		t.Fatalf("the message's delivery keeps %+v (%v)", d.Composed, err)
	}
	if fi, err := os.Stat(filepath.Join(delivery.Dir(state), d.ID+".json")); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the delivery is not private: %v %v", fi.Mode(), err)
	}

	// Cancelled, then the queue closed and opened again: still there.
	unreachable, err := q.AddMessage(context.Background(), up.Spec("http://127.0.0.1:1"), msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Cancel(context.Background(), unreachable); err != nil {
		t.Fatal(err)
	}
	q.Close()
	q = openTestQueue(t, state, sb.Token, nil)
	if k, err := q.Composed(unreachable); err != nil || k.Subject != "Hello" {
		t.Fatalf("after a restart the cancelled message is not kept: %+v %v", k, err)
	}
	for _, id := range []string{failed, unreachable} {
		if err := q.Forget(id); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Composed(id); !errors.Is(err, ErrNotKept) {
			t.Errorf("forgotten, and still kept: %v", err)
		}
	}
	if left := keptFiles(state); len(left) != 0 {
		t.Fatalf("forgotten, and kept: %v", left)
	}
}

// At start, kept fields no job may reopen go (once old enough that no
// other process is between writing them and queuing the job), and so do
// the folders of drafts' attachments no kept message names.
func TestOpeningSweepsTheKeptFields(t *testing.T) {
	state := t.TempDir()
	q := openTestQueue(t, state, "", nil)
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Later", Text: "Hi"}
	up, _ := Message(msg, compose.Send, GmailOptions{})
	id, err := q.AddMessage(context.Background(), up.Spec("http://127.0.0.1:1"), msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	q.Pause(id)
	k, err := q.OpenDraft("r1", []byte("To: zoe@example.com\r\nSubject: x\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=a.pdf\r\n\r\n%PDF\r\n--b--\r\n"))
	if err != nil || len(k.Attachments) != 1 {
		t.Fatalf("%+v %v", k, err)
	}
	named := filepath.Dir(k.Attachments[0])
	// The draft opened and queued: its message names the folder.
	opened, err := q.AddMessage(context.Background(), up.Spec("http://127.0.0.1:1"), k.Message(), compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	q.Pause(opened)
	rec, _ := q.Job(id)
	q.Close()

	old := 2 * SweepGrace
	// Files a Carrier before deliveries kept beside the journal.
	if err := os.MkdirAll(ComposedDir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	pending := touch(t, filepath.Join(ComposedDir(state), filepath.Base(rec.Path)+".json"), old)
	orphan := touch(t, filepath.Join(ComposedDir(state), "msg-orphan.eml.json"), old)
	crash := touch(t, filepath.Join(ComposedDir(state), "123.tmp"), old)
	fresh := touch(t, filepath.Join(ComposedDir(state), "msg-another-process.eml.json"), time.Minute)
	stale := filepath.Join(state, "opened", "draft-stale")
	open := filepath.Join(state, "opened", "draft-open-in-a-window")
	os.MkdirAll(stale, 0o700)
	os.MkdirAll(open, 0o700)
	os.Chtimes(stale, time.Now().Add(-2*OpenedGrace), time.Now().Add(-2*OpenedGrace))
	os.Chtimes(open, time.Now().Add(-old), time.Now().Add(-old))
	os.Chtimes(named, time.Now().Add(-2*OpenedGrace), time.Now().Add(-2*OpenedGrace))

	openTestQueue(t, state, "", nil)
	if exists(orphan) || exists(crash) || exists(stale) {
		t.Error("kept fields no job names, a crash's leftover or an unnamed draft folder survived the start")
	}
	if !exists(pending) || !exists(fresh) || !exists(k.Attachments[0]) {
		t.Error("the fields of an unfinished job, a new file, or a draft's attachment a message names were swept")
	}
	if !exists(open) {
		t.Error("the attachments of a draft opened hours ago (maybe still in a window) were swept")
	}
}

// A draft's raw message opens as the person would type it: encoded
// headers decoded, addresses with their names, the text unfolded from
// quoted-printable, each attachment a file of its own in a private
// folder, under its own name but never outside that folder, and two
// files of one name both kept.
func TestOpenDraft(t *testing.T) {
	state := t.TempDir()
	q := openTestQueue(t, state, "", nil)
	raw := strings.Join([]string{
		`To: =?utf-8?q?Zo=C3=AB?= <zoe@example.com>, max@example.com`,
		`Cc: "Smith, Ann" <ann@example.com>`,
		`Subject: =?utf-8?b?UmFwcG9ydCDDqXTDqQ==?=`,
		`MIME-Version: 1.0`,
		`Content-Type: multipart/mixed; boundary="b1"`,
		``,
		`--b1`,
		`Content-Type: multipart/alternative; boundary="b2"`,
		``,
		`--b2`,
		`Content-Type: text/plain; charset=utf-8`,
		`Content-Transfer-Encoding: quoted-printable`,
		``,
		`Bonjour =C3=A0 tous, une ligne tr=`,
		`=C3=A8s longue.`,
		`--b2`,
		`Content-Type: text/html; charset=utf-8`,
		``,
		`<p>Bonjour</p>`,
		`--b2--`,
		`--b1`,
		`Content-Type: application/pdf`,
		`Content-Disposition: attachment; filename*=utf-8''r%C3%A9sum%C3%A9.pdf`,
		`Content-Transfer-Encoding: base64`,
		``,
		`JVBERi0x`,
		`--b1`,
		`Content-Type: text/plain; name="../../evil.txt"`,
		`Content-Disposition: attachment; filename="../../evil.txt"`,
		``,
		`evil`,
		`--b1`,
		`Content-Type: text/plain`,
		`Content-Disposition: attachment; filename="evil.txt"`,
		``,
		`second`,
		`--b1--`,
		``,
	}, "\r\n")
	k, err := q.OpenDraft("r42", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Zoë <zoe@example.com>, max@example.com"}; !slices.Equal(k.To, want) {
		t.Errorf("To %q, want %q", k.To, want)
	}
	if want := []string{`"Smith, Ann" <ann@example.com>`}; !slices.Equal(k.Cc, want) {
		t.Errorf("Cc %q, want %q", k.Cc, want)
	}
	if k.Subject != "Rapport été" || k.Text != "Bonjour à tous, une ligne très longue." || k.HTML != "" || k.DraftID != "r42" || k.Method != compose.Draft {
		t.Errorf("opened %+v", k)
	}
	if _, err := compose.ParseAddresses("To", k.To); err != nil {
		t.Errorf("the To opened does not parse again: %v", err)
	}
	var names []string
	for _, p := range k.Attachments {
		names = append(names, filepath.Base(p))
		if rel, err := filepath.Rel(filepath.Join(state, "opened"), p); err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != 1 {
			t.Errorf("an attachment outside its folder: %s", p)
		}
		if fi, err := os.Stat(p); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is not private: %v", p, err)
		}
	}
	if want := []string{"résumé.pdf", "evil.txt", "evil (2).txt"}; !slices.Equal(names, want) {
		t.Errorf("attachments %q, want %q", names, want)
	}
	if b, _ := os.ReadFile(k.Attachments[0]); string(b) != "%PDF-1" {
		t.Errorf("the PDF holds %q", b)
	}
	if b, _ := os.ReadFile(k.Attachments[2]); string(b) != "second" {
		t.Errorf("the second evil.txt holds %q", b)
	}
	if _, err := q.OpenDraft("r1", []byte("not a message")); err == nil {
		t.Error("an unreadable draft opened")
	}
	// A damaged attachment after a good one: refused, and nothing of it
	// is left on disk.
	before, _ := os.ReadDir(filepath.Join(state, "opened"))
	broken := "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nfine\r\n--b\r\nContent-Disposition: attachment; filename=b.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n!!not base64!!\r\n--b--\r\n"
	if _, err := q.OpenDraft("r2", []byte(broken)); err == nil {
		t.Error("a draft with a damaged attachment opened")
	}
	if after, _ := os.ReadDir(filepath.Join(state, "opened")); len(after) != len(before) {
		t.Errorf("a refused draft left its folder: %d folders, %d before", len(after), len(before))
	}
}

// The fields a Carrier before deliveries kept beside the journal are
// still read to reopen its message, and go when it is forgotten.
func TestKeptFieldsOfBeforeAreRead(t *testing.T) {
	state := t.TempDir()
	q := openTestQueue(t, state, "", nil)
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Before", Text: "Hi"}
	up, _ := Message(msg, compose.Send, GmailOptions{})
	id, err := q.AddMessage(context.Background(), up.Spec("http://127.0.0.1:1"), msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	q.Pause(id)
	s := apptest.JobOf(t, q, id)
	d, err := q.dl.store.Get(s.Owner)
	if err != nil {
		t.Fatal(err)
	}
	d.Composed = nil // as a delivery adopted from before keeps nothing
	if err := q.dl.store.Put(d); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Composed(id); !errors.Is(err, ErrNotKept) {
		t.Fatalf("nothing kept, yet: %v", err)
	}
	os.MkdirAll(ComposedDir(state), 0o700)
	side := filepath.Join(ComposedDir(state), filepath.Base(s.Path)+".json")
	if err := os.WriteFile(side, []byte(`{"To":["zoe@example.com"],"Subject":"Before","Text":"Hi","Attachments":null,"Method":"send"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := q.Composed(id); err != nil || k.Subject != "Before" || k.From != id {
		t.Fatalf("the file of before reads %+v %v", k, err)
	}
	if err := q.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if err := q.Forget(id); err != nil {
		t.Fatal(err)
	}
	if exists(side) {
		t.Fatal("forgotten, and the file of before stays")
	}
}
