package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"carrier/internal/syncio"
)

const (
	testVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789" // RFC 7636's example, lengthened
	testRedirect = "http://127.0.0.1:45678/callback"
	scopeSend    = "https://www.googleapis.com/auth/gmail.send"
)

func challengeOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// testClock is a settable Options.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newOAuthEnv(t *testing.T, opts ...func(*Options)) (*testEnv, *testClock) {
	clk := &testClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	e := newEnv(t, append([]func(*Options){func(o *Options) { o.Now = clk.Now }}, opts...)...)
	return e, clk
}

// noFollow is a client that shows redirects instead of following them:
// the loopback listener they point to does not exist in these tests.
func (e *testEnv) noFollow() *http.Client {
	c := *e.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

func (e *testEnv) get(path string) resp {
	e.t.Helper()
	r, err := e.noFollow().Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	defer r.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(r.Body)
	return resp{code: r.StatusCode, h: r.Header, body: b.Bytes()}
}

func authParams(mod func(url.Values)) string {
	q := url.Values{
		"client_id":             {OAuthClientID},
		"redirect_uri":          {testRedirect},
		"response_type":         {"code"},
		"scope":                 {scopeSend},
		"state":                 {"st-123"},
		"code_challenge":        {challengeOf(testVerifier)},
		"code_challenge_method": {"S256"},
		"access_type":           {"offline"},
	}
	if mod != nil {
		mod(q)
	}
	return withProof(q)
}

// withProof signs an auth request the way Carrier does, with the static
// token (an attacker's request is the same without this).
func withProof(q url.Values) string {
	q.Set(ProofParam, ConsentProof(testToken, q.Get("code_challenge"), q.Get("redirect_uri"), q.Get("scope")))
	return "/o/oauth2/v2/auth?" + q.Encode()
}

var (
	formIDRE = regexp.MustCompile(`<form method="post" action="([^"]+)"><input type="hidden" name="id" value="([^"]+)">`)
	buttonRE = regexp.MustCompile(`<button id="(allow|deny)" name="decision" value="(allow|deny)">`)
)

// postForm posts a form the way a browser does from the sandbox's page.
func (e *testEnv) postForm(path string, form url.Values) resp {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.srv.URL)
	r, err := e.noFollow().Do(req)
	if err != nil {
		e.t.Fatalf("POST %s: %v", path, err)
	}
	defer r.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(r.Body)
	return resp{code: r.StatusCode, h: r.Header, body: b.Bytes()}
}

// consent opens the consent page and presses its Allow or Deny button,
// returning where the sandbox sends the browser.
func (e *testEnv) consent(authPath, decision string) *url.URL {
	e.t.Helper()
	page := e.get(authPath)
	if page.code != 200 || !strings.Contains(page.h.Get("Content-Type"), "text/html") {
		e.t.Fatalf("consent page: %d %s", page.code, page.body)
	}
	form := formIDRE.FindStringSubmatch(string(page.body))
	buttons := map[string]string{}
	for _, m := range buttonRE.FindAllStringSubmatch(string(page.body), -1) {
		buttons[m[1]] = m[2]
	}
	if form == nil || buttons["allow"] != "allow" || buttons["deny"] != "deny" {
		e.t.Fatalf("consent page has no form with Allow and Deny buttons:\n%s", page.body)
	}
	answer := url.Values{"id": {html.UnescapeString(form[2])}, "decision": {decision}}
	r := e.postForm(html.UnescapeString(form[1]), answer)
	if r.code != http.StatusFound {
		e.t.Fatalf("%s: %d %s", decision, r.code, r.body)
	}
	if again := e.postForm(html.UnescapeString(form[1]), answer); again.code != http.StatusBadRequest {
		e.t.Fatalf("a consent answered twice: %d", again.code)
	}
	return redirectTarget(e.t, r)
}

func redirectTarget(t *testing.T, r resp) *url.URL {
	t.Helper()
	u, err := url.Parse(r.h.Get("Location"))
	if err != nil || r.code != http.StatusFound || !strings.HasPrefix(u.String(), testRedirect) {
		t.Fatalf("not a redirect to the loopback URI: %d %q %s", r.code, r.h.Get("Location"), r.body)
	}
	return u
}

func (e *testEnv) tokenReq(form url.Values) (int, map[string]any) {
	e.t.Helper()
	r := e.do("POST", "/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte(form.Encode()))
	m := r.json(e.t)
	if r.code != 200 {
		if m["error"] == nil || m["error_description"] == nil {
			e.t.Fatalf("token error not in OAuth form: %d %s", r.code, r.body)
		}
	} else if r.h.Get("Cache-Control") != "no-store" {
		e.t.Fatalf("token answer may be cached: %q", r.h.Get("Cache-Control"))
	}
	return r.code, m
}

func exchangeForm(code string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {OAuthClientID},
		"redirect_uri": {testRedirect}, "code_verifier": {testVerifier}}
}

// signIn runs consent and the code exchange, returning the token answer.
func (e *testEnv) signIn(scope string) map[string]any {
	e.t.Helper()
	path := authParams(func(q url.Values) { q.Set("scope", scope) })
	var u *url.URL
	if e.sb.opts.AutoConsent {
		u = redirectTarget(e.t, e.get(path))
	} else {
		u = e.consent(path, "allow")
	}
	code, m := e.tokenReq(exchangeForm(u.Query().Get("code")))
	if code != 200 {
		e.t.Fatalf("exchange: %d %v", code, m)
	}
	return m
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func TestOAuthConsentAllowAndExchange(t *testing.T) {
	e, _ := newOAuthEnv(t)
	u := e.consent(authParams(nil), "allow")
	q := u.Query()
	if q.Get("state") != "st-123" || q.Get("code") == "" || q.Get("scope") != scopeSend || u.Path != "/callback" {
		t.Fatalf("redirect %s", u)
	}
	code, m := e.tokenReq(exchangeForm(q.Get("code")))
	if code != 200 || m["token_type"] != "Bearer" || m["expires_in"] != 3600.0 || m["scope"] != scopeSend ||
		m["access_token"] == "" || m["refresh_token"] == "" || m["access_token"] == m["refresh_token"] {
		t.Fatalf("exchange: %d %v", code, m)
	}
	prof := e.do("GET", "/gmail/v1/users/me/profile", bearer(m["access_token"].(string)), nil)
	if prof.code != 200 || prof.json(t)["emailAddress"] != DefaultAccount {
		t.Fatalf("profile with the issued token: %d %s", prof.code, prof.body)
	}
}

func TestOAuthDeny(t *testing.T) {
	e, _ := newOAuthEnv(t)
	u := e.consent(authParams(nil), "deny")
	if q := u.Query(); q.Get("error") != "access_denied" || q.Get("state") != "st-123" || q.Has("code") {
		t.Fatalf("deny redirect %s", u)
	}
}

func TestOAuthAutoConsent(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	u := redirectTarget(t, e.get(authParams(nil)))
	if u.Query().Get("code") == "" || u.Query().Get("state") != "st-123" {
		t.Fatalf("auto consent redirect %s", u)
	}
	if code, m := e.tokenReq(exchangeForm(u.Query().Get("code"))); code != 200 {
		t.Fatalf("exchange: %d %v", code, m)
	}
}

func TestOAuthOnlyOfflineGetsRefreshToken(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	u := redirectTarget(t, e.get(authParams(func(q url.Values) { q.Del("access_type") })))
	code, m := e.tokenReq(exchangeForm(u.Query().Get("code")))
	if code != 200 || m["access_token"] == nil || m["refresh_token"] != nil {
		t.Fatalf("online access: %d %v", code, m)
	}
}

func TestOAuthRedirectURIs(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	cases := []struct {
		uri string
		ok  bool
	}{
		{"http://127.0.0.1:5000/", true},
		{"http://127.0.0.1:5000/cb?x=1", true},
		{"http://localhost:5000/cb", true},
		{"http://[::1]:5000/", true},
		{"http://127.0.0.1/", false}, // no port
		{"https://127.0.0.1:5000/", false},
		{"http://example.com:5000/", false},
		{"http://127.0.0.1.evil.example:5000/", false},
		{"http://user@127.0.0.1:5000/", false},
		{"urn:ietf:wg:oauth:2.0:oob", false},
		{"", false},
	}
	for _, c := range cases {
		r := e.get(authParams(func(q url.Values) { q.Set("redirect_uri", c.uri) }))
		if c.ok {
			if r.code != http.StatusFound || !strings.HasPrefix(r.h.Get("Location"), strings.SplitN(c.uri, "?", 2)[0]) {
				t.Errorf("%q refused: %d %q", c.uri, r.code, r.h.Get("Location"))
			}
			continue
		}
		if r.code != http.StatusBadRequest || r.h.Get("Location") != "" || !strings.Contains(string(r.body), "redirect_uri_mismatch") {
			t.Errorf("%q accepted: %d %q", c.uri, r.code, r.h.Get("Location"))
		}
	}
}

func TestOAuthAuthorizeRefusals(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	if r := e.get(authParams(func(q url.Values) { q.Set("client_id", "someone-else") })); r.code != 401 || r.h.Get("Location") != "" || !strings.Contains(string(r.body), "invalid_client") {
		t.Errorf("unknown client: %d %q", r.code, r.h.Get("Location"))
	}
	cases := []struct {
		name string
		mod  func(url.Values)
		want string
	}{
		{"no PKCE", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
		{"plain PKCE", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"short challenge", func(q url.Values) { q.Set("code_challenge", "abc") }, "invalid_request"},
		{"implicit flow", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		{"no scope", func(q url.Values) { q.Del("scope") }, "invalid_scope"},
		{"unknown scope", func(q url.Values) { q.Set("scope", scopeSend+" https://www.googleapis.com/auth/calendar") }, "invalid_scope"},
	}
	for _, c := range cases {
		u := redirectTarget(t, e.get(authParams(c.mod)))
		if q := u.Query(); q.Get("error") != c.want || q.Get("state") != "st-123" || q.Has("code") {
			t.Errorf("%s: redirect %s, want error=%s", c.name, u, c.want)
		}
	}
}

func TestOAuthCodeExchangeRefusals(t *testing.T) {
	e, clk := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	newCode := func() string {
		return redirectTarget(t, e.get(authParams(nil))).Query().Get("code")
	}
	cases := []struct {
		name string
		mod  func(url.Values)
		desc string
	}{
		{"wrong verifier", func(f url.Values) { f.Set("code_verifier", strings.Repeat("x", 50)) }, "Invalid code verifier"},
		{"missing verifier", func(f url.Values) { f.Del("code_verifier") }, "Missing code verifier"},
		{"short verifier", func(f url.Values) { f.Set("code_verifier", "abc") }, "Invalid code verifier"},
		{"other redirect_uri", func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:1/") }, "redirect_uri"},
		{"unknown code", func(f url.Values) { f.Set("code", "4/made-up") }, "unknown"},
	}
	for _, c := range cases {
		code := newCode()
		f := exchangeForm(code)
		c.mod(f)
		st, m := e.tokenReq(f)
		if st != 400 || m["error"] != "invalid_grant" || !strings.Contains(m["error_description"].(string), c.desc) {
			t.Errorf("%s: %d %v", c.name, st, m)
		}
		// A refused attempt spends the code: a guesser gets one try.
		if st, m := e.tokenReq(exchangeForm(code)); f.Get("code") == code && (st != 400 || m["error"] != "invalid_grant") {
			t.Errorf("%s: the code still works after a refused attempt: %d %v", c.name, st, m)
		}
	}

	code := newCode()
	clk.Advance(codeTTL)
	if st, m := e.tokenReq(exchangeForm(code)); st != 400 || !strings.Contains(m["error_description"].(string), "expired") {
		t.Errorf("expired code: %d %v", st, m)
	}

	f := exchangeForm(newCode())
	f.Set("client_id", "someone-else")
	if st, m := e.tokenReq(f); st != 401 || m["error"] != "invalid_client" {
		t.Errorf("unknown client: %d %v", st, m)
	}
	if st, m := e.tokenReq(url.Values{"grant_type": {"password"}, "client_id": {OAuthClientID}}); st != 400 || m["error"] != "unsupported_grant_type" {
		t.Errorf("password grant: %d %v", st, m)
	}
	if r := e.do("GET", "/token", nil, nil); r.code != 405 || r.json(t)["error"] != "invalid_request" {
		t.Errorf("GET /token: %d %s", r.code, r.body)
	}
}

func TestOAuthCodeReuseRevokesItsTokens(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	code := redirectTarget(t, e.get(authParams(nil))).Query().Get("code")
	st, m := e.tokenReq(exchangeForm(code))
	if st != 200 {
		t.Fatalf("exchange: %d %v", st, m)
	}
	if st, m := e.tokenReq(exchangeForm(code)); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("second exchange: %d %v", st, m)
	}
	if r := e.do("GET", "/gmail/v1/users/me/profile", bearer(m["access_token"].(string)), nil); r.code != 401 {
		t.Errorf("access token of a replayed code still works: %d", r.code)
	}
	if st, _ := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {m["refresh_token"].(string)}, "client_id": {OAuthClientID}}); st != 400 {
		t.Errorf("refresh token of a replayed code still works: %d", st)
	}
}

func TestOAuthExpiryAndRefresh(t *testing.T) {
	e, clk := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.TokenTTL = 10 * time.Minute })
	m := e.signIn(scopeSend)
	at, rt := m["access_token"].(string), m["refresh_token"].(string)
	if m["expires_in"] != 600.0 {
		t.Fatalf("expires_in %v, want 600", m["expires_in"])
	}
	profile := func(tok string) resp { return e.do("GET", "/gmail/v1/users/me/profile", bearer(tok), nil) }
	if r := profile(at); r.code != 200 {
		t.Fatalf("fresh token: %d %s", r.code, r.body)
	}
	clk.Advance(10 * time.Minute)
	r := profile(at)
	if r.code != 401 || !strings.Contains(r.errMessage(t), "valid access token") || !strings.Contains(r.h.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("expired token: %d %s", r.code, r.body)
	}
	st, m2 := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {OAuthClientID}})
	if st != 200 || m2["access_token"] == at || m2["refresh_token"] != nil || m2["scope"] != scopeSend || m2["expires_in"] != 600.0 {
		t.Fatalf("refresh: %d %v", st, m2)
	}
	if r := profile(m2["access_token"].(string)); r.code != 200 {
		t.Fatalf("refreshed token: %d %s", r.code, r.body)
	}
	if r := profile(testToken); r.code != 200 {
		t.Fatalf("the static token stopped working: %d", r.code)
	}
	if r := profile("ya29.sbx-made-up"); r.code != 401 {
		t.Fatalf("unknown token: %d", r.code)
	}
	if st, m := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"1//made-up"}, "client_id": {OAuthClientID}}); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("unknown refresh token: %d %v", st, m)
	}
}

func TestOAuthStateSurvivesRestart(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	m := e.signIn(scopeSend)
	pending := e.get(authParams(nil)) // an unanswered code, issued before the restart
	e.restart()
	if r := e.do("GET", "/gmail/v1/users/me/profile", bearer(m["access_token"].(string)), nil); r.code != 200 {
		t.Fatalf("access token after restart: %d", r.code)
	}
	if st, m := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {m["refresh_token"].(string)}, "client_id": {OAuthClientID}}); st != 200 {
		t.Fatalf("refresh after restart: %d %v", st, m)
	}
	if st, m := e.tokenReq(exchangeForm(redirectTarget(t, pending).Query().Get("code"))); st != 200 {
		t.Fatalf("code after restart: %d %v", st, m)
	}
}

func TestOAuthScopesEnforcedOnUploads(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	send := e.signIn(scopeSend)["access_token"].(string)
	timeline := e.signIn("https://www.googleapis.com/auth/glass.timeline")["access_token"].(string)
	start := func(tok, path, ctype string) resp {
		h := bearer(tok)
		h["X-Upload-Content-Type"] = ctype
		return e.do("POST", path+"?uploadType=resumable", h, nil)
	}
	cases := []struct {
		tok, path, ctype string
		code             int
	}{
		{send, "/upload/gmail/v1/users/me/messages/send", "message/rfc822", 200},
		{send, "/upload/gmail/v1/users/me/messages", "message/rfc822", 403},
		{send, "/upload/gmail/v1/users/me/drafts", "message/rfc822", 403},
		{send, "/upload/mirror/v1/timeline", "image/png", 403},
		{timeline, "/upload/mirror/v1/timeline", "image/png", 200},
		{timeline, "/upload/gmail/v1/users/me/messages/send", "message/rfc822", 403},
		{testToken, "/upload/gmail/v1/users/me/messages", "message/rfc822", 200},
	}
	for _, c := range cases {
		r := start(c.tok, c.path, c.ctype)
		if r.code != c.code {
			t.Errorf("%s with %.12s...: %d %s, want %d", c.path, c.tok, r.code, r.body, c.code)
		} else if c.code == 403 && !strings.Contains(r.errMessage(t), "insufficient authentication scopes") {
			t.Errorf("%s: %s", c.path, r.body)
		}
	}
}

func TestOAuthRevoke(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	m := e.signIn(scopeSend)
	revoke := func(tok string) int {
		return e.do("POST", "/revoke", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte(url.Values{"token": {tok}}.Encode())).code
	}
	if c := revoke(m["refresh_token"].(string)); c != 200 {
		t.Fatalf("revoke: %d", c)
	}
	if r := e.do("GET", "/gmail/v1/users/me/profile", bearer(m["access_token"].(string)), nil); r.code != 401 {
		t.Errorf("access token outlived its revoked grant: %d", r.code)
	}
	if st, _ := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {m["refresh_token"].(string)}, "client_id": {OAuthClientID}}); st != 400 {
		t.Errorf("revoked refresh token works: %d", st)
	}
	if c := revoke(m["refresh_token"].(string)); c != 400 {
		t.Errorf("second revoke: %d, want 400 invalid_token", c)
	}
}

// TestOAuthWithTheOAuth2Library signs in as golang.org/x/oauth2 does it,
// with the client in a Basic header (its first guess), and refreshes.
func TestOAuthWithTheOAuth2Library(t *testing.T) {
	e, clk := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	conf := &oauth2.Config{ClientID: OAuthClientID, RedirectURL: testRedirect, Scopes: []string{scopeSend},
		Endpoint: oauth2.Endpoint{AuthURL: e.srv.URL + "/o/oauth2/v2/auth", TokenURL: e.srv.URL + "/token", AuthStyle: oauth2.AuthStyleInHeader}}
	verifier := oauth2.GenerateVerifier()
	proof := ConsentProof(testToken, oauth2.S256ChallengeFromVerifier(verifier), testRedirect, scopeSend)
	u, _ := url.Parse(conf.AuthCodeURL("s1", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam(ProofParam, proof)))
	back := redirectTarget(t, e.get(u.RequestURI()))
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, e.srv.Client())
	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil || tok.RefreshToken == "" || tok.Extra("scope") != scopeSend {
		t.Fatalf("exchange: %v %+v", err, tok)
	}
	clk.Advance(2 * time.Hour)
	tok.Expiry = time.Now().Add(-time.Minute) // the library's own clock is real
	fresh, err := conf.TokenSource(ctx, tok).Token()
	if err != nil || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken != tok.RefreshToken {
		t.Fatalf("refresh: %v", err)
	}
	if r := e.do("GET", "/gmail/v1/users/me/profile", bearer(fresh.AccessToken), nil); r.code != 200 {
		t.Fatalf("refreshed token: %d", r.code)
	}
	_, err = conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("replayed code: %v", err)
	}
}

// TestOAuthKeepsNoTokenInTheClear checks the store and the log: both
// could leak, and neither needs a usable secret.
func TestOAuthKeepsNoTokenInTheClear(t *testing.T) {
	var logs syncio.Buffer
	e, _ := newOAuthEnv(t, func(o *Options) { o.Logger = newTestLogger(&logs) })
	u := e.consent(authParams(nil), "allow")
	code := u.Query().Get("code")
	st, m := e.tokenReq(exchangeForm(code))
	if st != 200 {
		t.Fatalf("exchange: %d %v", st, m)
	}
	_, m2 := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {m["refresh_token"].(string)}, "client_id": {OAuthClientID}})
	secrets := []string{code, testVerifier, m["access_token"].(string), m["refresh_token"].(string), m2["access_token"].(string)}
	e.sb.Close() // flush bbolt
	filepath.WalkDir(e.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds a secret in the clear (%.10s...)", p, s)
			}
		}
		return nil
	})
	for _, s := range append(secrets, "st-123") {
		if strings.Contains(logs.String(), s) {
			t.Errorf("the log holds %.10s...", s)
		}
	}
	if !strings.Contains(logs.String(), "/token") {
		t.Fatalf("the log shows no request at all, so the check above proves nothing:\n%s", logs.String())
	}
}
