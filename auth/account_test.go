package auth

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"carrier/sandbox"
)

// signedIn signs in to a fresh sandbox and returns the account.
func signedIn(t *testing.T, opt func(*sandbox.Options)) (*testSandbox, *spyKeychain, *Account) {
	t.Helper()
	spy := mockKeychain(t)
	sb := startSandbox(t, func(o *sandbox.Options) {
		o.AutoConsent = true
		if opt != nil {
			opt(o)
		}
	})
	br := newBrowser(t, "allow")
	acct, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: br.open})
	if res := br.result(t); err != nil || res.err != nil {
		t.Fatalf("login: %v; browser: %v", err, res.err)
	}
	return sb, spy, acct
}

func savedEntry(t *testing.T, spy *spyKeychain, a *Account) entry {
	t.Helper()
	var e entry
	raw, ok := spy.snapshot()[Service+"/"+accountKey(a.host, a.Address)]
	if !ok || json.Unmarshal([]byte(raw), &e) != nil {
		t.Fatalf("no entry for %s: %v", a.Address, keysOf(spy.snapshot()))
	}
	return e
}

func TestExpiredTokenIsRefreshedAndSaved(t *testing.T) {
	sb, spy, acct := signedIn(t, func(o *sandbox.Options) { o.TokenTTL = 10 * time.Minute })
	first := savedEntry(t, spy, acct)

	// Ten minutes on, for both sides.
	sb.clock.Advance(10 * time.Minute)
	acct.now = func() time.Time { return time.Now().Add(10 * time.Minute) }
	if sb.status(t, first.Access) != 401 {
		t.Fatal("the sandbox still takes the expired token, so this test proves nothing")
	}
	tok, err := acct.TokenSource(context.Background()).Token()
	if err != nil || tok.AccessToken == first.Access || tok.RefreshToken != first.Refresh {
		t.Fatalf("refresh: %v", err)
	}
	if sb.status(t, tok.AccessToken) != 200 {
		t.Fatal("the refreshed token does not work")
	}
	saved := savedEntry(t, spy, acct)
	if saved.Access != tok.AccessToken || !saved.Expiry.Equal(tok.Expiry) || saved.Refresh != first.Refresh {
		t.Fatalf("the refreshed token was not saved back")
	}
	loaded, err := Load(sb.url)
	if err != nil {
		t.Fatal(err)
	}
	loaded.now = acct.now
	if again, err := loaded.Token(context.Background()); err != nil || again.AccessToken != tok.AccessToken {
		t.Fatalf("a new process should reuse the saved token: %v", err)
	}
}

// After a 401 the engine forces one refresh although the token's expiry
// says it is fine (the server may have revoked it, or the clocks differ).
func TestRefreshIsForcedOnDemand(t *testing.T) {
	sb, spy, acct := signedIn(t, nil)
	first := savedEntry(t, spy, acct)
	ts := acct.TokenSource(context.Background())
	if tok, _ := ts.Token(); tok.AccessToken != first.Access {
		t.Fatal("a valid token was replaced without need")
	}
	tok, err := ts.Refresh(context.Background())
	if err != nil || tok.AccessToken == first.Access {
		t.Fatalf("forced refresh: %v", err)
	}
	if savedEntry(t, spy, acct).Access != tok.AccessToken {
		t.Fatal("the forced refresh was not saved")
	}
	if bearer, err := acct.Bearer(context.Background(), false); err != nil || bearer != tok.AccessToken {
		t.Fatalf("Bearer: %v", err)
	}
	if bearer, err := acct.Bearer(context.Background(), true); err != nil || bearer == tok.AccessToken || sb.status(t, bearer) != 200 {
		t.Fatalf("Bearer(refresh): %v", err)
	}
	// The token source works with the oauth2 HTTP client as it is.
	client := oauth2.NewClient(context.Background(), ts)
	r, err := client.Get(sb.url + "/gmail/v1/users/me/profile")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("oauth2 client: %v %v", r, err)
	}
	r.Body.Close()
}

func TestLogoutRevokesAndRemoves(t *testing.T) {
	sb, spy, acct := signedIn(t, nil)
	e := savedEntry(t, spy, acct)
	who, err := Logout(context.Background(), sb.url, "")
	if err != nil || who != sandbox.DefaultAccount {
		t.Fatalf("logout: %q %v", who, err)
	}
	onlyClientLeft(t, spy, e)
	if sb.status(t, e.Access) != 401 {
		t.Fatal("the server still takes the token of a signed-out account")
	}
	if _, err := Load(sb.url); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("Load after logout: %v", err)
	}
	// An Account loaded before the logout finds its grant gone.
	_, err = acct.Refresh(context.Background())
	if !errors.Is(err, ErrNotSignedIn) || !strings.Contains(err.Error(), "sign in again") {
		t.Fatalf("refresh of a revoked grant: %v", err)
	}
	noSecretIn(t, err, e.Refresh, e.Access)
	if _, err := Logout(context.Background(), sb.url, ""); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("second logout: %v", err)
	}
}

func TestLogoutOfflineStillRemoves(t *testing.T) {
	sb, spy, acct := signedIn(t, nil)
	e := savedEntry(t, spy, acct)
	sb.srv.Close()
	who, err := Logout(context.Background(), sb.url, sandbox.DefaultAccount)
	if who != sandbox.DefaultAccount || !errors.Is(err, ErrNotRevoked) {
		t.Fatalf("logout offline: %q %v", who, err)
	}
	onlyClientLeft(t, spy, e)
}

// onlyClientLeft checks that the keychain holds nothing after the last
// account signed out but the client it signed in with (issue 32: signing
// in again needs no client file), with no token or address in it, and
// that Client gives it back.
func onlyClientLeft(t *testing.T, spy *spyKeychain, e entry) {
	t.Helper()
	got := spy.snapshot()
	if len(got) != 1 {
		t.Fatalf("entries left: %v, want the client's alone", keysOf(got))
	}
	for _, raw := range got {
		for _, secret := range []string{e.Refresh, e.Access, e.Account} {
			if secret != "" && strings.Contains(raw, secret) {
				t.Fatalf("the client kept after sign-out holds a token or the address: %q", raw)
			}
		}
	}
	cfg, err := Client(e.Endpoint)
	if err != nil || cfg.OAuth.ClientID != e.ClientID || cfg.OAuth.Endpoint.TokenURL != e.TokenURL {
		t.Fatalf("the client after sign-out: %+v %v, want %s", cfg, err, e.ClientID)
	}
}

func TestNoClientBeforeAnySignIn(t *testing.T) {
	mockKeychain(t)
	if _, err := Client("http://h:1"); !errors.Is(err, ErrNoClient) {
		t.Fatalf("Client with nothing signed in ever: %v, want ErrNoClient", err)
	}
}

func TestRefreshFailsClearlyWhenOffline(t *testing.T) {
	sb, spy, acct := signedIn(t, nil)
	e := savedEntry(t, spy, acct)
	sb.srv.Close()
	_, err := acct.Refresh(context.Background())
	if err == nil || errors.Is(err, ErrNotSignedIn) || !strings.Contains(err.Error(), "check the connection") {
		t.Fatalf("offline refresh: %v", err)
	}
	noSecretIn(t, err, e.Refresh, e.Access)
	if savedEntry(t, spy, acct).Access != e.Access {
		t.Fatal("a failed refresh changed the saved entry")
	}
}

func TestDamagedEntries(t *testing.T) {
	spy := mockKeychain(t)
	spy.Set(Service, "127.0.0.1:1", "{not json")
	if _, err := Load("http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged index: %v", err)
	}
	spy.Set(Service, "127.0.0.1:2", `{"accounts":["a@b"]}`)
	spy.Set(Service, "a@b@127.0.0.1:2", `{"v":1}`)
	if _, err := Load("http://127.0.0.1:2"); !errors.Is(err, ErrNotSignedIn) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged entry: %v", err)
	}
	// Logout clears up even a damaged entry.
	if who, err := Logout(context.Background(), "http://127.0.0.1:2", ""); who != "a@b" || err != nil || len(spy.snapshot()) != 1 {
		t.Fatalf("logout of a damaged entry: %q %v %v", who, err, keysOf(spy.snapshot()))
	}
}

func TestSeveralAccountsAtOneEndpoint(t *testing.T) {
	spy := mockKeychain(t)
	for _, a := range []string{"one@x", "two@x"} {
		if err := save("h:1", &entry{V: 1, Account: a, Endpoint: "http://h:1", ClientID: "c", TokenURL: "http://h:1/token", Refresh: "r-" + a}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := Accounts("http://h:1"); strings.Join(got, ",") != "two@x,one@x" {
		t.Fatalf("accounts %v: the last signed in comes first", got)
	}
	if a, err := Load("http://h:1"); err != nil || a.Address != "two@x" {
		t.Fatalf("default: %v", err)
	}
	if a, err := LoadAccount("http://h:1", "one@x"); err != nil || a.Address != "one@x" {
		t.Fatalf("named: %v", err)
	}
	if _, err := Logout(context.Background(), "http://h:1", "two@x"); err != nil {
		t.Fatal(err)
	}
	if a, err := Load("http://h:1"); err != nil || a.Address != "one@x" || len(spy.snapshot()) != 3 { // the index, one@x, the client kept
		t.Fatalf("after logout of the default: %v %v", err, keysOf(spy.snapshot()))
	}
}

// TestSingleSignInOfAnEarlierCarrierIsOneOfSeveral starts from the keychain
// a one-account Carrier left (its raw entries, as written), adds a second
// account beside it, and checks the first is still listed, still loads and
// its secret is untouched.
func TestSingleSignInOfAnEarlierCarrierIsOneOfSeveral(t *testing.T) {
	mockKeychain(t)
	old := `{"v":1,"acct":"old@x","ep":"http://h:1","cid":"c","tu":"http://h:1/token","sc":"s","rt":"r-old","at":"a-old"}`
	if err := store.Set(Service, "old@x@h:1", old); err != nil {
		t.Fatal(err)
	}
	if err := store.Set(Service, "h:1", `{"accounts":["old@x"]}`); err != nil {
		t.Fatal(err)
	}
	if got, err := Accounts("http://h:1"); err != nil || strings.Join(got, ",") != "old@x" {
		t.Fatalf("the earlier sign-in reads as %v %v, want one account", got, err)
	}
	if err := save("h:1", &entry{V: 1, Account: "new@x", Endpoint: "http://h:1", ClientID: "c", TokenURL: "http://h:1/token", Refresh: "r-new"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := Accounts("http://h:1"); strings.Join(got, ",") != "new@x,old@x" {
		t.Fatalf("accounts %v after a second sign-in", got)
	}
	if got, _ := store.Get(Service, "old@x@h:1"); got != old {
		t.Fatalf("the earlier entry changed: %s", got)
	}
	a, err := LoadAccount("http://h:1", "old@x")
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := a.Bearer(context.Background(), false); err != nil || tok != "a-old" {
		t.Fatalf("the earlier sign-in's token: %q %v", tok, err)
	}
}

func TestUseRemembersTheLastSender(t *testing.T) {
	mockKeychain(t)
	for _, a := range []string{"one@x", "two@x"} {
		if err := save("h:1", &entry{V: 1, Account: a, Endpoint: "http://h:1", ClientID: "c", TokenURL: "http://h:1/token", Refresh: "r-" + a}); err != nil {
			t.Fatal(err)
		}
	}
	if err := Use("http://h:1", "one@x"); err != nil {
		t.Fatal(err)
	}
	if a, err := Load("http://h:1"); err != nil || a.Address != "one@x" {
		t.Fatalf("default after Use: %v %v", a, err)
	}
	if got, _ := Accounts("http://h:1"); strings.Join(got, ",") != "one@x,two@x" {
		t.Fatalf("accounts %v", got)
	}
	if err := Use("http://h:1", "nobody@x"); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("Use of an account not signed in: %v", err)
	}
}
