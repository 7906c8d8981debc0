//go:build keyring

// The commands against the OS keychain itself; `make test-keyring` runs
// them in a scratch HOME with a private Secret Service.
package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"carrier/auth"
	"carrier/sandbox"
)

const realKeyring = true

func TestKeyringCommands(t *testing.T) {
	home := os.Getenv("HOME")
	if os.Getenv("CARRIER_KEYRING_TEST") != "1" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Fatal("run these tests with `make test-keyring` (scripts/test-keyring.sh): they need a scratch HOME and a private Secret Service")
	}
	data := t.TempDir()
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", data)
	t.Setenv("CARRIER_TOKEN", token) // the sandbox signs in only who holds its token
	user := sandbox.DefaultAccount + "@" + strings.TrimPrefix(url, "http://")
	tokens := signInOutCLI(t, url, func(present bool) {
		_, err := keyring.Get(auth.Service, user)
		if present && err != nil || !present && !errors.Is(err, keyring.ErrNotFound) {
			t.Fatalf("keychain entry %s, want present=%v: %v", user, present, err)
		}
		out, _ := exec.Command("secret-tool", "search", "--all", "service", auth.Service).CombinedOutput()
		if strings.Contains(string(out), "attribute.username = "+user) != present {
			t.Fatalf("secret-tool search service %s, want present=%v:\n%s", auth.Service, present, out)
		}
	})
	if code, logs := stop(); code != 0 {
		t.Fatalf("sandbox exit %d: %s", code, logs)
	}
	for _, root := range []string{home, data} {
		scanned := 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, _ := os.ReadFile(p)
			scanned++
			for _, tok := range tokens {
				if tok == "" || bytes.Contains(b, []byte(tok)) {
					t.Errorf("%s holds a token in the clear (or a token is empty)", p)
				}
			}
			return nil
		})
		if scanned == 0 {
			t.Fatalf("nothing to scan under %s", root)
		}
	}
	if kr, _ := filepath.Glob(filepath.Join(home, ".local/share/keyrings/*.keyring")); len(kr) == 0 {
		t.Fatalf("no keyring file under %s: the test did not use the scratch keychain", home)
	}
}
