package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"carrier/internal/syncio"
	"carrier/transfer"
)

// shortBusyPoll makes `carrier resume --wait` look at the jobs another
// Carrier holds often, for the length of a test.
func shortBusyPoll(t *testing.T) {
	old := busyPoll
	busyPoll = 20 * time.Millisecond
	t.Cleanup(func() { busyPoll = old })
}

// untilSaid waits for words on a command's stderr.
func untilSaid(t *testing.T, buf *syncio.Buffer, words string, ended chan int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(buf.String(), words) {
		select {
		case code := <-ended:
			t.Fatalf("ended (%d) before saying %q:\n%s", code, words, buf.String())
		case <-deadline:
			t.Fatalf("never said %q:\n%s", words, buf.String())
		case <-time.After(10 * time.Millisecond): // another goroutine's output: there is no event to wait on
		}
	}
}

// A resume that finds jobs another Carrier sends (here a send still under
// way) says which and that they are that Carrier's, touches nothing and
// exits 0: nothing failed. With --wait it waits for them; the send
// stopped part-way, it takes up what was left and sends the message.
func TestResumeLeavesJobsAnotherCarrierSends(t *testing.T) {
	shortBusyPoll(t)
	h := newHeldSend(t)
	t.Cleanup(h.stop) // a failure part-way still ends the send
	// Held: b.mov's upload, the shares of both files and the message.
	errs, code := h.cancel("", "resume")
	if code != 0 || !strings.Contains(errs, "another Carrier is sending 4 jobs") ||
		!strings.Contains(errs, "b.mov") || !strings.Contains(errs, h.msg) || !strings.Contains(errs, "--wait") {
		t.Fatalf("resume while a send holds its jobs: %d %q", code, errs)
	}
	for _, r := range h.records() {
		if r.State == transfer.StateCancelled || r.State == transfer.StateFailed {
			t.Fatalf("job %s is %s after a resume that found it held", r.ID, r.State)
		}
	}

	stderr := &syncio.Buffer{}
	ended := make(chan int, 1)
	go func() {
		ended <- Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr},
			[]string{"resume", "--wait", "--endpoint", h.url, "--token", "tok", "--state-dir", h.state})
	}()
	untilSaid(t, stderr, "Waiting for it to end them", ended)
	select {
	case code := <-ended:
		t.Fatalf("resume --wait ended (%d) while the send held its jobs:\n%s", code, stderr.String())
	case <-time.After(100 * time.Millisecond): // five looks at the jobs
	}
	if n := h.messages(); n != 0 {
		t.Fatalf("%d messages sent while the send held them", n)
	}
	h.interrupt() // the send stops with its jobs unfinished: they are the resume's now
	select {
	case code := <-ended:
		if code != 0 {
			t.Fatalf("resume --wait: %d\n%s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("resume --wait did not end:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "the other Carrier stopped before finishing 4 jobs: ") {
		t.Errorf("resume --wait said:\n%s", stderr.String())
	}
	if n := h.messages(); n != 1 {
		t.Fatalf("%d messages sent, want 1", n)
	}
	h.noneLeft()
	t.Logf("resume said:\n%s\nresume --wait said:\n%s", errs, stderr.String())
}

// The other Carrier ends the jobs itself: resume --wait says how, and its
// status is a failure only when one failed there.
func TestResumeWaitsForJobsAnotherCarrierEnds(t *testing.T) {
	shortBusyPoll(t)
	for _, c := range []struct {
		name  string
		end   func(*transfer.Record)
		code  int
		words string
	}{
		{"sent", func(r *transfer.Record) {
			r.State, r.Response = transfer.StateDone, &transfer.Response{Status: 200, Body: []byte(`{"name":"a"}`)}
		}, 0, "job m1: sent by the other Carrier"},
		{"failed", func(r *transfer.Record) {
			r.State, r.Error = transfer.StateFailed, "the server refused the file"
		}, 1, "job m1 failed in the other Carrier: the server refused the file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			state := t.TempDir()
			j, _ := transfer.OpenJournal(state)
			path, _ := randomFile(t, 10)
			fi, _ := os.Stat(path)
			rec := &transfer.Record{Version: 1, ID: "m1", Created: time.Now(), URL: "http://127.0.0.1:1/upload/x", Method: "POST",
				Type: transfer.Resumable, ContentType: "image/png", Path: path, Size: 10, ModTime: fi.ModTime(), ChunkSize: 256 << 10,
				SHA256: strings.Repeat("00", 32), State: transfer.StateRunning, Updated: time.Now()}
			if err := j.Save(rec); err != nil {
				t.Fatal(err)
			}
			release, err := j.Lock("m1") // the other Carrier
			if err != nil {
				t.Fatal(err)
			}
			defer func() { release() }()

			var errOut bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut}
			if code := Main(context.Background(), env, []string{"resume", "--state-dir", state}); code != 0 ||
				!strings.Contains(errOut.String(), "another Carrier is sending 1 job: m1 (f.bin)") {
				t.Fatalf("resume: %d %q", code, errOut.String())
			}

			stderr := &syncio.Buffer{}
			ended := make(chan int, 1)
			go func() {
				ended <- Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr},
					[]string{"resume", "--wait", "--state-dir", state})
			}()
			untilSaid(t, stderr, "another Carrier is sending 1 job: m1 (f.bin). Waiting", ended)
			c.end(rec)
			rec.Updated = time.Now()
			if err := j.Save(rec); err != nil {
				t.Fatal(err)
			}
			release()
			release = func() {}
			select {
			case code := <-ended:
				if code != c.code || !strings.Contains(stderr.String(), c.words) {
					t.Fatalf("resume --wait: %d, want %d saying %q:\n%s", code, c.code, c.words, stderr.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("resume --wait did not end:\n%s", stderr.String())
			}
		})
	}
}
