package sandbox

import (
	"net/url"
	"testing"
)

// Revoking a refresh token (a person removing the app at
// myaccount.google.com, or `carrier logout`) ends it and the access tokens
// refreshed from it; the account's other grants stay. TestRevokeAsGoogleDoes
// revokes by access token only.
func TestRevokeARefreshToken(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	const profile = "/gmail/v1/users/me/profile"
	m := e.signIn(scopeSend)
	other := e.signIn(scopeSend)
	_, again := e.refresh(m["refresh_token"])
	r := e.do("POST", "/revoke", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte(url.Values{"token": {m["refresh_token"].(string)}}.Encode()))
	if r.code != 200 {
		t.Fatalf("revoke: %d %s", r.code, r.body)
	}
	if !e.refreshDead(m["refresh_token"]) {
		t.Error("the revoked refresh token still refreshes")
	}
	if !e.accessDead(m["access_token"], profile) || !e.accessDead(again["access_token"], profile) {
		t.Error("an access token of the revoked grant outlived it")
	}
	if e.refreshDead(other["refresh_token"]) || e.accessDead(other["access_token"], profile) {
		t.Error("revoking one grant ended another")
	}
}
