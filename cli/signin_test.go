package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"carrier/auth"
	"carrier/sandbox"
	"carrier/transfer"
)

// A sign-in revoked before the send (a password change): `carrier send`'s
// upload waits rather than fails, and says whom to sign in as, exiting 4;
// `carrier resume` says it again (one try, the sign-in still dead), and
// `carrier jobs` shows it; `carrier login` then `carrier resume` sends the
// message, once.
func TestRevokedSignInThenLoginAndResume(t *testing.T) {
	mockKeyring(t)
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "local")) // Windows's data and state folders
	// Access tokens live 30 s, under auth's minute of early expiry: every
	// request refreshes, so a revoked grant shows at once.
	base, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--auto-consent", "--token-ttl", "30s")
	defer stop()
	login := func() (int, string, string) {
		t.Setenv("CARRIER_TOKEN", token) // the sandbox signs in only who holds its token
		defer t.Setenv("CARRIER_TOKEN", "")
		return runLoginCLI(t, "--endpoint", base)
	}
	if code, out, errOut := login(); code != 0 {
		t.Fatalf("login: %d\n%s\n%s", code, out, errOut)
	}
	acct, err := auth.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := acct.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.PostForm(base+"/revoke", url.Values{"token": {tok.RefreshToken}})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("revoke: %v %v", resp, err)
	}
	resp.Body.Close()

	msg := filepath.Join(t.TempDir(), "m.eml")
	body := "From: " + sandbox.DefaultAccount + "\r\nTo: zoe@example.com\r\nSubject: parked\r\n\r\n" + strings.Repeat("hello carrier\r\n", 40000)
	if err := os.WriteFile(msg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	target := base + "/upload/gmail/v1/users/me/messages/send"
	code, out, errOut := runCmd("upload", "--url", target, "--file", msg, "--content-type", "message/rfc822")
	want := "Sign in to " + sandbox.DefaultAccount + " again to continue: run `carrier login --endpoint " + base + "`, then `carrier resume`"
	if code != ExitSignIn || !strings.Contains(errOut, want) || out != "" {
		t.Fatalf("upload with a revoked sign-in: exit %d, want %d and %q\nstdout %q\nstderr %s", code, ExitSignIn, want, out, errOut)
	}
	if strings.Contains(errOut, tok.RefreshToken) || strings.Contains(errOut, "upload_id") {
		t.Fatal("the words hold a token or a session URI")
	}

	code, _, errOut = runCmd("resume")
	if code != ExitSignIn || !strings.Contains(errOut, "1 upload waits for "+sandbox.DefaultAccount+" to sign in again") || !strings.Contains(errOut, want) {
		t.Fatalf("resume with the sign-in still dead: exit %d\n%s", code, errOut)
	}
	code, out, _ = runCmd("jobs")
	if code != 0 || !strings.Contains(out, string(transfer.StateSignIn)) || !strings.Contains(out, "sign in to "+sandbox.DefaultAccount+" again to continue") {
		t.Fatalf("jobs: exit %d\n%s", code, out)
	}

	code, out, errOut = login()
	if code != 0 || !strings.Contains(out, "1 upload(s) wait for a sign-in: run `carrier resume`") {
		t.Fatalf("login again: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCmd("resume")
	if code != 0 || !strings.Contains(out, `"id"`) {
		t.Fatalf("resume after login: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if code, _, errOut := runCmd("resume"); code != 0 || !strings.Contains(errOut, "no unfinished uploads") {
		t.Fatalf("a second resume: %d %s", code, errOut)
	}
}

// A message whose Drive upload loses its sign-in half way: `carrier send`
// does not hang on the message waiting for it, but exits 4 naming the
// account; after `carrier login`, `carrier resume` sends the rest of the
// file on the same session and then the message.
func TestSendLinksWhoseSignInIsRevokedMidUpload(t *testing.T) {
	mockKeyring(t)
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "local")) // Windows's data and state folders
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: testToken, AutoConsent: true, TokenTTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	h := sb.Handler()
	var mu sync.Mutex
	var refresh string
	var driveChunks, driveStarts int
	var driveBytes int64
	revoke := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/upload/drive/") {
			mu.Lock()
			if !r.URL.Query().Has("upload_id") {
				driveStarts++
			} else if r.Method == http.MethodPut && r.ContentLength > 0 {
				driveChunks++
				driveBytes += r.ContentLength
				if driveChunks == 2 && revoke {
					revoke = false
					rr := httptest.NewRecorder()
					req := httptest.NewRequest(http.MethodPost, "/revoke", strings.NewReader(url.Values{"token": {refresh}}.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Host = r.Host
					h.ServeHTTP(rr, req)
					if rr.Code != http.StatusOK {
						t.Errorf("revoke: %d", rr.Code)
					}
				}
			}
			mu.Unlock()
		}
		if r.URL.Path != "/token" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var m struct {
			Refresh string `json:"refresh_token"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &m) == nil && m.Refresh != "" {
			mu.Lock()
			refresh = m.Refresh
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()
	base := srv.URL
	login := func() (int, string, string) {
		t.Setenv("CARRIER_TOKEN", testToken) // the sandbox signs in only who holds its token
		defer t.Setenv("CARRIER_TOKEN", "")
		return runLoginCLI(t, "--endpoint", base, "--for", "send,links")
	}
	if code, out, errOut := login(); code != 0 {
		t.Fatalf("login: %d\n%s\n%s", code, out, errOut)
	}
	big, _ := namedRandomFile(t, "big.bin", 6*transfer.ChunkQuantum+77)
	code, out, errOut := runCmd("send", "--to", "zoe@example.com", "--subject", "parked link", "--body", "see the file", "--attach", big,
		"--link-over", "1MB", "--endpoint", base, "--chunk-size", "262144")
	want := "Sign in to " + sandbox.DefaultAccount + " again to continue: run `carrier login --endpoint " + base + "`, then `carrier resume`"
	if code != ExitSignIn || !strings.Contains(errOut, want) {
		t.Fatalf("send with the sign-in revoked mid-upload: exit %d, want %d\nstdout %s\nstderr %s", code, ExitSignIn, out, errOut)
	}
	if code, out, errOut := login(); code != 0 || !strings.Contains(out, "wait for a sign-in") {
		t.Fatalf("login again: %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runCmd("resume"); code != 0 {
		t.Fatalf("resume after login: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runCmd("resume"); code != 0 || !strings.Contains(errOut, "no unfinished uploads") {
		t.Fatalf("a second resume: %d %s", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	fi, _ := os.Stat(big)
	if driveStarts != 1 || driveBytes != fi.Size() {
		t.Errorf("%d Drive sessions, %d bytes sent for a %d-byte file: want 1 and no byte twice", driveStarts, driveBytes, fi.Size())
	}
}
