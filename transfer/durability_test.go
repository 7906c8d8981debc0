package transfer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"carrier/internal/platform"
)

// swapSeam sets one of journal.go's seams for the rest of the test.
func swapSeam[T any](t *testing.T, seam *T, v T) {
	t.Helper()
	old := *seam
	*seam = v
	t.Cleanup(func() { *seam = old })
}

// countingServer answers every one-shot upload with a resource and counts
// the uploads it received.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte(`{"id":"sent"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Windows refuses to sync a folder, and any system may fail it. The record
// was renamed into place by then: it will be read and sent at the next
// start, so Save must not report it failed (that is how a send reported
// as failed went out later). The job is done once, never twice.
func TestJournalFolderSyncFailureIsNotAFailure(t *testing.T) {
	injected := errors.New("injected: the folder cannot be synced")
	swapSeam(t, &syncJournalDir, func(string) error { return injected })

	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	if err := j.Save(r); err != nil {
		t.Fatalf("Save reported a record that stands as failed: %v", err)
	}
	if back, err := j.Load(r.ID); err != nil || back.Confirmed != r.Confirmed {
		t.Fatalf("Load = %+v, %v", back, err)
	}
	if !errors.Is(j.dirSyncError(), injected) {
		t.Errorf("the sync failure is not kept: %v", j.dirSyncError())
	}
	if err := j.Remove(r.ID); err != nil {
		t.Fatalf("Remove: %v", err)
	}

	srv, uploads := countingServer(t)
	state := t.TempDir()
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("hello"), 0o600)
	q, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "text/plain", Path: src})
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	if rec, err := q.Wait(ctxT(t), id); err != nil || rec.State != StateDone {
		t.Fatalf("Wait: %v %q, %v", rec.State, rec.Error, err)
	}
	q.Close()
	q2, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if ids, err := q2.ResumeJournal(true); len(ids) != 0 || err != nil {
		t.Fatalf("a done job resumed: %v %v", ids, err)
	}
	if n := uploads.Load(); n != 1 {
		t.Errorf("%d uploads, want 1", n)
	}
}

// A Save that fails leaves nothing a later start would send: a job whose
// record could not be written is reported failed and never goes out.
// And a rename that reports failure after the move was made (possible
// with a write-through rename or a network drive) is a success: the record
// stands.
func TestJournalFailedSaveIsNeverSent(t *testing.T) {
	injected := errors.New("injected: the rename failed")
	state := t.TempDir()
	mine := func(path string) bool { return strings.HasPrefix(path, state) }
	swapSeam(t, &renameRecord, func(from, to string) error {
		if mine(to) {
			return injected
		}
		return platform.DurableRename(from, to)
	})

	srv, uploads := countingServer(t)
	src := filepath.Join(t.TempDir(), "f")
	os.WriteFile(src, []byte("hello"), 0o600)
	q, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "text/plain", Path: src}); err == nil {
		q.Wait(ctxT(t), id)
		t.Fatalf("Add succeeded (job %s) though its record was never written", id)
	}
	q.Close()
	entries, _ := os.ReadDir(filepath.Join(state, "jobs"))
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	renameRecord = platform.DurableRename
	q2, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if ids, err := q2.ResumeJournal(true); len(ids) != 0 || err != nil {
		t.Fatalf("a job reported failed was resumed: %v %v", ids, err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := uploads.Load(); n != 0 {
		t.Fatalf("%d uploads of a job reported failed", n)
	}

	// Moved, then reported failed: the record stands, so Save says so.
	renameRecord = func(from, to string) error {
		if err := platform.DurableRename(from, to); err != nil {
			return err
		}
		return injected
	}
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	if err := j.Save(r); err != nil {
		t.Fatalf("Save of a record that stands: %v", err)
	}
	if _, err := j.Load(r.ID); err != nil {
		t.Fatal(err)
	}
}

// Job locks hold across processes: this test runs itself again as the
// holder (CARRIER_TEST_LOCK_HOLDER names the journal), which takes the lock,
// says so and keeps it until its stdin closes.
func TestJournalLockAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("CARRIER_TEST_LOCK_HOLDER"); dir != "" {
		j, err := OpenJournal(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		release, err := j.Lock("job1")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		release()
		fmt.Println("released")
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot run this test binary again: %v", err)
	}
	state := t.TempDir()
	j, err := OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command(exe, "-test.run=^TestJournalLockAcrossProcesses$")
	holder.Env = append(os.Environ(), "CARRIER_TEST_LOCK_HOLDER="+state)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "locked" {
		t.Fatalf("the holder says %q", lines.Text())
	}
	if release, err := j.Lock("job1"); !errors.Is(err, ErrBusy) {
		if err == nil {
			release()
		}
		t.Fatalf("a job locked by another process: Lock = %v, want ErrBusy", err)
	}
	stdin.Close()
	if !lines.Scan() || lines.Text() != "released" {
		t.Fatalf("the holder says %q", lines.Text())
	}
	holder.Wait()
	release, err := j.Lock("job1")
	if err != nil {
		t.Fatalf("after the other process let go: %v", err)
	}
	defer release()
	// And the other way round: the holder cannot take it from us.
	cmd := exec.Command(exe, "-test.run=^TestJournalLockAcrossProcesses$")
	cmd.Env = append(os.Environ(), "CARRIER_TEST_LOCK_HOLDER="+state)
	out, err := cmd.Output()
	if err == nil || !strings.Contains(string(out), ErrBusy.Error()) {
		t.Fatalf("another process took a job this one holds: %v, %s", err, out)
	}
}

// The change time moves when a file is rewritten with its size and
// modification time kept, where the system keeps one.
func TestChangeTimeMovesOnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	before := changeTimeOf(path, fi)
	if before.IsZero() {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
			t.Fatalf("no change time on %s", runtime.GOOS)
		}
		t.Skipf("%s keeps no change time Carrier reads", runtime.GOOS)
	}
	time.Sleep(20 * time.Millisecond)
	os.WriteFile(path, []byte("jello"), 0o600)
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	fi2, _ := os.Stat(path)
	if !fi2.ModTime().Equal(fi.ModTime()) || fi2.Size() != fi.Size() {
		t.Fatal("size or modification time not kept")
	}
	if after := changeTimeOf(path, fi2); after.Equal(before) {
		t.Errorf("change time kept at %v after a write", before)
	}
}
