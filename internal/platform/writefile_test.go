package platform

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// WriteFile leaves the new content whole at the path, private, with no
// temporary file beside it; a write that cannot be put in place leaves the
// old content and no temporary file either.
func TestWriteFileReplacesWholeAndPrivately(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for _, want := range []string{`{"n":1}`, `{"n":2,"longer":true}`, `{}`} {
		if err := WriteFile(p, []byte(want)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Fatalf("after writing %s: %q, %v", want, got, err)
		}
		if fi, err := os.Stat(p); err != nil {
			t.Fatal(err)
		} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("the folder holds %d entries, want the file alone: %v", len(es), es)
	}

	// A folder where the file should go: the move fails.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(blocked, []byte("x")); err == nil {
		t.Fatal("writing over a folder that is not empty succeeded")
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Errorf("after a failed write the folder holds %v, want the file and the folder", es)
	}
	if got, _ := os.ReadFile(p); string(got) != `{}` {
		t.Errorf("a failed write elsewhere changed the file: %q", got)
	}
}

// WriteStream puts what its writer wrote at the path, even under a name
// as long as the system allows (its temporary file is named short); a
// writer that fails leaves the old content and no temporary file.
func TestWriteStreamWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("n", 250))
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteStream(long, write("first")); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("cut short")
	err := WriteStream(long, func(w io.Writer) error { io.WriteString(w, "sec"); return failed })
	if !errors.Is(err, failed) {
		t.Fatalf("a failed writer: %v", err)
	}
	if got, _ := os.ReadFile(long); string(got) != "first" {
		t.Fatalf("after a failed write the file holds %q", got)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Fatalf("the folder holds %d files, want the one", len(names))
	}
}
