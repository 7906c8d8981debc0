package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/zalando/go-keyring"

	"carrier/internal/app"
	"carrier/sandbox"
	"carrier/transfer"
)

// autoConsent is a browser on a sandbox that consents by itself: it
// follows the sign-in address to Carrier's listener.
func autoConsent(u string) error {
	go func() {
		if r, err := http.Get(u); err == nil {
			r.Body.Close()
		}
	}()
	return nil
}

// The window from no client to two accounts, against a sandbox serving
// two: the assistant takes the client file and signs the first in, the
// second is added beside it, and Compose sends as the account chosen,
// into that account's mailbox alone (the app's own credentials, jobs
// bound to their account).
func TestWindowSendsAsEitherOfTwoAccounts(t *testing.T) {
	keyring.MockInit()
	const work = "work@example.com"
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: tok, AutoConsent: true, Accounts: []string{work}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	creds := app.NewCredentials(context.Background(), t.TempDir())
	g, err := app.GoogleAt(creds, srv.URL, tok, autoConsent)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan transfer.Event, 1024)
	state := t.TempDir()
	q, err := app.OpenQueue(transfer.Config{StateDir: state, Auth: creds, Events: events, RetryBase: 10 * time.Millisecond}, app.NewSpool(app.SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	g.OnSignIn(func(a string) { q.SignedIn(a) })
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = q, events
		o.deps = func(d *Deps) {
			d.Outbox, d.Keeper, d.Endpoint, d.Auth = q, q, srv.URL, creds
			d.Target = func() string { return srv.URL }
			d.Account = func() Account { return Account{Address: g.Address()} }
			d.SignIn = func(ctx context.Context, secret []byte) (Account, error) {
				a, err := g.SignIn(ctx, secret)
				return Account{Address: a}, err
			}
			d.Accounts = app.WindowAccounts{G: g, Q: q}
		}
	})
	t.Cleanup(func() { q.Close() })
	h.url, h.sb, h.q, h.state = srv.URL, sb, q, state

	a := h.u.account
	a.openAssistant()
	a.assistant.paste.SetText(`{"web":{"client_id":"x"}}`)
	if !a.assistant.signIn.Disabled() {
		t.Fatal("a web client may sign in")
	}
	a.assistant.paste.SetText(`{"installed":{"client_id":"id.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token"}}`)
	test.Tap(a.assistant.signIn)
	h.until("the first account signed in", func() bool { return a.accounts.outs[sandbox.DefaultAccount] != nil })
	a.accounts.addAccount(nil, work) // the person picks work in the browser
	h.until("the second account signed in", func() bool { return a.accounts.outs[work] != nil })
	if got := g.Accounts(); len(got) != 2 {
		t.Fatalf("accounts %v", got)
	}

	c := h.u.compose
	choose := func(as string) {
		t.Helper()
		i := indexOf(c.from.accounts, as)
		if i < 0 {
			t.Fatalf("From offers %v, not %s", c.from.accounts, as)
		}
		test.Tap(c.from.c.buttons[i])
		h.until(as+" the default sender", func() bool { return g.Accounts()[0] == as })
	}
	sent := func(as, subject string) {
		t.Helper()
		h.until(subject+" sent", func() bool {
			for _, r := range h.u.transfers.rows {
				if strings.HasPrefix(r.name.Text, subject) && (r.state.Text == "Done" || r.state.Text == "Sent") {
					return strings.Contains(r.dest.Text, "as "+as)
				}
			}
			return false
		})
	}
	// Work's message waits in the queue while the default sender changes:
	// it still goes as work, the account it was written from.
	q.Hold("test")
	choose(work)
	h.writeMessage("zoe@example.com", "From work")
	test.Tap(c.sendBtn)
	h.until("the message queued", func() bool { return len(q.Jobs()) == 1 })
	choose(sandbox.DefaultAccount)
	q.Release("test")
	sent(work, "From work")
	h.writeMessage("zoe@example.com", "From home")
	test.Tap(c.sendBtn)
	sent(sandbox.DefaultAccount, "From home")
	// The sandbox's own token reads the default account's mailbox.
	var subjects []string
	for _, m := range h.messages() {
		for _, line := range strings.Split(m.raw, "\r\n") {
			if strings.HasPrefix(line, "Subject: ") {
				subjects = append(subjects, strings.TrimPrefix(line, "Subject: "))
			}
		}
	}
	if strings.Join(subjects, ",") != "From home" {
		t.Fatalf("%s's mailbox holds %v: want its own message alone", sandbox.DefaultAccount, subjects)
	}
}

// Issue 32 in the window, against a sandbox standing in for Google with
// the app's own credentials: a message whose file went to Drive (Drive
// allowed when Compose asked), its only account signed out with its
// uploads kept before the share went. Sign in on the waiting account goes
// straight to the browser (the client was kept), says it asks for Drive
// too and why, and asks for it: the share and the message go, and the
// mailbox holds the message once.
func TestWindowFinishesALinkedMessageAfterSigningOutAndIn(t *testing.T) {
	keyring.MockInit()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: tok, AutoConsent: true})
	if err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/permissions") {
			select { // the share waits until the account has signed out
			case held <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		sb.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(let)
	t.Cleanup(func() { sb.Close() })
	creds := app.NewCredentials(context.Background(), t.TempDir())
	g, err := app.GoogleAt(creds, srv.URL, tok, autoConsent)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan transfer.Event, 1024)
	state := t.TempDir()
	q, err := app.OpenQueue(transfer.Config{StateDir: state, Auth: creds, Events: events, RetryBase: 10 * time.Millisecond}, app.NewSpool(app.SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	g.OnSignIn(func(a string) { q.SignedIn(a) })
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = q, events
		o.deps = func(d *Deps) {
			d.Outbox, d.Keeper, d.Endpoint, d.Auth = q, q, srv.URL, creds
			d.Target = func() string { return srv.URL }
			d.Account = func() Account { return Account{Address: g.Address()} }
			d.SignIn = func(ctx context.Context, secret []byte) (Account, error) {
				a, err := g.SignIn(ctx, secret)
				return Account{Address: a}, err
			}
			d.May, d.Allow = g.May, g.Allow
			d.Accounts = app.WindowAccounts{G: g, Q: q}
		}
	})
	t.Cleanup(func() { q.Close() })
	h.url, h.sb, h.q, h.state = srv.URL, sb, q, state
	me := sandbox.DefaultAccount

	a := h.u.account
	a.openAssistant()
	a.assistant.paste.SetText(`{"installed":{"client_id":"id.apps.googleusercontent.com","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token"}}`)
	test.Tap(a.assistant.signIn)
	h.until("signed in", func() bool { return a.accounts.outs[me] != nil })

	c := h.u.compose
	h.writeMessage("zoe@example.com", "The film")
	film := patterned(t, "film.mp4", 1<<20)
	drop(h, film)
	test.Tap(c.attRows[film].toggle) // as a Drive link
	test.Tap(c.sendBtn)
	h.until("the question about Drive", func() bool { return c.consent != nil })
	test.Tap(c.consent.allow)
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the share never went out")
	}

	a.accounts.askSignOut(me)
	if a.accounts.asked == nil {
		t.Fatal("signing out with an upload unfinished did not ask")
	}
	// The message, its upload to Drive and its share are one message to
	// the person, not "3 unfinished uploads".
	if q := a.accounts.asked.text.AccessibilityLabel(); !strings.HasPrefix(q, me+" has 1 message waiting. Should it wait") {
		t.Errorf("the question reads %q", q)
	}
	test.Tap(a.accounts.asked.keep)
	h.until("signed out, its upload waiting", func() bool { return a.accounts.ins[me] != nil })
	let()
	h.until("the share waiting for a sign-in", func() bool {
		for _, s := range q.Jobs() {
			if strings.Contains(s.URL, "/permissions") {
				if s.State == transfer.StateFailed {
					t.Fatalf("the share failed: %s", s.Error)
				}
				return s.State == transfer.StateSignIn
			}
		}
		return false
	})

	a.assistant.close()
	a.assistant = nil
	test.Tap(a.accounts.ins[me])
	if a.assistant != nil {
		t.Fatal("Sign in asked for the client file again")
	}
	if !strings.Contains(a.accounts.status.Text, "also asks for Google Drive because a message waiting to go has a file there") {
		t.Errorf("while the browser signs in the window says %q", a.accounts.status.Text)
	}
	h.until("the message sent", func() bool {
		row := h.rowNamed("The film")
		return row != nil && row.state.Text == "Sent"
	})
	if msgs := h.messages(); len(msgs) != 1 {
		t.Fatalf("the mailbox holds %d messages, want the one", len(msgs))
	}
}
