package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"carrier/sandbox"
	"carrier/transfer"
)

// settlingSandbox is uploadSandbox whose settle waits until no request is
// in its handler. A paused upload's request ends on the client at once,
// but the server goes on reading what was already on its way (slowly,
// under the rate fault) and counts it as received: counts taken before it
// settled would charge those bytes to what comes next.
func settlingSandbox(t *testing.T, faults string) (sb *sandbox.Sandbox, base string, settle func()) {
	t.Helper()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: testToken, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	var busy atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		busy.Add(1)
		defer busy.Add(-1)
		sb.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	return sb, srv.URL, func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for busy.Load() > 0 {
			if time.Now().After(deadline) {
				t.Fatal("the server still reads a request 30 s after the upload stopped")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// ghostJob leaves in state a job whose file was moved once the server held
// some of it: a ghost, as a Carrier that found it so left it.
func ghostJob(t *testing.T, state, url, path string) (id string) {
	t.Helper()
	events := make(chan transfer.Event, 4096)
	q, err := transfer.New(transfer.Config{StateDir: state, Auth: transfer.StaticToken(testToken), Events: events, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	id, err = q.Add(transfer.Spec{URL: url, ContentType: "application/octet-stream", Path: path, ChunkSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	next := func(kinds ...transfer.EventKind) transfer.Event {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case e := <-events:
				for _, k := range kinds {
					if e.Kind == k {
						return e
					}
				}
			case <-deadline:
				t.Fatalf("no %v event", kinds)
			}
		}
	}
	for e := next(transfer.EventProgress); e.Confirmed < 256<<10; e = next(transfer.EventProgress) {
	}
	if err := q.Pause(id); err != nil {
		t.Fatal(err)
	}
	next(transfer.EventPaused)
	return id
}

// `carrier jobs` says where a ghost's file was and how to point at it;
// `carrier resume --locate` refuses another file, in words, and sends
// the same file on from where the server stands.
func TestResumeLocate(t *testing.T) {
	sb, base, settle := settlingSandbox(t, "rate=4MB")
	state := t.TempDir()
	path, data := randomFile(t, 3<<20)
	id := ghostJob(t, state, base+"/upload/storage/v1/b/cli-test/o?name=ghost", path)
	sb.SetFaults("")
	settle()
	moved := filepath.Join(t.TempDir(), "moved.bin")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CARRIER_TOKEN", testToken)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
		return code, out.String(), errOut.String()
	}
	// A plain resume finds the file gone: the job waits, a ghost.
	code, _, errs := run("resume", "--state-dir", state)
	if code == 0 || !strings.Contains(errs, "the file is no longer at "+path) || !strings.Contains(errs, "carrier resume --locate "+id) {
		t.Fatalf("resume of a moved file: exit %d\n%s", code, errs)
	}
	code, out, errs := run("jobs", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "missing") || !strings.Contains(out, "the file is no longer at "+path+": if you moved it, run `carrier resume --locate "+id+" NEWPATH`") {
		t.Fatalf("jobs: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs = run("status", "--state-dir", state); !strings.Contains(out+errs, "the file is no longer at "+path) {
		t.Errorf("status: exit %d\n%s%s", code, out, errs)
	}
	stored := sb.Stats().BytesStored

	other := bytes.Clone(data)
	other[100] ^= 1
	otherPath := filepath.Join(t.TempDir(), "other.bin")
	os.WriteFile(otherPath, other, 0o600)
	code, _, errs = run("resume", "--state-dir", state, "--locate", id, otherPath)
	if code != 1 || !strings.Contains(errs, "is not the file of job "+id) || !strings.Contains(errs, "differ") {
		t.Fatalf("--locate of another file: exit %d\n%s", code, errs)
	}
	code, _, errs = run("resume", "--state-dir", state, "--locate", id)
	if code != 2 || !strings.Contains(errs, "carrier resume --locate ID PATH") {
		t.Fatalf("--locate without a path: exit %d\n%s", code, errs)
	}
	if code, out, _ = run("jobs", "--state-dir", state); !strings.Contains(out, "the file is no longer at "+path) {
		t.Fatalf("after the refusal, jobs: %s", out)
	}

	before := sb.Stats()
	code, out, errs = run("resume", "--state-dir", state, "--locate", id, moved)
	if code != 0 || !strings.Contains(out, `"ghost"`) {
		t.Fatalf("--locate of the file: exit %d\n%s%s", code, out, errs)
	}
	if !bytes.Equal(readObject(t, base, "ghost"), data) {
		t.Fatal("the object's bytes are not the file's")
	}
	after := sb.Stats()
	if after.SessionsCreated != before.SessionsCreated || after.BytesReceived-before.BytesReceived != int64(len(data))-stored {
		t.Errorf("after --locate: %d sessions made, %d bytes sent with %d of %d on the server", after.SessionsCreated-before.SessionsCreated,
			after.BytesReceived-before.BytesReceived, stored, len(data))
	}
	if code, _, errs = run("resume", "--state-dir", state, "--locate", id, moved); code != 1 || !strings.Contains(errs, "nothing to locate") {
		t.Errorf("--locate of a job done: exit %d\n%s", code, errs)
	}
}

// A job stopped because its file was saved again after its upload began
// is told with the way on; `carrier resume --locate ID PATH` takes the
// file when it holds the bytes the server holds, and sends the rest on.
func TestResumeLocateChangedFile(t *testing.T) {
	sb, base := uploadSandbox(t, "rate=4MB")
	state := t.TempDir()
	path, data := randomFile(t, 3<<20)
	id := ghostJob(t, state, base+"/upload/storage/v1/b/cli-test/o?name=saved", path)
	sb.SetFaults("")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CARRIER_TOKEN", testToken)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
		return code, out.String(), errOut.String()
	}
	code, _, errs := run("resume", "--state-dir", state)
	if code == 0 || !strings.Contains(errs, "its modification time changed") || !strings.Contains(errs, "carrier resume --locate ID PATH") {
		t.Fatalf("resume of a file saved again: exit %d\n%s", code, errs)
	}
	other := bytes.Clone(data)
	other[100] ^= 1
	otherPath := filepath.Join(t.TempDir(), "other.bin")
	os.WriteFile(otherPath, other, 0o600)
	if code, _, errs = run("resume", "--state-dir", state, "--locate", id, otherPath); code != 1 || !strings.Contains(errs, "is not the file of job "+id) {
		t.Fatalf("--locate of another file: exit %d\n%s", code, errs)
	}
	code, out, errs := run("resume", "--state-dir", state, "--locate", id, path)
	if code != 0 || !strings.Contains(out, `"saved"`) {
		t.Fatalf("--locate of the file saved again: exit %d\n%s%s", code, out, errs)
	}
	if !bytes.Equal(readObject(t, base, "saved"), data) {
		t.Fatal("the object's bytes are not the file's")
	}
}
