package platform

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file another Carrier is reading is replaced once it lets go: on
// Windows the move is refused while the reader holds the file open.
func TestReplaceFileWaitsForAReader(t *testing.T) {
	dir := t.TempDir()
	to, from := filepath.Join(dir, "accounts-changed"), filepath.Join(dir, "accounts-changed.tmp")
	if err := os.WriteFile(to, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(from, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(to)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(40 * time.Millisecond) // a read that takes a moment
		reader.Close()
	}()
	err = ReplaceFile(from, to)
	<-done
	if err != nil {
		t.Fatalf("the move while a reader held the file: %v", err)
	}
	if b, _ := os.ReadFile(to); string(b) != "new" {
		t.Fatalf("the file holds %q", b)
	}
}
