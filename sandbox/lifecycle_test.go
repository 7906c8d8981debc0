package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	scopeMail   = "https://mail.google.com/"
	workAccount = "work@carrier.sandbox"
	expiredDesc = "Token has been expired or revoked."
)

// signInAs signs in with a login_hint ("" for none); offline asks for a
// refresh token.
func (e *testEnv) signInAs(hint, scope string, offline bool) map[string]any {
	e.t.Helper()
	path := authParams(func(q url.Values) {
		q.Set("scope", scope)
		if hint != "" {
			q.Set("login_hint", hint)
		}
		if !offline {
			q.Del("access_type")
		}
	})
	u := redirectTarget(e.t, e.get(path))
	if u.Query().Get("error") != "" {
		e.t.Fatalf("sign-in as %q: %s", hint, u.Query().Get("error_description"))
	}
	code, m := e.tokenReq(exchangeForm(u.Query().Get("code")))
	if code != 200 {
		e.t.Fatalf("exchange: %d %v", code, m)
	}
	return m
}

func (e *testEnv) refresh(rt any) (int, map[string]any) {
	e.t.Helper()
	return e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt.(string)}, "client_id": {OAuthClientID}})
}

// refreshDead says the token endpoint refuses rt as Google does.
func (e *testEnv) refreshDead(rt any) bool {
	e.t.Helper()
	code, m := e.refresh(rt)
	return code == 400 && m["error"] == "invalid_grant" && m["error_description"] == expiredDesc
}

// accessDead says the APIs refuse an access token as Google does: 401
// UNAUTHENTICATED, WWW-Authenticate naming invalid_token.
func (e *testEnv) accessDead(tok any, path string) bool {
	e.t.Helper()
	r := e.do("GET", path, bearer(tok.(string)), nil)
	if r.code == 200 {
		return false
	}
	var b errorBody
	json.Unmarshal(r.body, &b)
	if r.code != 401 || b.Error.Status != "UNAUTHENTICATED" || !strings.Contains(r.h.Get("WWW-Authenticate"), "invalid_token") {
		e.t.Fatalf("GET %s: %d %s, want 200 or Google's 401", path, r.code, r.body)
	}
	return true
}

func (e *testEnv) control(method, path, body string) resp {
	e.t.Helper()
	return e.do(method, path, auth("Content-Type", "application/json"), []byte(body))
}

func TestRefreshTokenLifetime(t *testing.T) {
	const profile = "/gmail/v1/users/me/profile"
	cases := []struct {
		name     string
		opt      time.Duration // Options.RefreshTokenTTL
		put      string        // PUT /sandbox/v1/auth before the sign-in
		after    time.Duration // clock moved after the sign-in
		dead     bool
		accessOK bool // the access token of the first answer still works
	}{
		{"production: no lifetime", 0, "", 200 * 24 * time.Hour, false, false},
		{"testing: a second before 7 days", TestingRefreshTTL, "", TestingRefreshTTL - time.Second, false, false},
		{"testing: at 7 days", TestingRefreshTTL, "", TestingRefreshTTL, true, false},
		{"set at run time in seconds", 0, `{"refreshTokenTTL": 30}`, 30 * time.Second, true, false},
		{"set at run time as a duration, before its end", 0, `{"refreshTokenTTL": "30m"}`, 29 * time.Minute, false, true},
		{"set at run time, its access token dies with it", 0, `{"refreshTokenTTL": "30m"}`, 31 * time.Minute, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, clk := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.RefreshTokenTTL = c.opt })
			if c.put != "" {
				if r := e.control("PUT", "/sandbox/v1/auth", c.put); r.code != 200 {
					t.Fatalf("PUT /sandbox/v1/auth: %d %s", r.code, r.body)
				}
			}
			m := e.signIn(scopeSend)
			clk.Advance(c.after)
			// The access token first: asking the token endpoint would
			// clear the dead grant away.
			if c.dead || c.accessOK {
				if got := e.accessDead(m["access_token"], profile); got == c.accessOK {
					t.Errorf("access token dead = %v, want %v", got, !c.accessOK)
				}
			}
			if got := e.refreshDead(m["refresh_token"]); got != c.dead {
				t.Errorf("refresh token dead = %v, want %v", got, c.dead)
			}
		})
	}
}

// TestRefreshTokenLifetimeIsTheIssuers: a token keeps the lifetime it was
// issued under, as a project's tokens do when it leaves "Testing".
func TestRefreshTokenLifetimeIsTheIssuers(t *testing.T) {
	e, clk := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.RefreshTokenTTL = time.Hour })
	short := e.signIn(scopeSend)
	e.control("PUT", "/sandbox/v1/auth", `{"refreshTokenTTL": "0"}`)
	forever := e.signIn(scopeSend)
	clk.Advance(2 * time.Hour)
	if !e.refreshDead(short["refresh_token"]) {
		t.Error("a token issued with a 1h lifetime outlived it once the lifetime was lifted")
	}
	if e.refreshDead(forever["refresh_token"]) {
		t.Error("a token issued with no lifetime expired")
	}
}

func TestAuthControlRefusesBadInput(t *testing.T) {
	e, _ := newOAuthEnv(t)
	for _, body := range []string{`{"refreshTokenTTL": "a week"}`, `{"refreshTokenTTL": -5}`, `{"refreshTokenLimit": -1}`,
		`{"signInAccount": "nobody@carrier.sandbox"}`, `{"sessionNeedsToken": "yes"}`, `{"colour": 1}`, `not json`} {
		if r := e.control("PUT", "/sandbox/v1/auth", body); r.code/100 != 4 || r.errMessage(t) == "" {
			t.Errorf("PUT /sandbox/v1/auth %s: %d %s", body, r.code, r.body)
		}
	}
	if r := e.control("GET", "/sandbox/v1/auth", ""); r.code != 200 || r.json(t)["refreshTokenLimit"] != float64(100) {
		t.Errorf("GET /sandbox/v1/auth: %d %s", r.code, r.body)
	}
	if r := e.do("GET", "/sandbox/v1/auth", nil, nil); r.code != 401 {
		t.Errorf("the controls without the static token: %d", r.code)
	}
}

func TestPasswordChangeRevokesGmailTokens(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.Accounts = []string{workAccount} })
	const gmailProfile, driveAbout = "/gmail/v1/users/me/profile", "/drive/v3/about?fields=user"
	type tok struct {
		name, account, scope string
		offline              bool
		probe                string
		dies                 bool
	}
	toks := []tok{
		{"gmail.send, offline", DefaultAccount, scopeSend, true, gmailProfile, true},
		{"mail.google.com, online", DefaultAccount, scopeMail, false, gmailProfile, true},
		{"gmail and drive in one grant", DefaultAccount, scopeSend + " " + ScopeDrive, true, driveAbout, true},
		{"drive only", DefaultAccount, ScopeDrive, true, driveAbout, false},
		{"another account's gmail", workAccount, scopeSend, true, gmailProfile, false},
	}
	got := make([]map[string]any, len(toks))
	for i, k := range toks {
		got[i] = e.signInAs(k.account, k.scope, k.offline)
	}
	r := e.control("POST", "/sandbox/v1/accounts/"+DefaultAccount+"/password", "")
	if r.code != 200 || r.json(t)["tokensRevoked"] != float64(5) { // 2 refresh tokens with their access tokens, 1 access token alone
		t.Fatalf("password change: %d %s", r.code, r.body)
	}
	for i, k := range toks {
		if d := e.accessDead(got[i]["access_token"], k.probe); d != k.dies {
			t.Errorf("%s: access token dead = %v, want %v", k.name, d, k.dies)
		}
		if k.offline {
			if d := e.refreshDead(got[i]["refresh_token"]); d != k.dies {
				t.Errorf("%s: refresh token dead = %v, want %v", k.name, d, k.dies)
			}
		}
	}
	if r := e.control("POST", "/sandbox/v1/accounts/nobody@carrier.sandbox/password", ""); r.code != 404 {
		t.Errorf("password change of an unknown account: %d %s", r.code, r.body)
	}
}

func TestRefreshTokenLimitEndsTheOldest(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.Accounts = []string{workAccount}; o.NoSync = true })
	other := e.signInAs(workAccount, scopeSend, true)
	var rts, ats []any
	for range DefaultRefreshTokenLimit {
		m := e.signIn(scopeSend)
		rts, ats = append(rts, m["refresh_token"]), append(ats, m["access_token"])
	}
	if e.refreshDead(rts[0]) {
		t.Fatal("the 100th live token ended the first")
	}
	m := e.signIn(scopeSend) // the 101st
	if !e.refreshDead(rts[0]) {
		t.Error("the 101st refresh token left the oldest alive")
	}
	if !e.accessDead(ats[0], "/gmail/v1/users/me/profile") {
		t.Error("the oldest grant's access token outlived it")
	}
	for _, rt := range []any{rts[1], rts[99], m["refresh_token"], other["refresh_token"]} {
		if e.refreshDead(rt) {
			t.Errorf("a token that is not the oldest, or is another account's, ended")
		}
	}
	// The limit is settable for tests that want a small one.
	e.control("PUT", "/sandbox/v1/auth", `{"refreshTokenLimit": 2}`)
	e.signIn(scopeSend)
	alive := 0
	for _, rt := range append(rts[1:], m["refresh_token"]) {
		if !e.refreshDead(rt) {
			alive++
		}
	}
	if alive != 1 {
		t.Errorf("with a limit of 2, %d of the earlier tokens live, want 1", alive)
	}
}

func TestRevokeAsGoogleDoes(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	revoke := func(tok any, inQuery bool) resp {
		if inQuery {
			return e.do("POST", "/revoke?token="+url.QueryEscape(tok.(string)), nil, nil)
		}
		return e.do("POST", "/revoke", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte(url.Values{"token": {tok.(string)}}.Encode()))
	}
	// An access token takes its refresh token, and so the access tokens
	// refreshed from it, as Google's revocation documents.
	m := e.signIn(scopeSend)
	_, again := e.refresh(m["refresh_token"])
	if r := revoke(m["access_token"], true); r.code != 200 {
		t.Fatalf("revoke: %d %s", r.code, r.body)
	}
	if !e.refreshDead(m["refresh_token"]) || !e.accessDead(again["access_token"], "/gmail/v1/users/me/profile") {
		t.Error("revoking an access token left its grant alive")
	}
	r := revoke(m["access_token"], false)
	if b := r.json(t); r.code != 400 || b["error"] != "invalid_token" {
		t.Errorf("revoking a dead token: %d %s", r.code, r.body)
	}
	// One signed in without a refresh token goes alone.
	a := e.signIn(scopeSend)
	online := e.signInAs("", scopeSend, false)
	revoke(online["access_token"], false)
	if e.refreshDead(a["refresh_token"]) || e.accessDead(a["access_token"], "/gmail/v1/users/me/profile") {
		t.Error("revoking an online access token ended another grant")
	}
}

const plainMail = "From: someone@example.com\r\nTo: friend@example.com\r\nSubject: %s\r\n\r\nhello\r\n"

func TestAccountsSideBySide(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.Accounts = []string{workAccount} })
	work := e.signInAs(workAccount, scopeMail+" "+ScopeDrive, true)["access_token"].(string)
	home := e.signInAs("", scopeMail+" "+ScopeDrive, true)["access_token"].(string)

	send := func(tok, subject string) {
		mail := strings.Replace(plainMail, "%s", subject, 1)
		r := e.do("POST", "/upload/gmail/v1/users/me/messages/send?uploadType=media", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "message/rfc822"}, []byte(mail))
		if r.code != 200 {
			t.Fatalf("send %s: %d %s", subject, r.code, r.body)
		}
	}
	send(work, "from work")
	send(home, "from home")
	file := e.do("POST", "/upload/drive/v3/files?uploadType=media", map[string]string{"Authorization": "Bearer " + work, "Content-Type": "text/plain"}, []byte("work file"))
	if file.code != 200 {
		t.Fatalf("drive upload: %d %s", file.code, file.body)
	}
	fileID := file.json(t)["id"].(string)
	if r := e.control("PUT", "/sandbox/v1/drive?account="+workAccount, `{"limit": 1000000}`); r.code != 200 {
		t.Fatalf("quota of the work account: %d %s", r.code, r.body)
	}

	count := func(tok, path, key string) int {
		r := e.do("GET", path, bearer(tok), nil)
		if r.code != 200 {
			t.Fatalf("GET %s: %d %s", path, r.code, r.body)
		}
		l, _ := r.json(t)[key].([]any)
		return len(l)
	}
	field := func(tok, path, key string) any {
		r := e.do("GET", path, bearer(tok), nil)
		if r.code != 200 {
			t.Fatalf("GET %s: %d %s", path, r.code, r.body)
		}
		return r.json(t)[key]
	}
	quota := func(tok string) any {
		q, _ := field(tok, "/drive/v3/about?fields=storageQuota", "storageQuota").(map[string]any)
		return q["limit"]
	}
	cases := []struct {
		name      string
		got, want any
	}{
		{"work's profile", field(work, "/gmail/v1/users/me/profile", "emailAddress"), workAccount},
		{"home's profile", field(home, "/gmail/v1/users/me/profile", "emailAddress"), DefaultAccount},
		{"the static token's profile", field(testToken, "/gmail/v1/users/me/profile", "emailAddress"), DefaultAccount},
		{"work's mailbox", count(work, "/gmail/v1/users/me/messages", "messages"), 1},
		{"home's mailbox", count(home, "/gmail/v1/users/me/messages", "messages"), 1},
		{"work's Drive", count(work, "/drive/v3/files", "files"), 1},
		{"home's Drive", count(home, "/drive/v3/files", "files"), 0},
		{"work's quota", quota(work), "1000000"},
		{"home's quota", quota(home), "16106127360"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if r := e.do("GET", "/drive/v3/files/"+fileID, bearer(home), nil); r.code != 404 {
		t.Errorf("home's token reads work's file: %d", r.code)
	}
	// A Drive link opens for its account's token, not another's.
	link := "/uc?id=" + fileID + "&export=download"
	if r := e.do("GET", link, bearer(work), nil); r.code != 200 || string(r.body) != "work file" {
		t.Errorf("work's link with work's token: %d %q", r.code, r.body)
	}
	if r := e.do("GET", link, bearer(home), nil); r.code != 403 {
		t.Errorf("work's link with home's token: %d %q", r.code, r.body)
	}
	if r := e.do("GET", "/gmail/v1/users/"+workAccount+"/profile", bearer(home), nil); r.code != 403 {
		t.Errorf("home's token reads work's mailbox by its address: %d", r.code)
	}
	st := e.sb.Stats()
	if st.Completions != 3 {
		t.Errorf("stats count %d completions over the accounts, want 3", st.Completions)
	}
}

func TestSignInChoosesTheAccount(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	if r := e.control("POST", "/sandbox/v1/accounts", `{"email": "Work@Carrier.Sandbox"}`); r.code != 200 || !strings.Contains(string(r.body), workAccount) {
		t.Fatalf("adding an account: %d %s", r.code, r.body)
	}
	for _, bad := range []string{`{"email": "no at sign"}`, `{"email": "../../etc@x.y"}`, `{}`} {
		if r := e.control("POST", "/sandbox/v1/accounts", bad); r.code != 400 {
			t.Errorf("adding %s: %d %s", bad, r.code, r.body)
		}
	}
	profile := func(hint string) any {
		m := e.signInAs(hint, scopeSend, false)
		r := e.do("GET", "/gmail/v1/users/me/profile", bearer(m["access_token"].(string)), nil)
		return r.json(t)["emailAddress"]
	}
	if got := profile(""); got != DefaultAccount {
		t.Errorf("no hint: %v", got)
	}
	if got := profile("WORK@carrier.sandbox"); got != workAccount {
		t.Errorf("login_hint: %v", got)
	}
	e.control("PUT", "/sandbox/v1/auth", `{"signInAccount": "`+workAccount+`"}`)
	if got := profile(""); got != workAccount {
		t.Errorf("no hint with the sign-in default set: %v", got)
	}
	if got := profile(DefaultAccount); got != DefaultAccount {
		t.Errorf("a hint over the sign-in default: %v", got)
	}
	u := redirectTarget(t, e.get(authParams(func(q url.Values) { q.Set("login_hint", "nobody@carrier.sandbox") })))
	if u.Query().Get("error") != "access_denied" || !strings.Contains(u.Query().Get("error_description"), "no account") {
		t.Errorf("an unknown login_hint: %s", u)
	}
	// The consent page names whom the person signs in as.
	pe, _ := newOAuthEnv(t, func(o *Options) { o.Accounts = []string{workAccount} })
	page := pe.get(authParams(func(q url.Values) { q.Set("login_hint", workAccount) }))
	if !strings.Contains(string(page.body), "<b>"+workAccount+"</b>") {
		t.Errorf("the consent page does not name the account:\n%s", page.body)
	}
	// An account added at run time comes back after a restart, its mail kept.
	tok := e.signInAs(workAccount, scopeMail, true)
	mail := strings.Replace(plainMail, "%s", "kept", 1)
	if r := e.do("POST", "/upload/gmail/v1/users/me/messages?uploadType=media", map[string]string{"Authorization": "Bearer " + tok["access_token"].(string), "Content-Type": "message/rfc822"}, []byte(mail)); r.code != 200 {
		t.Fatalf("insert: %d %s", r.code, r.body)
	}
	e.restart()
	if got := e.sb.Accounts(); len(got) != 2 || got[1] != workAccount {
		t.Errorf("accounts after a restart: %v", got)
	}
	r := e.do("GET", "/gmail/v1/users/me/messages", bearer(tok["access_token"].(string)), nil)
	if l, _ := r.json(t)["messages"].([]any); r.code != 200 || len(l) != 1 {
		t.Errorf("work's mailbox after a restart: %d %s", r.code, r.body)
	}
}

func TestSessionNeedsToken(t *testing.T) {
	const path = "/upload/gmail/v1/users/me/messages/send"
	mail := []byte(strings.Replace(plainMail, "%s", "half now, half later", 1) + strings.Repeat("x", 300<<10))
	half := int64(256 << 10) // chunks other than the last are multiples of 256 KiB
	total := int64(len(mail))
	cases := []struct {
		name string
		on   bool   // the switch
		tok  string // who sends the second half: none, other, revoked (the owner's from before), fresh, static
		want int
	}{
		{"off: the URI alone", false, "none", 201},
		{"off: another account's token", false, "other", 201},
		{"off: the revoked owner's token", false, "revoked", 201},
		{"on: the URI alone", true, "none", 401},
		{"on: another account's token", true, "other", 401},
		{"on: the revoked owner's token", true, "revoked", 401},
		{"on: the owner signed in again", true, "fresh", 201},
		{"on: the static token for a session of another account", true, "static", 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.Accounts = []string{workAccount}; o.SessionNeedsToken = c.on })
			owner := e.signInAs(workAccount, scopeSend, true)["access_token"].(string)
			other := e.signInAs("", scopeSend, true)["access_token"].(string)
			h := map[string]string{"Authorization": "Bearer " + owner, "X-Upload-Content-Type": "message/rfc822", "X-Upload-Content-Length": formatInt(total)}
			start := e.do("POST", path+"?uploadType=resumable", h, nil)
			uri := start.h.Get("Location")
			if start.code != 200 || uri == "" {
				t.Fatalf("start: %d %s", start.code, start.body)
			}
			put := func(tok string, data []byte, first int64) resp {
				hd := map[string]string{"Content-Range": "bytes " + formatInt(first) + "-" + formatInt(first+int64(len(data))-1) + "/" + formatInt(total)}
				if tok != "" {
					hd["Authorization"] = "Bearer " + tok
				}
				return e.do("PUT", uri, hd, data)
			}
			if r := put(owner, mail[:half], 0); r.code != 308 {
				t.Fatalf("first half: %d %s", r.code, r.body)
			}
			// The sign-in dies while the upload is half done.
			if r := e.control("POST", "/sandbox/v1/accounts/"+workAccount+"/password", ""); r.code != 200 {
				t.Fatalf("password change: %d %s", r.code, r.body)
			}
			tok := map[string]string{"none": "", "other": other, "revoked": owner, "static": testToken}[c.tok]
			if c.tok == "fresh" {
				tok = e.signInAs(workAccount, scopeSend, true)["access_token"].(string)
			}
			r := put(tok, mail[half:], half)
			if r.code != c.want {
				t.Fatalf("second half: %d %s, want %d", r.code, r.body, c.want)
			}
			if c.want == 401 {
				var b errorBody
				json.Unmarshal(r.body, &b)
				if b.Error.Status != "UNAUTHENTICATED" || r.h.Get("WWW-Authenticate") == "" {
					t.Errorf("refusal not in Google's form: %s", r.body)
				}
				// Refused, the session is kept: the owner's new token
				// finishes it where it stood.
				fresh := e.signInAs(workAccount, scopeSend, true)["access_token"].(string)
				hd := map[string]string{"Authorization": "Bearer " + fresh, "Content-Range": "bytes */" + formatInt(total)}
				if q := e.do("PUT", uri, hd, nil); q.code != 308 || q.h.Get("Range") != "bytes=0-"+formatInt(half-1) {
					t.Fatalf("status after the refusal: %d %q", q.code, q.h.Get("Range"))
				}
				if r := put(fresh, mail[half:], half); r.code != 201 {
					t.Fatalf("finishing with a new sign-in: %d %s", r.code, r.body)
				}
			}
			m := e.do("GET", "/gmail/v1/users/me/messages", auth(), nil).json(t)
			if l, _ := m["messages"].([]any); len(l) != 0 {
				t.Errorf("the work account's message went to the default mailbox")
			}
		})
	}
}

// BenchmarkSessionQueryAccounts measures what finding a session's account
// costs a status query: a session of the last of several accounts is
// looked up in every store before it.
func BenchmarkSessionQueryAccounts(b *testing.B) {
	for _, n := range []int{0, 4} {
		b.Run(formatInt(int64(n))+"-other-accounts", func(b *testing.B) {
			var extra []string
			for i := range n {
				extra = append(extra, "acct"+formatInt(int64(i))+"@carrier.sandbox")
			}
			sb, err := Open(Options{Dir: b.TempDir(), Token: testToken, AutoConsent: true, Accounts: extra, NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(sb.Handler())
			defer func() { srv.Close(); sb.Close() }()
			c := srv.Client()
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			tok := testToken
			if n > 0 {
				path := authParams(func(q url.Values) { q.Set("login_hint", extra[n-1]); q.Del("access_type") })
				r, err := c.Get(srv.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				r.Body.Close()
				u, _ := url.Parse(r.Header.Get("Location"))
				r, err = c.PostForm(srv.URL+"/token", exchangeForm(u.Query().Get("code")))
				if err != nil {
					b.Fatal(err)
				}
				var m map[string]any
				json.NewDecoder(r.Body).Decode(&m)
				r.Body.Close()
				tok = m["access_token"].(string)
			}
			req, _ := http.NewRequest("POST", srv.URL+"/upload/gmail/v1/users/me/messages/send?uploadType=resumable", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("X-Upload-Content-Type", "message/rfc822")
			r, err := c.Do(req)
			if err != nil || r.StatusCode != 200 {
				b.Fatalf("start: %v %v", err, r)
			}
			r.Body.Close()
			uri := r.Header.Get("Location")
			b.ResetTimer()
			for range b.N {
				q, _ := http.NewRequest("PUT", uri, http.NoBody)
				q.Header.Set("Content-Range", "bytes */*")
				r, err := c.Do(q)
				if err != nil || r.StatusCode != 308 {
					b.Fatalf("query: %v %v", err, r)
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		})
	}
}

// A Photos upload of a second account: its session URL reaches that
// account's session (held there, not by the default account), and the
// item lands in that account's library alone; with the session switch on,
// another account's token is refused at the URL.
func TestPhotosOfAnotherAccount(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true; o.Accounts = []string{workAccount} })
	scopes := ScopePhotosAppend + " " + ScopePhotosReadAppCreated
	work := e.signInAs(workAccount, scopes, true)["access_token"].(string)
	home := e.signInAs("", scopes, true)["access_token"].(string)
	start := func(tok string) string {
		r := e.do("POST", photosUploads, map[string]string{"Authorization": "Bearer " + tok, "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
			"X-Goog-Upload-Content-Type": "image/jpeg", "X-Goog-Upload-File-Name": "w.jpg"}, nil)
		if r.code != 200 {
			t.Fatalf("start: %d %s", r.code, r.body)
		}
		return r.h.Get("X-Goog-Upload-URL")
	}
	data := jpegBytes(7, 1000)
	r := e.photosSend(start(work), "upload, finalize", 0, data)
	if r.code != 200 || len(r.body) == 0 {
		t.Fatalf("work's upload through its session URL: %d %s", r.code, r.body)
	}
	body := fmt.Sprintf(`{"newMediaItems":[{"simpleMediaItem":{"uploadToken":%q}}]}`, r.body)
	if r := e.do("POST", "/v1/mediaItems:batchCreate", map[string]string{"Authorization": "Bearer " + work, "Content-Type": "application/json"}, []byte(body)); r.code != 200 {
		t.Fatalf("work's batchCreate: %d %s", r.code, r.body)
	}
	items := func(tok string) int {
		r := e.do("GET", "/v1/mediaItems", bearer(tok), nil)
		if r.code != 200 {
			t.Fatalf("list: %d %s", r.code, r.body)
		}
		l, _ := r.json(t)["mediaItems"].([]any)
		return len(l)
	}
	if w, h := items(work), items(home); w != 1 || h != 0 {
		t.Errorf("work's library holds %d items, home's %d; want 1 and 0", w, h)
	}
	if r := e.control("PUT", "/sandbox/v1/auth", `{"sessionNeedsToken": true}`); r.code != 200 {
		t.Fatalf("switch: %d %s", r.code, r.body)
	}
	url := start(work)
	r = e.do("POST", url, map[string]string{"Authorization": "Bearer " + home, "X-Goog-Upload-Command": "query"}, nil)
	if r.code != 401 {
		t.Errorf("home's token at work's Photos session: %d %s; want 401", r.code, r.body)
	}
	r = e.do("POST", url, map[string]string{"Authorization": "Bearer " + work, "X-Goog-Upload-Command": "query"}, nil)
	if r.code != 200 || r.h.Get("X-Goog-Upload-Status") != "active" {
		t.Errorf("work's token at its Photos session: %d %q %s", r.code, r.h.Get("X-Goog-Upload-Status"), r.body)
	}
}
