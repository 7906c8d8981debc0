package app

import (
	"carrier/internal/app/message"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A long mail link left in a file by Carrier's MAPI DLL is read once and
// removed; a file elsewhere, a link in the folder's place, a file too long
// for a link or one that holds no link is refused, and a file outside the
// folder is never removed.
func TestReadMailLinkFile(t *testing.T) {
	data := t.TempDir()
	dir := MailLinksDir(data)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) string {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kind := func(err error) message.OpenRefusalKind {
		var r *message.OpenRefusal
		if !errors.As(err, &r) {
			t.Fatalf("not a refusal: %v", err)
		}
		return r.Kind
	}
	link := "mailto:zoe@example.com?subject=Long&body=" + strings.Repeat("a", 40000) + "&attach=file%3A%2F%2F%2FC%3A%2Fa.pdf"
	p := write(filepath.Join(dir, "20261128-101010-42-1.txt"), link+"\r\n")
	got, err := ReadMailLinkFile(data, p)
	if err != nil || got != link {
		t.Fatalf("read %d bytes, %v; want the link of %d", len(got), err, len(link))
	}
	if exists(p) {
		t.Error("the link's file is still there once read")
	}
	if _, err := ReadMailLinkFile(data, p); kind(err) != message.RefusedLinkFile {
		t.Errorf("read twice: %v", err)
	}

	elsewhere := write(filepath.Join(data, "link.txt"), link)
	if _, err := ReadMailLinkFile(data, elsewhere); kind(err) != message.RefusedLinkFile {
		t.Errorf("a file outside the folder: %v", err)
	}
	if !exists(elsewhere) {
		t.Error("a file outside the folder was removed")
	}
	if _, err := ReadMailLinkFile(data, filepath.Join(dir, "..", "link.txt")); kind(err) != message.RefusedLinkFile {
		t.Errorf("a path with .. out of the folder: %v", err)
	}

	long := write(filepath.Join(dir, "long.txt"), "mailto:?body="+strings.Repeat("a", message.MaxMailtoURL))
	if _, err := ReadMailLinkFile(data, long); kind(err) != message.RefusedTooLong {
		t.Errorf("a file longer than a link: %v", err)
	}
	if exists(long) {
		t.Error("a file refused for its length is still there")
	}
	notLink := write(filepath.Join(dir, "not.txt"), "https://example.com/")
	if _, err := ReadMailLinkFile(data, notLink); kind(err) != message.RefusedMalformed {
		t.Errorf("a file that holds no mail link: %v", err)
	}

	if runtime.GOOS == "windows" {
		return // links need privileges there
	}
	// A link in the file's place is not followed, nor removed; nor is a
	// folder that is a link.
	secret := write(filepath.Join(t.TempDir(), "secret"), "mailto:?body=secret")
	ln := filepath.Join(dir, "ln.txt")
	os.Symlink(secret, ln)
	if _, err := ReadMailLinkFile(data, ln); kind(err) != message.RefusedLinkFile || !exists(secret) || !exists(ln) {
		t.Errorf("a link in the folder: %v", err)
	}
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, "real"), 0o700)
	write(filepath.Join(other, "real", "a.txt"), link)
	os.Symlink(filepath.Join(other, "real"), MailLinksDir(other))
	if _, err := ReadMailLinkFile(other, filepath.Join(MailLinksDir(other), "a.txt")); kind(err) != message.RefusedLinkFile {
		t.Errorf("a folder that is a link: %v", err)
	}
}
