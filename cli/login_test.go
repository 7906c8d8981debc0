package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/auth"
	"carrier/sandbox"

	"carrier/internal/syncio"
)

func mockKeyring(t *testing.T) {
	t.Helper()
	if realKeyring {
		t.Skip("uses go-keyring's mock; this build (-tags keyring) tests the real keychain")
	}
	keyring.MockInit()
}

var (
	consentForm = regexp.MustCompile(`<form method="post" action="([^"]+)"><input type="hidden" name="id" value="([^"]+)">`)
	allowButton = regexp.MustCompile(`<button id="allow" name="decision" value="allow">`)
)

// visit plays the browser for an address `carrier login` printed: it
// presses Allow on the consent page when there is one, then follows the
// redirect to Carrier's listener, and returns the page shown there.
func visit(authURL string) (string, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	r, err := client.Get(authURL)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if m := consentForm.FindSubmatch(body); m != nil && allowButton.Match(body) {
		next, _ := r.Request.URL.Parse(html.UnescapeString(string(m[1])))
		form := url.Values{"id": {html.UnescapeString(string(m[2]))}, "decision": {"allow"}}
		req, _ := http.NewRequest(http.MethodPost, next.String(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", next.Scheme+"://"+next.Host)
		if r, err = client.Do(req); err != nil {
			return "", err
		}
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	if r.StatusCode != 200 || r.Request.URL.Hostname() != "127.0.0.1" {
		return "", fmt.Errorf("the browser ended at %s with %s", r.Request.URL.Redacted(), r.Status)
	}
	return string(body), nil
}

// runLogin runs `carrier login --no-browser ARGS` and opens the address it
// prints, as a person would.
func runLoginCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	pr, pw := io.Pipe()
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), &Env{Stdout: pw, Stderr: &syncio.Writer{W: &errOut}}, append([]string{"login", "--no-browser"}, args...))
		pw.Close()
	}()
	var out strings.Builder
	pages := make(chan string, 1)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if strings.HasPrefix(line, "http") {
			go func() {
				page, err := visit(line)
				if err != nil {
					page = "error: " + err.Error()
				}
				pages <- page
			}()
		}
	}
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("carrier login did not end")
	}
	if strings.Contains(out.String(), "\nhttp") || strings.HasPrefix(out.String(), "http") {
		if page := <-pages; !strings.Contains(page, "close this window") {
			t.Errorf("browser page: %s", page)
		}
	}
	return code, out.String(), errOut.String()
}

func runCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

// signInOutCLI is the whole story through the commands: login, whoami,
// whoami --check, logout, and whoami again. It returns the tokens seen,
// for the caller to look for where they must not be.
func signInOutCLI(t *testing.T, url string, keychainHas func(present bool)) []string {
	t.Helper()
	code, out, errOut := runLoginCLI(t, "--endpoint", url)
	if code != 0 || !strings.Contains(out, "Signed in as "+sandbox.DefaultAccount+" at "+url+"; Carrier may: send.") {
		t.Fatalf("login: exit %d\n%s\n%s", code, out, errOut)
	}
	keychainHas(true)
	acct, err := auth.Load(url)
	if err != nil {
		t.Fatal(err)
	}
	first, err := acct.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCmd("whoami", "--endpoint", url); code != 0 || !strings.HasPrefix(out, sandbox.DefaultAccount+" at "+url) {
		t.Fatalf("whoami: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runCmd("whoami", "--endpoint", url, "--check"); code != 0 || !strings.Contains(out, "The server accepts the sign-in") {
		t.Fatalf("whoami --check: %d %q %q", code, out, errOut)
	}
	again, _ := auth.Load(url)
	second, err := again.Token(context.Background())
	if err != nil || second.AccessToken == first.AccessToken {
		t.Fatalf("whoami --check did not save a new access token: %v", err)
	}
	// Login again asking for more keeps what was granted.
	if code, out, errOut := runLoginCLI(t, "--endpoint", url, "--for", "timeline"); code != 0 || !strings.Contains(out, "Carrier may: send, timeline.") {
		t.Fatalf("second login: exit %d\n%s\n%s", code, out, errOut)
	}
	third, _ := auth.Load(url)
	tok3, _ := third.Token(context.Background())
	if code, out, errOut := runCmd("logout", "--endpoint", url); code != 0 || out != "Signed out "+sandbox.DefaultAccount+" at "+url+".\n" || errOut != "" {
		t.Fatalf("logout: %d %q %q", code, out, errOut)
	}
	keychainHas(false)
	if code, _, errOut := runCmd("whoami", "--endpoint", url); code != 1 || !strings.Contains(errOut, "no account is signed in") || !strings.Contains(errOut, "carrier login --endpoint "+url) {
		t.Fatalf("whoami after logout: %d %q", code, errOut)
	}
	return []string{first.RefreshToken, first.AccessToken, second.AccessToken, tok3.RefreshToken, tok3.AccessToken}
}

func TestLoginWhoamiLogout(t *testing.T) {
	mockKeyring(t)
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir())
	t.Setenv("CARRIER_TOKEN", token) // the sandbox signs in only who holds its token
	host := strings.TrimPrefix(url, "http://")
	tokens := signInOutCLI(t, url, func(present bool) {
		_, err := keyring.Get(auth.Service, sandbox.DefaultAccount+"@"+host)
		if (err == nil) != present {
			t.Fatalf("keychain entry present=%v: %v", !present, err)
		}
	})
	code, logs := stop()
	for _, tok := range tokens {
		if tok == "" || strings.Contains(logs, tok) {
			t.Fatalf("a token is empty or in the sandbox's log (exit %d)", code)
		}
	}
}

func TestLoginWithAutoConsentAndTokenTTL(t *testing.T) {
	mockKeyring(t)
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--auto-consent", "--token-ttl", "90s")
	defer stop()
	t.Setenv("CARRIER_TOKEN", token) // auto-consent too signs in only who holds the token
	code, out, errOut := runLoginCLI(t, "--endpoint", url)
	if code != 0 || !strings.Contains(out, "Signed in as") {
		t.Fatalf("login: exit %d\n%s\n%s", code, out, errOut)
	}
	acct, _ := auth.Load(url)
	tok, err := acct.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(tok.Expiry); left > 90*time.Second || left < 60*time.Second {
		t.Fatalf("the access token lives %v, want the sandbox's --token-ttl 90s", left)
	}
}

func TestLoginCommandRefusals(t *testing.T) {
	mockKeyring(t)
	dir := t.TempDir()
	web := filepath.Join(dir, "web.json")
	os.WriteFile(web, []byte(`{"web":{"client_id":"x"}}`), 0o600)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"login", "--endpoint", "http://127.0.0.1:1", "--client-secret", web}, 2, "not both"},
		{[]string{"login", "--endpoint", "google"}, 2, "--client-secret"},
		{[]string{"login", "--endpoint", "127.0.0.1:8089"}, 2, "not an http(s) URL"},
		{[]string{"login", "--endpoint", "http://127.0.0.1:1", "--for", "drive"}, 2, "unknown kind of work"},
		{[]string{"login", "--endpoint", "http://127.0.0.1:1", "--timeout", "0s"}, 2, "positive"},
		{[]string{"login", "--client-secret", filepath.Join(dir, "missing.json")}, 1, "cannot read the client secret file"},
		{[]string{"login", "--client-secret", web}, 1, "Desktop app"},
		{[]string{"whoami"}, 1, "no account is signed in"}, // the embedded sandbox, in a scratch data folder
		{[]string{"whoami", "--endpoint", "http://127.0.0.1:1"}, 1, "no account is signed in"},
		{[]string{"logout", "--endpoint", "ftp://x"}, 2, "not an http(s) URL"},
		{[]string{"logout", "--endpoint", "google"}, 1, "no account is signed in"},
		{[]string{"sandbox", "--data", dir, "--token-ttl", "-1h"}, 2, "--token-ttl must be positive"},
	}
	for _, c := range cases {
		code, _, errOut := runCmd(c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

func TestLoginTimeoutHint(t *testing.T) {
	mockKeyring(t)
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir())
	defer stop()
	t.Setenv("CARRIER_TOKEN", token)
	// No browser on this machine: xdg-open fails or opens nothing, and the
	// sign-in waits out its timeout.
	t.Setenv("PATH", t.TempDir())
	code, out, errOut := runCmd("login", "--endpoint", url, "--timeout", "100ms")
	if code != 1 || !strings.Contains(errOut, "no answer came from the browser") || !strings.Contains(out, "\nhttp") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := auth.Load(url); err == nil {
		t.Fatal("a timed-out sign-in saved an account")
	}
}
