package cli

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
