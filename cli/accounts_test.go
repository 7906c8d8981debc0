package cli

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/sandbox"
	"carrier/transfer"
)

// Two accounts signed in side by side from the command line: each
// message goes as the account --from names (the last used otherwise),
// bound to it in the journal; a password change of one parks its upload
// alone; signing it out keeps or cancels its jobs as asked; signing it in
// again and resuming finishes what was kept.
func TestTwoAccountsFromTheCommandLine(t *testing.T) {
	mockKeyring(t)
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "local")) // Windows's data and state folders
	const work = "work@example.com"
	base, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--auto-consent", "--token-ttl", "30s", "--account", work)
	defer stop()
	login := func(account string) {
		t.Helper()
		t.Setenv("CARRIER_TOKEN", token) // the sandbox signs in only who holds its token
		defer t.Setenv("CARRIER_TOKEN", "")
		if code, out, errOut := runLoginCLI(t, "--endpoint", base, "--account", account); code != 0 || !strings.Contains(out, "Signed in as "+account) {
			t.Fatalf("login %s: %d\n%s\n%s", account, code, out, errOut)
		}
	}
	login(sandbox.DefaultAccount)
	login(work)
	if code, out, errOut := runCmd("accounts", "--endpoint", base); code != 0 || !strings.HasPrefix(out, "* "+work+"\n  "+sandbox.DefaultAccount+"\n") {
		t.Fatalf("accounts: %d\n%s%s", code, out, errOut)
	}
	msg := filepath.Join(t.TempDir(), "m.txt")
	if err := os.WriteFile(msg, []byte(strings.Repeat("hello carrier\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	send := func(from string) (int, string) {
		args := []string{"send", "--endpoint", base, "--to", "zoe@example.com", "--subject", "from " + from, "--body-file", msg}
		if from != "" {
			args = append(args, "--from", from)
		}
		code, _, errOut := runCmd(args...)
		return code, errOut
	}
	if code, errOut := send(sandbox.DefaultAccount); code != 0 {
		t.Fatalf("send as %s: %d %s", sandbox.DefaultAccount, code, errOut)
	}
	if code, out, _ := runCmd("accounts", "--endpoint", base); code != 0 || !strings.HasPrefix(out, "* "+sandbox.DefaultAccount+"\n") {
		t.Fatalf("the sender used last is not the default:\n%s", out)
	}
	if code, errOut := send(work); code != 0 {
		t.Fatalf("send as %s: %d %s", work, code, errOut)
	}
	if code, errOut := send("nobody@example.com"); code != 2 || !strings.Contains(errOut, "not signed in") || !strings.Contains(errOut, work) {
		t.Fatalf("--from of an account not signed in: %d %s", code, errOut)
	}
	// Only the default account's mailbox opens to the sandbox's own token:
	// it holds the message sent as it, and not work's.
	if subjects := mailboxSubjects(t, base, token); strings.Join(subjects, ",") != "from "+sandbox.DefaultAccount {
		t.Fatalf("%s's mailbox holds %v", sandbox.DefaultAccount, subjects)
	}

	// A password change of work: its next send parks, and only it.
	req, _ := http.NewRequest(http.MethodPost, base+"/sandbox/v1/accounts/"+work+"/password", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("password change: %v %v", resp, err)
	}
	if code, errOut := send(work); code != ExitSignIn || !strings.Contains(errOut, work) {
		t.Fatalf("send as %s after its password changed: %d %s", work, code, errOut)
	}
	if code, errOut := send(sandbox.DefaultAccount); code != 0 {
		t.Fatalf("send as %s while %s waits: %d %s", sandbox.DefaultAccount, work, code, errOut)
	}
	code, out, _ := runCmd("jobs")
	if code != 0 || strings.Count(out, string(transfer.StateSignIn)) != 1 || !strings.Contains(out, work) {
		t.Fatalf("jobs:\n%s", out)
	}
	if code, _, errOut := runCmd("logout", work, "--endpoint", base, "--jobs", "later"); code != 2 || !strings.Contains(errOut, "keep") {
		t.Fatalf("--jobs later: %d %s", code, errOut)
	}
	code, out, errOut := runCmd("logout", work, "--endpoint", base)
	if code != 0 || !strings.Contains(out, "1 message of "+work+" waits for it") {
		t.Fatalf("logout keeping the jobs: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runCmd("accounts", "--endpoint", base); code != 0 || strings.Contains(out, work) || !strings.Contains(out, sandbox.DefaultAccount) {
		t.Fatalf("accounts after signing %s out:\n%s", work, out)
	}
	login(work)
	// The default sender is the other account: the kept job must still go
	// as its own.
	if err := auth.Use(base, sandbox.DefaultAccount); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCmd("resume"); code != 0 || !strings.Contains(out, `"id"`) {
		t.Fatalf("resume after %s signed in again: %d\n%s\n%s", work, code, out, errOut)
	}
	// The kept message went as work, not as the default account.
	if subjects := mailboxSubjects(t, base, token); len(subjects) != 2 || strings.Contains(strings.Join(subjects, ","), work) {
		t.Fatalf("%s's mailbox holds %v after the resume", sandbox.DefaultAccount, subjects)
	}

	// Signing out cancelling the jobs: work's parked upload is cancelled,
	// the default account's sign-in stays.
	if resp, err := http.DefaultClient.Do(req.Clone(req.Context())); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("password change: %v %v", resp, err)
	}
	if code, errOut := send(work); code != ExitSignIn {
		t.Fatalf("send as %s after its password changed again: %d %s", work, code, errOut)
	}
	if code, out, errOut := runCmd("logout", work, "--endpoint", base, "--jobs", "cancel"); code != 0 || !strings.Contains(errOut, "cancelled") {
		t.Fatalf("logout cancelling the jobs: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runCmd("jobs"); code != 0 || strings.Contains(out, string(transfer.StateSignIn)) {
		t.Fatalf("a job still waits after its account was signed out with --jobs cancel:\n%s", out)
	}
	if code, out, _ := runCmd("accounts", "--endpoint", base); code != 0 || !strings.Contains(out, "* "+sandbox.DefaultAccount) {
		t.Fatalf("the other account went:\n%s", out)
	}
}

func mailboxSubjects(t *testing.T, base, token string) []string {
	t.Helper()
	get := func(path string, v any) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(v)
	}
	var l struct{ Messages []struct{ ID string } }
	get("/gmail/v1/users/me/messages", &l)
	var subjects []string
	for _, m := range l.Messages {
		var full struct {
			Payload struct {
				Headers []struct{ Name, Value string }
			}
		}
		get("/gmail/v1/users/me/messages/"+m.ID+"?format=metadata", &full)
		for _, h := range full.Payload.Headers {
			if h.Name == "Subject" {
				subjects = append(subjects, h.Value)
			}
		}
	}
	return subjects
}

func TestLoginRefusesAWrongClientFileInWords(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, json, want string }{
		{"web", `{"web":{"client_id":"x"}}`, `"Web application" client`},
		{"broken", `{"installed":`, "not the JSON"},
		{"endpoints", `{"installed":{"client_id":"x","token_uri":"https://evil.example/token"}}`, "evil.example"},
	} {
		p := filepath.Join(dir, c.name+".json")
		os.WriteFile(p, []byte(c.json), 0o600)
		code, _, errOut := runCmd("login", "--client-secret", p)
		if code == 0 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, `"Desktop app"`) || !strings.Contains(errOut, p) {
			t.Errorf("%s: %d %s", c.name, code, errOut)
		}
	}
}

// carrier drive upload and carrier photos choose the account as carrier
// send does: --from names one signed in (each job bound to it in the
// journal), one not signed in is refused before anything is sent, and the
// account used last is the default of the next command.
func TestDriveAndPhotosFrom(t *testing.T) {
	mockKeyring(t)
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "local")) // Windows's data and state folders
	const work = "work@example.com"
	base, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--auto-consent", "--account", work)
	defer stop()
	t.Setenv("CARRIER_TOKEN", token)
	for _, a := range []string{sandbox.DefaultAccount, work} {
		if code, out, errOut := runLoginCLI(t, "--endpoint", base, "--account", a, "--for", "send,links,photos"); code != 0 {
			t.Fatalf("login %s: %d\n%s\n%s", a, code, out, errOut)
		}
	}
	t.Setenv("CARRIER_TOKEN", "")
	state := app.StateDir() // $XDG_STATE_HOME/carrier, or %LOCALAPPDATA%\Carrier\state
	accountsOf := func() map[string]int {
		j, err := transfer.OpenJournal(state)
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := j.List()
		n := map[string]int{}
		for _, r := range recs {
			n[r.Account]++
		}
		return n
	}
	defaultIs := func(want string) {
		t.Helper()
		if code, out, _ := runCmd("accounts", "--endpoint", base); code != 0 || !strings.HasPrefix(out, "* "+want+"\n") {
			t.Fatalf("the default sender is not %s:\n%s", want, out)
		}
	}
	file, _ := namedRandomFile(t, "report.pdf", 300<<10)
	if code, _, errOut := runCmd("drive", "upload", "--file", file, "--endpoint", base, "--from", sandbox.DefaultAccount); code != 0 {
		t.Fatalf("drive upload --from %s: %d %s", sandbox.DefaultAccount, code, errOut)
	}
	if n := accountsOf(); n[sandbox.DefaultAccount] != 1 || len(n) != 1 {
		t.Fatalf("the journal's jobs by account after drive upload: %v", n)
	}
	defaultIs(sandbox.DefaultAccount)
	if code, _, errOut := runCmd("photos", "--endpoint", base, "--from", work, photoFiles(t, 1)[0]); code != 0 {
		t.Fatalf("photos --from %s: %d %s", work, code, errOut)
	}
	if n := accountsOf(); n[work] == 0 || n[""] != 0 {
		t.Fatalf("the journal's jobs by account after photos: %v", n)
	}
	defaultIs(work)
	// Without --from: the last used.
	if code, _, errOut := runCmd("drive", "upload", "--file", file, "--endpoint", base); code != 0 {
		t.Fatalf("drive upload: %d %s", code, errOut)
	}
	if n := accountsOf(); n[sandbox.DefaultAccount] != 1 {
		t.Fatalf("drive upload without --from did not go as the last used (%s): %v", work, n)
	}
	before := accountsOf()
	for _, args := range [][]string{
		{"drive", "upload", "--file", file, "--endpoint", base, "--from", "nobody@example.com"},
		{"photos", "--endpoint", base, "--from", "nobody@example.com", photoFiles(t, 1)[0]},
	} {
		if code, _, errOut := runCmd(args...); code != 2 || !strings.Contains(errOut, "--from nobody@example.com is not signed in") || !strings.Contains(errOut, work) {
			t.Errorf("%s --from an account not signed in: %d %s", args[0], code, errOut)
		}
	}
	if n := accountsOf(); !maps.Equal(n, before) {
		t.Fatalf("a refused --from queued jobs: %v, was %v", n, before)
	}
}

// carrier login and carrier logout tell a Carrier window on the same data
// folder (its app.Google watching the folder): the sign-in reaches its
// OnSignIn (its queue sends the jobs parked for the account on), and both
// reach its screens.
func TestLoginAndLogoutReachAWindow(t *testing.T) {
	mockKeyring(t)
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "local")) // Windows's data and state folders
	base, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--auto-consent")
	defer stop()
	dataDir := app.DataDir()
	if err := app.PrivateDir(dataDir); err != nil { // as the window's start makes it
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := app.GoogleAt(app.NewCredentials(ctx, t.TempDir()), base, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.Watch(ctx, dataDir)
	in := make(chan string, 4)
	g.OnSignIn(func(a string) { in <- a })
	changed := make(chan []string, 4)
	g.OnAccountsChanged(func() { changed <- g.Accounts() })
	wait := func(what string, c <-chan []string) []string {
		t.Helper()
		select {
		case l := <-c:
			return l
		case <-time.After(30 * time.Second):
			t.Fatalf("the window did not hear %s", what)
		}
		return nil
	}

	t.Setenv("CARRIER_TOKEN", token)
	if code, out, errOut := runLoginCLI(t, "--endpoint", base); code != 0 {
		t.Fatalf("login: %d\n%s\n%s", code, out, errOut)
	}
	select {
	case a := <-in:
		if a != sandbox.DefaultAccount {
			t.Fatalf("the window was told %s signed in, want %s", a, sandbox.DefaultAccount)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the window did not hear carrier login")
	}
	if l := wait("carrier login", changed); !slices.Equal(l, []string{sandbox.DefaultAccount}) {
		t.Fatalf("the window lists %v after carrier login", l)
	}
	if code, out, errOut := runCmd("logout", "--endpoint", base); code != 0 {
		t.Fatalf("logout: %d\n%s\n%s", code, out, errOut)
	}
	if l := wait("carrier logout", changed); len(l) != 0 || g.Address() != "" {
		t.Fatalf("the window lists %v, sends as %q after carrier logout", l, g.Address())
	}
}
