package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"carrier/auth"
	"carrier/transfer"
)

// Credentials authorize each request with the credential of its server:
// the journal may hold jobs for the embedded sandbox, another sandbox and
// Google at once, and one queue finishes them all. It is the queue's
// transfer.Authorizer in the desktop app and in `carrier resume`.
type Credentials struct {
	mu         sync.Mutex
	ctx        context.Context
	sandboxDir string                          // the embedded sandbox's, whose token it may use
	by         map[credKey]transfer.Authorizer // credential; nil: none found
	used       map[credKey]bool
	out        map[string]bool   // accounts signed out here whose jobs were kept: nothing goes as them
	static     map[string]string // origin -> a token given for it alone (--token, CARRIER_TOKEN)
	serving    *Embedded         // the sandbox this process serves: its token needs no proof
	prover     Prover            // asks another process to prove it serves the sandbox's folder
	refused    map[string]error  // origins where an impostor sits in the sandbox's place
	barred     map[string]error  // origins nothing may go to (Refuse); kept across Reset
}

// NewCredentials looks credentials up in the keychain, and in the data
// folder of the embedded sandbox (sandboxDir), as requests need them.
func NewCredentials(ctx context.Context, sandboxDir string) *Credentials {
	return &Credentials{ctx: ctx, sandboxDir: sandboxDir, by: map[credKey]transfer.Authorizer{}, used: map[credKey]bool{}, out: map[string]bool{}, static: map[string]string{}, refused: map[string]error{}, barred: map[string]error{}}
}

// Static gives a token for one server (an API root or any URL of it): only
// requests to that origin carry it. A token given on the command line was
// given for the server it names; the journal may name others (or a server
// may name another host in a session URI), and they get their own
// credential or none. It returns c.
func (c *Credentials) Static(server, token string) (*Credentials, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("a token is for one server, and %q is not an http(s) URL", server)
	}
	c.mu.Lock()
	c.static[origin(u)] = token
	c.by, c.used = map[credKey]transfer.Authorizer{}, map[credKey]bool{}
	c.mu.Unlock()
	return c, nil
}

// Reset forgets every credential looked up so far: after a sign-in or a
// sign-out, the next request of each server looks again.
func (c *Credentials) Reset() {
	c.mu.Lock()
	c.by, c.used, c.refused = map[credKey]transfer.Authorizer{}, map[credKey]bool{}, map[string]error{}
	c.mu.Unlock()
}

// Serving tells c the embedded sandbox this process serves itself: its
// address needs no proof while it serves.
func (c *Credentials) Serving(e *Embedded) {
	c.mu.Lock()
	c.serving = e
	c.by, c.used, c.refused = map[credKey]transfer.Authorizer{}, map[credKey]bool{}, map[string]error{}
	c.mu.Unlock()
}

// Refuse marks a server nothing may go to, not even a session URI's
// request: why is the error those requests fail with.
func (c *Credentials) Refuse(server string, why error) {
	c.mu.Lock()
	if o := Origin(server); o != "" {
		c.barred[o] = why
	}
	c.mu.Unlock()
}

// embeddedToken is the embedded sandbox's token when o is where it serves
// and the process there proves it (see VerifiedToken), else "". An
// impostor is remembered, so that not even a session URI goes to it.
func (c *Credentials) embeddedToken(o string) string {
	if e := c.serving; e != nil && e.sb != nil && Origin(e.URL) == o {
		return e.Token
	}
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	tok, err := VerifiedToken(ctx, c.sandboxDir, o, c.prover)
	if errors.Is(err, ErrNotTheSandbox) {
		c.refused[o] = err
	}
	return tok
}

// origin is scheme://host:port as browsers compare it: a default port is
// left out and the host is lower case, so one server has one origin.
func origin(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host
}

// Origin is the origin of a URL (scheme://host[:port], as origin compares
// them), or "" when raw is no absolute http(s) URL.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return origin(u)
}

// credKey names a credential: a server, and the account a job goes with
// there ("" its default account).
type credKey struct{ origin, account string }

func (c *Credentials) lookup(k credKey) transfer.Authorizer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.by[k]; ok {
		c.used[k] = a != nil
		return a
	}
	if tok, ok := c.static[k.origin]; ok && k.account == "" {
		a := transfer.StaticToken(tok)
		c.by[k], c.used[k] = a, true
		return a
	}
	var a transfer.Authorizer
	var err error
	if k.account != "" {
		// A job bound to an account goes as that account or not at all:
		// the server's other credentials (its default account, a
		// sandbox's token) would send it as someone else.
		a, err = AccountAuth(c.ctx, k.origin, k.account, "")
	} else {
		a, err = ServerAuth(c.ctx, k.origin, "", c.embeddedToken(k.origin))
	}
	if err != nil {
		a = nil // the request fails for want of one, saying what to do
	}
	c.by[k] = a
	c.used[k] = a != nil
	return a
}

// SignedOut tells c that account was signed out here with its jobs kept:
// until it signs in again (SignedIn), none of its requests goes out, not
// even to a session URI that needs no token, so its jobs wait parked.
func (c *Credentials) SignedOut(account string) {
	c.mu.Lock()
	c.out[account] = true
	c.by, c.used = map[credKey]transfer.Authorizer{}, map[credKey]bool{}
	c.mu.Unlock()
}

// SignedIn undoes SignedOut for account and looks every credential up
// again.
func (c *Credentials) SignedIn(account string) {
	c.mu.Lock()
	delete(c.out, account)
	c.mu.Unlock()
	c.Reset()
}

// For is c for the requests of one account's jobs made outside the queue
// (Drive's and Photos' own calls before the uploads are queued).
func (c *Credentials) For(account string) transfer.Authorizer {
	return accountCreds{c, account}
}

type accountCreds struct {
	c       *Credentials
	account string
}

func (a accountCreds) Authorize(ctx context.Context, req *http.Request) error {
	return a.c.Authorize(transfer.WithAccount(ctx, a.account), req)
}

func (a accountCreds) Refresh(ctx context.Context) error {
	return a.c.Refresh(transfer.WithAccount(ctx, a.account))
}

// ErrNoCredentials reaches the engine as a failure of the request that
// needed one; session URIs need none and go out as they are.
var ErrNoCredentials = errors.New("no credentials for this server: " + noCredentialsAdvice)

// noCredentialsAdvice is ErrNoCredentials' advice to a terminal's user;
// the window says its own (WindowWords).
const noCredentialsAdvice = "run `carrier login --endpoint URL`, or pass a token in CARRIER_TOKEN"

// Authorize puts the credential of req's server on it.
func (c *Credentials) Authorize(ctx context.Context, req *http.Request) error {
	o := origin(req.URL)
	c.mu.Lock()
	barred := c.barred[o]
	c.mu.Unlock()
	if barred != nil {
		return barred
	}
	account := transfer.AccountOf(ctx)
	c.mu.Lock()
	out := account != "" && c.out[account]
	c.mu.Unlock()
	if out {
		return &transfer.SignInError{Account: account, Err: fmt.Errorf("%s was signed out on this computer", account)}
	}
	if a := c.lookup(credKey{o, account}); a != nil {
		return a.Authorize(ctx, req)
	}
	if account != "" {
		// Signed out, here or by another Carrier: even a session URI
		// that needs no token would go on as someone no longer signed
		// in, so the job waits for the account instead.
		return &transfer.SignInError{Account: account, Err: fmt.Errorf("%s is not signed in at %s", account, o)}
	}
	c.mu.Lock()
	refused := c.refused[o]
	c.mu.Unlock()
	if refused != nil {
		return refused
	}
	if req.URL.Query().Has("upload_id") {
		return nil
	}
	// Only a sign-in mends this: the job waits for one (parked), named by
	// the account it goes with, else by the server.
	return &transfer.SignInError{Account: cmp.Or(account, o), Err: ErrNoCredentials}
}

// Refresh refreshes every credential in use of the account of ctx's job
// (all of them for a job of no account): the engine does not say for which
// host, and a token refreshed early costs nothing. Another account's
// credential refreshed in its place would leave the job's own stale.
func (c *Credentials) Refresh(ctx context.Context) error {
	account := transfer.AccountOf(ctx)
	c.mu.Lock()
	if account != "" && c.out[account] {
		// A request sent before the account signed out here was
		// refused: its job waits for the account, as the next request
		// would (Authorize), rather than fail.
		c.mu.Unlock()
		return &transfer.SignInError{Account: account, Err: fmt.Errorf("%s was signed out on this computer", account)}
	}
	var as []transfer.Authorizer
	for k, used := range c.used {
		if used && (account == "" || k.account == account) {
			as = append(as, c.by[k])
		}
	}
	c.mu.Unlock()
	var errs []error
	refreshed := false
	for _, a := range as {
		if err := a.Refresh(ctx); err != nil {
			errs = append(errs, err)
		} else {
			refreshed = true
		}
	}
	if refreshed {
		return nil
	}
	if len(errs) == 0 {
		return transfer.ErrCannotRefresh
	}
	return errors.Join(errs...)
}

// ServerAuth is the credential Carrier holds for the API at base, for a
// kind of work ("" for any): the account signed in there, else the
// sandbox's own token (sandboxToken: "" when base is no sandbox of
// Carrier's). It is nil, without an error, when there is none.
func ServerAuth(ctx context.Context, base string, kind auth.Kind, sandboxToken string) (transfer.Authorizer, error) {
	a, err := accountAuth(ctx, base, kind, sandboxToken != "")
	if err != nil || a != nil {
		return a, err
	}
	if sandboxToken != "" {
		return transfer.StaticToken(sandboxToken), nil
	}
	return nil, nil
}

// AccountAuth is one named account signed in at base as the engine's
// Authorizer, for a kind of work ("" for any). Unlike ServerAuth it never
// stands in another credential: an account not signed in there is a
// transfer.SignInError naming it, so its jobs wait for it.
func AccountAuth(ctx context.Context, base, account string, kind auth.Kind) (transfer.Authorizer, error) {
	acct, err := auth.LoadAccount(base, account)
	if errors.Is(err, auth.ErrNotSignedIn) {
		return nil, &transfer.SignInError{Account: account, Err: err}
	}
	if err != nil {
		return nil, err
	}
	if kind != "" && !acct.Can(kind) {
		return nil, &NotAllowedError{Address: acct.Address, Endpoint: base, Kind: kind}
	}
	return signInToken(acct), nil
}

// accountAuth is the account signed in at an endpoint as the engine's
// Authorizer, or nil when nobody is signed in there. An account whose
// grant does not cover the work is passed over on a sandbox (its own
// token will do) and refused elsewhere, saying how to widen it.
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
		return nil, &NotAllowedError{Address: acct.Address, Endpoint: base, Kind: kind}
	}
	return signInToken(acct), nil
}

// signInToken is an account's token source as the engine's Authorizer. A
// sign-in the server no longer accepts (invalid_grant: revoked, expired,
// a password changed) or that left the keychain is a transfer.SignInError
// naming the account, so its jobs wait for the person to sign in again
// rather than fail.
func signInToken(acct *auth.Account) transfer.Authorizer {
	return transfer.TokenFunc(func(ctx context.Context, refresh bool) (string, error) {
		tok, err := acct.Bearer(ctx, refresh)
		if errors.Is(err, auth.ErrNotSignedIn) {
			return "", &transfer.SignInError{Account: acct.Address, Err: err}
		}
		return tok, err
	})
}

// NotAllowedError says the account signed in at Endpoint did not allow
// Carrier a kind of work: nothing of that work may start until the person
// allows it (`carrier login --for KIND`, or the window's Allow…, which
// adds it to the sign-in: incremental consent).
type NotAllowedError struct {
	Address, Endpoint string
	Kind              auth.Kind
}

func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("%s is signed in at %s but did not allow Carrier to %s: run `carrier login --endpoint %s --for %s`", e.Address, e.Endpoint, e.Kind, e.Endpoint, e.Kind)
}
