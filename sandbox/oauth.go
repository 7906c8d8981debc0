package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// OAuthClientID is the sandbox's one OAuth client: public, with no
// secret, as installed apps are under PKCE.
const OAuthClientID = "carrier-sandbox"

// bOAuth holds consent requests, codes, grants and access tokens, each
// under a kind prefix and the SHA-256 of its secret: the store never holds
// a token that could be used if the folder leaked.
var bOAuth = []byte("oauth")

const (
	codeTTL    = 5 * time.Minute  // RFC 6749 wants codes short-lived; Google's last minutes
	pendingTTL = 30 * time.Minute // a consent page left open this long has to start again
)

// The scopes the sandbox grants; others are refused as Google refuses an
// unknown scope.
var knownScopes = []string{
	"https://www.googleapis.com/auth/gmail.send",
	"https://www.googleapis.com/auth/gmail.compose",
	"https://www.googleapis.com/auth/gmail.insert",
	"https://www.googleapis.com/auth/gmail.modify",
	"https://www.googleapis.com/auth/gmail.readonly",
	"https://www.googleapis.com/auth/gmail.metadata",
	"https://mail.google.com/",
	"https://www.googleapis.com/auth/glass.timeline",
	"https://www.googleapis.com/auth/devstorage.read_only",
	"https://www.googleapis.com/auth/devstorage.read_write",
	"https://www.googleapis.com/auth/devstorage.full_control",
	"https://www.googleapis.com/auth/cloud-platform",
	"https://www.googleapis.com/auth/cloud-platform.read-only",
	ScopeDriveFile, ScopeDrive, ScopeDriveReadonly,
	ScopePhotosAppend, ScopePhotosReadAppCreated, ScopePhotosEditAppCreated,
	"openid", "email", "profile",
	"https://www.googleapis.com/auth/userinfo.email",
}

// methodScopes are the scopes Google accepts for each upload method. A
// token the sandbox issued must hold one; the static token holds all.
var methodScopes = map[string][]string{
	"gmail.users.messages.send":          {"gmail.send", "gmail.compose", "gmail.modify", "mail"},
	"gmail.users.messages.insert":        {"gmail.insert", "gmail.modify", "mail"},
	"gmail.users.messages.import":        {"gmail.insert", "gmail.modify", "mail"},
	"gmail.users.drafts.create":          {"gmail.compose", "gmail.modify", "mail"},
	"gmail.users.drafts.update":          {"gmail.compose", "gmail.modify", "mail"},
	"gmail.users.drafts.send":            {"gmail.compose", "gmail.modify", "mail"},
	"mirror.timeline.insert":             scopesTimeline,
	"mirror.timeline.update":             scopesTimeline,
	"mirror.timeline.attachments.insert": scopesTimeline,
	"storage.objects.insert":             {"devstorage.read_write", "devstorage.full_control", "cloud-platform"},
	"drive.files.create":                 scopesDriveWrite,
}

// The scopes of the read endpoints, as Google lists them for each method,
// except that gmail.metadata opens only the list (Google also lets it
// read headers with format=metadata) and profile takes any Gmail scope
// (it tells only the address and the counts).
var (
	scopesGmailRead   = []string{"gmail.readonly", "gmail.modify", "mail"}
	scopesGmailList   = []string{"gmail.readonly", "gmail.modify", "gmail.metadata", "mail"}
	scopesGmailDrafts = []string{"gmail.readonly", "gmail.compose", "gmail.modify", "mail"}
	scopesGmailAny    = []string{"gmail.send", "gmail.compose", "gmail.insert", "gmail.modify", "gmail.readonly", "gmail.metadata", "mail"}
	scopesTimeline    = []string{"glass.timeline"}
	scopesStorageRead = []string{"devstorage.read_only", "devstorage.read_write", "devstorage.full_control", "cloud-platform", "cloud-platform.read-only"}
)

func fullScope(short string) string {
	if short == "mail" {
		return "https://mail.google.com/"
	}
	return "https://www.googleapis.com/auth/" + short
}

type pendingRec struct {
	RedirectURI string    `json:"redirectUri"`
	State       string    `json:"state"`
	Challenge   string    `json:"challenge"`
	Scopes      []string  `json:"scopes"`
	Kept        []string  `json:"kept,omitempty"` // of Scopes, those granted before (include_granted_scopes)
	Offline     bool      `json:"offline"`
	Expires     time.Time `json:"expires"`
}

type codeRec struct {
	RedirectURI string    `json:"redirectUri"`
	Challenge   string    `json:"challenge"`
	Scopes      []string  `json:"scopes"`
	Offline     bool      `json:"offline"`
	Expires     time.Time `json:"expires"`
	Used        bool      `json:"used"`
	Grant       string    `json:"grant,omitempty"` // hash of the refresh token it gave, revoked if the code comes back
}

type grantRec struct {
	Scopes  []string  `json:"scopes"`
	Created time.Time `json:"created"`
}

type accessRec struct {
	Grant   string    `json:"grant,omitempty"`
	Scopes  []string  `json:"scopes"`
	Expires time.Time `json:"expires"`
}

func secretKey(kind, secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return kind + ":" + hex.EncodeToString(sum[:])
}

func (s *Sandbox) oauthRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/o/oauth2/v2/auth", s.serveAuthorize)
	mux.HandleFunc("/o/oauth2/v2/consent", s.serveConsent)
	mux.HandleFunc("/token", s.serveToken)
	mux.HandleFunc("/revoke", s.serveRevoke)
	return mux
}

// accessScopes returns the scopes of an unexpired access token the sandbox
// issued.
func (s *Sandbox) accessScopes(token string) ([]string, bool) {
	if token == "" {
		return nil, false
	}
	var a accessRec
	err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx, bOAuth, secretKey("a", token), &a) })
	if err != nil || !s.now().Before(a.Expires) {
		return nil, false
	}
	return a.Scopes, true
}

// checkScope refuses a request whose token lacks the route's scope, in
// Google's words. The static token opens every route.
func (s *Sandbox) checkScope(c credential, pattern string) *apiError {
	if c.static {
		return nil
	}
	a, known := s.scopes[pattern]
	if !known || a.staticOnly {
		return errorf(http.StatusForbidden, "insufficientPermissions",
			"%s takes only the sandbox's own token (the one in its data folder), not a token from sign-in.", pattern)
	}
	for _, w := range a.scopes {
		if slices.Contains(c.scopes, fullScope(w)) {
			return nil
		}
	}
	return errorf(http.StatusForbidden, "insufficientPermissions",
		"Request had insufficient authentication scopes. %s needs %s; the token grants %s. Sign in again asking for that scope.",
		pattern, fullScope(a.scopes[0]), strings.Join(c.scopes, " "))
}

// ProofParam is the parameter of /o/oauth2/v2/auth that carries
// ConsentProof: without it, the sandbox signs nobody in.
const ProofParam = "sandbox_proof"

// ConsentProof proves that a sign-in comes from someone who holds the
// sandbox's static token (the 0600 file in its data folder): an HMAC-SHA256
// keyed with the token over the sign-in's code_challenge, redirect_uri and
// scope, exactly as sent on /o/oauth2/v2/auth, in unpadded base64url. Any
// local process can reach the port; only the person's own Carrier can read
// the token. Binding the challenge and the redirect means a proof seen in
// a browser's address bar or a process list is worth nothing to anyone
// else: the code it yields goes only to that redirect, and only the holder
// of the PKCE verifier can exchange it.
func ConsentProof(token, codeChallenge, redirectURI, scope string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("carrier-sandbox-consent/v1\x00" + codeChallenge + "\x00" + redirectURI + "\x00" + scope))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (s *Sandbox) validProof(q url.Values) bool {
	want := ConsentProof(s.opts.Token, q.Get("code_challenge"), q.Get("redirect_uri"), q.Get("scope"))
	return hmac.Equal([]byte(q.Get(ProofParam)), []byte(want))
}

// maxPending caps the consent pages open at once; the oldest gives way.
// They live in memory only: a restart ends every sign-in in progress.
const maxPending = 32

type pendingConsents struct {
	mu sync.Mutex
	m  map[string]*pendingRec
}

func (pc *pendingConsents) add(id string, p *pendingRec, now time.Time) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.m == nil {
		pc.m = map[string]*pendingRec{}
	}
	for k, v := range pc.m {
		if !now.Before(v.Expires) {
			delete(pc.m, k)
		}
	}
	for len(pc.m) >= maxPending {
		oldest := ""
		for k, v := range pc.m {
			if oldest == "" || v.Expires.Before(pc.m[oldest].Expires) {
				oldest = k
			}
		}
		delete(pc.m, oldest)
	}
	pc.m[id] = p
}

// take removes and returns a pending consent: one answer per request.
func (pc *pendingConsents) take(id string, now time.Time) (*pendingRec, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	p, ok := pc.m[id]
	delete(pc.m, id)
	return p, ok && now.Before(p.Expires)
}

func (pc *pendingConsents) len() int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return len(pc.m)
}

// loopbackRedirect accepts only what Google accepts for installed apps
// today: http on a loopback host with an explicit port.
func loopbackRedirect(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.User != nil || u.Fragment != "" || u.Port() == "" {
		return nil, false
	}
	if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
		return nil, false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return u, true
	}
	return nil, false
}

func redirectWith(w http.ResponseWriter, r *http.Request, u *url.URL, params map[string]string) {
	q := u.Query()
	for k, v := range params {
		if v != "" {
			q.Set(k, v)
		}
	}
	to := *u
	to.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (s *Sandbox) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, errorf(http.StatusMethodNotAllowed, "httpMethodNotAllowed", "%s is not allowed on %s: use GET", r.Method, r.URL.Path))
		return
	}
	q := r.URL.Query()
	if q.Get("client_id") != OAuthClientID {
		oauthPage(w, http.StatusUnauthorized, "Error 401: invalid_client",
			fmt.Sprintf("The OAuth client %q was not found. The sandbox's client is %q.", q.Get("client_id"), OAuthClientID), "")
		return
	}
	// Never redirect to an address that is not checked: the error would
	// carry the person to a page of someone else's choosing.
	ru, ok := loopbackRedirect(q.Get("redirect_uri"))
	if !ok {
		oauthPage(w, http.StatusBadRequest, "Error 400: redirect_uri_mismatch",
			fmt.Sprintf("The redirect_uri %q is not allowed: installed apps must use http://127.0.0.1:PORT/... or http://localhost:PORT/...", q.Get("redirect_uri")), "")
		return
	}
	state := q.Get("state")
	fail := func(code, desc string) {
		redirectWith(w, r, ru, map[string]string{"error": code, "error_description": desc, "state": state})
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type", "response_type must be code")
		return
	}
	challenge := q.Get("code_challenge")
	if q.Get("code_challenge_method") != "S256" || !validPKCE(challenge) || len(challenge) != 43 {
		fail("invalid_request", "PKCE is required: send code_challenge (43 characters) with code_challenge_method=S256")
		return
	}
	if !s.validProof(q) {
		fail("access_denied", "This sandbox signs in only a client that holds its token: send "+ProofParam+
			" = ConsentProof(token, code_challenge, redirect_uri, scope) (see sandbox.ConsentProof).")
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	if len(scopes) == 0 {
		fail("invalid_scope", "no scope was asked for")
		return
	}
	for _, sc := range scopes {
		if !slices.Contains(knownScopes, sc) {
			fail("invalid_scope", "unknown scope "+sc)
			return
		}
	}
	var kept []string
	if q.Get("include_granted_scopes") == "true" {
		// Google's incremental authorization: the new grant also covers
		// what the person granted the app before, so an app may ask for
		// one more scope alone when it needs it.
		kept = s.grantedScopes()
		scopes = append(scopes, kept...)
	}
	slices.Sort(scopes)
	p := pendingRec{RedirectURI: q.Get("redirect_uri"), State: state, Challenge: challenge, Scopes: slices.Compact(scopes), Kept: kept,
		Offline: q.Get("access_type") == "offline", Expires: s.now().Add(pendingTTL)}
	if s.opts.AutoConsent {
		s.grantCode(w, r, ru, &p)
		return
	}
	id := newUploadID()
	s.pending.add(id, &p, s.now())
	s.consentPage(w, id, &p)
}

// grantedScopes are the scopes of every grant not revoked: the sandbox
// has one account and one client, so each grant is the person's to
// Carrier. Google's revocation ends all of an app's grants at once; the
// sandbox's ends the one whose token is revoked, so an earlier grant
// that was replaced but not revoked still counts here.
func (s *Sandbox) grantedScopes() []string {
	var out []string
	s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bOAuth).Cursor()
		for k, _ := c.Seek([]byte("r:")); k != nil && strings.HasPrefix(string(k), "r:"); k, _ = c.Next() {
			var g grantRec
			if getJSON(tx, bOAuth, string(k), &g) == nil {
				out = append(out, g.Scopes...)
			}
		}
		return nil
	})
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *Sandbox) consentPage(w http.ResponseWriter, id string, p *pendingRec) {
	var b strings.Builder
	fmt.Fprintf(&b, "<p><b>Carrier</b> wants to access the sandbox account <b>%s</b> to:</p><ul>", html.EscapeString(s.opts.Account))
	for _, sc := range p.Scopes {
		if !slices.Contains(p.Kept, sc) {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(sc))
		}
	}
	b.WriteString("</ul>")
	if len(p.Kept) > 0 {
		b.WriteString("<p>It keeps what you allowed before:</p><ul>")
		for _, sc := range p.Kept {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(sc))
		}
		b.WriteString("</ul>")
	}
	if p.Offline {
		b.WriteString("<p>It will keep this access when you are not using it (offline access).</p>")
	}
	// A form that posts, not links: a link is answered by whatever fetches
	// it (a prefetcher, an <img> on another page).
	fmt.Fprintf(&b, `<form method="post" action="/o/oauth2/v2/consent"><input type="hidden" name="id" value="%s">`+
		`<button id="allow" name="decision" value="allow">Allow</button> &nbsp; `+
		`<button id="deny" name="decision" value="deny">Deny</button></form>`, html.EscapeString(id))
	oauthPage(w, http.StatusOK, "Sign in to the Carrier sandbox", "", b.String())
}

func (s *Sandbox) serveConsent(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, errorf(http.StatusMethodNotAllowed, "httpMethodNotAllowed", "%s is not allowed on %s: the consent page's form posts", r.Method, r.URL.Path))
		return
	}
	// A browser names the page a form comes from; only the consent page
	// itself may answer it.
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !strings.EqualFold(o, baseURL(r)) {
		oauthPage(w, http.StatusForbidden, "Error 403", "A consent can only be given on the sandbox's own page.", "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		oauthPage(w, http.StatusBadRequest, "Error 400: invalid_request", "The consent form could not be read.", "")
		return
	}
	id, decision := r.PostForm.Get("id"), r.PostForm.Get("decision")
	p, ok := s.pending.take(id, s.now())
	if !ok {
		oauthPage(w, http.StatusBadRequest, "This sign-in request is no longer valid",
			"It was answered already or it expired. Start the sign-in again from Carrier.", "")
		return
	}
	ru, ok := loopbackRedirect(p.RedirectURI)
	if !ok {
		oauthPage(w, http.StatusBadRequest, "Error 400: redirect_uri_mismatch", "The stored redirect_uri is not allowed.", "")
		return
	}
	switch decision {
	case "allow":
		s.grantCode(w, r, ru, p)
	case "deny":
		redirectWith(w, r, ru, map[string]string{"error": "access_denied", "state": p.State})
	default:
		oauthPage(w, http.StatusBadRequest, "Error 400: invalid_request", "decision must be allow or deny.", "")
	}
}

func (s *Sandbox) grantCode(w http.ResponseWriter, r *http.Request, ru *url.URL, p *pendingRec) {
	code := "4/sbx-" + newUploadID() + newUploadID()
	c := codeRec{RedirectURI: p.RedirectURI, Challenge: p.Challenge, Scopes: p.Scopes, Offline: p.Offline, Expires: s.now().Add(codeTTL)}
	err := s.db.Update(func(tx *bolt.Tx) error { return putJSON(tx, bOAuth, secretKey("c", code), &c) })
	if err != nil {
		redirectWith(w, r, ru, map[string]string{"error": "server_error", "state": p.State})
		return
	}
	redirectWith(w, r, ru, map[string]string{"code": code, "state": p.State, "scope": strings.Join(p.Scopes, " ")})
}

// oauthErr is an error of the token endpoint, in RFC 6749's JSON form
// (which is also Google's).
type oauthErr struct {
	status     int
	code, desc string
}

func (e *oauthErr) Error() string { return e.code + ": " + e.desc }

func writeOAuthError(w http.ResponseWriter, e *oauthErr) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.desc})
}

func invalidGrant(format string, a ...any) *oauthErr {
	return &oauthErr{http.StatusBadRequest, "invalid_grant", fmt.Sprintf(format, a...)}
}

func (s *Sandbox) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeOAuthError(w, &oauthErr{http.StatusMethodNotAllowed, "invalid_request", "use POST with a form-encoded body"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, &oauthErr{http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded"})
		return
	}
	client := r.PostForm.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok {
		client, _ = url.QueryUnescape(id)
	}
	if client != OAuthClientID {
		writeOAuthError(w, &oauthErr{http.StatusUnauthorized, "invalid_client", fmt.Sprintf("The OAuth client %q was not found; the sandbox's client is %q.", client, OAuthClientID)})
		return
	}
	var (
		resp map[string]any
		oe   *oauthErr
	)
	err := s.db.Update(func(tx *bolt.Tx) error {
		defer pruneOAuth(tx, s.now()) // after: an expired code gets its own message
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			resp, oe = s.exchangeCode(tx, r.PostForm)
		case "refresh_token":
			resp, oe = s.refreshGrant(tx, r.PostForm)
		default:
			oe = &oauthErr{http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token"}
		}
		return nil // a refused code stays spent: the transaction still commits
	})
	if err != nil {
		oe = &oauthErr{http.StatusInternalServerError, "server_error", err.Error()}
	}
	if oe != nil {
		writeOAuthError(w, oe)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, resp)
}

func (s *Sandbox) exchangeCode(tx *bolt.Tx, f url.Values) (map[string]any, *oauthErr) {
	code := f.Get("code")
	key := secretKey("c", code)
	var c codeRec
	if code == "" || getJSON(tx, bOAuth, key, &c) != nil {
		return nil, invalidGrant("Malformed auth code: it is unknown to this sandbox.")
	}
	if c.Used {
		// RFC 6749 10.5: a code seen twice may have been stolen, so what
		// it gave is taken back.
		revokeGrant(tx, c.Grant)
		tx.Bucket(bOAuth).Delete([]byte(key))
		return nil, invalidGrant("The authorization code was already used; the tokens it gave are revoked. Sign in again.")
	}
	c.Used = true
	if !s.now().Before(c.Expires) {
		tx.Bucket(bOAuth).Delete([]byte(key))
		return nil, invalidGrant("The authorization code expired; sign in again.")
	}
	fail := func(e *oauthErr) (map[string]any, *oauthErr) {
		putJSON(tx, bOAuth, key, &c)
		return nil, e
	}
	if f.Get("redirect_uri") != c.RedirectURI {
		return fail(invalidGrant("redirect_uri differs from the one the code was issued for."))
	}
	v := f.Get("code_verifier")
	if v == "" {
		return fail(invalidGrant("Missing code verifier."))
	}
	sum := sha256.Sum256([]byte(v))
	if !validPKCE(v) || len(v) < 43 || len(v) > 128 ||
		subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.Challenge)) != 1 {
		return fail(invalidGrant("Invalid code verifier."))
	}
	resp := map[string]any{}
	if c.Offline {
		refresh := "1//sbx-" + newUploadID() + newUploadID()
		c.Grant = secretKey("r", refresh)
		if err := putJSON(tx, bOAuth, c.Grant, &grantRec{Scopes: c.Scopes, Created: s.now()}); err != nil {
			return fail(&oauthErr{http.StatusInternalServerError, "server_error", err.Error()})
		}
		resp["refresh_token"] = refresh
	}
	if e := s.issueAccess(tx, c.Grant, c.Scopes, resp); e != nil {
		return fail(e)
	}
	putJSON(tx, bOAuth, key, &c)
	return resp, nil
}

func (s *Sandbox) refreshGrant(tx *bolt.Tx, f url.Values) (map[string]any, *oauthErr) {
	rt := f.Get("refresh_token")
	key := secretKey("r", rt)
	var g grantRec
	if rt == "" || getJSON(tx, bOAuth, key, &g) != nil {
		return nil, invalidGrant("Token has been expired or revoked.")
	}
	resp := map[string]any{}
	if e := s.issueAccess(tx, key, g.Scopes, resp); e != nil {
		return nil, e
	}
	return resp, nil
}

func (s *Sandbox) issueAccess(tx *bolt.Tx, grant string, scopes []string, resp map[string]any) *oauthErr {
	access := "ya29.sbx-" + newUploadID() + newUploadID()
	a := accessRec{Grant: grant, Scopes: scopes, Expires: s.now().Add(s.opts.TokenTTL)}
	if err := putJSON(tx, bOAuth, secretKey("a", access), &a); err != nil {
		return &oauthErr{http.StatusInternalServerError, "server_error", err.Error()}
	}
	resp["access_token"] = access
	resp["expires_in"] = int64(s.opts.TokenTTL / time.Second)
	resp["scope"] = strings.Join(scopes, " ")
	resp["token_type"] = "Bearer"
	return nil
}

// serveRevoke is Google's revocation endpoint: a refresh token takes its
// access tokens with it; an access token goes alone.
func (s *Sandbox) serveRevoke(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeOAuthError(w, &oauthErr{http.StatusMethodNotAllowed, "invalid_request", "use POST with token=..."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	tok := r.FormValue("token")
	found := false
	s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bOAuth)
		if b.Get([]byte(secretKey("r", tok))) != nil {
			revokeGrant(tx, secretKey("r", tok))
			found = true
		} else if k := []byte(secretKey("a", tok)); b.Get(k) != nil {
			b.Delete(k)
			found = true
		}
		return nil
	})
	if !found || tok == "" {
		writeOAuthError(w, &oauthErr{http.StatusBadRequest, "invalid_token", "Token expired or revoked"})
		return
	}
	w.WriteHeader(http.StatusOK)
}

func revokeGrant(tx *bolt.Tx, grant string) {
	if grant == "" {
		return
	}
	b := tx.Bucket(bOAuth)
	b.Delete([]byte(grant))
	var drop [][]byte
	c := b.Cursor()
	for k, _ := c.Seek([]byte("a:")); k != nil && strings.HasPrefix(string(k), "a:"); k, _ = c.Next() {
		var a accessRec
		if getJSON(tx, bOAuth, string(k), &a) == nil && a.Grant == grant {
			drop = append(drop, slices.Clone(k))
		}
	}
	for _, k := range drop {
		b.Delete(k)
	}
}

// pruneOAuth drops what expired, so the bucket does not grow with every
// token a long-running sandbox hands out.
func pruneOAuth(tx *bolt.Tx, now time.Time) {
	b := tx.Bucket(bOAuth)
	var drop [][]byte
	b.ForEach(func(k, v []byte) error {
		var rec struct {
			Expires time.Time `json:"expires"`
		}
		if len(k) > 1 && k[0] != 'r' && getJSON(tx, bOAuth, string(k), &rec) == nil && !rec.Expires.IsZero() && !now.Before(rec.Expires) {
			drop = append(drop, slices.Clone(k))
		}
		return nil
	})
	for _, k := range drop {
		b.Delete(k)
	}
}

// validPKCE checks RFC 7636's alphabet for verifiers and challenges.
func validPKCE(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c)) {
			return false
		}
	}
	return true
}

func oauthPage(w http.ResponseWriter, status int, title, text, rawHTML string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	body := rawHTML
	if text != "" {
		body = "<p>" + html.EscapeString(text) + "</p>" + rawHTML
	}
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>%s</title></head>"+
		"<body style=\"font-family:sans-serif;max-width:36em;margin:4em auto\"><h1>%s</h1>%s</body></html>\n",
		html.EscapeString(title), html.EscapeString(title), body)
}
