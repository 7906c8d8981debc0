package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/sandbox"
	"carrier/transfer"
)

// revokingFront is a sandbox standing in for Google whose access tokens
// live 30 s (under auth's minute of early expiry, so every request
// refreshes), behind a front that revokes the sign-in's refresh token (as
// a password change does) when the upload's second chunk arrives, and
// counts what the upload sends.
type revokingFront struct {
	mu       sync.Mutex
	refresh  string // the newest refresh token the sandbox gave
	chunks   int
	starts   int
	received int64
	revoke   bool
}

func (f *revokingFront) serve(t *testing.T) string {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "stand-in-token", AutoConsent: true, TokenTTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.URL.Query().Has("upload_id")
		if strings.HasPrefix(r.URL.Path, "/upload/") {
			f.mu.Lock()
			switch {
			case !session:
				f.starts++
			case r.Method == http.MethodPut && r.ContentLength > 0:
				f.chunks++
				f.received += r.ContentLength
				if f.chunks == 2 && f.revoke {
					f.revoke = false
					rr := httptest.NewRecorder()
					req := httptest.NewRequest(http.MethodPost, "/revoke", strings.NewReader(url.Values{"token": {f.refresh}}.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Host = r.Host
					h.ServeHTTP(rr, req)
					if rr.Code != http.StatusOK {
						t.Errorf("revoke: %d %s", rr.Code, rr.Body)
					}
				}
			}
			f.mu.Unlock()
		}
		if r.URL.Path != "/token" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var m struct {
			Refresh string `json:"refresh_token"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &m) == nil && m.Refresh != "" {
			f.mu.Lock()
			f.refresh = m.Refresh
			f.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(func() { srv.Close(); sb.Close() })
	return srv.URL
}

// A sign-in revoked while a message is half sent parks the job (no
// failure, no retry), naming the account; signing in again sends it on
// from where the server stands, on the same session, no byte twice.
func TestRevokedSignInParksAndSigningInAgainFinishes(t *testing.T) {
	keyring.MockInit()
	var f revokingFront
	base := f.serve(t)
	ctx := context.Background()
	creds := NewCredentials(ctx, t.TempDir())
	g, err := GoogleAt(creds, base, "stand-in-token", followRedirects)
	if err != nil {
		t.Fatal(err)
	}
	address, err := g.SignIn(ctx, nil)
	if err != nil {
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
	msg.WriteString("From: " + address + "\r\nTo: zoe@example.com\r\nSubject: half sent\r\n\r\n")
	for msg.Len() < 5*transfer.ChunkQuantum {
		msg.WriteString(strings.Repeat("carrier ", 9) + "\r\n")
	}
	path := filepath.Join(t.TempDir(), "msg.eml")
	if err := os.WriteFile(path, msg.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.revoke = true
	f.mu.Unlock()
	id, err := q.Add(transfer.Spec{URL: base + "/upload/gmail/v1/users/me/messages/send", ContentType: "message/rfc822", Path: path})
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
					t.Fatalf("a revoked sign-in must neither retry nor fail: %s", e)
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
	if parked.Kind != transfer.EventSignIn || parked.Snap.SignInFor != address {
		t.Fatalf("want the job parked for %s: %s (sign in for %q)", address, parked, parked.Snap.SignInFor)
	}
	if !strings.Contains(parked.Snap.Error, "invalid_grant") {
		t.Errorf("the parked job does not say why: %q", parked.Snap.Error)
	}
	f.mu.Lock()
	if f.refresh != "" && strings.Contains(parked.Snap.Error, f.refresh) {
		t.Error("the parked job's words hold the refresh token")
	}
	f.mu.Unlock()

	if _, err := g.SignIn(ctx, nil); err != nil {
		t.Fatal(err)
	}
	done := next(func(e transfer.Event) bool { return e.Kind == transfer.EventDone })
	if done.Snap.Confirmed != int64(msg.Len()) {
		t.Errorf("done at %d of %d", done.Snap.Confirmed, msg.Len())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.starts != 1 || f.received != int64(msg.Len()) {
		t.Errorf("%d sessions started, %d bytes sent for a %d-byte message: want 1 and no byte twice", f.starts, f.received, msg.Len())
	}
}
