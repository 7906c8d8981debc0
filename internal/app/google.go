package app

import (
	"context"
	"errors"
	"sync"

	"carrier/auth"
)

// Google is the Google account uploads go to, if any is signed in. Signing
// in or out resets the credentials, so requests pick up the change.
type Google struct {
	mu    sync.Mutex
	acct  *auth.Account
	creds *Credentials
}

// LoadGoogle finds an account signed in before (by the desktop app or
// `carrier login`). With none, or no keychain, uploads go to the sandbox.
func LoadGoogle(creds *Credentials) *Google {
	g := &Google{creds: creds}
	if acct, err := auth.Load(auth.GoogleEndpoint); err == nil {
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

// SignIn signs in with the person's OAuth client (the JSON of a "Desktop
// app" client) for sending, drafts, the timeline and Drive links (scope
// drive.file: only the files Carrier makes, which Google counts as
// non-sensitive). The window asks once rather than stopping a message
// half-way to ask again; `carrier login` asks for links only with --for.
func (g *Google) SignIn(ctx context.Context, clientSecret []byte) (string, error) {
	defer g.resetCreds()
	cfg, err := auth.GoogleConfig(clientSecret)
	if err != nil {
		return "", err
	}
	scopes, err := auth.ScopesFor(auth.Send, auth.Drafts, auth.Timeline, auth.Links)
	if err != nil {
		return "", err
	}
	acct, err := auth.Login(ctx, cfg, auth.LoginOptions{Scopes: scopes})
	if err != nil {
		return "", err
	}
	g.mu.Lock()
	g.acct = acct
	g.mu.Unlock()
	return acct.Address, nil
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
	_, err := auth.Logout(ctx, auth.GoogleEndpoint, acct.Address)
	if errors.Is(err, auth.ErrNotRevoked) {
		err = nil // signed out here; Google will let the grant lapse
	}
	if err == nil {
		g.mu.Lock()
		g.acct = nil
		g.mu.Unlock()
	}
	return err
}

func (g *Google) resetCreds() {
	if g.creds != nil {
		g.creds.Reset()
	}
}
