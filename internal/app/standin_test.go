package app

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/sandbox"
)

// With CARRIER_SANDBOX_SIGNIN=1 the window signs in to its own embedded
// sandbox: a client file is checked before any browser opens (a web
// client, a broken file and Google's own client refused in words), the
// sandbox's own client signs in through the consent page, and uploads then
// go to the sandbox, never to Google.
func TestSandboxStandsInForGoogle(t *testing.T) {
	keyring.MockInit()
	t.Setenv(SandboxSignInEnv, "1")
	dir := t.TempDir()
	a, err := Open(context.Background(), Dirs{Data: dir + "/data", State: dir + "/state"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	g := a.Google
	base := a.Sandbox.URL
	opened := make(chan string, 1)
	g.browser = func(u string) error {
		select {
		case opened <- u:
		default:
		}
		return nil
	}

	refused := []struct{ file, words string }{
		{`{"web":{"client_id":"x.apps.googleusercontent.com"}}`, `"Web application" client`},
		{`{"installed":{"client_id":`, "not the JSON Google Cloud Console downloads"},
		{`{"installed":{"client_id":"x.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token"}}`, "the sandbox standing in for Google signs in at " + base},
	}
	for _, r := range refused {
		if _, err := g.CheckClient([]byte(r.file)); err == nil || !strings.Contains(err.Error(), r.words) {
			t.Errorf("CheckClient(%s) = %v, want %q", r.file, err, r.words)
		}
		// Refused, SignIn returns at once; were it let through, it would
		// wait for a browser no one answers until this deadline.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := g.SignIn(ctx, []byte(r.file))
		cancel()
		if err == nil || !strings.Contains(err.Error(), r.words) {
			t.Errorf("SignIn(%s) = %v, want %q", r.file, err, r.words)
		}
	}
	select {
	case u := <-opened:
		t.Fatalf("a refused file opened the browser at %s", u)
	default:
	}

	file := `{"installed":{"client_id":"carrier-sandbox","auth_uri":"` + base + `/o/oauth2/v2/auth","token_uri":"` + base + `/token"}}`
	if id, err := g.CheckClient([]byte(file)); err != nil || id != sandbox.OAuthClientID {
		t.Fatalf("CheckClient(the sandbox's file) = %q, %v", id, err)
	}
	// The browser: the consent page answered Allow, as a person would.
	go func() {
		page, err := http.Get(<-opened)
		if err != nil {
			t.Error(err)
			return
		}
		body, _ := io.ReadAll(page.Body)
		page.Body.Close()
		m := regexp.MustCompile(`name="id" value="([^"]+)"`).FindSubmatch(body)
		if m == nil {
			t.Errorf("no consent form: %s", body)
			return
		}
		r, err := http.PostForm(base+"/o/oauth2/v2/consent", url.Values{"id": {string(m[1])}, "decision": {"allow"}})
		if err != nil {
			t.Error(err)
			return
		}
		r.Body.Close()
	}()
	addr, err := g.SignIn(context.Background(), []byte(file))
	if err != nil || addr != sandbox.DefaultAccount {
		t.Fatalf("SignIn = %q, %v", addr, err)
	}
	if a.Target() != base || g.Endpoint() != base {
		t.Errorf("signed in to the stand-in, uploads go to %s (want %s)", a.Target(), base)
	}
}
