package auth

import (
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/sandbox"
)

// spyKeychain sits on go-keyring's mock and mirrors what it holds, since
// go-keyring cannot list entries. limit plays a keychain with a size cap
// (Windows: 2560 bytes).
type spyKeychain struct {
	mu      sync.Mutex
	inner   keychain
	limit   int
	sets    int
	entries map[string]string
}

func (s *spyKeychain) Set(service, user, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit > 0 && len(secret) > s.limit {
		return keyring.ErrSetDataTooBig
	}
	if err := s.inner.Set(service, user, secret); err != nil {
		return err
	}
	s.sets++
	s.entries[service+"/"+user] = secret
	return nil
}

func (s *spyKeychain) Get(service, user string) (string, error) { return s.inner.Get(service, user) }

func (s *spyKeychain) Delete(service, user string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.inner.Delete(service, user)
	if err == nil {
		delete(s.entries, service+"/"+user)
	}
	return err
}

func (s *spyKeychain) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]string{}
	for k, v := range s.entries {
		m[k] = v
	}
	return m
}

func (s *spyKeychain) setLimit(n int) { s.mu.Lock(); s.limit = n; s.mu.Unlock() }

func mockKeychain(t *testing.T) *spyKeychain {
	t.Helper()
	needMock(t)
	keyring.MockInit()
	spy := &spyKeychain{inner: osKeychain{}, entries: map[string]string{}}
	old := store
	store = spy
	t.Cleanup(func() { store = old })
	return spy
}

// needMock skips a test that would replace the real keychain for the rest
// of the process.
func needMock(t *testing.T) {
	t.Helper()
	if realKeyring {
		t.Skip("uses go-keyring's mock; this build (-tags keyring) tests the real keychain")
	}
}

// wantNothingSaved checks the keychain is as a failed sign-in must leave it.
func wantNothingSaved(t *testing.T, spy *spyKeychain) {
	t.Helper()
	if got := spy.snapshot(); len(got) != 0 {
		t.Fatalf("the failed sign-in left entries: %v", keysOf(got))
	}
}

func keysOf(m map[string]string) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	return k
}

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

type testSandbox struct {
	sb    *sandbox.Sandbox
	srv   *httptest.Server
	url   string
	dir   string
	token string
	clock *testClock
}

// startSandbox serves a sandbox whose clock starts at the real time, so
// tokens it issues look fresh to the client, and advances only on demand.
func startSandbox(t *testing.T, opt func(*sandbox.Options)) *testSandbox {
	t.Helper()
	clk := &testClock{t: time.Now()}
	o := sandbox.Options{Dir: t.TempDir(), Token: "static-test-token", Now: clk.Now}
	if opt != nil {
		opt(&o)
	}
	sb, err := sandbox.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(func() { srv.Close(); sb.Close() })
	return &testSandbox{sb: sb, srv: srv, url: srv.URL, dir: o.Dir, token: o.Token, clock: clk}
}

func (s *testSandbox) config(t *testing.T) *Config {
	t.Helper()
	c, err := SandboxConfig(s.url)
	if err != nil {
		t.Fatal(err)
	}
	// The sandbox signs in only who holds its token.
	c.AuthParams = func(challenge, redirect, scope string) map[string]string {
		return map[string]string{sandbox.ProofParam: sandbox.ConsentProof(s.token, challenge, redirect, scope)}
	}
	return c
}

// status asks the sandbox's profile with a bearer token.
func (s *testSandbox) status(t *testing.T, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+"/gmail/v1/users/me/profile", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	return r.StatusCode
}

// browser plays the person at the browser: it opens the address, answers
// the consent page, and follows the redirect to Carrier's listener. It
// runs on its own goroutine, as a real browser does.
type browser struct {
	t        *testing.T
	decision string                 // "allow" or "deny"
	tamper   func(authURL *url.URL) // changes the request before it is sent
	answer   func(cb *url.URL)      // changes the redirect before it is followed
	opened   chan string            // the address it was given
	done     chan browserResult
}

type browserResult struct {
	page string // what Carrier's listener showed
	code string // the authorization code it carried, if any
	err  error
}

func newBrowser(t *testing.T, decision string) *browser {
	return &browser{t: t, decision: decision, opened: make(chan string, 1), done: make(chan browserResult, 1)}
}

func (b *browser) open(authURL string) error {
	b.opened <- authURL
	go func() { b.done <- b.visit(authURL) }()
	return nil
}

// The sandbox's consent page: a form posting the pending sign-in's id and
// the button pressed.
var (
	consentForm   = regexp.MustCompile(`<form method="post" action="([^"]+)"><input type="hidden" name="id" value="([^"]+)">`)
	consentButton = regexp.MustCompile(`<button id="(allow|deny)" name="decision" value="(allow|deny)">`)
)

func (b *browser) visit(authURL string) browserResult {
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	u, err := url.Parse(authURL)
	if err != nil {
		return browserResult{err: err}
	}
	if b.tamper != nil {
		b.tamper(u)
	}
	r, err := noFollow.Get(u.String())
	if err != nil {
		return browserResult{err: err}
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode == http.StatusOK {
		form := consentForm.FindStringSubmatch(string(body))
		pressed := ""
		for _, m := range consentButton.FindAllStringSubmatch(string(body), -1) {
			if m[1] == b.decision {
				pressed = m[2]
			}
		}
		if form == nil || pressed == "" {
			return browserResult{err: errors.New("no " + b.decision + " button on the consent page: " + string(body))}
		}
		next, _ := u.Parse(html.UnescapeString(form[1]))
		answer := url.Values{"id": {html.UnescapeString(form[2])}, "decision": {pressed}}
		req, _ := http.NewRequest(http.MethodPost, next.String(), strings.NewReader(answer.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", u.Scheme+"://"+u.Host)
		if r, err = noFollow.Do(req); err != nil {
			return browserResult{err: err}
		}
		r.Body.Close()
	}
	if r.StatusCode != http.StatusFound {
		return browserResult{err: errors.New("the sandbox did not redirect: " + r.Status)}
	}
	cb, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		return browserResult{err: err}
	}
	if b.answer != nil {
		b.answer(cb)
	}
	res := browserResult{code: cb.Query().Get("code")}
	r, err = http.Get(cb.String())
	if err != nil {
		res.err = err
		return res
	}
	page, _ := io.ReadAll(r.Body)
	r.Body.Close()
	res.page = string(page)
	return res
}

func (b *browser) result(t *testing.T) browserResult {
	t.Helper()
	select {
	case r := <-b.done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the browser never finished")
		return browserResult{}
	}
}

// noSecretIn fails if err's text holds any of the secrets.
func noSecretIn(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("the error shows a secret (%.8s...): %v", s, err)
		}
	}
}
