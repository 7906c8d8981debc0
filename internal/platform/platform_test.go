package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A private folder is its owner's alone, and so is what is made in it
// afterwards (on Windows by inheritance, as files there are created
// without a mode that means anything).
func TestPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "jobs")
	if err := MkdirPrivate(dir); err != nil {
		t.Fatal(err)
	}
	if err := Private(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file made private")
	}
	if ok, desc := ownerOnly(t, dir); !ok {
		t.Fatalf("folder: %s", desc)
	}
	f := filepath.Join(dir, "record")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, desc := ownerOnly(t, f); !ok {
		t.Fatalf("file made in a private folder: %s", desc)
	}
	g := filepath.Join(t.TempDir(), "loose")
	os.WriteFile(g, []byte("x"), 0o644)
	if err := Private(g); err != nil {
		t.Fatal(err)
	}
	if ok, desc := ownerOnly(t, g); !ok {
		t.Fatalf("file: %s", desc)
	}
}

func TestDirs(t *testing.T) {
	for name, d := range map[string]string{"data": DataDir(), "state": StateDir()} {
		if !filepath.IsAbs(d) || !strings.Contains(strings.ToLower(d), "carrier") {
			t.Errorf("%s folder %q", name, d)
		}
	}
	if DataDir() == StateDir() {
		t.Error("the journal must not share the data folder itself")
	}
}
