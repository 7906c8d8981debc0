package sandbox

import (
	"net/url"
	"strings"
	"testing"
)

// include_granted_scopes=true (Google's incremental authorization): a
// sign-in that asks for Drive alone gets a grant that also covers what
// the person allowed before, and the consent page asks only for what is
// new. Without the parameter, or once the earlier grant is revoked, the
// grant is what was asked.
func TestOAuthIncludeGrantedScopes(t *testing.T) {
	e, _ := newOAuthEnv(t)
	first := e.signIn(scopeSend)

	ask := func(include bool) string {
		return authParams(func(q url.Values) {
			q.Set("scope", ScopeDriveFile)
			if include {
				q.Set("include_granted_scopes", "true")
			}
		})
	}
	page := string(e.get(ask(true)).body)
	asked, kept, _ := strings.Cut(page, "keeps what you allowed before")
	if !strings.Contains(asked, ScopeDriveFile) || strings.Contains(asked, scopeSend) || !strings.Contains(kept, scopeSend) {
		t.Fatalf("the consent page asks for more than Drive, or hides what it keeps:\n%s", page)
	}
	u := e.consent(ask(true), "allow")
	if got := u.Query().Get("scope"); got != ScopeDriveFile+" "+scopeSend {
		t.Errorf("the redirect's scope: %q", got)
	}
	code, m := e.tokenReq(exchangeForm(u.Query().Get("code")))
	if code != 200 || m["scope"] != ScopeDriveFile+" "+scopeSend {
		t.Fatalf("exchange: %d %v", code, m)
	}
	tok := m["access_token"].(string)
	if r := e.do("GET", "/gmail/v1/users/me/profile", bearer(tok), nil); r.code != 200 {
		t.Errorf("the widened token cannot read the Gmail profile: %d %s", r.code, r.body)
	}
	if r := e.do("GET", "/drive/v3/about?fields=storageQuota", bearer(tok), nil); r.code != 200 {
		t.Errorf("the widened token cannot reach Drive: %d %s", r.code, r.body)
	}

	u = e.consent(ask(false), "allow")
	_, alone := e.tokenReq(exchangeForm(u.Query().Get("code")))
	if alone["scope"] != ScopeDriveFile {
		t.Errorf("without include_granted_scopes: %v", alone["scope"])
	}

	for _, g := range []map[string]any{first, m, alone} {
		e.do("POST", "/revoke", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte(url.Values{"token": {g["refresh_token"].(string)}}.Encode()))
	}
	u = e.consent(authParams(func(q url.Values) { q.Set("include_granted_scopes", "true") }), "allow")
	if got := u.Query().Get("scope"); got != scopeSend {
		t.Errorf("with every earlier grant revoked, the scope is %q", got)
	}
}
