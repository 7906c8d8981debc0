package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// A sign-in whose browser cannot be opened (no xdg-open) tells the window
// the address, for the person to open it themselves; it was written to
// no one.
func TestSignInTellsTheAddressTheBrowserMissed(t *testing.T) {
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
	g.browser = func(string) error { return errors.New(`exec: "xdg-open": executable file not found in $PATH`) }
	told := make(chan string, 1)
	g.OnBrowserFailed(func(url string) { told <- url })
	file := `{"installed":{"client_id":"carrier-sandbox","auth_uri":"` + base + `/o/oauth2/v2/auth","token_uri":"` + base + `/token"}}`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	done := make(chan struct{})
	go func() { g.SignIn(ctx, []byte(file)); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case url := <-told:
		if !strings.HasPrefix(url, base+"/o/oauth2/v2/auth?") {
			t.Errorf("told %q", url)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the window was not told the address the browser missed")
	}
}
