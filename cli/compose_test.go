package cli

import (
	"bytes"
	"context"
	"net/mail"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestComposeCommand(t *testing.T) {
	dir := t.TempDir()
	att := filepath.Join(dir, "notes.txt")
	os.WriteFile(att, []byte("attached"), 0o600)
	out := filepath.Join(dir, "m.eml")
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader("body from stdin\n"), Stdout: &stdout, Stderr: &stderr}
	code := Main(context.Background(), env, []string{"compose", "--to", "a@example.com", "--to", "b@example.com", "--subject", "Hi",
		"--body-file", "-", "--attach", att, "--out", out})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil || msg.Header.Get("Subject") != "Hi" || !strings.Contains(msg.Header.Get("To"), "b@example.com") {
		t.Fatalf("message: %v %v", msg.Header, err)
	}
	if fi, _ := os.Stat(out); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 { // mode bits are Unix's
		t.Fatalf("mode %v", fi.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "msg-*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	cases := []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"--to", "a@example.com"}, 2, "--out"},
		{[]string{"--to", "nope", "--out", out}, 1, "not an address"},
		{[]string{"--to", "a@example.com", "--subject", "x\ny", "--out", out}, 1, "single line"},
		{[]string{"--to", "a@example.com", "--attach", filepath.Join(dir, "missing.pdf"), "--out", out}, 1, "missing.pdf"},
		{[]string{"--to", "a@example.com", "--as", "fax", "--out", out}, 2, "unknown method"},
		{[]string{"--to", "a@example.com", "--body", "x", "--body-file", att, "--out", out}, 2, "not both"},
	}
	for _, c := range cases {
		stderr.Reset()
		code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, append([]string{"compose"}, c.args...))
		if code != c.code || !strings.Contains(stderr.String(), c.say) {
			t.Errorf("%v: exit %d, %q", c.args, code, stderr.String())
		}
	}
}
