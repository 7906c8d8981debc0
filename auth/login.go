package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"golang.org/x/oauth2"
)

// Errors a sign-in ends with; each leaves nothing in the keychain.
var (
	ErrStateMismatch = errors.New("the browser's answer does not belong to this sign-in (its state differs)")
	ErrDenied        = errors.New("access was not granted in the browser")
	ErrTimeout       = errors.New("no answer came from the browser")
)

// DefaultLoginTimeout is how long Login waits for the browser.
const DefaultLoginTimeout = 5 * time.Minute

// LoginOptions tune a sign-in.
type LoginOptions struct {
	// Scopes to ask for (see ScopesFor); Config.IdentityScopes are added.
	Scopes []string
	// NoBrowser prints the address instead of opening a browser.
	NoBrowser bool
	// Browser opens an address; nil means OpenBrowser.
	Browser func(url string) error
	// Out receives the instructions and the address, alone on its line.
	Out io.Writer
	// Timeout bounds the wait for the browser; 0 means DefaultLoginTimeout.
	Timeout time.Duration
	// Hint is the address of the account expected (login_hint): when a
	// sign-in is widened, the browser offers that account first.
	Hint string
}

// Login signs a person in with the installed-app loopback flow: a listener
// on 127.0.0.1, a random state, PKCE S256 and offline access. It then reads
// the account's address and saves the sign-in in the keychain, as the
// default account for cfg.Endpoint. A request's HTTP client can be put in
// ctx under oauth2.HTTPClient.
func Login(ctx context.Context, cfg *Config, o LoginOptions) (*Account, error) {
	base, host, err := canonicalEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if len(o.Scopes) == 0 {
		return nil, errors.New("no scope to ask for: say what the sign-in is for (see ScopesFor)")
	}
	if err := probeKeychain(host); err != nil {
		return nil, err
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Browser == nil {
		o.Browser = OpenBrowser
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultLoginTimeout
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot listen on 127.0.0.1 for the browser's answer: %w; check that the loopback interface is up and a firewall allows it", err)
	}
	conf := cfg.OAuth
	conf.RedirectURL = fmt.Sprintf("http://127.0.0.1:%d/", ln.Addr().(*net.TCPAddr).Port)
	conf.Scopes = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(o.Scopes), cfg.IdentityScopes...))))
	state := randomString(32)
	verifier := oauth2.GenerateVerifier()
	opts := []oauth2.AuthCodeOption{
		oauth2.AccessTypeOffline,
		oauth2.S256ChallengeOption(verifier),
		// Without consent Google leaves the refresh token out when the
		// person granted Carrier before, e.g. before a logout.
		oauth2.ApprovalForce,
		// Incremental consent: the new grant keeps what the person
		// allowed before, so asking for one more kind of work never
		// loses the others.
		oauth2.SetAuthURLParam("include_granted_scopes", "true"),
	}
	if o.Hint != "" {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", o.Hint))
	}
	if cfg.AuthParams != nil {
		for k, v := range cfg.AuthParams(oauth2.S256ChallengeFromVerifier(verifier), conf.RedirectURL, strings.Join(conf.Scopes, " ")) {
			opts = append(opts, oauth2.SetAuthURLParam(k, v))
		}
	}
	authURL := conf.AuthCodeURL(state, opts...)

	cb := newCallbackServer(ln, state)
	defer cb.close()

	if o.NoBrowser {
		fmt.Fprintf(o.Out, "Open this address in a browser to sign in:\n%s\n", authURL)
	} else if err := o.Browser(authURL); err != nil {
		fmt.Fprintf(o.Out, "Could not open a browser (%v). Open this address to sign in:\n%s\n", err, authURL)
	} else {
		fmt.Fprintf(o.Out, "Sign in in the browser window that opened. If none did, open this address:\n%s\n", authURL)
	}

	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	var call *callback
	select {
	case call = <-cb.calls:
	case <-timer.C:
		if n := cb.ignored.Load(); n > 0 {
			// Answers with another state were ignored (a stray page, another
			// tab): the person learns of them, but they stopped nothing.
			return nil, fmt.Errorf("%w within %v; %d answer(s) were ignored because %w: another sign-in tab or a page on this computer sent them. Nothing was saved; close other sign-in tabs and sign in again", ErrTimeout, o.Timeout, n, ErrStateMismatch)
		}
		return nil, fmt.Errorf("%w within %v: was the sign-in window closed? Nothing was saved; sign in again", ErrTimeout, o.Timeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("sign-in stopped before the browser answered: %w; nothing was saved", ctx.Err())
	}
	acct, err := finish(ctx, cfg, &conf, base, host, state, verifier, call)
	call.reply <- resultPage(acct, err)
	return acct, err
}

func finish(ctx context.Context, cfg *Config, conf *oauth2.Config, base, host, state, verifier string, call *callback) (*Account, error) {
	q := call.query
	if !sameState(q.Get("state"), state) { // the callback server passes on only matching answers
		return nil, fmt.Errorf("%w: another sign-in tab or a page on this computer sent it. Nothing was saved; close other sign-in tabs and sign in again", ErrStateMismatch)
	}
	if e := q.Get("error"); e != "" {
		if e == "access_denied" {
			return nil, fmt.Errorf("%w (access_denied). Nothing was saved; sign in again and choose Allow to let Carrier send for this account", ErrDenied)
		}
		return nil, fmt.Errorf("the sign-in server refused the request (%s: %s). Nothing was saved; check the OAuth client and sign in again", sanitize(e), sanitize(q.Get("error_description")))
	}
	code := q.Get("code")
	if code == "" {
		return nil, errors.New("the browser's answer has no authorization code. Nothing was saved; sign in again")
	}
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("the sign-in server did not accept the authorization code: %w. Nothing was saved; sign in again", err)
	}
	if tok.RefreshToken == "" {
		return nil, errors.New("the sign-in server gave no refresh token, so Carrier could not stay signed in. Nothing was saved; remove Carrier's access in the account's security settings and sign in again")
	}
	address, err := identify(ctx, base, conf.ClientID, tok)
	if err != nil {
		return nil, err
	}
	scope, _ := tok.Extra("scope").(string)
	if scope == "" {
		scope = strings.Join(conf.Scopes, " ")
	}
	e := &entry{
		V: 1, Account: address, Endpoint: base,
		ClientID: conf.ClientID, ClientSecret: conf.ClientSecret, TokenURL: conf.Endpoint.TokenURL, RevokeURL: cfg.RevokeURL,
		Scope: scope, Refresh: tok.RefreshToken, Access: tok.AccessToken, Expiry: tok.Expiry,
	}
	if err := save(host, e); err != nil {
		return nil, err
	}
	return newAccount(host, e), nil
}

// save writes the entry, then makes it the default in the index; if the
// index cannot be written, the entry goes too, so no sign-in is left that
// nothing lists.
func save(host string, e *entry) error {
	ix, err := readIndex(host)
	if err != nil {
		return err
	}
	listed := slices.Contains(ix.Accounts, e.Account)
	if _, err := writeEntry(host, e); err != nil {
		return fmt.Errorf("%w; nothing was saved", err)
	}
	if len(ix.Accounts) > 0 && ix.Accounts[0] == e.Account {
		return nil
	}
	if err := writeIndex(host, ix.withFirst(e.Account)); err != nil {
		if !listed {
			deleteEntry(host, e.Account)
		}
		return fmt.Errorf("%w; nothing was saved", err)
	}
	return nil
}

// identify finds the account's address: in the ID token when the server
// sent one that holds up, otherwise from the Gmail profile. The ID token is
// taken under OpenID Connect's rule for one received straight from the
// token endpoint over TLS (Core 3.1.3.7, 6: TLS validation of the server
// in place of the signature's): the token endpoint is one of Google's
// (GoogleConfig pins it), and the claims must say Google issued it, for
// this client, unexpired, about a verified address. Any other ID token is
// not trusted.
func identify(ctx context.Context, base, clientID string, tok *oauth2.Token) (string, error) {
	if s, ok := tok.Extra("id_token").(string); ok {
		if a := emailFromIDToken(s, clientID, time.Now()); a != "" {
			return a, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/gmail/v1/users/me/profile", nil)
	if err != nil {
		return "", err
	}
	tok.SetAuthHeader(req)
	resp, err := httpClient(ctx).Do(req)
	if err != nil {
		return "", fmt.Errorf("cannot read the account's address from %s: %w. Nothing was saved; check the connection and sign in again", base, err)
	}
	defer resp.Body.Close()
	var p struct {
		EmailAddress string `json:"emailAddress"`
		Error        struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&p)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("cannot read the account's address from %s: %s %s. Nothing was saved; sign in again", base, resp.Status, sanitize(p.Error.Message))
	}
	if err != nil || !validAddress(p.EmailAddress) {
		return "", fmt.Errorf("%s answered the profile request without a usable emailAddress. Nothing was saved; is %s the API's base URL?", base, base)
	}
	return p.EmailAddress, nil
}

// googleIssuers are the iss values of Google's ID tokens.
var googleIssuers = []string{"https://accounts.google.com", "accounts.google.com"}

// emailFromIDToken is the verified address an ID token names, or "" when
// the token does not hold up: not Google's, not for clientID, expired (a
// minute of clock skew allowed), or about an unverified address.
func emailFromIDToken(jwt, clientID string, now time.Time) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Iss      string          `json:"iss"`
		Aud      json.RawMessage `json:"aud"` // a string, or a list of them
		Azp      string          `json:"azp"`
		Exp      int64           `json:"exp"`
		Email    string          `json:"email"`
		Verified any             `json:"email_verified"` // Google has sent both true and "true"
	}
	if json.Unmarshal(payload, &c) != nil || !validAddress(c.Email) {
		return ""
	}
	if c.Verified != true && c.Verified != "true" {
		return ""
	}
	if !slices.Contains(googleIssuers, c.Iss) || clientID == "" || !audienceIs(c.Aud, clientID) || (c.Azp != "" && c.Azp != clientID) {
		return ""
	}
	if c.Exp == 0 || now.After(time.Unix(c.Exp, 0).Add(time.Minute)) {
		return ""
	}
	return c.Email
}

func audienceIs(raw json.RawMessage, clientID string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == clientID
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && len(many) == 1 && many[0] == clientID
}

func validAddress(a string) bool {
	if a == "" || len(a) > 320 || !strings.Contains(a, "@") {
		return false
	}
	return !strings.ContainsFunc(a, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// sanitize keeps what a remote party wrote short and on one line before
// it goes into an error.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// OpenBrowser opens url in the system browser. It does not wait for the
// browser to close.
func OpenBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// callback is the browser's one answer; the handler waits on reply so the
// page it shows tells how the sign-in ended.
type callback struct {
	query url.Values
	reply chan page
}

type page struct {
	status      int
	title, body string
}

type callbackServer struct {
	srv   *http.Server
	state string
	calls chan *callback
	done  chan struct{}
	taken atomic.Bool
	// ignored counts answers whose state was not this sign-in's: any page
	// or program on the computer can send one, so it must not end the
	// sign-in; the real answer may still come until the timeout.
	ignored atomic.Int32
}

func sameState(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func newCallbackServer(ln net.Listener, state string) *callbackServer {
	cb := &callbackServer{state: state, calls: make(chan *callback, 1), done: make(chan struct{})}
	cb.srv = &http.Server{Handler: http.HandlerFunc(cb.serve), ReadHeaderTimeout: 10 * time.Second}
	go cb.srv.Serve(ln)
	return cb
}

func (cb *callbackServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.URL.Path != "/" || !(q.Has("state") || q.Has("code") || q.Has("error")) {
		http.NotFound(w, r)
		return
	}
	if !sameState(q.Get("state"), cb.state) {
		cb.ignored.Add(1)
		writePage(w, page{http.StatusBadRequest, "Not signed in", "This answer does not belong to the sign-in Carrier started, so it was ignored. If you are signing in, finish in the sign-in window Carrier opened. You can close this window."})
		return
	}
	if !cb.taken.CompareAndSwap(false, true) {
		writePage(w, page{http.StatusConflict, "Already answered", "Carrier already received an answer for this sign-in. You can close this window."})
		return
	}
	c := &callback{query: q, reply: make(chan page, 1)}
	cb.calls <- c
	select {
	case p := <-c.reply:
		writePage(w, p)
	case <-cb.done:
		// The sign-in replies, then closes: when this handler wakes to
		// both, select picks either, and the reply is the truth.
		select {
		case p := <-c.reply:
			writePage(w, p)
		default:
			writePage(w, page{http.StatusGone, "Sign-in ended", "Carrier stopped waiting for this sign-in. You can close this window and sign in again."})
		}
	case <-r.Context().Done():
	}
}

// close lets the page being written reach the browser, then stops.
func (cb *callbackServer) close() {
	close(cb.done)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cb.srv.Shutdown(ctx)
	cb.srv.Close()
}

func resultPage(a *Account, err error) page {
	if err != nil {
		msg := "Carrier could not finish signing in. The reason is shown where Carrier runs."
		switch {
		case errors.Is(err, ErrDenied):
			msg = "Access was not granted, so Carrier is not signed in."
		case errors.Is(err, ErrStateMismatch):
			msg = "This answer does not belong to the sign-in Carrier started, so it was ignored."
		}
		return page{http.StatusOK, "Not signed in", msg + " You can close this window."}
	}
	return page{http.StatusOK, "Signed in", "Carrier is signed in as " + a.Address + ". You can close this window."}
}

func writePage(w http.ResponseWriter, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(p.status)
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>Carrier: %s</title></head>"+
		"<body style=\"font-family:sans-serif;max-width:32em;margin:4em auto\"><h1>%s</h1><p>%s</p></body></html>\n",
		html.EscapeString(p.title), html.EscapeString(p.title), html.EscapeString(p.body))
}
