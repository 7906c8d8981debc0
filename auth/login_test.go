package auth

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/sandbox"
)

func sendScopes(t *testing.T) []string {
	s, err := ScopesFor(Send)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoginThroughTheConsentPage(t *testing.T) {
	spy := mockKeychain(t)
	sb := startSandbox(t, nil)
	br := newBrowser(t, "allow")
	acct, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: br.open})
	res := br.result(t)
	if err != nil || res.err != nil {
		t.Fatalf("login: %v; browser: %v", err, res.err)
	}
	if acct.Address != sandbox.DefaultAccount || acct.Endpoint != sb.url || !acct.Can(Send) || acct.Can(Timeline) {
		t.Fatalf("account %q at %q, scopes %v", acct.Address, acct.Endpoint, acct.Scopes())
	}
	if !strings.Contains(res.page, "signed in as "+sandbox.DefaultAccount) || !strings.Contains(res.page, "close this window") {
		t.Fatalf("browser page: %s", res.page)
	}

	// The request the browser got: PKCE S256, offline, the loopback.
	q := mustQuery(t, <-br.opened)
	ru, _ := url.Parse(q.Get("redirect_uri"))
	if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || q.Get("access_type") != "offline" ||
		len(q.Get("state")) < 32 || ru.Hostname() != "127.0.0.1" || ru.Port() == "" || q.Get("scope") != ScopeGmailSend {
		t.Fatalf("authorization request: %v", q)
	}

	host := strings.TrimPrefix(sb.url, "http://")
	entries := spy.snapshot()
	raw, ok := entries[Service+"/"+sandbox.DefaultAccount+"@"+host]
	if !ok || entries[Service+"/"+host] != `{"accounts":["`+sandbox.DefaultAccount+`"]}` || len(entries) != 2 {
		t.Fatalf("keychain: %v", entries)
	}
	var e entry
	if err := json.Unmarshal([]byte(raw), &e); err != nil || e.Refresh == "" || e.Access == "" || e.Expiry.IsZero() || e.TokenURL != sb.url+"/token" {
		t.Fatalf("entry %s: %v", raw, err)
	}
	if sb.status(t, e.Access) != 200 {
		t.Fatal("the saved access token does not work")
	}

	loaded, err := Load(sb.url + "/")
	if err != nil || loaded.Address != acct.Address {
		t.Fatalf("Load: %v", err)
	}
	tok, err := loaded.Token(context.Background())
	if err != nil || tok.AccessToken != e.Access {
		t.Fatalf("a loaded, still valid token should be used as is: %v", err)
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestLoginFailuresSaveNothing(t *testing.T) {
	cases := []struct {
		name     string
		decision string
		tamper   func(*url.URL)
		answer   func(*url.URL)
		want     error
		wantText string
		page     string
		timeout  time.Duration
	}{
		// An answer with another state is ignored until the timeout (it
		// may come from any page), then reported.
		{name: "wrong state", decision: "allow", answer: func(u *url.URL) { setQuery(u, "state", "forged") },
			want: ErrStateMismatch, wantText: "state differs", page: "does not belong", timeout: 500 * time.Millisecond},
		{name: "denied", decision: "deny", want: ErrDenied, wantText: "choose Allow", page: "not granted"},
		{name: "PKCE mismatch", decision: "allow",
			tamper: func(u *url.URL) { // a challenge not the verifier's, signed as the client would
				q := u.Query()
				challenge := strings.Repeat("A", 43)
				setQuery(u, "code_challenge", challenge)
				setQuery(u, sandbox.ProofParam, sandbox.ConsentProof("static-test-token", challenge, q.Get("redirect_uri"), q.Get("scope")))
			},
			wantText: "did not accept the authorization code", page: "could not finish"},
		{name: "missing code", decision: "allow", answer: func(u *url.URL) { setQuery(u, "code", "") },
			wantText: "no authorization code", page: "could not finish"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spy := mockKeychain(t)
			sb := startSandbox(t, nil)
			br := newBrowser(t, c.decision)
			br.tamper, br.answer = c.tamper, c.answer
			acct, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: br.open, Timeout: c.timeout})
			res := br.result(t)
			if acct != nil || err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.wantText) || !strings.Contains(err.Error(), "Nothing was saved") {
				t.Fatalf("got %v, %v; want %v mentioning %q", acct, err, c.want, c.wantText)
			}
			if res.err != nil || !strings.Contains(res.page, c.page) {
				t.Fatalf("browser page %q (%v), want it to say %q", res.page, res.err, c.page)
			}
			noSecretIn(t, err, res.code)
			wantNothingSaved(t, spy)
		})
	}
}

func setQuery(u *url.URL, k, v string) {
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
}

func TestLoginTimeoutWhenTheBrowserIsClosed(t *testing.T) {
	spy := mockKeychain(t)
	sb := startSandbox(t, nil)
	opened := make(chan string, 1)
	_, err := Login(context.Background(), sb.config(t), LoginOptions{
		Scopes:  sendScopes(t),
		Browser: func(u string) error { opened <- u; return nil }, // then closed without answering
		Timeout: 200 * time.Millisecond,
	})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "sign in again") {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	wantNothingSaved(t, spy)
	// The listener is gone with the sign-in: a late answer finds no one.
	ru := mustQuery(t, <-opened).Get("redirect_uri")
	if r, err := http.Get(ru + "?state=x&code=y"); err == nil {
		r.Body.Close()
		t.Fatalf("the loopback listener outlived the sign-in: %s", r.Status)
	}
}

func TestLoginStopsWithItsContext(t *testing.T) {
	spy := mockKeychain(t)
	sb := startSandbox(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Login(ctx, sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: func(string) error { cancel(); return nil }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	wantNothingSaved(t, spy)
}

func TestLoginWithoutBrowserPrintsTheAddressAlone(t *testing.T) {
	mockKeychain(t)
	sb := startSandbox(t, func(o *sandbox.Options) { o.AutoConsent = true })
	pr, pw := io.Pipe()
	defer pr.Close()
	br := newBrowser(t, "allow")
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "http") {
				br.open(sc.Text())
			}
		}
	}()
	var called atomic.Bool
	acct, err := Login(context.Background(), sb.config(t), LoginOptions{
		Scopes: sendScopes(t), NoBrowser: true, Out: pw,
		Browser: func(string) error { called.Store(true); return nil },
	})
	pw.Close()
	if err != nil || acct.Address != sandbox.DefaultAccount {
		t.Fatalf("login: %v", err)
	}
	if called.Load() {
		t.Fatal("--no-browser opened a browser")
	}
	if res := br.result(t); res.err != nil || !strings.Contains(res.page, "close this window") {
		t.Fatalf("browser: %v %s", res.err, res.page)
	}
}

func TestLoginWithoutKeychainSaysWhatToInstall(t *testing.T) {
	needMock(t)
	keyring.MockInitWithError(errors.New("org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided by any .service files"))
	t.Cleanup(keyring.MockInit)
	sb := startSandbox(t, nil)
	called := false
	_, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: func(string) error { called = true; return nil }})
	if !errors.Is(err, ErrNoKeychain) || !strings.Contains(err.Error(), "org.freedesktop.secrets") || !strings.Contains(err.Error(), "never in a plain file") {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(keychainHint(), "Secret Service") && !strings.Contains(err.Error(), "gnome-keyring") {
		t.Fatalf("no install hint: %v", err)
	}
	if called {
		t.Fatal("the browser was opened although nothing could be saved")
	}
	if _, err := Load(sb.url); !errors.Is(err, ErrNoKeychain) {
		t.Fatalf("Load: %v", err)
	}
}

// fakeGoogle is a token endpoint that answers like Google: an ID token
// naming the account, and an access token long enough (Google documents
// no upper bound it keeps to) that the entry overflows Windows' 2560 bytes.
func fakeGoogle(t *testing.T, profileCalls *atomic.Int32) *httptest.Server {
	claims, _ := json.Marshal(map[string]any{"email": "person@example.com", "email_verified": true,
		"iss": "https://accounts.google.com", "aud": "123.apps.googleusercontent.com", "exp": time.Now().Add(time.Hour).Unix()})
	idToken := "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(claims) + ".sig"
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("code_verifier") == "" && r.PostForm.Get("grant_type") == "authorization_code" {
			http.Error(w, `{"error":"invalid_grant"}`, 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"access_token": "ya29." + strings.Repeat("a", 2495), "expires_in": 3599, "token_type": "Bearer",
			"refresh_token": "1//refresh-" + r.PostForm.Get("grant_type"), "id_token": idToken,
			"scope": "openid https://www.googleapis.com/auth/userinfo.email " + ScopeGmailSend,
		})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		profileCalls.Add(1)
		http.Error(w, "{}", 403)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// answerDirectly consents at once: it sends the browser straight back to
// Carrier's listener with a code.
func answerDirectly(done chan<- error) func(string) error {
	return func(authURL string) error {
		u, _ := url.Parse(authURL)
		q := u.Query()
		go func() {
			r, err := http.Get(q.Get("redirect_uri") + "?" + url.Values{"code": {"4/code"}, "state": {q.Get("state")}}.Encode())
			if err == nil {
				r.Body.Close()
			}
			done <- err
		}()
		return nil
	}
}

func TestLoginWithGoogleLikeTokensOnAWindowsSizedKeychain(t *testing.T) {
	spy := mockKeychain(t)
	spy.setLimit(2560)
	var profileCalls atomic.Int32
	g := fakeGoogle(t, &profileCalls)
	cfg, err := GoogleConfig([]byte(`{"installed":{"client_id":"123.apps.googleusercontent.com","client_secret":"GOCSPX-x","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","redirect_uris":["http://localhost"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OAuth.Endpoint.TokenURL = g.URL + "/token"
	cfg.RevokeURL = ""
	var opened string
	done := make(chan error, 1)
	acct, err := Login(context.Background(), cfg, LoginOptions{Scopes: sendScopes(t), Browser: func(u string) error { opened = u; return answerDirectly(done)(u) }})
	if err != nil || <-done != nil {
		t.Fatalf("login: %v", err)
	}
	if acct.Address != "person@example.com" || acct.Endpoint != GoogleEndpoint || profileCalls.Load() != 0 {
		t.Fatalf("account %q at %q; profile asked %d times", acct.Address, acct.Endpoint, profileCalls.Load())
	}
	if q := mustQuery(t, opened); q.Get("scope") != "email "+ScopeGmailSend+" openid" || q.Get("prompt") != "consent" || q.Get("include_granted_scopes") != "true" {
		t.Fatalf("Google request: %v", q)
	}
	raw := spy.snapshot()[Service+"/person@example.com@www.googleapis.com"]
	var e entry
	if err := json.Unmarshal([]byte(raw), &e); err != nil || e.Refresh != "1//refresh-authorization_code" || e.Access != "" || len(raw) > 2560 {
		t.Fatalf("entry (%d bytes) should hold the refresh token without the access token: %.200s", len(raw), raw)
	}
	// The access token lives on in memory, and a refresh saves again.
	if tok, err := acct.Token(context.Background()); err != nil || len(tok.AccessToken) != 2500 {
		t.Fatalf("token in memory: %v", err)
	}
	loaded, err := Load("https://gmail.googleapis.com")
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := loaded.Token(context.Background()); err != nil || len(tok.AccessToken) != 2500 || tok.RefreshToken != "1//refresh-refresh_token" {
		t.Fatalf("a loaded entry without access token refreshes: %v", err)
	}
	json.Unmarshal([]byte(spy.snapshot()[Service+"/person@example.com@www.googleapis.com"]), &e)
	if e.Refresh != "1//refresh-refresh_token" {
		t.Fatal("the rotated refresh token was not saved")
	}
}

func TestLoginWhenEvenTheRefreshTokenDoesNotFit(t *testing.T) {
	spy := mockKeychain(t)
	spy.setLimit(100)
	sb := startSandbox(t, func(o *sandbox.Options) { o.AutoConsent = true })
	br := newBrowser(t, "allow")
	_, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: br.open})
	res := br.result(t)
	if !errors.Is(err, keyring.ErrSetDataTooBig) || !strings.Contains(err.Error(), "too big") || errors.Is(err, ErrNoKeychain) {
		t.Fatalf("got %v", err)
	}
	noSecretIn(t, err, res.code)
	wantNothingSaved(t, spy)
}

// A failure to write the index takes the account's entry back out.
func TestLoginUndoesTheEntryWhenTheIndexFails(t *testing.T) {
	spy := mockKeychain(t)
	store = &failingIndex{spy}
	sb := startSandbox(t, func(o *sandbox.Options) { o.AutoConsent = true })
	br := newBrowser(t, "allow")
	_, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: br.open})
	br.result(t)
	if !errors.Is(err, ErrNoKeychain) || !strings.Contains(err.Error(), "nothing was saved") {
		t.Fatalf("got %v", err)
	}
	wantNothingSaved(t, spy)
}

type failingIndex struct{ *spyKeychain }

func (f *failingIndex) Set(service, user, secret string) error {
	if !strings.Contains(user, "@") {
		return errors.New("org.freedesktop.Secret.Error.IsLocked")
	}
	return f.spyKeychain.Set(service, user, secret)
}
