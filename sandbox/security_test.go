package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The attacker of these tests is another program on the machine (or a web
// page whose name was rebound to 127.0.0.1): it reaches the port and knows
// every public parameter, but cannot read the data folder's 0600 token.

// attackerAuth is a well-formed sign-in request, as an attacker would
// build it from the public client id, without the proof or with a forged one.
func attackerAuth(mod func(url.Values)) string {
	q := url.Values{
		"client_id": {OAuthClientID}, "redirect_uri": {testRedirect}, "response_type": {"code"},
		"scope": {"https://www.googleapis.com/auth/gmail.readonly"}, "state": {"x"},
		"code_challenge": {challengeOf(testVerifier)}, "code_challenge_method": {"S256"}, "access_type": {"offline"},
	}
	if mod != nil {
		mod(q)
	}
	return "/o/oauth2/v2/auth?" + q.Encode()
}

func TestAttackerCannotMintAToken(t *testing.T) {
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprintf("autoConsent=%v", auto), func(t *testing.T) {
			e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = auto })
			for name, path := range map[string]string{
				"no proof": attackerAuth(nil),
				"forged proof": attackerAuth(func(q url.Values) {
					q.Set(ProofParam, ConsentProof("guessed-token", q.Get("code_challenge"), q.Get("redirect_uri"), q.Get("scope")))
				}),
				// A proof seen in a process list, replayed with the
				// attacker's own listener as the redirect.
				"proof for another redirect": attackerAuth(func(q url.Values) {
					q.Set(ProofParam, ConsentProof(testToken, q.Get("code_challenge"), q.Get("redirect_uri"), q.Get("scope")))
					q.Set("redirect_uri", "http://127.0.0.1:1/steal")
				}),
				"proof for other scopes": attackerAuth(func(q url.Values) {
					q.Set(ProofParam, ConsentProof(testToken, q.Get("code_challenge"), q.Get("redirect_uri"), scopeSend))
				}),
			} {
				r := e.get(path)
				if r.code == 200 || strings.Contains(string(r.body), `name="decision"`) {
					t.Fatalf("%s: the consent page is shown: %d %s", name, r.code, r.body)
				}
				if r.code != http.StatusFound {
					t.Fatalf("%s: %d %s", name, r.code, r.body)
				}
				u, _ := url.Parse(r.h.Get("Location"))
				if q := u.Query(); q.Has("code") || q.Get("error") != "access_denied" || !strings.Contains(q.Get("error_description"), ProofParam) {
					t.Fatalf("%s: redirect %s", name, u)
				}
			}
			if n := e.sb.pending.len(); n != 0 {
				t.Fatalf("%d consents pending after refused requests", n)
			}
			// Without a code there is nothing to exchange; the read
			// endpoints stay shut.
			if r := e.do("GET", "/gmail/v1/users/me/messages", nil, nil); r.code != 401 {
				t.Fatalf("messages.list without a token: %d", r.code)
			}
		})
	}
}

func TestConsentIsAPostFromItsOwnPage(t *testing.T) {
	e, _ := newOAuthEnv(t)
	page := e.get(authParams(nil))
	m := formIDRE.FindStringSubmatch(string(page.body))
	if page.code != 200 || m == nil {
		t.Fatalf("consent page: %d %s", page.code, page.body)
	}
	id := m[2]
	// A link or an <img> on another page answers with GET.
	if r := e.get("/o/oauth2/v2/consent?" + url.Values{"id": {id}, "decision": {"allow"}}.Encode()); r.code != http.StatusMethodNotAllowed {
		t.Fatalf("consent by GET: %d %s", r.code, r.body)
	}
	// A form on another site posts with its own Origin.
	req, _ := http.NewRequest("POST", e.srv.URL+"/o/oauth2/v2/consent", strings.NewReader(url.Values{"id": {id}, "decision": {"allow"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	r, err := e.noFollow().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Fatalf("consent posted from another origin: %d", r.StatusCode)
	}
	// Neither spent it: the person's own answer still works.
	if r := e.postForm("/o/oauth2/v2/consent", url.Values{"id": {id}, "decision": {"allow"}}); r.code != http.StatusFound {
		t.Fatalf("the person's answer: %d %s", r.code, r.body)
	}
}

func TestPendingConsentsAreCappedInMemory(t *testing.T) {
	e, _ := newOAuthEnv(t)
	var last string
	for i := range maxPending + 8 {
		page := e.get(authParams(func(q url.Values) { q.Set("state", fmt.Sprint(i)) }))
		m := formIDRE.FindStringSubmatch(string(page.body))
		if page.code != 200 || m == nil {
			t.Fatalf("consent page %d: %d", i, page.code)
		}
		last = m[2]
	}
	if n := e.sb.pending.len(); n != maxPending {
		t.Fatalf("%d consents pending, want the cap %d", n, maxPending)
	}
	e.restart() // memory only: a restart forgets them, the store never held them
	if n := e.sb.pending.len(); n != 0 {
		t.Fatalf("%d consents survived a restart", n)
	}
	if r := e.postForm("/o/oauth2/v2/consent", url.Values{"id": {last}, "decision": {"allow"}}); r.code != http.StatusBadRequest {
		t.Fatalf("a consent from before the restart: %d", r.code)
	}
}

// TestScopesOnEveryEndpoint signs in with one scope at a time and tries
// every kind of endpoint: each opens only to the scopes Google lists for it,
// /sandbox/v1 to the static token only.
func TestScopesOnEveryEndpoint(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	sent := e.sendMail("/upload/gmail/v1/users/me/messages/send", "", testMail)
	draft := e.sendMail("/upload/gmail/v1/users/me/drafts", "", testMail)
	item := e.do("POST", "/upload/mirror/v1/timeline?uploadType=media", auth("Content-Type", "image/png"), []byte("png")).json(t)
	if r := e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a", auth("Content-Type", "text/plain"), []byte("a")); r.code != 200 {
		t.Fatalf("storage upload: %d %s", r.code, r.body)
	}
	file := e.do("POST", "/upload/drive/v3/files?uploadType=media", auth("Content-Type", "text/plain"), []byte("d")).json(t)["id"].(string)
	tokens := map[string]string{"static": testToken}
	for _, sc := range []string{"gmail.send", "gmail.readonly", "gmail.compose", "gmail.metadata", "glass.timeline", "devstorage.read_only", "devstorage.read_write",
		"drive.file", "drive", "drive.readonly"} {
		tokens[sc] = e.signIn(fullScope(sc))["access_token"].(string)
	}
	msgID, draftID, itemID := sent["id"].(string), draft["id"].(string), item["id"].(string)
	type call struct{ method, path, ctype, body string }
	endpoints := []struct {
		call
		open []string // the tokens that get through; all others get 403
	}{
		{call{"GET", "/gmail/v1/users/me/messages", "", ""}, []string{"static", "gmail.readonly", "gmail.metadata"}},
		{call{"GET", "/gmail/v1/users/me/messages/" + msgID, "", ""}, []string{"static", "gmail.readonly"}},
		{call{"GET", "/gmail/v1/users/me/messages/" + msgID + "?format=raw", "", ""}, []string{"static", "gmail.readonly"}},
		{call{"GET", "/gmail/v1/users/me/messages/" + msgID + "/attachments/att1", "", ""}, []string{"static", "gmail.readonly"}},
		{call{"GET", "/gmail/v1/users/me/drafts", "", ""}, []string{"static", "gmail.readonly", "gmail.compose"}},
		{call{"GET", "/gmail/v1/users/me/drafts/" + draftID, "", ""}, []string{"static", "gmail.readonly", "gmail.compose"}},
		{call{"GET", "/mirror/v1/timeline", "", ""}, []string{"static", "glass.timeline"}},
		{call{"GET", "/mirror/v1/timeline/" + itemID, "", ""}, []string{"static", "glass.timeline"}},
		{call{"GET", "/storage/v1/b/bkt/o", "", ""}, []string{"static", "devstorage.read_only", "devstorage.read_write"}},
		{call{"GET", "/storage/v1/b/bkt/o/a?alt=media", "", ""}, []string{"static", "devstorage.read_only", "devstorage.read_write"}},
		{call{"POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=b", "text/plain", "b"}, []string{"static", "devstorage.read_write"}},
		{call{"POST", "/gmail/v1/users/me/messages/send", "application/json", `{"raw":"U3ViamVjdDogeA0KDQp4"}`}, []string{"static", "gmail.send", "gmail.compose"}},
		{call{"POST", "/upload/drive/v3/files?uploadType=media", "text/plain", "d"}, []string{"static", "drive.file", "drive"}},
		{call{"POST", "/drive/v3/files", "application/json", `{"name":"f"}`}, []string{"static", "drive.file", "drive"}},
		{call{"GET", "/drive/v3/files/generateIds", "", ""}, []string{"static", "drive.file", "drive"}},
		{call{"GET", "/drive/v3/files", "", ""}, []string{"static", "drive.file", "drive", "drive.readonly"}},
		{call{"GET", "/drive/v3/files/" + file, "", ""}, []string{"static", "drive.file", "drive", "drive.readonly"}},
		{call{"GET", "/drive/v3/files/" + file + "?alt=media", "", ""}, []string{"static", "drive.file", "drive", "drive.readonly"}},
		{call{"POST", "/drive/v3/files/" + file + "/permissions", "application/json", `{"type":"anyone","role":"reader"}`}, []string{"static", "drive.file", "drive"}},
		{call{"GET", "/drive/v3/files/" + file + "/permissions", "", ""}, []string{"static", "drive.file", "drive", "drive.readonly"}},
		{call{"GET", "/drive/v3/files/" + file + "/permissions/anyoneWithLink", "", ""}, []string{"static", "drive.file", "drive", "drive.readonly"}},
		{call{"GET", "/drive/v3/about?fields=storageQuota", "", ""}, []string{"static", "drive.file", "drive", "drive.readonly"}},
		{call{"GET", "/sandbox/v1/drive", "", ""}, []string{"static"}},
		{call{"PUT", "/sandbox/v1/drive", "application/json", "{}"}, []string{"static"}},
		{call{"GET", "/sandbox/v1/stats", "", ""}, []string{"static"}},
		{call{"GET", "/sandbox/v1/faults", "", ""}, []string{"static"}},
		{call{"PUT", "/sandbox/v1/faults", "text/plain", ""}, []string{"static"}},
	}
	for _, ep := range endpoints {
		for name, tok := range tokens {
			h := bearer(tok)
			if ep.ctype != "" {
				h["Content-Type"] = ep.ctype
			}
			var body []byte
			if ep.body != "" {
				body = []byte(ep.body)
			}
			r := e.do(ep.method, ep.path, h, body)
			open := false
			for _, o := range ep.open {
				open = open || o == name
			}
			switch {
			case open && r.code/100 != 2:
				t.Errorf("%s %s with %s: %d %s", ep.method, ep.path, name, r.code, r.body)
			case !open && r.code != http.StatusForbidden:
				t.Errorf("%s %s with %s: %d, want 403", ep.method, ep.path, name, r.code)
			case !open && !strings.Contains(r.errMessage(t), "token"):
				t.Errorf("%s %s with %s: %s", ep.method, ep.path, name, r.body)
			}
		}
	}
}

func TestHostAllowList(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.PublicHosts = []string{"carrier.lan:8080", "box.lan"} })
	port := e.srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	for host, want := range map[string]int{
		"127.0.0.1:" + port:        200,
		"localhost:" + port:        200,
		"LOCALHOST:" + port:        200,
		"[::1]:" + port:            200,
		"carrier.lan:8080":         200,
		"box.lan:" + port:          200,
		"rebind.example:" + port:   http.StatusMisdirectedRequest,
		"127.0.0.1:1":              http.StatusMisdirectedRequest,
		"localhost":                http.StatusMisdirectedRequest,
		"carrier.lan:8081":         http.StatusMisdirectedRequest,
		"127.0.0.1.nip.io:" + port: http.StatusMisdirectedRequest,
	} {
		req, _ := http.NewRequest("GET", e.srv.URL+"/gmail/v1/users/me/profile", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+testToken)
		r, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, r.StatusCode, want)
		}
	}
	// Session URIs and the sign-in are behind the same check: a rebound
	// page cannot walk the OAuth pages either.
	for _, path := range []string{authParams(nil), "/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=x", "/token"} {
		req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
		req.Host = "rebind.example:" + port
		r, err := e.noFollow().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("%s with a foreign Host: %d", path, r.StatusCode)
		}
	}
}

// TestErrorsCarryNoRawControlCharacters sends C0 characters wherever they
// come back in an error message: the JSON carries them escaped and the
// message, once decoded, has none either (a terminal must not run them).
func TestErrorsCarryNoRawControlCharacters(t *testing.T) {
	e := newEnv(t)
	evil := "\x1b]0;owned\x07\x1b[2J\r"
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
	}{
		{"POST", "/upload/gmail/v1/users/" + url.PathEscape(evil) + "/messages/send?uploadType=media", auth("Content-Type", "message/rfc822")},
		{"POST", "/upload/storage/v1/b/" + url.PathEscape(evil) + "/o?uploadType=media&name=x", auth()},
		{"GET", "/gmail/v1/users/me/messages?pageToken=" + url.QueryEscape(evil), auth()},
		{"POST", "/upload/storage/v1/b/bkt/o?uploadType=" + url.QueryEscape(evil), auth()},
		{"GET", "/nothing/" + url.PathEscape(evil), auth()},
		{"GET", "/gmail/v1/users/me/messages/" + url.PathEscape(evil), auth()},
	} {
		r := e.do(c.method, c.path, c.hdr, []byte("x"))
		if r.code < 400 {
			t.Fatalf("%s: %d", c.path, r.code)
		}
		for _, b := range r.body {
			if b < 0x20 && b != '\n' || b == 0x7f {
				t.Fatalf("%s: raw control character %#x in %q", c.path, b, r.body)
			}
		}
		var eb errorBody
		if err := json.Unmarshal(r.body, &eb); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if strings.ContainsFunc(eb.Error.Message, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }) {
			t.Errorf("%s: the decoded message carries control characters: %q", c.path, eb.Error.Message)
		}
	}
	_ = bytes.MinRead
}
