package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/mail"
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

// chunkGate holds every chunk sent to a resumable session until the test
// lets them go, and says when a given number of sessions each have one
// in flight: so two sends are seen sending at once, and a sign-out lands
// while a send is half way, without timing.
type chunkGate struct {
	mu      sync.Mutex
	seen    map[string]bool
	want    int
	ready   chan struct{}
	open    chan struct{}
	holding bool
}

func (g *chunkGate) arm(sessions int) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen, g.want, g.ready, g.open, g.holding = map[string]bool{}, sessions, make(chan struct{}), make(chan struct{}), true
	return g.ready
}

func (g *chunkGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holding {
		g.holding = false
		close(g.open)
	}
}

func (g *chunkGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("upload_id")
		g.mu.Lock()
		hold, open := g.holding && id != "" && r.Method == http.MethodPut && r.ContentLength > 0, g.open
		if hold && !g.seen[id] {
			g.seen[id] = true
			if len(g.seen) == g.want {
				close(g.ready)
			}
		}
		g.mu.Unlock()
		if hold {
			select {
			case <-open:
			case <-time.After(30 * time.Second):
			}
		}
		h.ServeHTTP(w, r)
	})
}

type cmdResult struct {
	code        int
	out, errOut string
}

func runCmdAsync(args ...string) <-chan cmdResult {
	ch := make(chan cmdResult, 1)
	go func() {
		code, out, errOut := runCmd(args...)
		ch <- cmdResult{code, out, errOut}
	}()
	return ch
}

func awaitCmd(t *testing.T, ch <-chan cmdResult, what string) cmdResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not end", what)
	}
	return cmdResult{}
}

func awaitGate(t *testing.T, ready <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("never saw %s", what)
	}
}

// Issue 20's second Show from the command line: two accounts send at once
// (two `carrier send --from`, both with a chunk in flight), each message
// arrives in its own mailbox with its From. Signing one out with --jobs
// keep while both are half way parks its send alone (exit 4) and the
// other's runs to the end; login and resume deliver the kept one. Signing
// it out with --jobs cancel while the other account sends cancels its
// parked message alone, and the other's runs to the end.
func TestTwoAccountsSendAtOnceAndSigningOneOutLeavesTheOther(t *testing.T) {
	mockKeyring(t)
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "local")) // Windows's data and state folders
	const work = "work@example.com"
	me := sandbox.DefaultAccount
	// Session requests need the account's token: a kept send resumed with
	// another account's credential is refused rather than going on.
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: testToken, AutoConsent: true, TokenTTL: 30 * time.Second, Accounts: []string{work}, SessionNeedsToken: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	var gate chunkGate
	srv := httptest.NewServer(gate.wrap(sb.Handler()))
	defer srv.Close()
	defer gate.release()
	base := srv.URL
	login := func(account string) string {
		t.Helper()
		t.Setenv("CARRIER_TOKEN", testToken) // the sandbox signs in only who holds its token
		defer t.Setenv("CARRIER_TOKEN", "")
		code, out, errOut := runLoginCLI(t, "--endpoint", base, "--account", account)
		if code != 0 || !strings.Contains(out, "Signed in as "+account) {
			t.Fatalf("login %s: %d\n%s\n%s", account, code, out, errOut)
		}
		return out
	}
	login(me)
	login(work)
	body := filepath.Join(t.TempDir(), "body.txt")
	if err := os.WriteFile(body, []byte(strings.Repeat("hello carrier, from the command line\n", 40000)), 0o600); err != nil {
		t.Fatal(err)
	}
	send := func(from, subject string) <-chan cmdResult {
		return runCmdAsync("send", "--endpoint", base, "--from", from, "--to", "zoe@example.com", "--subject", subject,
			"--body-file", body, "--chunk-size", "262144")
	}

	// Both at once, then me signed out keeping its jobs, half way.
	ready := gate.arm(2)
	mine, theirs := send(me, "first from me"), send(work, "first from work")
	awaitGate(t, ready, "both sends with a chunk in flight at once")
	code, out, errOut := runCmd("logout", me, "--endpoint", base, "--jobs", "keep")
	if code != 0 || !strings.Contains(out, "Signed out "+me) {
		t.Fatalf("logout --jobs keep: %d\n%s\n%s", code, out, errOut)
	}
	gate.release()
	if r := awaitCmd(t, theirs, "work's send"); r.code != 0 {
		t.Fatalf("work's send after %s signed out: exit %d\n%s", me, r.code, r.errOut)
	}
	if r := awaitCmd(t, mine, "my send"); r.code != ExitSignIn || !strings.Contains(r.errOut, "Sign in to "+me+" again") {
		t.Fatalf("my send after I signed out keeping its job: exit %d, want %d naming %s\n%s", r.code, ExitSignIn, me, r.errOut)
	}
	if out := login(me); !strings.Contains(out, "1 upload(s) wait for a sign-in") {
		t.Fatalf("login again does not say the kept upload waits:\n%s", out)
	}
	// The default sender is now the other account: the kept message must
	// still go as its own.
	if err := auth.Use(base, work); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCmd("resume"); code != 0 || !strings.Contains(out, `"id"`) {
		t.Fatalf("resume after signing in again: %d\n%s\n%s", code, out, errOut)
	}

	// My next send parks (a password change), then I sign out cancelling
	// my jobs while work's send is half way.
	if _, err := sb.ChangePassword(me); err != nil {
		t.Fatal(err)
	}
	if r := awaitCmd(t, send(me, "second from me"), "my send"); r.code != ExitSignIn {
		t.Fatalf("my send after a password change: exit %d\n%s", r.code, r.errOut)
	}
	ready = gate.arm(1)
	theirs = send(work, "second from work")
	awaitGate(t, ready, "work's send with a chunk in flight")
	code, out, errOut = runCmd("logout", me, "--endpoint", base, "--jobs", "cancel")
	if code != 0 || !strings.Contains(errOut, "cancelled") || !strings.Contains(out, "Signed out "+me) {
		t.Fatalf("logout --jobs cancel: %d\n%s\n%s", code, out, errOut)
	}
	gate.release()
	if r := awaitCmd(t, theirs, "work's second send"); r.code != 0 {
		t.Fatalf("work's send while %s signed out cancelling its jobs: exit %d\n%s", me, r.code, r.errOut)
	}
	code, out, _ = runCmd("jobs", "--all")
	if code != 0 || strings.Contains(out, string(transfer.StateSignIn)) || strings.Count(out, string(transfer.StateCancelled)) != 1 || strings.Count(out, string(transfer.StateDone)) != 3 {
		t.Fatalf("jobs after signing %s out cancelling its jobs:\n%s", me, out)
	}
	if signed, err := auth.Accounts(base); err != nil || strings.Join(signed, ",") != work {
		t.Fatalf("signed in after it all: %v %v, want %s alone", signed, err, work)
	}

	// Each message in its own mailbox, with its From; the cancelled one
	// nowhere.
	for _, c := range []struct {
		account string
		want    []string
	}{
		{me, []string{"first from me"}},
		{work, []string{"first from work", "second from work"}},
	} {
		got := mailboxFroms(t, base, c.account)
		var subjects []string
		for _, m := range got {
			subjects = append(subjects, m.subject)
			if m.from != c.account {
				t.Errorf("%s's mailbox holds %q from %q", c.account, m.subject, m.from)
			}
		}
		if strings.Join(subjects, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s's mailbox holds %q, want %q", c.account, subjects, c.want)
		}
	}
}

type mailed struct{ subject, from string }

// mailboxFroms lists account's mailbox, oldest first, read with a sign-in
// of its own that may read (Carrier's may only send). It replaces
// Carrier's sign-in of that account in the keychain: call it last.
func mailboxFroms(t *testing.T, base, account string) []mailed {
	t.Helper()
	cfg, err := auth.SandboxConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuthParams = func(challenge, redirect, scope string) map[string]string {
		return map[string]string{sandbox.ProofParam: sandbox.ConsentProof(testToken, challenge, redirect, scope)}
	}
	// The browser goes in the background: Login answers it only after
	// Browser returns.
	browse := func(u string) error { go visit(u); return nil }
	acct, err := auth.Login(context.Background(), cfg, auth.LoginOptions{Scopes: []string{"https://www.googleapis.com/auth/gmail.readonly"}, Hint: account, Browser: browse})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := acct.Bearer(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, v any) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(v)
	}
	var l struct{ Messages []struct{ ID string } }
	get("/gmail/v1/users/me/messages", &l)
	var out []mailed
	for i := len(l.Messages) - 1; i >= 0; i-- { // the list is newest first
		var full struct {
			Payload struct {
				Headers []struct{ Name, Value string }
			}
		}
		get("/gmail/v1/users/me/messages/"+l.Messages[i].ID+"?format=metadata", &full)
		var m mailed
		for _, h := range full.Payload.Headers {
			switch h.Name {
			case "Subject":
				m.subject = h.Value
			case "From":
				if a, err := mail.ParseAddress(h.Value); err == nil {
					m.from = a.Address
				} else {
					m.from = h.Value
				}
			}
		}
		out = append(out, m)
	}
	return out
}
