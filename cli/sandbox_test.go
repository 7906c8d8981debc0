package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"carrier/internal/app"
)

// startSandbox runs `carrier sandbox` in-process and returns its first
// stdout lines once it serves.
func startSandbox(t *testing.T, args ...string) (url, token string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, &Env{Stdout: pw, Stderr: &lockedWriter{w: &stderr}}, append([]string{"sandbox"}, args...))
		pw.Close()
		done <- code
	}()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case url = <-lines:
	case <-time.After(10 * time.Second):
		t.Fatal("carrier sandbox printed nothing")
	}
	if slices.ContainsFunc(args, func(a string) bool { return a == "--token" || strings.HasPrefix(a, "--token=") }) {
		token = ""
	} else {
		tl := <-lines
		token, _ = strings.CutPrefix(tl, "token: ")
	}
	return url, token, func() (int, string) {
		cancel()
		select {
		case code := <-done:
			return code, stderr.String()
		case <-time.After(10 * time.Second):
			t.Fatal("carrier sandbox did not stop")
			return 0, ""
		}
	}
}

func TestSandboxCommand(t *testing.T) {
	dir := t.TempDir()
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", dir)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q is not the base URL", url)
	}
	if len(token) < 20 {
		t.Fatalf("generated token %q", token)
	}
	req, _ := http.NewRequest("GET", url+"/gmail/v1/users/me/profile", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("profile through the printed token: %v %v", r, err)
	}
	r.Body.Close()

	// A second sandbox on the same folder names the first.
	var out, errOut bytes.Buffer
	code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, []string{"sandbox", "--addr", "127.0.0.1:0", "--data", dir, "--token", "x"})
	if code != 1 || !strings.Contains(errOut.String(), "already runs on "+dir) || !strings.Contains(errOut.String(), url) {
		t.Fatalf("second sandbox: exit %d, %q", code, errOut.String())
	}
	if code, logs := stop(); code != 0 || strings.Contains(logs, token) {
		t.Fatalf("exit %d; logs hold the token: %v", code, strings.Contains(logs, token))
	}
}

func TestSandboxCommandRefusals(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--addr", "0.0.0.0:8089"}, 2, "not a loopback address"},
		{[]string{"--faults", "reset=3"}, 2, "probability"},
		{[]string{"--session-ttl", "-1h"}, 2, "positive"},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
		{[]string{"extra"}, 2, "unexpected argument"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, append([]string{"sandbox", "--data", t.TempDir()}, c.args...))
		if code != c.code || !strings.Contains(errOut.String(), c.msg) {
			t.Errorf("%v: exit %d, %q", c.args, code, errOut.String())
		}
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if code := Main(context.Background(), &Env{Stdout: &out, Stderr: &out}, nil); code != 0 || !strings.Contains(out.String(), "sandbox") {
		t.Fatalf("usage: %d %q", code, out.String())
	}
	out.Reset()
	if code := Main(context.Background(), &Env{Stdout: &out, Stderr: &out}, []string{"frobnicate"}); code != 2 || !strings.Contains(out.String(), "unknown command") {
		t.Fatalf("unknown command: %d %q", code, out.String())
	}
	out.Reset()
	if code := Main(context.Background(), &Env{Stdout: &out, Stderr: &out}, []string{"--version"}); code != 0 || !strings.HasPrefix(out.String(), "carrier "+app.Version+" ") {
		t.Fatalf("--version: %d %q", code, out.String())
	}
}
