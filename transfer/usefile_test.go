package transfer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"carrier/sandbox"
)

// changedOf pauses an upload once the server holds some of it, sets its
// file's modification time later (saved again, the same bytes) and
// resumes it: the job must stop for good as a changed file.
func changedOf(t *testing.T, h *harness, env *sbEnv, id, path string) {
	t.Helper()
	pauseAfter(t, h, id, ChunkQuantum)
	env.sb.SetFaults("")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if err := h.q.Resume(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	e := h.await(func(e Event) bool {
		return e.Job == id && (e.Kind == EventFailed || e.Kind == EventDone || e.Kind == EventMissing)
	})
	if e.Kind != EventFailed || e.Snap.Failure == nil || e.Snap.Failure.Code != FailSourceChanged || e.Snap.Failure.Reason != ChangedModified {
		t.Fatalf("a file saved again: %s (%+v), want a failure for its modification time", e, e.Snap.Failure)
	}
}

// A file saved again with the same bytes after its upload began stops its
// job (Retry stops it the same way: the times compared are the queued
// ones); UseFile takes the file as it is now only when it holds the bytes
// the server holds (its size, and the hash of the prefix sent), and the
// job goes on from the server's offset in the same session. CheckFile
// tells the same beforehand, changing nothing.
func TestSandboxChangedFileUsedAgain(t *testing.T) {
	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{Faults: "rate=4MB"})
	h := newHarness(t, Config{Auth: StaticToken(sbToken)})
	path, data := writeFile(t, 12*Q+77)
	id := h.add(Spec{URL: env.objectURL("used"), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	changedOf(t, h, env, id, path)

	// Retry alone cannot mend it.
	if err := h.q.Retry(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	e := h.await(func(e Event) bool { return e.Job == id && (e.Kind == EventFailed || e.Kind == EventDone) })
	if e.Kind != EventFailed || e.Snap.Failure == nil || e.Snap.Failure.Code != FailSourceChanged {
		t.Fatalf("Retry of a changed file: %s, want it stopped again", e)
	}

	// Other files are refused, in words, and nothing moves.
	dir := t.TempDir()
	shorter := filepath.Join(dir, "shorter.bin")
	os.WriteFile(shorter, data[:len(data)-1], 0o600)
	other := bytes.Clone(data)
	other[Q/2] ^= 1 // a byte the server holds
	otherPath := filepath.Join(dir, "other.bin")
	os.WriteFile(otherPath, other, 0o600)
	for _, p := range []string{shorter, otherPath} {
		if err := h.q.CheckFile(ctxT(t), id, p); !errors.Is(err, ErrNotSameFile) {
			t.Errorf("CheckFile of %s: %v, want ErrNotSameFile", filepath.Base(p), err)
		}
		if err := h.q.UseFile(ctxT(t), id, p); !errors.Is(err, ErrNotSameFile) {
			t.Errorf("UseFile of %s: %v, want ErrNotSameFile", filepath.Base(p), err)
		}
	}
	if rec, err := h.q.Journal().Load(id); err != nil || rec.State != StateFailed || rec.Path != path {
		t.Fatalf("the journal after the refusals: %v %v", rec, err)
	}

	if err := h.q.CheckFile(ctxT(t), id, path); err != nil {
		t.Fatalf("CheckFile of the same bytes: %v", err)
	}
	stored := env.sb.Stats().BytesStored
	before := env.sb.Stats()
	if err := h.q.UseFile(ctxT(t), id, path); err != nil {
		t.Fatal(err)
	}
	h.mustDone(id)
	if !bytes.Equal(env.readBack(t, "used"), data) {
		t.Fatal("the object's bytes are not the file's")
	}
	after := env.sb.Stats()
	if after.SessionsCreated != before.SessionsCreated || after.Completions != 1 {
		t.Errorf("sessions %d -> %d, completions %d: the job did not go on in its session", before.SessionsCreated, after.SessionsCreated, after.Completions)
	}
	if sent := after.BytesReceived - before.BytesReceived; sent > int64(len(data))-stored {
		t.Errorf("%d bytes went after UseFile; the server held %d of %d, so at most %d were due", sent, stored, len(data), int64(len(data))-stored)
	}
	// Done, there is no changed file to accept.
	if err := h.q.CheckFile(ctxT(t), id, path); !errors.Is(err, ErrNotChanged) {
		t.Errorf("CheckFile of a done job: %v, want ErrNotChanged", err)
	}
	if err := h.q.UseFile(ctxT(t), id, path); !errors.Is(err, ErrNotChanged) {
		t.Errorf("UseFile of a done job: %v, want ErrNotChanged", err)
	}
}

// A file changed in bytes the server holds is never taken: the job stays
// stopped, and its record keeps the queued times.
func TestSandboxChangedFileOtherBytesRefused(t *testing.T) {
	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{Faults: "rate=4MB"})
	h := newHarness(t, Config{Auth: StaticToken(sbToken)})
	path, data := writeFile(t, 12*Q+77)
	id := h.add(Spec{URL: env.objectURL("refused"), ContentType: "application/octet-stream", Path: path, ChunkSize: Q})
	changedOf(t, h, env, id, path)
	was, err := h.q.Journal().Load(id)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Clone(data)
	other[0] ^= 1
	if err := os.WriteFile(path, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.q.CheckFile(ctxT(t), id, path); !errors.Is(err, ErrNotSameFile) {
		t.Errorf("CheckFile of other bytes: %v", err)
	}
	if err := h.q.UseFile(ctxT(t), id, path); !errors.Is(err, ErrNotSameFile) {
		t.Errorf("UseFile of other bytes: %v", err)
	}
	rec, err := h.q.Journal().Load(id)
	if err != nil || rec.State != StateFailed || !rec.ModTime.Equal(was.ModTime) {
		t.Fatalf("after the refusal: %v %v, want it failed with its queued time", rec, err)
	}
}
