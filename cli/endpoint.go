package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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
	// may says whether the sign-in used allows another kind of work too
	// (nil: a token was given, which is taken as allowing anything).
	may func(context.Context, auth.Kind) error
	// account is the signed-in account the work goes as ("" when a token
	// was given, or nobody is signed in at a sandbox): its jobs are bound
	// to it, so `carrier resume` finishes them as the same account.
	account string
}

// endpointFlags choose the target of send, timeline and friends.
type endpointFlags struct {
	endpoint   string
	sandboxDir string // the embedded sandbox's folder
	from       string // the account to send as (--from); "" the last used
}

func (f *endpointFlags) add(fs interface {
	StringVar(*string, string, string, string)
}, dirs app.Dirs) {
	f.sandboxDir = dirs.Sandbox()
	fs.StringVar(&f.endpoint, "endpoint", "", "API root: a running sandbox's URL, or https://gmail.googleapis.com (default: the embedded sandbox)")
}

// resolve finds the API root and its credentials for a kind of work ("" for
// any): an explicit token (for that root alone), the account signed in
// there, or the sandbox's own token (given only to a process that proves
// it serves the sandbox's folder). With no endpoint it uses the embedded
// sandbox, starting it in-process if no other Carrier serves it.
func (f *endpointFlags) resolve(ctx context.Context, token string, kind auth.Kind) (*target, error) {
	t := &target{close: func() error { return nil }}
	var sandboxToken string
	var serving *app.Embedded
	if f.endpoint == "" {
		e, err := app.StartEmbedded(ctx, f.sandboxDir, nil)
		if err != nil {
			return nil, fmt.Errorf("cannot start the embedded sandbox: %w", err)
		}
		t.base, t.close, sandboxToken, serving = e.URL, e.Close, e.Token, e
	} else {
		base, err := normalizeEndpoint(f.endpoint)
		if err != nil {
			return nil, err
		}
		t.base = base
		if sandboxToken, err = app.VerifiedToken(ctx, f.sandboxDir, base, nil); errors.Is(err, app.ErrNotTheSandbox) {
			return nil, err
		}
	}
	if token != "" {
		creds, err := app.NewCredentials(ctx, f.sandboxDir).Static(t.base, token)
		if err != nil {
			t.close()
			return nil, err
		}
		if serving != nil {
			creds.Serving(serving)
		}
		t.auth = creds
		return t, nil
	}
	account, err := f.sender(t.base)
	if err != nil {
		t.close()
		return nil, err
	}
	if account != "" && f.from == "" && sandboxToken != "" {
		// Unasked for, a sign-in that does not allow the work leaves it
		// to the sandbox's own token, as it always has.
		if acct, err := auth.LoadAccount(t.base, account); err != nil || kind != "" && !acct.Can(kind) {
			account = ""
		}
	}
	var a transfer.Authorizer
	if account != "" {
		a, err = app.AccountAuth(ctx, t.base, account, kind)
		t.account = account
	} else {
		a, err = app.ServerAuth(ctx, t.base, kind, sandboxToken)
	}
	if err == nil && a == nil {
		err = fmt.Errorf("no credentials for %s: run `carrier login --endpoint %s`, or pass a token in CARRIER_TOKEN", t.base, f.endpoint)
	}
	if err != nil {
		t.close()
		return nil, err
	}
	t.auth = a
	t.may = func(ctx context.Context, k auth.Kind) error {
		if account != "" {
			_, err := app.AccountAuth(ctx, t.base, account, k)
			return err
		}
		_, err := app.ServerAuth(ctx, t.base, k, sandboxToken)
		return err
	}
	return t, nil
}

// sender is the account the work at base goes as: --from when it names a
// signed-in account, else the last used; "" when nobody is signed in
// there (a sandbox's own token then serves, and --from is only the
// message's From).
func (f *endpointFlags) sender(base string) (string, error) {
	signed, err := auth.Accounts(base)
	if err != nil || len(signed) == 0 {
		return "", nil
	}
	if f.from == "" {
		return signed[0], nil
	}
	for _, a := range signed {
		if strings.EqualFold(a, f.from) {
			return a, nil
		}
	}
	return "", usagef("--from %s is not signed in at %s (signed in: %s): run `carrier login --endpoint %s --account %s` first", f.from, base, strings.Join(signed, ", "), base, f.from)
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
