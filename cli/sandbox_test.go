package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"carrier/internal/app"

	"carrier/internal/syncio"
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
		code := Main(ctx, &Env{Stdout: pw, Stderr: &syncio.Writer{W: &stderr}}, append([]string{"sandbox"}, args...))
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

// TestSandboxCommandSignInLifecycles: the flags reach the sandbox's
// sign-in rules and accounts.
func TestSandboxCommandSignInLifecycles(t *testing.T) {
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--refresh-token-ttl", "168h",
		"--refresh-token-limit", "5", "--session-needs-token", "--account", "work@carrier.sandbox")
	defer stop()
	get := func(path string) string {
		req, _ := http.NewRequest("GET", url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		r, err := http.DefaultClient.Do(req)
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, r, err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b)
	}
	auth := strings.Join(strings.Fields(get("/sandbox/v1/auth")), " ")
	for _, want := range []string{`"refreshTokenTTL": "168h0m0s"`, `"refreshTokenLimit": 5`, `"sessionNeedsToken": true`} {
		if !strings.Contains(auth, want) {
			t.Errorf("sign-in rules %s lack %s", auth, want)
		}
	}
	if accts := get("/sandbox/v1/accounts"); !strings.Contains(accts, "work@carrier.sandbox") {
		t.Errorf("accounts: %s", accts)
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
		{[]string{"--refresh-token-ttl", "-1h"}, 2, "--refresh-token-ttl cannot be negative"},
		{[]string{"--refresh-token-limit", "0"}, 2, "--refresh-token-limit must be positive"},
		{[]string{"--account", "not an address"}, 1, "is not an address the sandbox can keep"},
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

// Issue 33: --serialize-sessions reaches the sandbox (GET /sandbox/v1/sessions).
func TestSandboxCommandSerializeSessions(t *testing.T) {
	for _, on := range []bool{false, true} {
		args := []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}
		if on {
			args = append(args, "--serialize-sessions")
		}
		url, token, stop := startSandbox(t, args...)
		req, _ := http.NewRequest("GET", url+"/sandbox/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if want := fmt.Sprintf(`"serialize": %v`, on); r.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("--serialize-sessions given %v: %d %s", on, r.StatusCode, b)
		}
		stop()
	}
}
