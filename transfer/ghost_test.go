package transfer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"carrier/sandbox"
)

// ghostOf pauses an upload once the server holds some of it, moves its
// file away and resumes it: the job must become a ghost, not fail.
func ghostOf(t *testing.T, h *harness, env *sbEnv, id, path string) (moved string) {
	t.Helper()
	pauseAfter(t, h, id, ChunkQuantum)
	env.sb.SetFaults("")
	moved = filepath.Join(t.TempDir(), "moved here.bin")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	if err := h.q.Resume(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	e := h.await(func(e Event) bool {
		return e.Job == id && (e.Kind == EventMissing || e.Kind == EventFailed || e.Kind == EventDone)
	})
	if e.Kind != EventMissing || e.Snap.State != StateMissing {
		t.Fatalf("a moved file's job: %s (%s), want a ghost", e, e.Snap.State)
	}
	if want := "the file is no longer at " + path; e.Snap.Error != want {
		t.Fatalf("its words: %q, want %q", e.Snap.Error, want)
	}
	return moved
}

// A file moved while its upload was interrupted: its job waits as a
// ghost, across a restart; a file of another size, or of the same size
// with other bytes where the server holds some, is refused and the job
// stays a ghost; the file where it now is resumes from the server's
// offset, in the same session, and the object is the file's bytes.
func TestSandboxGhostLocated(t *testing.T) {
	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{Faults: "rate=4MB"})
	state := t.TempDir()
	h := newHarness(t, Config{StateDir: state, Auth: StaticToken(sbToken)})
	path, data := writeFile(t, 12*Q+77)
	id := h.add(Spec{URL: env.objectURL("ghost"), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	moved := ghostOf(t, h, env, id, path)
	if s, err := h.q.Wait(ctxT(t), id); err != nil || s.State != StateMissing {
		t.Fatalf("Wait on a ghost: %s %v", s.State, err)
	}

	// A restart keeps it a ghost, even with `resume` of everything.
	h.q.Close()
	h = newHarness(t, Config{StateDir: state, Auth: StaticToken(sbToken)})
	if ids, err := h.q.ResumeJournal(true); err != nil || len(ids) != 1 {
		t.Fatalf("resume after the restart: %v %v", ids, err)
	}
	if s, _ := h.q.Job(id); s.State != StateMissing || s.Path != path {
		t.Fatalf("after a restart: %s at %s, want a ghost at %s", s.State, s.Path, path)
	}
	// The interrupted request's body may still be read by the server
	// (its rate fault reads slowly what the kernel buffered): what it
	// holds is counted once nothing more arrives.
	quiet := func() {
		for last, deadline := env.sb.Stats().BytesReceived, time.Now().Add(20*time.Second); time.Now().Before(deadline); {
			time.Sleep(300 * time.Millisecond)
			n := env.sb.Stats().BytesReceived
			if n == last {
				return
			}
			last = n
		}
		t.Fatal("the server kept receiving the interrupted request's bytes")
	}
	quiet()
	stored := env.sb.Stats().BytesStored
	if stored < Q || stored >= int64(len(data)) {
		t.Fatalf("the server holds %d bytes", stored)
	}

	// Other files are refused, in words, and nothing moves.
	dir := t.TempDir()
	shorter := filepath.Join(dir, "shorter.bin")
	os.WriteFile(shorter, data[:len(data)-1], 0o600)
	if err := h.q.Locate(ctxT(t), id, shorter); !errors.Is(err, ErrNotSameFile) || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("a file of another size: %v", err)
	}
	other := bytes.Clone(data)
	other[Q/2] ^= 1 // a byte the server holds
	otherPath := filepath.Join(dir, "other.bin")
	os.WriteFile(otherPath, other, 0o600)
	if err := h.q.Locate(ctxT(t), id, otherPath); !errors.Is(err, ErrNotSameFile) || !strings.Contains(err.Error(), "differ") {
		t.Errorf("a file of the same size and other bytes: %v", err)
	}
	if err := h.q.Locate(ctxT(t), id, filepath.Join(dir, "nothing here")); err == nil {
		t.Error("a path with no file was taken")
	}
	if s, _ := h.q.Job(id); s.State != StateMissing || s.Path != path {
		t.Fatalf("after the refusals: %s at %s", s.State, s.Path)
	}
	if rec, err := h.q.Journal().Load(id); err != nil || rec.State != StateMissing || rec.Path != path {
		t.Fatalf("the journal after the refusals: %v %v", rec, err)
	}

	before := env.sb.Stats()
	if err := h.q.Locate(ctxT(t), id, moved); err != nil {
		t.Fatal(err)
	}
	if rec, err := h.q.Journal().Load(id); err != nil || rec.Path != moved {
		t.Fatalf("the new path is not in the journal: %v %v", rec, err)
	}
	h.mustDone(id)
	if !bytes.Equal(env.readBack(t, "ghost"), data) {
		t.Fatal("the object's bytes are not the file's")
	}
	after := env.sb.Stats()
	if after.SessionsCreated != before.SessionsCreated || after.Completions != 1 {
		t.Errorf("sessions %d -> %d, completions %d: the ghost did not go on in its session", before.SessionsCreated, after.SessionsCreated, after.Completions)
	}
	if sent := after.BytesReceived - before.BytesReceived; sent != int64(len(data))-stored {
		t.Errorf("%d bytes went after Locate; the server held %d of %d, so %d were due", sent, stored, len(data), int64(len(data))-stored)
	}
	// Located once, the job is no ghost: Locate refuses to move it again.
	if err := h.q.Locate(ctxT(t), id, moved); !errors.Is(err, ErrNotMissing) {
		t.Errorf("Locate of a done job: %v", err)
	}
}

// Carrier's own files (a message's spool, whose SHA-256 its caller gives)
// are never ghosts: gone, the job fails as before.
func TestSandboxSpoolNeverGhost(t *testing.T) {
	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{Faults: "rate=4MB"})
	h := newHarness(t, Config{Auth: StaticToken(sbToken)})
	path, data := writeFile(t, 12*Q)
	id := h.add(Spec{URL: env.objectURL("spool"), ContentType: "message/rfc822", Path: path, ChunkSize: Q, SHA256: sha(data)})
	pauseAfter(t, h, id, Q)
	os.Remove(path)
	h.q.Resume(ctxT(t), id)
	e := h.await(func(e Event) bool { return e.Job == id && (e.Kind == EventMissing || e.Kind == EventFailed) })
	if e.Kind != EventFailed {
		t.Fatalf("a spool gone: %s (%s), want failed", e, e.Snap.State)
	}
}

// A job waiting for a ghost is blocked by it, in words, and Wait on it
// returns rather than wait for ever.
func TestGhostBlocksItsNeeders(t *testing.T) {
	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{Faults: "rate=4MB"})
	h := newHarness(t, Config{Auth: StaticToken(sbToken)})
	path, _ := writeFile(t, 12*Q)
	id := h.add(Spec{URL: env.objectURL("needed"), ContentType: "application/octet-stream", Path: path, ChunkSize: Q, Label: "the picture"})
	body, _ := writeFile(t, 10)
	needer := h.add(Spec{URL: env.objectURL("needer"), ContentType: "application/octet-stream", Path: body, Needs: []string{id}})
	ghostOf(t, h, env, id, path)
	s, err := h.q.Wait(ctxT(t), needer)
	if err != nil || s.State != StateWaiting || !strings.Contains(s.Blocked, "no longer where it was") {
		t.Fatalf("the job that needs a ghost: %s %q %v", s.State, s.Blocked, err)
	}
}

// ghostsLooked waits until no ghost's recorded path is being looked at.
func ghostsLooked(t *testing.T, q *Queue) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		q.mu.Lock()
		n := len(q.looking)
		q.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a ghost's path is still being looked at")
		}
	}
}

// A ghost whose file comes back where it was goes on by itself: not while
// nothing is there, nor while another file is (of the same size, with
// other bytes where the server holds some), whether the person asks to
// resume or retry it or the machine wakes; the same file back, a wake
// sends it on in its session, and the object is the file's bytes.
func TestSandboxGhostFoundWhereItWas(t *testing.T) {
	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{Faults: "rate=4MB"})
	h := newHarness(t, Config{Auth: StaticToken(sbToken)})
	path, data := writeFile(t, 12*Q+77)
	id := h.add(Spec{URL: env.objectURL("back"), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	moved := ghostOf(t, h, env, id, path)
	words := "the file is no longer at " + path
	stillGhost := func(how string) {
		t.Helper()
		if s, _ := h.q.Job(id); s.State != StateMissing || s.Path != path || s.Error != words {
			t.Fatalf("%s: %s at %s, %q; want a ghost at %s saying %q", how, s.State, s.Path, s.Error, path, words)
		}
	}

	if err := h.q.Resume(ctxT(t), id); !errors.Is(err, ErrSourceMissing) || !strings.Contains(err.Error(), path) {
		t.Errorf("Resume with nothing at the path: %v", err)
	}
	stillGhost("resumed with nothing there")

	other := bytes.Clone(data)
	other[Q/2] ^= 1 // a byte the server holds
	if err := os.WriteFile(path, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.q.Resume(ctxT(t), id); !errors.Is(err, ErrNotSameFile) {
		t.Errorf("Resume with another file at the path: %v", err)
	}
	if err := h.q.Retry(ctxT(t), id); !errors.Is(err, ErrNotSameFile) {
		t.Errorf("Retry with another file at the path: %v", err)
	}
	h.q.Wake()
	ghostsLooked(t, h.q)
	stillGhost("another file there")

	before := env.sb.Stats()
	if err := os.Rename(moved, path); err != nil {
		t.Fatal(err)
	}
	h.q.Wake()
	h.mustDone(id)
	if !bytes.Equal(env.readBack(t, "back"), data) {
		t.Fatal("the object's bytes are not the file's")
	}
	if after := env.sb.Stats(); after.SessionsCreated != before.SessionsCreated {
		t.Errorf("sessions %d -> %d: the ghost did not go on in its session", before.SessionsCreated, after.SessionsCreated)
	}
}

// A ghost whose file is back when Carrier starts again goes on as the
// queue takes it up; one Retry sends on after a start that left it in the
// journal does too.
func TestSandboxGhostFoundAtStart(t *testing.T) {
	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{Faults: "rate=4MB"})
	state := t.TempDir()
	h := newHarness(t, Config{StateDir: state, Auth: StaticToken(sbToken)})
	path, data := writeFile(t, 12*Q+77)
	id := h.add(Spec{URL: env.objectURL("start"), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	path2, data2 := writeFile(t, 9*Q)
	id2 := h.add(Spec{URL: env.objectURL("retried"), ContentType: "application/octet-stream", Path: path2, ChunkSize: Q})
	moved := ghostOf(t, h, env, id, path)
	moved2 := ghostOf(t, h, env, id2, path2)
	h.q.Close()
	if err := os.Rename(moved, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(moved2, path2); err != nil {
		t.Fatal(err)
	}

	h = newHarness(t, Config{StateDir: state, Auth: StaticToken(sbToken), Workers: 1})
	if _, err := h.q.ResumeJournalExcept(false, []string{id2}); err != nil {
		t.Fatal(err)
	}
	h.mustDone(id)
	if !bytes.Equal(env.readBack(t, "start"), data) {
		t.Fatal("the object's bytes are not the file's")
	}
	// id2, left in the journal: the person's Retry takes it and finds it.
	if err := h.q.Retry(ctxT(t), id2); err != nil {
		t.Fatal(err)
	}
	h.mustDone(id2)
	if !bytes.Equal(env.readBack(t, "retried"), data2) {
		t.Fatal("the retried object's bytes are not the file's")
	}
}
