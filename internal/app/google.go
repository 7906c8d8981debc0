package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"carrier/auth"
	"carrier/sandbox"
)

// Google is the Google account uploads go to, if any is signed in. Signing
// in or out resets the credentials, so requests pick up the change.
type Google struct {
	mu       sync.Mutex
	acct     *auth.Account
	creds    *Credentials
	endpoint string                                          // auth.GoogleEndpoint, or a sandbox standing in for it
	config   func(clientSecret []byte) (*auth.Config, error) // the sign-in's client
	proof    string                                          // a sandbox's token, which its sign-ins must prove; "" for Google
	browser  func(url string) error                          // nil: the system's browser
	// browserFailed is told the sign-in address the browser could not
	// be opened at, for the person to open it themselves (OnBrowserFailed).
	browserFailed func(url string)
	signedIn      []func(address string) // told after each sign-in, once the credentials are reset

	// The accounts stamp (accountswatch.go): where g notes its sign-ins
	// and sign-outs and hears other Carriers' ("" before Watch), what it
	// saw there last, and who is told of a change made elsewhere.
	stampMu  sync.Mutex // one note or one reading of the stamp at a time
	stampDir string
	seen     map[string]stampTimes
	changed  []func()
}

// OnSignIn has f told the address of every account that signs in from here
// on (SignIn, Allow), once requests would carry its new credential: the
// app's queue sends on the jobs that waited for it (transfer's SignedIn).
func (g *Google) OnSignIn(f func(address string)) {
	g.mu.Lock()
	g.signedIn = append(g.signedIn, f)
	g.mu.Unlock()
}

// tellSignedIn resets the credentials, so the next request looks the new
// sign-in up, then tells whoever asked.
func (g *Google) tellSignedIn(address string) {
	if g.creds != nil {
		g.creds.SignedIn(address)
	}
	g.resetCreds()
	g.mu.Lock()
	fs := slices.Clone(g.signedIn)
	g.mu.Unlock()
	for _, f := range fs {
		f(address)
	}
}

// LoadGoogle finds an account signed in before (by the desktop app or
// `carrier login`). With none, or no keychain, uploads go to the sandbox.
func LoadGoogle(creds *Credentials) *Google {
	return (&Google{creds: creds, endpoint: auth.GoogleEndpoint, config: auth.GoogleConfig}).load()
}

// GoogleAt is LoadGoogle for a sandbox standing in for Google at endpoint
// (tests, a sandbox run apart): its public client, whose sign-ins prove
// they hold sandboxToken, with the sign-in address given to browser (nil:
// the system's browser).
func GoogleAt(creds *Credentials, endpoint, sandboxToken string, browser func(url string) error) (*Google, error) {
	base, err := auth.CanonicalEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	g := &Google{creds: creds, endpoint: base, proof: sandboxToken, browser: browser,
		config: func([]byte) (*auth.Config, error) { return auth.SandboxConfig(base) }}
	return g.load(), nil
}

// SandboxSignInEnv, set to 1 in the window's environment, has the embedded
// sandbox stand in for Google in the window's sign-in (SandboxGoogle): the
// set-up assistant walked from no client to a signed-in account with no
// Google project (scripts/e2e_accounts.py, demos). Nothing of the
// person's Google sign-in changes: unset, the window signs in to Google
// with GoogleConfig's checks; set, it signs in nowhere but the sandbox.
const SandboxSignInEnv = "CARRIER_SANDBOX_SIGNIN"

// SandboxGoogle is the embedded sandbox standing in for Google: a client
// file is checked as Google's are (auth.StandInConfig: the same words for
// a web client or a broken file), but must name the sandbox's client and
// OAuth addresses; sign-ins prove they hold the sandbox's token and open
// the system's browser.
func SandboxGoogle(creds *Credentials, emb *Embedded) (*Google, error) {
	g, err := GoogleAt(creds, emb.URL, emb.Token, nil)
	if err != nil {
		return nil, err
	}
	base := g.endpoint
	g.config = func(clientSecret []byte) (*auth.Config, error) { return auth.StandInConfig(clientSecret, base) }
	return g, nil
}

// CheckClient checks a client file as SignIn will, before any browser
// opens, and names its client; its errors say what is wrong in words.
func (g *Google) CheckClient(clientSecret []byte) (clientID string, err error) {
	cfg, err := g.config(clientSecret)
	if err != nil {
		return "", err
	}
	return cfg.OAuth.ClientID, nil
}

func (g *Google) load() *Google {
	if acct, err := auth.Load(g.endpoint); err == nil {
		g.acct = acct
	}
	return g
}

// Address is the signed-in address, or "" when nobody is signed in.
func (g *Google) Address() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.acct == nil {
		return ""
	}
	return g.acct.Address
}

// windowKinds are what the window's sign-in asks for. Drive links
// (auth.Links) and Google Photos (auth.Photos) are not among them: the
// person is asked for them when a message or a post first needs them
// (Allow), as Google's incremental consent intends, so someone who never
// sends a large file never grants Drive. The Mirror timeline
// (auth.Timeline) is not asked for: Google retired it in 2023 and the
// window posts pictures to Google Photos.
var windowKinds = []auth.Kind{auth.Send, auth.Drafts}

// SignIn signs in with the person's OAuth client (the JSON of a "Desktop
// app" client) for sending and drafts.
func (g *Google) SignIn(ctx context.Context, clientSecret []byte) (string, error) {
	defer g.resetCreds()
	cfg, err := g.config(clientSecret)
	if err != nil {
		return "", err
	}
	scopes, err := auth.ScopesFor(windowKinds...)
	if err != nil {
		return "", err
	}
	acct, err := g.login(ctx, cfg, auth.LoginOptions{Scopes: scopes})
	if err != nil {
		return "", err
	}
	return g.becameSignedIn(acct), nil
}

// becameSignedIn makes acct, just signed in, the account g goes as, writes it to
// the accounts stamp and tells those waiting for a sign-in; it returns
// its address.
func (g *Google) becameSignedIn(acct *auth.Account) string {
	g.mu.Lock()
	g.acct = acct
	g.mu.Unlock()
	g.noteAccount(acct.Address, true)
	g.tellSignedIn(acct.Address)
	return acct.Address
}

func (g *Google) login(ctx context.Context, cfg *auth.Config, o auth.LoginOptions) (*auth.Account, error) {
	if g.proof != "" {
		cfg.AuthParams = func(challenge, redirect, scope string) map[string]string {
			return map[string]string{sandbox.ProofParam: sandbox.ConsentProof(g.proof, challenge, redirect, scope)}
		}
	}
	open := g.browser
	if open == nil {
		open = auth.OpenBrowser
	}
	g.mu.Lock()
	failed := g.browserFailed
	g.mu.Unlock()
	o.Browser = func(url string) error {
		err := open(url)
		if err != nil && failed != nil {
			failed(url)
		}
		return err
	}
	return auth.Login(ctx, cfg, o)
}

// OnBrowserFailed has f told the sign-in address whenever the system's
// browser could not be opened at it (no xdg-open installed, say): the
// sign-in still waits for it, so the window shows the address for the
// person to open. Login alone writes it where no one reads it.
func (g *Google) OnBrowserFailed(f func(url string)) {
	g.mu.Lock()
	g.browserFailed = f
	g.mu.Unlock()
}

// May says whether the signed-in account allows Carrier a kind of work:
// nil when it does, or when nobody is signed in (uploads then go to the
// embedded sandbox, which allows everything); a *NotAllowedError when the
// person must allow it first (Allow). It reads the grant as `carrier send`
// does (ServerAuth).
func (g *Google) May(ctx context.Context, kind auth.Kind) error {
	if g.Address() == "" {
		return nil
	}
	_, err := ServerAuth(ctx, g.endpoint, kind, "")
	return err
}

// ErrNotGranted says the browser came back without the permission asked
// for: Google lets a person untick it and continue.
var ErrNotGranted = errors.New("the permission was not granted in the browser")

// Allow asks the person, in the browser, to let Carrier do a kind of work
// too, with the client the account signed in with: the same sign-in,
// widened (incremental consent). The scopes granted before are asked for
// again as well as sent with include_granted_scopes, so the new grant
// holds them even where a server ignores that parameter.
func (g *Google) Allow(ctx context.Context, kind auth.Kind) error {
	g.mu.Lock()
	acct := g.acct
	g.mu.Unlock()
	if acct == nil {
		return errors.New("nobody is signed in with Google: sign in on the Account screen first")
	}
	defer g.resetCreds()
	cfg, err := acct.Config()
	if err != nil {
		return err
	}
	want, err := auth.ScopesFor(kind)
	if err != nil {
		return err
	}
	scopes := slices.Compact(slices.Sorted(slices.Values(append(want, acct.Scopes()...))))
	wider, err := g.login(ctx, cfg, auth.LoginOptions{Scopes: scopes, Hint: acct.Address})
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.acct = wider
	g.mu.Unlock()
	g.noteAccount(wider.Address, true)
	g.tellSignedIn(wider.Address)
	if wider.Address != acct.Address {
		// Login made the account chosen in the browser the default one:
		// uploads now go as that account, which the person must see
		// before anything is sent.
		return fmt.Errorf("the browser signed in %s rather than %s, so Carrier now sends as %s; nothing was sent", wider.Address, acct.Address, wider.Address)
	}
	if !wider.Can(kind) {
		return fmt.Errorf("%w (Carrier may not %s for %s)", ErrNotGranted, kind, acct.Address)
	}
	return nil
}

// SignOut revokes the sign-in and removes it from the keychain.
func (g *Google) SignOut(ctx context.Context) error {
	defer g.resetCreds()
	g.mu.Lock()
	acct := g.acct
	g.mu.Unlock()
	if acct == nil {
		return nil
	}
	_, err := auth.Logout(ctx, g.endpoint, acct.Address)
	if errors.Is(err, auth.ErrNotRevoked) {
		err = nil // signed out here; Google will let the grant lapse
	}
	if err == nil {
		g.mu.Lock()
		g.acct = nil
		g.mu.Unlock()
		g.noteAccount(acct.Address, false)
	}
	return err
}

func (g *Google) resetCreds() {
	if g.creds != nil {
		g.creds.Reset()
	}
}
