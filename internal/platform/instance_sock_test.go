//go:build linux || darwin

package platform

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// shortTempDir is a scratch folder with a short path: a socket's path
// must fit in 104 bytes on macOS, which t.TempDir's there may not.
func shortTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "cs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// macOS's hand-over, run here on Linux too: the first Carrier claims the
// data folder's socket, a second claim is ErrRunning, launches' items
// reach the window in order (a plain launch's as nothing), nothing goes
// to a window on other folders, and once the window lets go the next
// Carrier claims it.
func TestSocketHandsOverToTheWindow(t *testing.T) {
	data := filepath.Join(shortTempDir(t), "Carrier")
	first, err := claimSocket(data)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the data folder was made %v (%v), want 0700", fi.Mode(), err)
	}
	if again, err := claimSocket(data); !errors.Is(err, ErrRunning) {
		again.Close()
		t.Fatalf("a second claim on the same folder: %v, want ErrRunning", err)
	}
	if err := handOverSocket(data, []string{"file:///tmp/early.pdf"}); err != nil {
		t.Fatal(err)
	}
	got := make(chan []string, 8)
	first.Serve(func(items []string) { got <- items })
	next := func() []string {
		t.Helper()
		select {
		case items := <-got:
			return items
		case <-time.After(10 * time.Second):
			t.Fatal("nothing was handed over")
		}
		return nil
	}
	if items := next(); !reflect.DeepEqual(items, []string{"file:///tmp/early.pdf"}) {
		t.Errorf("the early hand-over gave %q", items)
	}
	items := []string{"file:///Users/zoe/a%20report.pdf", "/Users/zoe/b.jpg", "mailto:to@example.com?subject=S"}
	if err := handOverSocket(data, items); err != nil {
		t.Fatal(err)
	}
	if got := next(); !reflect.DeepEqual(got, items) {
		t.Errorf("handed over %q, want %q", got, items)
	}
	if err := handOverSocket(data, nil); err != nil {
		t.Fatal(err)
	}
	if got := next(); len(got) != 0 {
		t.Errorf("a plain launch handed %q", got)
	}
	if err := handOverSocket(filepath.Join(shortTempDir(t), "Other"), []string{"file:///tmp/x"}); err == nil {
		t.Error("handed over to a window on other folders")
	}
	first.Close()
	if err := handOverSocket(data, []string{"file:///tmp/x"}); err == nil {
		t.Error("handed over after the window closed")
	}
	then, err := claimSocket(data)
	if err != nil {
		t.Fatalf("the claim after the window closed: %v", err)
	}
	then.Close()
}

// A socket left by a Carrier that died (no lock held) is replaced by the
// next window's.
func TestSocketLeftByADeadWindowIsReplaced(t *testing.T) {
	data := filepath.Join(shortTempDir(t), "Carrier")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(data, sockName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	inst, err := claimSocket(data)
	if err != nil {
		t.Fatalf("claim over a dead window's socket: %v", err)
	}
	defer inst.Close()
	got := make(chan []string, 1)
	inst.Serve(func(items []string) { got <- items })
	if err := handOverSocket(data, []string{"/tmp/a"}); err != nil {
		t.Fatal(err)
	}
	if items := <-got; !reflect.DeepEqual(items, []string{"/tmp/a"}) {
		t.Errorf("handed %q", items)
	}
}

// A data folder others may enter gets no socket, and nothing is handed
// into one: the window opens alone.
func TestSocketOnlyInAPrivateFolder(t *testing.T) {
	data := shortTempDir(t)
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if inst, err := claimSocket(data); err == nil {
		inst.Close()
		t.Fatal("claimed a socket in a folder open to others")
	}
	if err := handOverSocket(data, []string{"/tmp/a"}); err == nil {
		t.Fatal("handed over into a folder open to others")
	}
}
