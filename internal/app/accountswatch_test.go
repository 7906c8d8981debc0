package app

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/auth"
	"carrier/transfer"
)

// signInElsewhere signs in at base as another Carrier process does
// (`carrier login`): the keychain written by auth.Login, then the
// accounts stamp of the data folder noted (NoteSignIn); nothing of the
// window's Google is used.
func signInElsewhere(t *testing.T, base, dataDir string) string {
	t.Helper()
	other, err := GoogleAt(nil, base, "stand-in-token", followRedirects)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := other.config(nil)
	if err != nil {
		t.Fatal(err)
	}
	scopes, _ := auth.ScopesFor(auth.Send)
	acct, err := other.login(context.Background(), cfg, auth.LoginOptions{Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	if err := NoteSignIn(dataDir, acct.Endpoint, acct.Address); err != nil {
		t.Fatal(err)
	}
	return acct.Address
}

// A window's job parked by a revoked sign-in goes on when the account
// signs in again in a terminal (`carrier login`, another process): the
// window hears the accounts stamp change, tells its queue, and finishes
// the upload on the same session, no byte twice; the Account screen's
// hook is called. A sign-out in a terminal is heard too.
func TestSignInElsewhereSendsParkedJobsOn(t *testing.T) {
	keyring.MockInit()
	var f revokingFront
	base := f.serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	creds := NewCredentials(ctx, t.TempDir())
	g, err := GoogleAt(creds, base, "stand-in-token", followRedirects)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	g.Watch(ctx, dataDir)
	changed := make(chan []string, 8)
	g.OnAccountsChanged(func() { changed <- g.Accounts() })
	address, err := g.SignIn(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := readStamp(dataDir); st.Endpoints[g.stampKey()][address].In == 0 {
		t.Fatalf("the window's own sign-in is not in the stamp: %+v", st)
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
	next := func(kind transfer.EventKind) transfer.Event {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Job != id {
					continue
				}
				if e.Kind == transfer.EventFailed {
					t.Fatalf("failed: %s", e)
				}
				if e.Kind == kind || e.Kind == transfer.EventDone {
					return e
				}
			case <-deadline:
				t.Fatalf("no %v event within the deadline", kind)
			}
		}
	}
	if e := next(transfer.EventSignIn); e.Kind != transfer.EventSignIn {
		t.Fatalf("want the job parked: %s", e)
	}

	if got := signInElsewhere(t, base, dataDir); got != address {
		t.Fatalf("signed in %s elsewhere, want %s", got, address)
	}
	if e := next(transfer.EventDone); e.Kind != transfer.EventDone || e.Snap.Confirmed != int64(msg.Len()) {
		t.Fatalf("after the sign-in elsewhere: %s", e)
	}
	select {
	case l := <-changed:
		if !slices.Equal(l, []string{address}) {
			t.Fatalf("the accounts when told of the change: %v", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the window's screens were not told of the sign-in elsewhere")
	}
	f.mu.Lock()
	if f.starts != 1 || f.received != int64(msg.Len()) {
		t.Errorf("%d sessions started, %d bytes sent for a %d-byte message: want 1 and no byte twice", f.starts, f.received, msg.Len())
	}
	f.mu.Unlock()

	// `carrier logout` in a terminal: the window lists nobody, and sends
	// as nobody.
	if _, err := auth.Logout(ctx, base, address); err != nil {
		t.Fatal(err)
	}
	if err := NoteSignOut(dataDir, base, address); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-changed:
		if len(l) != 0 || g.Address() != "" {
			t.Fatalf("after the sign-out elsewhere the window lists %v, sends as %q", l, g.Address())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the window did not hear the sign-out elsewhere")
	}
}

// Where the folder cannot be watched, the stamp is read on a clock's tick:
// a sign-in noted elsewhere reaches OnSignIn at the next tick.
func TestAccountsStampReadOnATick(t *testing.T) {
	keyring.MockInit()
	var f revokingFront
	base := f.serve(t)
	g, err := GoogleAt(NewCredentials(context.Background(), t.TempDir()), base, "stand-in-token", followRedirects)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	g.useStamp(dir)
	told := make(chan string, 4)
	g.OnSignIn(func(a string) { told <- a })
	ticks := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.pollStamp(ctx, ticks)
	address := signInElsewhere(t, base, dir)
	ticks <- time.Now()
	ticks <- time.Now() // the first was read: its work is done
	select {
	case a := <-told:
		if a != address {
			t.Fatalf("told %s, want %s", a, address)
		}
	default:
		t.Fatal("the tick did not read the stamp")
	}
	ticks <- time.Now()
	ticks <- time.Now()
	select {
	case a := <-told:
		t.Fatalf("the same sign-in told again: %s", a)
	default:
	}
}

// The stamp is noted only where a data folder exists (a window has one),
// and holds no secret: addresses and times.
func TestAccountsStampNeedsTheFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	if err := NoteSignIn(dir, "http://127.0.0.1:1", "a@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the folder was made: %v", err)
	}
}

// How long a window takes to hear a sign-in noted by another process:
// the note written, the folder's event, the stamp read, the accounts read
// again from the keychain, the hooks told.
func BenchmarkSignInHeard(b *testing.B) {
	keyring.MockInit()
	g, err := GoogleAt(nil, "http://127.0.0.1:1", "", nil)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.Watch(ctx, dir)
	heard := make(chan struct{}, 1)
	g.OnAccountsChanged(func() {
		select {
		case heard <- struct{}{}:
		default:
		}
	})
	b.ResetTimer()
	for range b.N {
		if err := NoteSignIn(dir, "http://127.0.0.1:1", "a@example.com"); err != nil {
			b.Fatal(err)
		}
		<-heard
	}
}

// What one reading of the stamp costs when nothing changed (each event
// in the data folder, or each tick where it is not watched).
func BenchmarkStampUnchanged(b *testing.B) {
	g, err := GoogleAt(nil, "http://127.0.0.1:1", "", nil)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for i := range 5 {
		NoteSignIn(dir, "http://127.0.0.1:1", fmt.Sprintf("a%d@example.com", i))
	}
	g.useStamp(dir)
	b.ResetTimer()
	for range b.N {
		g.stampChanged()
	}
}

// Carriers noting sign-ins at the same instant keep every note: each
// reads and writes the stamp under its lock (here goroutines, whose
// separate opens of the lock conflict as separate processes' do).
func TestAccountsStampKeepsNotesMadeAtOnce(t *testing.T) {
	dir := t.TempDir()
	const n = 12
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := NoteSignIn(dir, "http://127.0.0.1:1", fmt.Sprintf("a%d@example.com", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	base, _ := auth.CanonicalEndpoint("http://127.0.0.1:1")
	if got := readStamp(dir).Endpoints[base]; len(got) != n {
		t.Fatalf("the stamp keeps %d of %d notes made at once: %v", len(got), n, slices.Sorted(maps.Keys(got)))
	}
}
