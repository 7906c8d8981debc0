package auth

import (
	"context"
	"strings"
	"testing"

	"carrier/sandbox"
)

// A sign-in is widened with the client it was made with, read back from
// the keychain: asking for Drive alone, for the same account (login_hint),
// gives a sign-in that can do both, since Login sends
// include_granted_scopes and the sandbox honours it as Google does.
func TestWideningASignInKeepsWhatItAllowed(t *testing.T) {
	mockKeychain(t)
	sb := startSandbox(t, func(o *sandbox.Options) { o.AutoConsent = true })
	first, err := Login(context.Background(), sb.config(t), LoginOptions{Scopes: sendScopes(t), Browser: newBrowser(t, "allow").open})
	if err != nil {
		t.Fatal(err)
	}
	if first.Can(Links) {
		t.Fatalf("a sign-in for sending can make links: %v", first.Scopes())
	}
	cfg, err := first.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint != sb.url || cfg.OAuth.ClientID != SandboxClientID || cfg.OAuth.Endpoint.TokenURL != sb.url+"/token" || cfg.RevokeURL != sb.url+"/revoke" {
		t.Fatalf("config read back: %+v", cfg)
	}
	cfg.AuthParams = sb.config(t).AuthParams
	drive, _ := ScopesFor(Links)
	br := newBrowser(t, "allow")
	wider, err := Login(context.Background(), cfg, LoginOptions{Scopes: drive, Hint: first.Address, Browser: br.open})
	if err != nil {
		t.Fatal(err)
	}
	if q := mustQuery(t, <-br.opened); q.Get("login_hint") != first.Address || q.Get("include_granted_scopes") != "true" {
		t.Errorf("the widening sign-in's address: %v", q)
	}
	loaded, err := Load(sb.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []*Account{wider, loaded} {
		if !a.Can(Links) || !a.Can(Send) || a.Address != first.Address {
			t.Errorf("%s after widening: %v", a.Address, a.Scopes())
		}
	}
}

// A Google sign-in read back names Google's authorization server, the
// token server it was made with, and the person's client; a keychain entry
// naming another token server is refused, as the client file would be.
func TestGoogleConfigReadBack(t *testing.T) {
	e := &entry{V: 1, Account: "person@example.com", Endpoint: GoogleEndpoint, ClientID: "123.apps.googleusercontent.com", ClientSecret: "GOCSPX-x",
		TokenURL: "https://oauth2.googleapis.com/token", RevokeURL: googleRevokeURL, Scope: ScopeGmailSend, Refresh: "1//r"}
	cfg, err := newAccount("www.googleapis.com", e).Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint != GoogleEndpoint || cfg.OAuth.ClientID != e.ClientID || cfg.OAuth.ClientSecret != e.ClientSecret ||
		cfg.OAuth.Endpoint.AuthURL != "https://accounts.google.com/o/oauth2/auth" || cfg.OAuth.Endpoint.TokenURL != e.TokenURL ||
		cfg.RevokeURL != googleRevokeURL || strings.Join(cfg.IdentityScopes, " ") != "openid email" {
		t.Fatalf("config read back: %+v", cfg)
	}
	e.TokenURL = "https://tokens.example.com/token"
	if _, err := newAccount("www.googleapis.com", e).Config(); err == nil || !strings.Contains(err.Error(), "not Google's") {
		t.Fatalf("a foreign token server: %v", err)
	}
}
