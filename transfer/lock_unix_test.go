//go:build unix

package transfer

import (
	"os"
	"path/filepath"
	"testing"
)

// A job's lock is a bare descriptor (lockFile): its release closes it
// once, so a second release cannot close the file that took its number
// since.
func TestLockReleaseClosesOnce(t *testing.T) {
	dir := t.TempDir()
	release, err := lockFile(filepath.Join(dir, "a.lock"))
	if err != nil {
		t.Fatal(err)
	}
	release()
	// The descriptor's number is the lowest free one: the next file
	// opened takes it.
	f, err := os.Create(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	release()
	if _, err := f.Write([]byte("still open")); err != nil {
		t.Fatalf("a second release closed another file: %v", err)
	}
	// Released, the lock is free for the next holder.
	again, err := lockFile(filepath.Join(dir, "a.lock"))
	if err != nil {
		t.Fatalf("the lock after its release: %v", err)
	}
	again()
}
