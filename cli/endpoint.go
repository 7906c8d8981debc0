package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"carrier/auth"
	"carrier/internal/app"
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
	endpoint   string
	sandboxDir string // the embedded sandbox's folder
}

func (f *endpointFlags) add(fs interface {
	StringVar(*string, string, string, string)
}, dirs app.Dirs) {
	f.sandboxDir = dirs.Sandbox()
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
		e, err := app.StartEmbedded(ctx, f.sandboxDir, nil)
		if err != nil {
			return nil, fmt.Errorf("cannot start the embedded sandbox: %w", err)
		}
		t.base, t.close, sandboxToken = e.URL, e.Close, e.Token
	} else {
		base, err := normalizeEndpoint(f.endpoint)
		if err != nil {
			return nil, err
		}
		t.base, sandboxToken = base, app.EmbeddedToken(f.sandboxDir, base)
	}
	if token != "" {
		t.auth = transfer.StaticToken(token)
		return t, nil
	}
	a, err := app.ServerAuth(ctx, t.base, kind, sandboxToken)
	if err == nil && a == nil {
		err = fmt.Errorf("no credentials for %s: run `carrier login --endpoint %s`, or pass a token in CARRIER_TOKEN", t.base, f.endpoint)
	}
	if err != nil {
		t.close()
		return nil, err
	}
	t.auth = a
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
