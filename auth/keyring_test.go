//go:build keyring

// These tests use the OS keychain itself: on Linux a Secret Service on the
// session D-Bus. `make test-keyring` gives them a private one (a scratch
// HOME, dbus-run-session, an unlocked gnome-keyring-daemon).
package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/sandbox"
)

const realKeyring = true

// requireScratchKeychain refuses to run against a person's own keychain
// and session: the test writes, reads and deletes entries of "carrier".
func requireScratchKeychain(t *testing.T) string {
	t.Helper()
	home := os.Getenv("HOME")
	if os.Getenv("CARRIER_KEYRING_TEST") != "1" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Fatal("run these tests with `make test-keyring` (scripts/test-keyring.sh): they need a scratch HOME and a private Secret Service")
	}
	return home
}

// filesHolding lists the files under root whose bytes hold any secret.
func filesHolding(t *testing.T, root string, secrets []string) (hits []string, scanned int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		scanned++
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				hits = append(hits, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", root, err)
	}
	return hits, scanned
}

// wantNoPlainFile checks that no file under HOME holds a token while the
// keychain's own (encrypted) file is there, so the scan covered it.
func wantNoPlainFile(t *testing.T, home string, secrets []string) {
	t.Helper()
	if hits, scanned := filesHolding(t, home, secrets); len(hits) > 0 || scanned == 0 {
		t.Fatalf("tokens in plain files under %s: %v (%d files scanned)", home, hits, scanned)
	}
	if kr, _ := filepath.Glob(filepath.Join(home, ".local/share/keyrings/*.keyring")); len(kr) == 0 {
		t.Fatalf("no keyring file under %s: the secrets went somewhere else", home)
	}
	// The scan itself must be able to find what it looks for.
	probe := t.TempDir()
	os.WriteFile(filepath.Join(probe, "f"), []byte("x"+secrets[0]+"x"), 0o600)
	if hits, _ := filesHolding(t, probe, secrets[:1]); len(hits) != 1 {
		t.Fatal("the scan misses a token in a plain file")
	}
}

func secretToolSearch(t *testing.T, attrs ...string) string {
	t.Helper()
	out, err := exec.Command("secret-tool", append([]string{"search", "--all"}, attrs...)...).CombinedOutput()
	if err != nil && len(out) > 0 && !strings.Contains(string(out), "No such secret") {
		t.Logf("secret-tool: %v %s", err, out)
	}
	return string(out)
}

func TestKeyringEndToEnd(t *testing.T) {
	home := requireScratchKeychain(t)
	ctx := context.Background()
	sb := startSandbox(t, func(o *sandbox.Options) { o.TokenTTL = 10 * time.Minute })

	// Sign in through the consent page's Allow link.
	br := newBrowser(t, "allow")
	acct, err := Login(ctx, sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: br.open})
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if res := br.result(t); res.err != nil || !strings.Contains(res.page, "close this window") {
		t.Fatalf("browser: %v %s", res.err, res.page)
	}
	user := accountKey(acct.host, acct.Address)

	raw, err := keyring.Get(Service, user)
	if err != nil {
		t.Fatalf("the entry is not in the keychain: %v", err)
	}
	var first entry
	if err := json.Unmarshal([]byte(raw), &first); err != nil || first.Refresh == "" || first.Access == "" {
		t.Fatalf("entry: %v", err)
	}
	if out := secretToolSearch(t, "service", Service); !strings.Contains(out, "attribute.username = "+user) {
		t.Fatalf("secret-tool does not find the entry:\n%s", out)
	}

	// Ten minutes on, the access token is dead on the server; a new
	// process loads the account and gets a new one, saved back.
	sb.clock.Advance(10 * time.Minute)
	if sb.status(t, first.Access) != 401 {
		t.Fatal("the sandbox still takes the expired token")
	}
	later, err := Load(sb.url)
	if err != nil {
		t.Fatal(err)
	}
	later.now = func() time.Time { return time.Now().Add(10 * time.Minute) }
	tok, err := later.TokenSource(ctx).Token()
	if err != nil || tok.AccessToken == first.Access || sb.status(t, tok.AccessToken) != 200 {
		t.Fatalf("refresh: %v", err)
	}
	raw, _ = keyring.Get(Service, user)
	var saved entry
	json.Unmarshal([]byte(raw), &saved)
	if saved.Access != tok.AccessToken || saved.Refresh != first.Refresh {
		t.Fatal("the keychain does not hold the refreshed token")
	}
	secrets := []string{first.Refresh, first.Access, tok.AccessToken}
	wantNoPlainFile(t, home, secrets)

	// Logout: the entry and the index go, and the grant with them.
	if who, err := Logout(ctx, sb.url, ""); err != nil || who != acct.Address {
		t.Fatalf("logout: %q %v", who, err)
	}
	for _, u := range []string{user, indexKey(acct.host)} {
		if _, err := keyring.Get(Service, u); !errors.Is(err, keyring.ErrNotFound) {
			t.Fatalf("%s is still in the keychain: %v", u, err)
		}
	}
	if out := secretToolSearch(t, "service", Service); strings.Contains(out, user) {
		t.Fatalf("secret-tool still finds the entry:\n%s", out)
	}
	if _, err := later.Refresh(ctx); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("the revoked sign-in still refreshes: %v", err)
	}
	wantNoPlainFile(t, home, secrets)
	if hits, _ := filesHolding(t, sb.dir, secrets); len(hits) > 0 {
		t.Fatalf("the sandbox keeps tokens in the clear: %v", hits)
	}
}
