package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/sandbox"
	"carrier/transfer"
)

// Each way Google ends a sign-in (PROTOCOL.md 9), as the sandbox plays it,
// half way through a message, with the session-needs-token switch off and
// on: the job parks (no failure, no retry), and signing in again sends it
// on in the same session with no byte twice.
func TestEveryEndOfASignInParksAndSigningInAgainFinishes(t *testing.T) {
	for _, end := range []string{"revoked", "expired", "password changed", "101st token"} {
		for _, needs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, session needs token %v", end, needs), func(t *testing.T) {
				signInEndsMidMessage(t, end, needs)
			})
		}
	}
}

func signInEndsMidMessage(t *testing.T, end string, needsToken bool) {
	keyring.MockInit()
	const token = "stand-in-token"
	var skew atomic.Int64 // how far the sandbox's clock runs ahead
	opts := sandbox.Options{Dir: t.TempDir(), Token: token, AutoConsent: true, TokenTTL: 30 * time.Second, SessionNeedsToken: needsToken,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }}
	if end == "expired" {
		opts.RefreshTokenTTL = time.Hour // "Testing" mode, shortened
	}
	sb, err := sandbox.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	h := sb.Handler()
	var mu sync.Mutex
	var refresh, address string
	var chunks, starts int
	var srv *httptest.Server
	endSignIn := func() {
		switch end {
		case "revoked":
			mu.Lock()
			rt := refresh
			mu.Unlock()
			resp, err := http.PostForm(srv.URL+"/revoke", url.Values{"token": {rt}})
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("revoke: %v %v", resp, err)
			}
		case "expired":
			skew.Store(int64(2 * time.Hour))
		case "password changed":
			if n, err := sb.ChangePassword(address); err != nil || n == 0 {
				t.Errorf("password change: %d tokens, %v", n, err)
			}
		case "101st token":
			// The limit lowered to one, the account signs in on another
			// computer: its newer token ends Carrier's.
			cfg := sb.AuthConfig()
			cfg.RefreshTokenLimit = 1
			if err := sb.SetAuthConfig(cfg); err != nil {
				t.Error(err)
			}
			signInAgainAt(t, srv.URL, token, address)
		}
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			var m struct {
				Refresh string `json:"refresh_token"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &m) == nil && m.Refresh != "" {
				mu.Lock()
				refresh = m.Refresh
				mu.Unlock()
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		mu.Lock()
		if strings.HasPrefix(r.URL.Path, "/upload/") && !r.URL.Query().Has("upload_id") {
			starts++
		}
		chunk := r.URL.Query().Has("upload_id") && r.Method == http.MethodPut && r.ContentLength > 0
		if chunk {
			chunks++
		}
		second := chunk && chunks == 2
		mu.Unlock()
		h.ServeHTTP(w, r)
		if second {
			endSignIn() // once the second chunk is stored: the next request finds the sign-in dead
		}
	}))
	t.Cleanup(func() { srv.Close(); sb.Close() })

	ctx := context.Background()
	creds := NewCredentials(ctx, t.TempDir())
	g, err := GoogleAt(creds, srv.URL, token, followRedirects)
	if err != nil {
		t.Fatal(err)
	}
	if address, err = g.SignIn(ctx, nil); err != nil {
		t.Fatal(err)
	}
	events := make(chan transfer.Event, 1024)
	q, err := OpenQueue(transfer.Config{StateDir: t.TempDir(), Auth: creds, Events: events, ChunkSize: transfer.ChunkQuantum}, NewSpool(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	g.OnSignIn(func(a string) { q.SignedIn(a) }) // as App.OpenQueue does

	var msg bytes.Buffer
	msg.WriteString("From: " + address + "\r\nTo: zoe@example.com\r\nSubject: " + end + "\r\n\r\n")
	for msg.Len() < 5*transfer.ChunkQuantum {
		msg.WriteString(strings.Repeat("carrier ", 9) + "\r\n")
	}
	path := filepath.Join(t.TempDir(), "msg.eml")
	if err := os.WriteFile(path, msg.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := q.Add(transfer.Spec{URL: srv.URL + "/upload/gmail/v1/users/me/messages/send", ContentType: "message/rfc822", Path: path, Account: address})
	if err != nil {
		t.Fatal(err)
	}
	next := func(match func(transfer.Event) bool) transfer.Event {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Job != id {
					continue
				}
				if e.Kind == transfer.EventRetrying || e.Kind == transfer.EventFailed {
					t.Fatalf("a sign-in that ended must neither retry nor fail the job: %s", e)
				}
				if match(e) {
					return e
				}
			case <-deadline:
				t.Fatal("no such event within the deadline")
			}
		}
	}
	parked := next(func(e transfer.Event) bool { return e.Kind == transfer.EventSignIn || e.Kind == transfer.EventDone })
	if parked.Kind != transfer.EventSignIn || parked.Snap.SignInFor != address || parked.Snap.Confirmed != 2*transfer.ChunkQuantum {
		t.Fatalf("want the job parked for %s at two chunks: %s (sign in for %q, confirmed %d)", address, parked, parked.Snap.SignInFor, parked.Snap.Confirmed)
	}
	if _, err := g.SignIn(ctx, nil); err != nil {
		t.Fatal(err)
	}
	next(func(e transfer.Event) bool { return e.Kind == transfer.EventDone })
	mu.Lock()
	defer mu.Unlock()
	if st := sb.Stats(); starts != 1 || st.BytesReceived != int64(msg.Len()) || st.Completions != 1 {
		t.Errorf("%d sessions started, %d bytes received for a %d-byte message, %d completions: want 1, no byte twice, 1", starts, st.BytesReceived, msg.Len(), st.Completions)
	}
}

// signInAgainAt signs account in with the sandbox's consent and code
// exchange, as Carrier on another computer would, keeping nothing here.
func signInAgainAt(t *testing.T, base, token, account string) {
	t.Helper()
	const redirect = "http://127.0.0.1:9/"
	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	scope := "https://www.googleapis.com/auth/gmail.send"
	q := url.Values{"client_id": {sandbox.OAuthClientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {scope},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "access_type": {"offline"}, "login_hint": {account}}
	q.Set(sandbox.ProofParam, sandbox.ConsentProof(token, challenge, redirect, scope))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/o/oauth2/v2/auth?" + q.Encode())
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Errorf("the sign-in elsewhere: %s, to %q", resp.Status, resp.Header.Get("Location"))
		return
	}
	resp, err = http.PostForm(base+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"client_id": {sandbox.OAuthClientID}, "redirect_uri": {redirect}, "code_verifier": {verifier}})
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the sign-in elsewhere's exchange: %s", resp.Status)
	}
}
