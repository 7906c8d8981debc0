package cli

import (
	"strings"
	"testing"
)

// Drive is asked for only when links are used: an account signed in to
// send is told to widen its sign-in (`--for links`) before a message with
// a large file goes, and nothing is queued; once widened, the same
// command sends the file as a link.
func TestLinksAskForDriveOnlyWhenUsed(t *testing.T) {
	mockKeyring(t)
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--auto-consent")
	defer stop()
	t.Setenv("CARRIER_TOKEN", token) // the sandbox signs in only who holds its token
	if code, out, errOut := runLoginCLI(t, "--endpoint", url); code != 0 || !strings.Contains(out, "Carrier may: send.") {
		t.Fatalf("login: %d\n%s\n%s", code, out, errOut)
	}
	t.Setenv("CARRIER_TOKEN", "") // from here on, the account's sign-in
	big, _ := namedRandomFile(t, "big.bin", 27<<20)
	state := t.TempDir()
	send := func() (int, string, string) {
		return runCmd("send", "--to", "zoe@example.com", "--attach", big, "--endpoint", url, "--state-dir", state)
	}
	code, _, errOut := send()
	if code != 1 || !strings.Contains(errOut, "go as Google Drive links") || !strings.Contains(errOut, "--for links") {
		t.Fatalf("send without Drive: %d %s", code, errOut)
	}
	if n := len((&sendEnv{t: t, state: state}).records()); n != 0 {
		t.Fatalf("%d jobs queued", n)
	}
	// A small message needs no Drive.
	if code, _, errOut := runCmd("send", "--to", "zoe@example.com", "--body", "hi", "--endpoint", url, "--state-dir", state); code != 0 {
		t.Fatalf("a small message: %d %s", code, errOut)
	}
	t.Setenv("CARRIER_TOKEN", token)
	if code, out, errOut := runLoginCLI(t, "--endpoint", url, "--for", "links"); code != 0 || !strings.Contains(out, "send, links") && !strings.Contains(out, "links, send") {
		t.Fatalf("login --for links: %d\n%s\n%s", code, out, errOut)
	}
	t.Setenv("CARRIER_TOKEN", "")
	if code, _, errOut := send(); code != 0 {
		t.Fatalf("send with Drive allowed: %d %s", code, errOut)
	}
}
