package auth

import (
	"slices"
	"strings"
	"testing"
)

func TestCanonicalEndpoint(t *testing.T) {
	cases := []struct{ in, base, host, err string }{
		{in: "http://127.0.0.1:8089", base: "http://127.0.0.1:8089", host: "127.0.0.1:8089"},
		{in: "http://127.0.0.1:8089/", base: "http://127.0.0.1:8089", host: "127.0.0.1:8089"},
		{in: " HTTP://LocalHost:80 ", base: "http://localhost", host: "localhost"},
		{in: "http://[::1]:9/", base: "http://[::1]:9", host: "[::1]:9"},
		{in: "https://gmail.googleapis.com", base: GoogleEndpoint, host: "www.googleapis.com"},
		{in: "https://www.googleapis.com:443/", base: GoogleEndpoint, host: "www.googleapis.com"},
		{in: "http://www.googleapis.com", base: "http://www.googleapis.com", host: "www.googleapis.com"},
		{in: "127.0.0.1:8089", err: "not an http(s) URL"},
		{in: "ftp://x", err: "not an http(s) URL"},
		{in: "http://h/upload/x", err: "no path"},
		{in: "http://u@h", err: "no path"},
		{in: "", err: "not an http(s) URL"},
	}
	for _, c := range cases {
		base, host, err := canonicalEndpoint(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || base != c.base || host != c.host {
			t.Errorf("%q: %q %q %v, want %q %q", c.in, base, host, err, c.base, c.host)
		}
	}
}

func TestGoogleConfig(t *testing.T) {
	c, err := GoogleConfig([]byte(`{"installed":{"client_id":"id.apps.googleusercontent.com","project_id":"p","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"GOCSPX-s","redirect_uris":["http://localhost"]}}`))
	if err != nil || c.OAuth.ClientID != "id.apps.googleusercontent.com" || c.OAuth.ClientSecret != "GOCSPX-s" ||
		c.OAuth.Endpoint.TokenURL != "https://oauth2.googleapis.com/token" || c.Endpoint != GoogleEndpoint || !slices.Contains(c.IdentityScopes, "email") {
		t.Fatalf("%+v %v", c, err)
	}
	bad := []struct{ json, want string }{
		{`{"web":{"client_id":"x"}}`, "Desktop app"},
		{`{"installed":{"client_secret":"x"}}`, "no client_id"},
		{`{"installed":{"client_id":"x","token_uri":"http://evil/token"}}`, "https"},
		{`{}`, `no "installed" client`},
		{`not json`, "not the JSON"},
	}
	for _, b := range bad {
		if _, err := GoogleConfig([]byte(b.json)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want %q", b.json, err, b.want)
		}
	}
}

func TestSandboxConfig(t *testing.T) {
	c, err := SandboxConfig("http://127.0.0.1:8089/")
	if err != nil || c.OAuth.ClientID != SandboxClientID || c.OAuth.Endpoint.AuthURL != "http://127.0.0.1:8089/o/oauth2/v2/auth" ||
		c.OAuth.Endpoint.TokenURL != "http://127.0.0.1:8089/token" || c.RevokeURL != "http://127.0.0.1:8089/revoke" {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestScopes(t *testing.T) {
	cases := []struct {
		kinds []Kind
		want  []string
	}{
		{[]Kind{Send}, []string{ScopeGmailSend}},
		{[]Kind{Drafts}, []string{ScopeGmailCompose}},
		{[]Kind{Insert}, []string{ScopeGmailInsert}},
		{[]Kind{Timeline, Send, Send}, []string{ScopeTimeline, ScopeGmailSend}},
		{[]Kind{Photos}, []string{ScopePhotosAppend, ScopePhotosReadAppCreated}},
	}
	for _, c := range cases {
		got, err := ScopesFor(c.kinds...)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%v: %v %v, want %v", c.kinds, got, err, c.want)
		}
	}
	// A grant for Photos from before Carrier listed its albums lacks the
	// reading of what it made: asked again rather than failing later.
	if covers([]string{ScopePhotosAppend}, Photos) || !covers([]string{ScopePhotosAppend, ScopePhotosReadAppCreated}, Photos) {
		t.Error("Photos is covered without both its scopes")
	}
	if _, err := ScopesFor("drive"); err == nil {
		t.Error("unknown kind accepted")
	}
	if k, err := ParseKinds(" send, Timeline ,"); err != nil || !slices.Equal(k, []Kind{Send, Timeline}) {
		t.Errorf("ParseKinds: %v %v", k, err)
	}
	for _, bad := range []string{"", "send,drive", " , "} {
		if _, err := ParseKinds(bad); err == nil {
			t.Errorf("ParseKinds(%q) accepted", bad)
		}
	}
	// Broader grants cover narrower work; narrower ones do not.
	if !covers([]string{ScopeGmailCompose}, Send) || covers([]string{ScopeGmailSend}, Drafts) || covers([]string{ScopeGmailSend}, Insert) || !covers([]string{scopeMailFull}, Insert) {
		t.Error("covers")
	}
}

func TestClientFileCheckedInWords(t *testing.T) {
	good := `{"installed":{"client_id":"id.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"s"}}`
	if _, err := GoogleConfig([]byte(good)); err != nil {
		t.Fatalf("a Desktop app client refused: %v", err)
	}
	bad := []struct{ name, json, want string }{
		{"web client", `{"web":{"client_id":"x","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token"}}`, `"Web application" client`},
		{"wrong token endpoint", `{"installed":{"client_id":"x","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.example.com/token"}}`, "oauth2.example.com"},
		{"wrong auth endpoint", `{"installed":{"client_id":"x","auth_uri":"https://login.example.com/auth"}}`, "login.example.com"},
		{"garbage", "\x00\x01PK zip?", "not the JSON"},
		{"empty", "  \n", "is empty"},
		{"service account", `{"type":"service_account","client_email":"x@y.iam.gserviceaccount.com"}`, "service account"},
	}
	for _, b := range bad {
		_, err := GoogleConfig([]byte(b.json))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want %q", b.name, err, b.want)
			continue
		}
		// Each refusal tells how to make the right client.
		if !strings.Contains(err.Error(), `"Desktop app"`) || !strings.Contains(err.Error(), ConsoleCredentialsURL) {
			t.Errorf("%s: %q says not how to make a Desktop client", b.name, err)
		}
	}
}

// A sandbox standing in for Google takes its own client file only, and
// refuses the rest in GoogleConfig's words: a Google client's file would
// otherwise hand the sandbox a code meant for Google, and a file naming
// a third server would hand it that.
func TestStandInConfig(t *testing.T) {
	const base = "http://127.0.0.1:8089"
	c, err := StandInConfig([]byte(`{"installed":{"client_id":"carrier-sandbox","auth_uri":"http://127.0.0.1:8089/o/oauth2/v2/auth","token_uri":"http://127.0.0.1:8089/token"}}`), base+"/")
	if err != nil || c.Endpoint != base || c.OAuth.ClientID != SandboxClientID || c.OAuth.Endpoint.TokenURL != base+"/token" {
		t.Fatalf("%+v %v", c, err)
	}
	bad := []struct{ json, want string }{
		{`{"web":{"client_id":"x"}}`, `"Web application" client`},
		{`{"installed":{"client_id":"carrier-sandbox","auth_uri":"http://127.0.0.1:8089/o/oauth2/v2/auth"`, "not the JSON Google Cloud Console downloads"},
		{`{"type":"service_account"}`, "service account"},
		{`{"installed":{"client_id":"id.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token"}}`, `names "https://accounts.google.com/o/oauth2/auth"`},
		{`{"installed":{"client_id":"carrier-sandbox","auth_uri":"http://127.0.0.1:8089/o/oauth2/v2/auth","token_uri":"http://127.0.0.1:9999/token"}}`, `names "http://127.0.0.1:9999/token"`},
		{`{"installed":{"client_id":"carrier-sandbox","auth_uri":"http://127.0.0.1:8089/o/oauth2/v2/auth"}}`, `names ""`},
		{`{"installed":{"client_id":"other","auth_uri":"http://127.0.0.1:8089/o/oauth2/v2/auth","token_uri":"http://127.0.0.1:8089/token"}}`, `client "other" is not the sandbox's`},
	}
	for _, b := range bad {
		_, err := StandInConfig([]byte(b.json), base)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want %q", b.json, err, b.want)
		}
		// Google's check says the same of a file wrong for both.
		if _, gerr := GoogleConfig([]byte(b.json)); strings.Contains(b.want, "Web") && (gerr == nil || gerr.Error() != err.Error()) {
			t.Errorf("%s: the stand-in says %v, Google's check %v", b.json, err, gerr)
		}
	}
}
