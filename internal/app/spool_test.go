package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func touch(t *testing.T, path string, age time.Duration) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	return path
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// Release takes the spool's own files and nothing else: a job's file
// elsewhere is the person's.
func TestReleaseOnlyTakesSpoolFiles(t *testing.T) {
	dir := t.TempDir()
	s := NewSpool(filepath.Join(dir, "spool"))
	os.MkdirAll(s.Dir(), 0o700)
	own := touch(t, filepath.Join(s.Dir(), "msg-1.eml"), 0)
	mine := touch(t, filepath.Join(dir, "holiday.png"), 0)
	os.MkdirAll(filepath.Join(s.Dir(), "sub"), 0o700)
	deeper := touch(t, filepath.Join(s.Dir(), "sub", "msg-2.eml"), 0)
	for _, p := range []string{mine, deeper, filepath.Join(s.Dir(), "..", "holiday.png"), "spool/msg-1.eml", ""} {
		if err := s.Release(p); err != nil {
			t.Errorf("release %q: %v", p, err)
		}
	}
	if !exists(mine) || !exists(deeper) || !exists(own) {
		t.Fatal("Release removed a file that is not the spool's own")
	}
	if err := s.Release(own); err != nil || exists(own) {
		t.Fatalf("the spool's file was kept: %v", err)
	}
	if err := s.Release(own); err != nil {
		t.Fatalf("a file already gone: %v", err)
	}
}

func TestSweepTakesOnlyWhatNoJobNeeds(t *testing.T) {
	s := NewSpool(t.TempDir())
	old, young := 2*SweepGrace, SweepGrace/2
	var (
		needed      = touch(t, filepath.Join(s.Dir(), "msg-needed.eml"), old)
		orphan      = touch(t, filepath.Join(s.Dir(), "msg-orphan.eml"), old)
		leftover    = touch(t, filepath.Join(s.Dir(), "msg-crash.eml.tmp"), old)
		newOrphan   = touch(t, filepath.Join(s.Dir(), "msg-other-process.eml"), young)
		newLeftover = touch(t, filepath.Join(s.Dir(), "msg-being-built.eml.tmp"), young)
	)
	os.Mkdir(filepath.Join(s.Dir(), "folder"), 0o700)
	removed, err := s.Sweep(func(p string) bool { return p == needed })
	slices.Sort(removed)
	if err != nil || !slices.Equal(removed, []string{leftover, orphan}) {
		t.Fatalf("removed %v, %v", removed, err)
	}
	for _, p := range []string{needed, newOrphan, newLeftover, filepath.Join(s.Dir(), "folder")} {
		if !exists(p) {
			t.Errorf("%s was swept", filepath.Base(p))
		}
	}
	// A journal that could not be read whole: only leftovers go.
	other := touch(t, filepath.Join(s.Dir(), "msg-unknown.eml"), old)
	leftover = touch(t, filepath.Join(s.Dir(), "msg-crash.eml.tmp"), old)
	if removed, err := s.Sweep(nil); err != nil || !slices.Equal(removed, []string{leftover}) || !exists(other) {
		t.Fatalf("with no journal: removed %v, %v", removed, err)
	}
	if removed, err := NewSpool(filepath.Join(t.TempDir(), "none")).Sweep(nil); err != nil || removed != nil {
		t.Fatalf("no spool folder yet: %v %v", removed, err)
	}
}
