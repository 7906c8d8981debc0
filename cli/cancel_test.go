package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"carrier/internal/app"
	"carrier/sandbox"
	"carrier/transfer"

	"carrier/internal/syncio"
)

// heldSend is `carrier send` of two files that go as Drive links, stopped
// while the second file's upload is under way: the first file is on
// Drive, the second half-sent, the message not sent. The sandbox is
// in-process behind a handler that holds the second upload's third
// chunk.
type heldSend struct {
	*sendEnv
	a, b   []byte
	msg    string // the message's job
	stop   context.CancelFunc
	ended  chan int
	stderr *syncio.Buffer
}

func newHeldSend(t *testing.T) *heldSend {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		sessions []string
		puts     = map[string]int{}
		once     sync.Once
	)
	holding := make(chan struct{})
	inner := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/upload/drive/") {
			up := r.URL.Query().Get("upload_id")
			mu.Lock()
			if puts[up] == 0 {
				sessions = append(sessions, up)
			}
			puts[up]++
			hold := len(sessions) == 2 && sessions[1] == up && puts[up] == 3
			mu.Unlock()
			if hold {
				io.Copy(io.Discard, r.Body)
				once.Do(func() { close(holding) })
				<-r.Context().Done() // until the client gives up
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	h := &heldSend{sendEnv: &sendEnv{t: t, url: srv.URL, state: t.TempDir()}, ended: make(chan int, 1), stderr: &syncio.Buffer{}}
	pa, a := namedRandomFile(t, "a.mov", 27<<20)
	pb, b := namedRandomFile(t, "b.mov", 27<<20)
	h.a, h.b = a, b
	ctx, stop := context.WithCancel(context.Background())
	h.stop = stop
	go func() {
		h.ended <- Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: h.stderr},
			[]string{"send", "--to", "zoe@example.com", "--subject", "Films", "--body", "Here.", "--attach", pa, "--attach", pb,
				"--chunk-size", "1048576", "--endpoint", h.url, "--token", "tok", "--state-dir", h.state, "--retry-base", "10ms"})
	}()
	select {
	case <-holding:
	case code := <-h.ended:
		t.Fatalf("send ended (%d) before the second upload was under way:\n%s", code, h.out())
	case <-time.After(60 * time.Second):
		stop()
		t.Fatalf("the second upload never got under way:\n%s", h.out())
	}
	for _, r := range h.records() {
		if len(r.Needs) > 0 && !strings.Contains(r.URL, "/drive/") {
			h.msg = r.ID
		}
	}
	if h.msg == "" {
		t.Fatal("no message in the journal")
	}
	return h
}

func (h *heldSend) out() string {
	return h.stderr.String()
}

// interrupt stops the send as Ctrl-C would: its jobs stay in the journal.
func (h *heldSend) interrupt() {
	h.stop()
	select {
	case <-h.ended:
	case <-time.After(30 * time.Second):
		h.t.Fatal("send did not stop")
	}
}

// cancel runs `carrier cancel` and returns its stderr and exit code.
func (h *heldSend) cancel(stdin string, args ...string) (string, int) {
	var out, errOut bytes.Buffer
	args = append(args, "--endpoint", h.url, "--token", "tok", "--state-dir", h.state)
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut}, args)
	return errOut.String(), code
}

func (h *heldSend) driveFiles() []any {
	return h.get("/drive/v3/files?fields=files(id,name)")["files"].([]any)
}

func (h *heldSend) messages() int {
	list, _ := h.get("/gmail/v1/users/me/messages")["messages"].([]any)
	return len(list)
}

// noneLeft fails if a job of the journal could still go.
func (h *heldSend) noneLeft() {
	h.t.Helper()
	for _, r := range h.records() {
		if r.State.Unfinished() || r.State == transfer.StateFailed {
			h.t.Errorf("job %s (%s) is still %s", r.ID, r.Label, r.State)
		}
	}
}

// Cancelling mid-upload with --drive delete: the finished file is deleted
// from Drive, the half-sent one's session goes, nothing is left to send
// and no message went. While the send still holds its jobs, cancel says
// who has them and touches nothing.
func TestCancelMessageDeletesItsDriveFiles(t *testing.T) {
	h := newHeldSend(t)
	errs, code := h.cancel("", "cancel", h.msg, "--drive", "delete")
	if code != 1 || !strings.Contains(errs, "being worked by another Carrier") {
		t.Fatalf("cancel while send holds the jobs: %d %q", code, errs)
	}
	for _, r := range h.records() {
		if r.State == transfer.StateCancelled {
			t.Fatalf("a refused cancel cancelled %s", r.ID)
		}
	}
	h.interrupt()
	if n := len(h.driveFiles()); n != 1 {
		t.Fatalf("%d Drive files before the cancel, want the first", n)
	}
	errs, code = h.cancel("", "cancel", "--drive", "delete", h.msg) // the id after the flags, too
	if code != 0 {
		t.Fatalf("cancel: %d %s", code, errs)
	}
	if !strings.Contains(errs, "deleted from Google Drive: a.mov") {
		t.Errorf("cancel said: %s", errs)
	}
	if files := h.driveFiles(); len(files) != 0 {
		t.Fatalf("Drive files left: %v", files)
	}
	if n := h.messages(); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
	h.noneLeft()
	// Nothing goes later either.
	var out, rerr bytes.Buffer
	if code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &rerr},
		[]string{"resume", "--endpoint", h.url, "--token", "tok", "--state-dir", h.state}); code != 0 {
		t.Fatalf("resume: %d %s", code, rerr.String())
	}
	if len(h.driveFiles()) != 0 || h.messages() != 0 {
		t.Fatal("resume after the cancel sent something")
	}
}

// Without --drive and without a terminal, cancel keeps the finished file
// on Drive and says so; no message goes. Asked on a terminal later
// (the message already cancelled), a yes deletes it.
func TestCancelMessageKeepsItsDriveFiles(t *testing.T) {
	h := newHeldSend(t)
	h.interrupt()
	errs, code := h.cancel("", "cancel", h.msg)
	if code != 0 {
		t.Fatalf("cancel: %d %s", code, errs)
	}
	if !strings.Contains(errs, "Kept there (not asked: no terminal)") || !strings.Contains(errs, "a.mov") {
		t.Errorf("cancel said: %s", errs)
	}
	files := h.driveFiles()
	if len(files) != 1 {
		t.Fatalf("Drive files: %v", files)
	}
	id := files[0].(map[string]any)["id"].(string)
	if !bytes.Equal(h.getBytes("/drive/v3/files/"+id+"?alt=media"), h.a) {
		t.Fatal("the kept file's bytes are not a.mov's")
	}
	if n := h.messages(); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
	h.noneLeft()

	errs, code = h.cancel("", "cancel", h.msg)
	if code != 1 || !strings.Contains(errs, "already cancelled") || !strings.Contains(errs, "--drive delete") {
		t.Fatalf("cancelling again: %d %s", code, errs)
	}
	defer func(was func(io.Reader) bool) { interactive = was }(interactive)
	interactive = func(io.Reader) bool { return true }
	errs, code = h.cancel("y\n", "cancel", h.msg, "--drive", "delete")
	if code != 0 || len(h.driveFiles()) != 0 {
		t.Fatalf("deleting the kept file: %d %s; files %v", code, errs, h.driveFiles())
	}
}

// A person at a terminal is asked; "n" keeps the files.
func TestCancelAsksOnATerminal(t *testing.T) {
	h := newHeldSend(t)
	h.interrupt()
	defer func(was func(io.Reader) bool) { interactive = was }(interactive)
	interactive = func(io.Reader) bool { return true }
	errs, code := h.cancel("n\n", "cancel", h.msg)
	if code != 0 || !strings.Contains(errs, "Delete them from Google Drive? [y/N]") || !strings.Contains(errs, "kept on Google Drive: a.mov") {
		t.Fatalf("cancel: %d %s", code, errs)
	}
	if len(h.driveFiles()) != 1 || h.messages() != 0 {
		t.Fatalf("files %v, %d messages", h.driveFiles(), h.messages())
	}
}

// carrier jobs shows the message with its parts under it, by id; cancel
// refuses an unknown id, a message already sent, and bad flags, clearly.
func TestJobsAndCancelRefusals(t *testing.T) {
	e := newSendEnv(t)
	big, _ := namedRandomFile(t, "big.bin", 26<<20)
	if _, errs, code := e.run("send", "--to", "zoe@example.com", "--attach", big); code != 0 {
		t.Fatalf("send: %s", errs)
	}
	msg := e.lastRecord()
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, []string{"jobs", "--all", "--state-dir", e.state}); code != 0 {
		t.Fatalf("jobs: %s", errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], msg.ID+" ") || !strings.Contains(lines[1], "done") ||
		!strings.HasPrefix(lines[2], "  ") || !strings.Contains(lines[2], "big.bin · to Google Drive") || !strings.Contains(lines[3], "shared with zoe@example.com") {
		t.Fatalf("carrier jobs --all:\n%s", out.String())
	}
	out.Reset()
	if code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, []string{"jobs", "--state-dir", e.state}); code != 0 || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("carrier jobs lists finished jobs:\n%s", out.String())
	}
	parts := msg.Needs
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"cancel", msg.ID}, 1, "the message was already sent; its Drive files stay shared"},
		{[]string{"cancel", parts[0], "--drive", "delete"}, 1, "already sent"},
		{[]string{"cancel", "nosuchjob"}, 1, `no job "nosuchjob"`},
		{[]string{"cancel"}, 2, "carrier cancel ID"},
		{[]string{"cancel", msg.ID, "--drive", "maybe"}, 2, "--drive is keep or delete"},
	} {
		_, errs, code := e.run(c.args...)
		if code != c.code || !strings.Contains(errs, c.say) {
			t.Errorf("%v: %d %q", c.args, code, errs)
		}
	}
	if n := len(e.get("/drive/v3/files?fields=files(id)")["files"].([]any)); n != 1 {
		t.Fatalf("a refused cancel touched Drive: %d files", n)
	}
}

// A job on the embedded sandbox, whose old port another program now
// holds: cancel starts the sandbox where it can, and sends nothing (its
// session URI least of all) to the program in its old place.
func TestCancelSendsNothingWhereTheSandboxWas(t *testing.T) {
	dirs := app.Dirs{Data: t.TempDir(), State: t.TempDir()}
	os.MkdirAll(dirs.Sandbox(), 0o700)
	os.WriteFile(filepath.Join(dirs.Sandbox(), "port"), []byte(freePort(t)+"\n"), 0o600)
	e, err := app.StartEmbedded(context.Background(), dirs.Sandbox(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	queueJob(t, dirs.State, "job", e.URL+"/upload/storage/v1/b/cli-test/o?name=x")
	j, _ := transfer.OpenJournal(dirs.State)
	rec, _ := j.Load("job")
	rec.Session, rec.State = e.URL+"/upload/storage/v1/b/cli-test/o?uploadType=resumable&upload_id=secret-session", transfer.StateRunning
	if err := j.Save(rec); err != nil {
		t.Fatal(err)
	}
	imp := &recorder{}
	ln, err := net.Listen("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: imp}
	go srv.Serve(ln)
	defer srv.Close()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Dirs: dirs}, []string{"cancel", "job"})
	t.Logf("exit %d: %s", code, errOut.String())
	if seen := imp.seen(); len(seen) != 0 {
		t.Fatalf("the program on the old port was sent %v", seen)
	}
	if rec, _ := j.Load("job"); rec.State != transfer.StateCancelled {
		t.Fatalf("the job is %s; cancel said %s", rec.State, errOut.String())
	}
}
