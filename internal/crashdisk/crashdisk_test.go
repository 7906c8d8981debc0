package crashdisk

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"carrier/internal/platform"
)

func record(t *testing.T, write func(dir string)) (*Recorder, []Op) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the model is Linux's")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Record(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(dir)
	r.Stop()
	ops := r.Ops()
	if u := r.Unseen(ops); len(u) > 0 {
		t.Fatalf("the recorder missed %v: %v", u, ops)
	}
	return r, ops
}

// contents gives what f holds in each state a cut after each step could
// leave ("" when there is none).
func contents(r *Recorder, ops []Op) map[string]bool {
	out := map[string]bool{}
	for cut := 0; cut <= len(ops); cut++ {
		for _, s := range r.States(ops, cut, 1<<12) {
			if f := s.Files["f"]; f != nil {
				out[string(f.Data)] = true
			} else {
				out[""] = true
			}
		}
	}
	return out
}

// platform.WriteFile replaces a file whole, whatever the cut: the old
// bytes or the new, never a part, never none; and the new for good once
// it returned.
func TestWriteFileIsWholeAtEveryCut(t *testing.T) {
	r, ops := record(t, func(dir string) {
		if err := platform.WriteFile(filepath.Join(dir, "f"), []byte("new bytes")); err != nil {
			t.Fatal(err)
		}
	})
	got := contents(r, ops)
	if len(got) != 2 || !got["old"] || !got["new bytes"] {
		t.Errorf("the file after a cut holds one of %q, want only the old or the new", keys(got))
	}
	for _, s := range r.States(ops, len(ops), 1<<12) {
		if f := s.Files["f"]; f == nil || !bytes.Equal(f.Data, []byte("new bytes")) {
			t.Errorf("a cut after WriteFile returned, which lost %v, undoes it", s.Lost)
		}
	}
}

// A write renamed over a file without a sync before (the mistake the
// model exists to catch) can leave the name on a torn or empty file.
func TestAWriteNotSyncedBeforeItsRenameCanBeTorn(t *testing.T) {
	r, ops := record(t, func(dir string) {
		f, err := platform.CreateTemp(dir, "f.*.tmp")
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("new bytes"))
		f.Close()
		if err := platform.Rename(f.Name(), filepath.Join(dir, "f")); err != nil {
			t.Fatal(err)
		}
		if err := platform.SyncDir(dir); err != nil {
			t.Fatal(err)
		}
	})
	got := contents(r, ops)
	if !got["new "] || !got["new bytes"] {
		t.Errorf("no cut tears the file or empties it: it holds one of %q", keys(got))
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
