package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"carrier/auth"
	"carrier/transfer"
)

// target is where API requests go and how they are authorized.
type target struct {
	base  string // API root, no trailing slash
	auth  transfer.Authorizer
	close func() error
}

// endpointFlags choose the target of send, timeline and friends.
type endpointFlags struct {
	endpoint string
}

func (f *endpointFlags) add(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&f.endpoint, "endpoint", "", "API root: a running sandbox's URL, or https://gmail.googleapis.com (default: the embedded sandbox)")
}

// resolve finds the API root and its credentials for a kind of work ("" for
// any): an explicit token, the account signed in there, or the sandbox's
// own token. With no endpoint it uses the embedded sandbox, starting it
// in-process if no other Carrier serves it.
func (f *endpointFlags) resolve(ctx context.Context, token string, kind auth.Kind) (*target, error) {
	if token == "" {
		token = os.Getenv("CARRIER_TOKEN")
	}
	t := &target{close: func() error { return nil }}
	var sandboxToken string
	if f.endpoint == "" {
		e, err := StartEmbedded(ctx, SandboxDir(), nil)
		if err != nil {
			return nil, fmt.Errorf("cannot start the embedded sandbox: %w", err)
		}
		t.base, t.close, sandboxToken = e.URL, e.Close, e.Token
	} else {
		base, err := normalizeEndpoint(f.endpoint)
		if err != nil {
			return nil, err
		}
		t.base, sandboxToken = base, embeddedTokenFor(base)
	}
	if token != "" {
		t.auth = transfer.StaticToken(token)
		return t, nil
	}
	a, err := accountAuth(ctx, t.base, kind, sandboxToken != "")
	if err != nil {
		t.close()
		return nil, err
	}
	switch {
	case a != nil:
		t.auth = a
	case sandboxToken != "":
		t.auth = transfer.StaticToken(sandboxToken)
	default:
		t.close()
		return nil, fmt.Errorf("no credentials for %s: run `carrier login --endpoint %s`, or pass a token in CARRIER_TOKEN", t.base, f.endpoint)
	}
	return t, nil
}

func normalizeEndpoint(s string) (string, error) {
	if strings.TrimSpace(s) == "google" {
		return auth.GoogleEndpoint, nil
	}
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(s), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usagef("--endpoint %q is not an http(s) URL such as http://127.0.0.1:8089", s)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", usagef("--endpoint %q: give the API root only, without a query", s)
	}
	return u.String(), nil
}

// embeddedTokenFor returns the embedded sandbox's token when base is where
// it serves (as recorded in its data folder).
func embeddedTokenFor(base string) string {
	dir := SandboxDir()
	port, err := os.ReadFile(filepath.Join(dir, portFile))
	if err != nil {
		return ""
	}
	u, err := url.Parse(base)
	if err != nil || u.Port() != strings.TrimSpace(string(port)) || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
		return ""
	}
	tok, err := os.ReadFile(filepath.Join(dir, tokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(tok))
}

// accountAuth is the signed-in account for an endpoint as the engine's
// Authorizer, or nil when nobody is signed in there. An account whose
// grant does not cover the work is passed over on a sandbox (its own token
// will do) and refused elsewhere, saying how to widen it.
func accountAuth(ctx context.Context, base string, kind auth.Kind, sandbox bool) (transfer.Authorizer, error) {
	acct, err := auth.Load(base)
	switch {
	case errors.Is(err, auth.ErrNotSignedIn):
		return nil, nil
	case err != nil:
		if sandbox {
			return nil, nil // a sandbox needs no keychain
		}
		return nil, err
	case kind != "" && !acct.Can(kind):
		if sandbox {
			return nil, nil
		}
		return nil, fmt.Errorf("%s is signed in at %s but did not allow Carrier to %s: run `carrier login --endpoint %s --for %s`", acct.Address, base, kind, base, kind)
	}
	return transfer.TokenFunc(acct.Bearer), nil
}
