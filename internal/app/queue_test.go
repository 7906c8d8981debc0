package app

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"carrier/compose"
	"carrier/transfer"
)

// testSandbox is the embedded sandbox, as the desktop app starts it, in a
// folder of the test's.
func testSandbox(t *testing.T) *Embedded {
	t.Helper()
	e, err := StartEmbedded(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func openTestQueue(t *testing.T, state, token string, events chan transfer.Event) *Queue {
	t.Helper()
	q, err := OpenQueue(transfer.Config{StateDir: state, Auth: transfer.StaticToken(token), Events: events, RetryBase: 10 * time.Millisecond}, NewSpool(SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// next waits for the job's next event of one of kinds.
func next(t *testing.T, events <-chan transfer.Event, id string, kinds ...transfer.EventKind) transfer.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-events:
			for _, k := range kinds {
				if e.Job == id && e.Kind == k {
					return e
				}
			}
		case <-deadline:
			t.Fatalf("job %s: no %v", id, kinds)
		}
	}
}

func spoolFiles(state string) []string {
	names, _ := filepath.Glob(filepath.Join(SpoolDir(state), "*"))
	return names
}

// A message's spool goes when its job is done (before anyone hears of it),
// stays while a failed job may be retried, and goes when it is forgotten.
// The person's own files are never touched.
func TestTheSpoolFollowsItsJob(t *testing.T) {
	sb, state := testSandbox(t), t.TempDir()
	root := sb.URL
	events := make(chan transfer.Event, 256)
	q := openTestQueue(t, state, sb.Token, events)
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Hello", Text: "Hi"}

	id, err := q.SendMessage(context.Background(), root, msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := q.Job(id)
	if !exists(rec.Path) || filepath.Dir(rec.Path) != SpoolDir(state) {
		t.Fatalf("the message is not in the spool: %s", rec.Path)
	}
	next(t, events, id, transfer.EventDone)
	if left := spoolFiles(state); len(left) != 0 {
		t.Fatalf("done, and the spool still holds %v", left)
	}

	up, _ := Message(msg, compose.Send, GmailOptions{Thread: "no-such-thread"})
	failed, err := q.AddMessage(context.Background(), up.Spec(root), msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	next(t, events, failed, transfer.EventFailed)
	// The event may come before the worker lets go; Forget needs it gone.
	rec, _ = q.Wait(context.Background(), failed)
	if !exists(rec.Path) {
		t.Fatal("the spool of a failed job, which may be retried, was removed")
	}
	if err := q.Forget(failed); err != nil {
		t.Fatal(err)
	}
	if exists(rec.Path) {
		t.Fatal("the spool of a forgotten job was kept")
	}

	pic := filepath.Join(t.TempDir(), "dot.png")
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	os.WriteFile(pic, png, 0o600)
	media, err := compose.CheckTimelineMedia(pic)
	if err != nil {
		t.Fatal(err)
	}
	post, err := q.PostTimeline(root, media, compose.TimelineItem{Text: "Dot"})
	if err != nil {
		t.Fatal(err)
	}
	next(t, events, post, transfer.EventDone)
	if !exists(pic) {
		t.Fatal("the posted picture was removed when its job was done")
	}
	q.Wait(context.Background(), post)
	if err := q.Forget(post); err != nil || !exists(pic) {
		t.Fatalf("the posted picture was removed with its job: %v", err)
	}
}

// At start, the spool loses what no job needs and keeps what an
// unfinished job will still send.
func TestOpeningSweepsTheSpool(t *testing.T) {
	state := t.TempDir()
	q := openTestQueue(t, state, "", nil)
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Later", Text: "Hi"}
	// Nothing listens there: the job stays unfinished.
	up, _ := Message(msg, compose.Send, GmailOptions{})
	spec := up.Spec("http://127.0.0.1:1")
	id, err := q.AddMessage(context.Background(), spec, msg, compose.Send)
	if err != nil {
		t.Fatal(err)
	}
	q.Pause(id)
	rec, _ := q.Job(id)
	q.Close()

	old := 2 * SweepGrace
	pending := touch(t, rec.Path, old)
	orphan := touch(t, filepath.Join(SpoolDir(state), "msg-orphan.eml"), old)
	crash := touch(t, filepath.Join(SpoolDir(state), "msg-crash.eml.tmp"), old)
	fresh := touch(t, filepath.Join(SpoolDir(state), "msg-another-process.eml"), time.Minute)

	openTestQueue(t, state, "", nil)
	if exists(orphan) || exists(crash) {
		t.Error("an orphan or a crash's leftover survived the start")
	}
	if !exists(pending) {
		t.Error("the spool of an unfinished job was swept")
	}
	if !exists(fresh) {
		t.Error("a new spool file (another process's job to be) was swept")
	}
}

// A job keeps its file in every state but done and cancelled (a failed job
// may be retried; a state added later is taken to need it), however its
// path was written.
func TestWhichJobsNeedTheirFile(t *testing.T) {
	spool := filepath.Join(t.TempDir(), "spool")
	recs := []transfer.Snapshot{
		{State: transfer.StateQueued, Path: "state/spool/msg-queued.eml"},
		{State: transfer.StatePaused, Path: filepath.Join(spool, "msg-paused.eml")},
		{State: transfer.StateFailed, Path: filepath.Join(spool, "msg-failed.eml")},
		{State: transfer.StateWaiting, Path: filepath.Join(spool, "msg-waiting.eml")},
		{State: transfer.StateDone, Path: filepath.Join(spool, "msg-done.eml")},
		{State: transfer.StateCancelled, Path: filepath.Join(spool, "msg-cancelled.eml")},
	}
	needed := neededBy(recs)
	for _, c := range []struct {
		name string
		want bool
	}{{"msg-queued.eml", true}, {"msg-paused.eml", true}, {"msg-failed.eml", true}, {"msg-waiting.eml", true},
		{"msg-done.eml", false}, {"msg-cancelled.eml", false}, {"msg-nobody.eml", false}} {
		if got := needed(filepath.Join(spool, c.name)); got != c.want {
			t.Errorf("%s: needed %v, want %v", c.name, got, c.want)
		}
	}
}

// The window's upload speed reaches the engine: a limit in rclone's
// syntax applies at once, and one that does not read is refused plainly,
// leaving the limit as it was.
func TestBandwidthSpec(t *testing.T) {
	state := t.TempDir()
	q, err := OpenQueue(transfer.Config{StateDir: state}, NewSpool(SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.SetBandwidthSpec("2MB"); err != nil || q.Bandwidth() != 2<<20 {
		t.Fatalf("2MB: %d %v", q.Bandwidth(), err)
	}
	if err := q.SetBandwidthSpec("fast please"); err == nil || !strings.Contains(err.Error(), "bandwidth") || q.Bandwidth() != 2<<20 {
		t.Fatalf("a limit that does not read: %v, limit %d", err, q.Bandwidth())
	}
	if err := q.SetBandwidthSpec("off"); err != nil || q.Bandwidth() != 0 {
		t.Fatalf("off: %d %v", q.Bandwidth(), err)
	}
}
