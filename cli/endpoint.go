package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

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

// resolve finds the API root and its credentials: an explicit token, the
// account signed in for that endpoint, or the sandbox's own token. With
// no endpoint it uses the embedded sandbox, starting it in-process if no
// other Carrier serves it.
func (f *endpointFlags) resolve(ctx context.Context, token string) (*target, error) {
	if token == "" {
		token = os.Getenv("CARRIER_TOKEN")
	}
	if f.endpoint == "" {
		e, err := StartEmbedded(ctx, SandboxDir(), nil)
		if err != nil {
			return nil, fmt.Errorf("cannot start the embedded sandbox: %w", err)
		}
		if token == "" {
			token = e.Token
		}
		return &target{base: e.URL, auth: transfer.StaticToken(token), close: e.Close}, nil
	}
	base, err := normalizeEndpoint(f.endpoint)
	if err != nil {
		return nil, err
	}
	t := &target{base: base, close: func() error { return nil }}
	switch {
	case token != "":
		t.auth = transfer.StaticToken(token)
	default:
		a, err := storedAuth(ctx, base)
		if err != nil {
			return nil, err
		}
		t.auth = a
	}
	return t, nil
}

func normalizeEndpoint(s string) (string, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(s), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usagef("--endpoint %q is not an http(s) URL such as http://127.0.0.1:8089", s)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", usagef("--endpoint %q: give the API root only, without a query", s)
	}
	return u.String(), nil
}

// storedAuth is the credential Carrier holds for an endpoint: the local
// sandbox's token when the endpoint is the embedded sandbox.
func storedAuth(ctx context.Context, base string) (transfer.Authorizer, error) {
	if tok := embeddedTokenFor(base); tok != "" {
		return transfer.StaticToken(tok), nil
	}
	if a, err := accountAuth(ctx, base); a != nil || err != nil {
		return a, err
	}
	return nil, fmt.Errorf("no credentials for %s: run `carrier login --endpoint %s`, or pass a token in CARRIER_TOKEN", base, base)
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

// accountAuth is replaced once sign-in exists; until then no account is
// ever stored.
var accountAuth = func(ctx context.Context, base string) (transfer.Authorizer, error) { return nil, nil }
