package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"carrier/sandbox"
)

// Finding: a client_secret.json could name any https token URI, and the
// authorization code and PKCE verifier went there. The attacker's step:
// hand the person a file naming their own server.
func TestClientSecretCannotNameAnotherOAuthServer(t *testing.T) {
	var hits atomic.Int32
	evil := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer evil.Close()
	file := func(auth, token string) []byte {
		b, _ := json.Marshal(map[string]any{"installed": map[string]any{"client_id": "id.apps.googleusercontent.com", "client_secret": "s", "auth_uri": auth, "token_uri": token}})
		return b
	}
	const gAuth, gToken = "https://accounts.google.com/o/oauth2/auth", "https://oauth2.googleapis.com/token"
	for _, bad := range [][2]string{
		{gAuth, evil.URL + "/token"},
		{evil.URL + "/auth", gToken},
		{gAuth, "https://oauth2.googleapis.com.evil.example/token"},
		{gAuth, "https://evil.example/oauth2.googleapis.com/token"},
		{gAuth, "https://oauth2.googleapis.com:8443/token"},
		{gAuth, "https://me@oauth2.googleapis.com/token"},
		{gAuth, "http://oauth2.googleapis.com/token"},
	} {
		if c, err := GoogleConfig(file(bad[0], bad[1])); err == nil || !strings.Contains(err.Error(), "signs in to Google only") {
			t.Errorf("%v accepted: %+v %v", bad, c, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("the file's server was contacted")
	}
	for _, good := range [][2]string{{gAuth, gToken}, {gAuth, "https://accounts.google.com/o/oauth2/token"}, {"https://ACCOUNTS.google.com:443/o/oauth2/v2/auth", gToken}} {
		if _, err := GoogleConfig(file(good[0], good[1])); err != nil {
			t.Errorf("%v refused: %v", good, err)
		}
	}
	// The sandbox's own sign-in keeps its loopback endpoints.
	if c, err := SandboxConfig("http://127.0.0.1:8089"); err != nil || c.OAuth.Endpoint.TokenURL != "http://127.0.0.1:8089/token" {
		t.Fatalf("sandbox: %+v %v", c, err)
	}
}

func idToken(claims map[string]any) string {
	b, _ := json.Marshal(claims)
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(b) + ".sig"
}

// Finding: the ID token's email was trusted unverified. It now counts only
// if Google issued it, for this client, unexpired, about a verified
// address; otherwise the address comes from the profile.
func TestIDTokenTrustedOnlyWhenItHoldsUp(t *testing.T) {
	now := time.Now()
	good := func() map[string]any {
		return map[string]any{"iss": "https://accounts.google.com", "aud": "me.apps", "exp": now.Add(time.Hour).Unix(), "email": "p@example.com", "email_verified": true}
	}
	with := func(k string, v any) map[string]any { c := good(); c[k] = v; return c }
	without := func(k string) map[string]any { c := good(); delete(c, k); return c }
	cases := []struct {
		name   string
		claims map[string]any
		want   string
	}{
		{"Google's, for this client", good(), "p@example.com"},
		{"iss without scheme", with("iss", "accounts.google.com"), "p@example.com"},
		{"aud as a list", with("aud", []string{"me.apps"}), "p@example.com"},
		{"another client's", with("aud", "other.apps"), ""},
		{"no audience", without("aud"), ""},
		{"another issuer", with("iss", "https://evil.example"), ""},
		{"no issuer", without("iss"), ""},
		{"expired", with("exp", now.Add(-time.Hour).Unix()), ""},
		{"no expiry", without("exp"), ""},
		{"unverified address", with("email_verified", false), ""},
		{"authorized party another client", with("azp", "other.apps"), ""},
	}
	for _, c := range cases {
		if got := emailFromIDToken(idToken(c.claims), "me.apps", now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// rewrite sends every request to srv, whatever its host: Google's
// profile endpoint played by a test server.
type rewrite struct{ srv *httptest.Server }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	u, _ := url.Parse(r.srv.URL)
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = u.Scheme, u.Host
	return http.DefaultTransport.RoundTrip(req)
}

// A token endpoint that sends an ID token for another client: the sign-in
// takes the address from the profile, asked with the access token.
func TestLoginDoesNotTakeAForgedIDToken(t *testing.T) {
	mockKeychain(t)
	var profileCalls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "ya29.a", "expires_in": 3599, "token_type": "Bearer", "refresh_token": "1//r",
			"id_token": idToken(map[string]any{"iss": "https://accounts.google.com", "aud": "another-client.apps", "exp": time.Now().Add(time.Hour).Unix(), "email": "victim@example.com", "email_verified": true})})
	})
	mux.HandleFunc("GET /gmail/v1/users/me/profile", func(w http.ResponseWriter, r *http.Request) {
		profileCalls.Add(1)
		if r.Header.Get("Authorization") != "Bearer ya29.a" {
			http.Error(w, "{}", 401)
			return
		}
		io.WriteString(w, `{"emailAddress":"person@example.com"}`)
	})
	g := httptest.NewServer(mux)
	defer g.Close()
	cfg, err := GoogleConfig([]byte(`{"installed":{"client_id":"123.apps.googleusercontent.com","client_secret":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OAuth.Endpoint.TokenURL = g.URL + "/token" // Google's, played here
	cfg.RevokeURL = ""
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: rewrite{g}})
	done := make(chan error, 1)
	acct, err := Login(ctx, cfg, LoginOptions{Scopes: sendScopes(t), Browser: answerDirectly(done)})
	if err != nil || <-done != nil {
		t.Fatalf("login: %v", err)
	}
	if acct.Address != "person@example.com" || profileCalls.Load() != 1 {
		t.Fatalf("signed in as %q (profile asked %d times): the forged ID token was trusted", acct.Address, profileCalls.Load())
	}
}

// Finding: the first answer at the loopback won, so a stray
// /?state=x (any page can make the browser send one) aborted a sign-in.
// The attacker's step: send it before the real answer comes.
func TestStrayCallbackDoesNotAbortTheSignIn(t *testing.T) {
	mockKeychain(t)
	sb := startSandbox(t, nil)
	br := newBrowser(t, "allow")
	var stray string
	acct, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Timeout: 20 * time.Second, Browser: func(authURL string) error {
		ru := mustQuery(t, authURL).Get("redirect_uri")
		client := &http.Client{Timeout: 3 * time.Second} // a stray taken for the answer would wait on this very call
		for _, q := range []string{"state=x&error=access_denied", "state=x&code=forged", "error=access_denied", "code=forged"} {
			r, err := client.Get(ru + "?" + q)
			if err != nil {
				stray = q + ": " + err.Error()
				continue
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusBadRequest {
				stray = q + ": " + r.Status
			}
			if !strings.Contains(string(b), "does not belong") {
				stray = q + ": " + string(b)
			}
		}
		return br.open(authURL)
	}})
	res := br.result(t)
	if err != nil || res.err != nil || acct.Address != sandbox.DefaultAccount {
		t.Fatalf("the stray answers stopped the sign-in: %v; browser %v", err, res.err)
	}
	if stray != "" {
		t.Fatalf("a stray answer was not turned away: %s", stray)
	}
}
