package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zalando/go-keyring"

	"carrier/auth"
	"carrier/sandbox"
)

// googleStandIn is a sandbox standing in for Google, behind a front that
// can play what the sandbox never does: a person who unticks Drive on
// Google's consent page (the token's scope comes back without it), or who
// picks another account in the browser (the profile names another
// address).
type googleStandIn struct {
	mu        sync.Mutex
	untick    bool
	otherUser string
}

func (s *googleStandIn) serve(t *testing.T) string {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "stand-in-token", AutoConsent: true})
	if err != nil {
		t.Fatal(err)
	}
	h := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		s.mu.Lock()
		untick, other := s.untick, s.otherUser
		s.mu.Unlock()
		var m map[string]any
		switch {
		case r.URL.Path == "/token" && untick && json.Unmarshal(body, &m) == nil:
			sc, _ := m["scope"].(string)
			m["scope"] = strings.TrimSpace(strings.ReplaceAll(sc, auth.ScopeDriveFile, ""))
			body, _ = json.Marshal(m)
		case r.URL.Path == "/gmail/v1/users/me/profile" && other != "" && json.Unmarshal(body, &m) == nil:
			m["emailAddress"] = other
			body, _ = json.Marshal(m)
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	t.Cleanup(func() { srv.Close(); sb.Close() })
	return srv.URL
}

// followRedirects is a browser on a sandbox that consents at once: it
// follows the sign-in address to Carrier's listener.
func followRedirects(u string) error {
	go func() {
		if r, err := http.Get(u); err == nil {
			r.Body.Close()
		}
	}()
	return nil
}

// Allow fails, saying why and sending nothing, when the browser comes
// back without Drive (the person unticked it) or signed in as someone
// else; in the latter case Carrier goes on as the account signed in, as
// the Account screen then shows.
func TestGoogleAllowRefusesWhatWasNotGranted(t *testing.T) {
	keyring.MockInit()
	var s googleStandIn
	url := s.serve(t)
	g, err := GoogleAt(nil, url, "stand-in-token", followRedirects)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := g.May(ctx, auth.Links); err != nil {
		t.Fatalf("nobody signed in: %v", err)
	}
	if _, err := g.SignIn(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var na *NotAllowedError
	if err := g.May(ctx, auth.Links); !errors.As(err, &na) || na.Address != sandbox.DefaultAccount {
		t.Fatalf("signed in for sending: May(links) = %v", err)
	}

	s.mu.Lock()
	s.untick = true
	s.mu.Unlock()
	if err := g.Allow(ctx, auth.Links); !errors.Is(err, ErrNotGranted) {
		t.Errorf("Drive unticked: Allow = %v", err)
	}
	if err := g.May(ctx, auth.Links); !errors.As(err, &na) || g.Address() != sandbox.DefaultAccount {
		t.Errorf("after Drive was unticked: May %v, signed in as %q", err, g.Address())
	}

	s.mu.Lock()
	s.untick, s.otherUser = false, "someone.else@example.com"
	s.mu.Unlock()
	err = g.Allow(ctx, auth.Links)
	if err == nil || !strings.Contains(err.Error(), "signed in someone.else@example.com rather than "+sandbox.DefaultAccount) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("another account: Allow = %v", err)
	}
	if g.Address() != "someone.else@example.com" {
		t.Errorf("signed in as %q after the browser chose another account", g.Address())
	}
}
