package message

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Compose's copy goes in whole, comes back as written, is the person's
// alone, and goes when nil is saved; no temporary file is left.
func TestUnsentStoreKeepsCompose(t *testing.T) {
	state := t.TempDir()
	s := NewUnsentStore(state)
	if u, err := s.Load(); u != nil || err != nil {
		t.Fatalf("nothing kept yet: %v, %v", u, err)
	}
	want := &Unsent{Composed: Composed{To: []string{"zoe@example.com, Max <max@example.com>"}, Subject: "Plans", Text: "Line one.\n",
		Attachments: []string{"/home/a/plan.pdf"}, DraftID: "r7", Choose: map[string]bool{"/home/a/plan.pdf": true},
		Share: ShareAnyone, Expiry: 7 * 24 * time.Hour}, From: "home@example.com"}
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(state, "compose.json"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the copy's mode is %v", fi.Mode().Perm())
	}
	got, err := NewUnsentStore(state).Load()
	if err != nil || got == nil || got.To[0] != want.To[0] || got.Subject != "Plans" || got.Text != want.Text || got.From != want.From ||
		got.DraftID != "r7" || !got.Choose["/home/a/plan.pdf"] || got.Share != ShareAnyone || got.Expiry != want.Expiry || got.Attachments[0] != "/home/a/plan.pdf" {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if err := s.Save(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(nil); err != nil {
		t.Fatalf("removing what is gone: %v", err)
	}
	if names, _ := os.ReadDir(state); len(names) != 0 {
		t.Errorf("left in the folder: %v", names)
	}
}

// A copy that is not a message is set aside whole under a new name, and
// the next copy written beside it; one that cannot be read is left where
// it is and never written over.
func TestUnsentStoreLosesNothingDamaged(t *testing.T) {
	state := t.TempDir()
	path := filepath.Join(state, "compose.json")
	os.WriteFile(path, []byte("{\"Subject\":\"Pla"), 0o600)
	s := NewUnsentStore(state)
	_, err := s.Load()
	var ue *UnsentError
	if !errors.As(err, &ue) || ue.Kept == "" || !strings.Contains(err.Error(), ue.Kept) {
		t.Fatalf("a damaged copy: %v", err)
	}
	if data, _ := os.ReadFile(ue.Kept); string(data) != "{\"Subject\":\"Pla" {
		t.Fatalf("set aside: %q", data)
	}
	if err := s.Save(&Unsent{Composed: Composed{Subject: "New"}}); err != nil {
		t.Fatalf("after setting aside: %v", err)
	}

	// A folder in its place cannot be read as a file, by anyone.
	other := t.TempDir()
	path = filepath.Join(other, "compose.json")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	s = NewUnsentStore(other)
	if _, err := s.Load(); !errors.As(err, &ue) || ue.Kept != "" || ue.Path != path {
		t.Fatalf("an unreadable copy: %v", err)
	}
	if err := s.Save(&Unsent{Composed: Composed{Subject: "New"}}); !errors.As(err, &ue) {
		t.Fatalf("an unreadable copy was written over, or refused for another cause: %v", err)
	}
	if err := s.Save(nil); !errors.As(err, &ue) {
		t.Fatalf("an unreadable copy was removed: %v", err)
	}
}
