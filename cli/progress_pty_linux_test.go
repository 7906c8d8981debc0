//go:build linux

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal: the master to read what was drawn, the
// slave to hand the command as its stderr.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open slave: %v", err)
	}
	return m, s
}

// uploadTo runs `carrier upload` in-process with stderr on w, reading the
// other end (r) while it runs so the writes never block, and returns what
// was read once w is closed.
func uploadTo(t *testing.T, r, w *os.File) string {
	t.Helper()
	_, base := uploadSandbox(t, "")
	path, _ := randomFile(t, 4*262144+1000)
	read := make(chan string)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, r) // a pty's master reads EIO once the slave is closed
		read <- b.String()
	}()
	var out bytes.Buffer
	args := []string{"upload", "--url", base + "/upload/storage/v1/b/cli-test/o?name=pty", "--file", path,
		"--content-type", "application/octet-stream", "--chunk-size", "262144",
		"--state-dir", t.TempDir(), "--token", testToken}
	code := Main(context.Background(), &Env{Stdout: &out, Stderr: w}, args)
	w.Close()
	got := <-read
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, got)
	}
	return got
}

// Issue 33: on a terminal the CLI draws its bar, redrawn in place (a
// carriage return and erase-line before each drawing). runQueue wraps
// stderr in a lock before the printer looks at it, and the printer took
// the wrapper for "not a terminal", printing log lines instead.
func TestProgressBarOnATerminal(t *testing.T) {
	master, slave := openPty(t)
	defer master.Close()
	got := uploadTo(t, master, slave)
	if !strings.Contains(got, "\r\033[K") {
		t.Fatalf("no bar drawn on the terminal:\n%q", got)
	}
	for _, l := range strings.Split(got, "\r\n") {
		if strings.Contains(l, "confirmed by the server (") && !strings.Contains(l, "\r\033[K[") {
			t.Errorf("a log line on the terminal: %q", l)
		}
	}
	if !strings.Contains(got, "done,") {
		t.Errorf("no done line:\n%q", got)
	}
}

// The same upload into a pipe (a log file, a CI job) prints lines and
// never the bar's control characters.
func TestProgressLinesOnAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := uploadTo(t, r, w)
	if strings.Contains(got, "\r") || strings.Contains(got, "\033[") {
		t.Fatalf("terminal control characters in a pipe:\n%q", got)
	}
	if !strings.Contains(got, "started (") || !strings.Contains(got, "done,") {
		t.Fatalf("no log lines:\n%q", got)
	}
}
