package ui

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"carrier/internal/app/mailbox"
	"carrier/transfer"
)

// seenAuth is a server that keeps the Authorization of every request.
type seenAuth struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seenAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.URL.Path+" "+r.Header.Get("Authorization"))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "image/png")
	w.Write([]byte("\x89PNG"))
}

func (s *seenAuth) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// Finding: the mailbox sent the sandbox's token to any absolute URL a
// server named. The attacker's step (a hostile or impersonated sandbox):
// put a timeline item whose attachment's contentUrl is the attacker's.
func TestMailboxSendsTheTokenOnlyToTheSandbox(t *testing.T) {
	own, evil := &seenAuth{}, &seenAuth{}
	ownSrv, evilSrv := httptest.NewServer(own), httptest.NewServer(evil)
	defer ownSrv.Close()
	defer evilSrv.Close()
	m := &mailboxScreen{u: &UI{deps: Deps{Endpoint: ownSrv.URL, Auth: transfer.StaticToken("mailbox-token"), Client: http.DefaultClient}}}
	ctx := context.Background()

	evilHost := strings.TrimPrefix(evilSrv.URL, "http://")
	for _, u := range []string{
		evilSrv.URL + "/picture.png",
		ownSrv.URL + "@" + evilHost + "/picture.png", // userinfo that looks like the sandbox
		"//" + evilHost + "/picture.png",             // scheme-relative
		"https://" + strings.TrimPrefix(ownSrv.URL, "http://") + "/picture.png",
	} {
		if _, err := m.mailbox().Content(ctx, u); !errors.Is(err, mailbox.ErrElsewhere) {
			t.Errorf("%s: %v, want it refused", u, err)
		}
	}
	item := mailItem{Kind: "Timeline", Item: map[string]any{"text": "hi", "attachments": []any{
		map[string]any{"id": "a1", "contentType": "image/png", "contentUrl": evilSrv.URL + "/a1"},
		map[string]any{"id": "a2", "contentType": "image/png", "contentUrl": ownSrv.URL + "/mirror/v1/timeline/t/attachments/a2?alt=media"},
	}}}
	if _, err := m.timelineView(ctx, item); err != nil {
		t.Fatalf("an item naming another server could not be shown at all: %v", err)
	}
	if got := evil.seen(); len(got) != 0 {
		t.Fatalf("the other server was asked: %v", got)
	}
	if got := own.seen(); len(got) != 1 || !strings.HasSuffix(got[0], "Bearer mailbox-token") {
		t.Fatalf("the sandbox's own attachment: %v", got)
	}
}
