package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// ErrNotSignedIn says there is no usable sign-in: none was stored, or the
// server no longer accepts it. The person has to sign in (again).
var ErrNotSignedIn = errors.New("not signed in")

// ErrNotRevoked says Logout removed the sign-in from this computer but
// could not tell the server to drop it.
var ErrNotRevoked = errors.New("signed out on this computer, but the server could not be told")

// earlyExpiry is how long before its expiry an access token is replaced,
// so that one taken for a slow upload request does not expire mid-flight.
const earlyExpiry = time.Minute

// Account is a signed-in account at one API endpoint. Its methods are safe
// for concurrent use; refreshes are serialized and saved to the keychain.
type Account struct {
	Address  string // the account's email address
	Endpoint string // the API base URL the tokens are for

	mu   sync.Mutex
	host string
	e    entry
	conf oauth2.Config
	now  func() time.Time
}

func newAccount(host string, e *entry) *Account {
	return &Account{
		Address:  e.Account,
		Endpoint: e.Endpoint,
		host:     host,
		e:        *e,
		conf: oauth2.Config{
			ClientID:     e.ClientID,
			ClientSecret: e.ClientSecret,
			Endpoint:     oauth2.Endpoint{TokenURL: e.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
		},
		now: time.Now,
	}
}

// Load returns the default account signed in at endpoint: the one signed
// in last. It fails with ErrNotSignedIn when there is none.
func Load(endpoint string) (*Account, error) {
	_, host, err := canonicalEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	ix, err := readIndex(host)
	if err != nil {
		return nil, err
	}
	if len(ix.Accounts) == 0 {
		return nil, fmt.Errorf("%w: no account is signed in at %s; sign in first", ErrNotSignedIn, endpoint)
	}
	return LoadAccount(endpoint, ix.Accounts[0])
}

// LoadAccount returns one named account signed in at endpoint.
func LoadAccount(endpoint, address string) (*Account, error) {
	_, host, err := canonicalEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	e, err := readEntry(host, address)
	if err != nil {
		return nil, err
	}
	return newAccount(host, e), nil
}

// Accounts lists the accounts signed in at endpoint, the default first.
func Accounts(endpoint string) ([]string, error) {
	_, host, err := canonicalEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	ix, err := readIndex(host)
	return ix.Accounts, err
}

// Scopes returns the scopes the account granted.
func (a *Account) Scopes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return splitScope(a.e.Scope)
}

// Can reports whether the account granted what kind of work needs; when it
// did not, sign in again asking for the union of Scopes and ScopesFor(kind).
func (a *Account) Can(kind Kind) bool { return covers(a.Scopes(), kind) }

// TokenSource returns a token source for requests made under ctx.
func (a *Account) TokenSource(ctx context.Context) *TokenSource {
	return &TokenSource{ctx: ctx, a: a}
}

// TokenSource hands out the account's access token, refreshing it when it
// is about to expire and saving what the refresh returns to the keychain.
type TokenSource struct {
	ctx context.Context
	a   *Account
}

// Token implements oauth2.TokenSource.
func (s *TokenSource) Token() (*oauth2.Token, error) { return s.a.Token(s.ctx) }

// Refresh gets a new access token even if the current one looks valid:
// what to do once when the API answers 401.
func (s *TokenSource) Refresh(ctx context.Context) (*oauth2.Token, error) { return s.a.Refresh(ctx) }

// Token returns a valid access token, refreshing it if needed.
func (a *Account) Token(ctx context.Context) (*oauth2.Token, error) { return a.token(ctx, false) }

// Refresh gets a new access token with the refresh token even if the
// current one looks valid, and saves it.
func (a *Account) Refresh(ctx context.Context) (*oauth2.Token, error) { return a.token(ctx, true) }

// Bearer returns the access token alone, refreshed first when refresh is
// true. Its signature is the transfer engine's TokenFunc.
func (a *Account) Bearer(ctx context.Context, refresh bool) (string, error) {
	t, err := a.token(ctx, refresh)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

func (a *Account) current() *oauth2.Token {
	return &oauth2.Token{AccessToken: a.e.Access, TokenType: "Bearer", RefreshToken: a.e.Refresh, Expiry: a.e.Expiry}
}

func (a *Account) valid() bool {
	return a.e.Access != "" && (a.e.Expiry.IsZero() || a.now().Add(earlyExpiry).Before(a.e.Expiry))
}

func (a *Account) token(ctx context.Context, force bool) (*oauth2.Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !force && a.valid() {
		return a.current(), nil
	}
	t, err := a.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: a.e.Refresh}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client") {
			return nil, fmt.Errorf("%w: the server no longer accepts the sign-in of %s at %s (%s: it was revoked, expired or its client changed); sign in again", ErrNotSignedIn, a.Address, a.Endpoint, re.ErrorCode)
		}
		return nil, fmt.Errorf("cannot refresh the access token of %s at %s: %w; check the connection and try again", a.Address, a.Endpoint, err)
	}
	rotated := t.RefreshToken != "" && t.RefreshToken != a.e.Refresh
	if rotated {
		a.e.Refresh = t.RefreshToken
	}
	a.e.Access, a.e.Expiry = t.AccessToken, t.Expiry
	if t.ExpiresIn > 0 {
		a.e.Expiry = a.now().Add(time.Duration(t.ExpiresIn) * time.Second) // on the clock valid() reads
	}
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		a.e.Scope = s
	}
	if _, err := writeEntry(a.host, &a.e); err != nil && rotated {
		// The server replaced the refresh token: unsaved, the sign-in would
		// be lost when Carrier stops. An unsaved access token only costs
		// one refresh later, so that failure is not worth failing a request.
		return nil, fmt.Errorf("the server gave %s a new refresh token that could not be saved: %w", a.Address, err)
	}
	return a.current(), nil
}

// Logout removes an account's sign-in from the keychain, after asking the
// server to revoke it. An empty address means the default account. It
// returns the address signed out; a failed revocation is reported with
// ErrNotRevoked after the local sign-in is gone.
func Logout(ctx context.Context, endpoint, address string) (string, error) {
	_, host, err := canonicalEndpoint(endpoint)
	if err != nil {
		return "", err
	}
	ix, err := readIndex(host)
	if err != nil {
		return "", err
	}
	if address == "" {
		if len(ix.Accounts) == 0 {
			return "", fmt.Errorf("%w: no account is signed in at %s", ErrNotSignedIn, endpoint)
		}
		address = ix.Accounts[0]
	}
	e, readErr := readEntry(host, address)
	if readErr != nil && !slices.Contains(ix.Accounts, address) {
		return "", readErr
	}
	var revokeErr error
	if e != nil && e.RevokeURL != "" {
		revokeErr = revoke(ctx, e.RevokeURL, e.Refresh)
	}
	if e != nil {
		// Signing in again (Client) needs no client file. Not worth
		// failing the sign-out for: the file is asked for again.
		_ = keepClient(host, e)
	}
	if err := deleteEntry(host, address); err != nil {
		return "", err
	}
	if err := writeIndex(host, ix.without(address)); err != nil {
		return "", err
	}
	if revokeErr != nil {
		return address, fmt.Errorf("%w (%v); to be sure, remove Carrier's access in the account's security settings", ErrNotRevoked, revokeErr)
	}
	return address, nil
}

func revoke(ctx context.Context, revokeURL, token string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, revokeURL, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := httpClient(ctx).Do(req)
	if err != nil {
		// The URL error holds no secret: the token went in the body.
		return err
	}
	resp.Body.Close()
	// 400 invalid_token means the grant was already gone: nothing to do.
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest {
		return fmt.Errorf("%s answered %s", revokeURL, resp.Status)
	}
	return nil
}

// httpClient is the client oauth2 would use for ctx, so tests and callers
// set one place.
func httpClient(ctx context.Context) *http.Client {
	if c, ok := ctx.Value(oauth2.HTTPClient).(*http.Client); ok && c != nil {
		return c
	}
	return http.DefaultClient
}

// ErrNoClient says no client is known at an endpoint: nobody signed in
// there, or the client was never kept. The person gives its file.
var ErrNoClient = errors.New("no OAuth client is kept for this endpoint")

// Client is the sign-in configuration of the client last used at
// endpoint: the default account's, else the one kept when the last
// account signed out, so that signing in again needs no client file. It
// fails with ErrNoClient when there is none.
func Client(endpoint string) (*Config, error) {
	if a, err := Load(endpoint); err == nil {
		return a.Config()
	}
	_, host, err := canonicalEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	e, err := readClient(host)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoClient, endpoint)
	}
	return newAccount(host, e).Config()
}

// Use makes address, signed in at endpoint, the default account there: the
// sender last chosen is offered first next time, in the window and the CLI.
func Use(endpoint, address string) error {
	_, host, err := canonicalEndpoint(endpoint)
	if err != nil {
		return err
	}
	ix, err := readIndex(host)
	if err != nil {
		return err
	}
	if !slices.Contains(ix.Accounts, address) {
		return fmt.Errorf("%w: %s is not signed in at %s; sign it in first", ErrNotSignedIn, address, endpoint)
	}
	if ix.Accounts[0] == address {
		return nil
	}
	return writeIndex(host, ix.withFirst(address))
}
