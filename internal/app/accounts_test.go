package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"carrier/auth"
	"carrier/internal/apptest"
	"carrier/sandbox"
	"carrier/transfer"
)

const work = "work@example.com"

// twoAccounts is a sandbox serving its default account and work, both
// signed in side by side through the app's Google, and a queue on the
// app's credentials.
type twoAccounts struct {
	t      *testing.T
	sb     *sandbox.Sandbox
	base   string
	g      *Google
	q      *Queue
	events chan transfer.Event
	home   string // the sandbox's default account
}

func openTwoAccounts(t *testing.T) *twoAccounts {
	t.Helper()
	keyring.MockInit()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "stand-in-token", AutoConsent: true, Accounts: []string{work}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(func() { srv.Close(); sb.Close() })
	ctx := context.Background()
	creds := NewCredentials(ctx, t.TempDir())
	g, err := GoogleAt(creds, srv.URL, "stand-in-token", followRedirects)
	if err != nil {
		t.Fatal(err)
	}
	ta := &twoAccounts{t: t, sb: sb, base: srv.URL, g: g, home: sb.Account(), events: make(chan transfer.Event, 1024)}
	for _, hint := range []string{ta.home, work} {
		if got, err := g.AddAccount(ctx, nil, hint); err != nil || got != hint {
			t.Fatalf("sign-in of %s: %q %v", hint, got, err)
		}
	}
	if got := g.Accounts(); len(got) != 2 || got[0] != work {
		t.Fatalf("accounts %v: want both, the last signed in first", got)
	}
	ta.q, err = OpenQueue(transfer.Config{StateDir: t.TempDir(), Auth: creds, Events: ta.events, ChunkSize: transfer.ChunkQuantum}, NewSpool(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ta.q.Close() })
	g.OnSignIn(func(a string) { ta.q.SignedIn(a) }) // as App.OpenQueue does
	return ta
}

// send queues a message from account, bound to it as the app binds every job.
func (ta *twoAccounts) send(account, subject string) string {
	ta.t.Helper()
	path := filepath.Join(ta.t.TempDir(), "msg.eml")
	body := "From: " + account + "\r\nTo: zoe@example.com\r\nSubject: " + subject + "\r\n\r\n" + strings.Repeat("carrier\r\n", 1000)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		ta.t.Fatal(err)
	}
	id, err := ta.q.Add(transfer.Spec{URL: ta.base + "/upload/gmail/v1/users/me/messages/send", ContentType: "message/rfc822", Path: path, Account: account})
	if err != nil {
		ta.t.Fatal(err)
	}
	return id
}

// await waits for each job to reach its kind of event, failing on a
// failure or a retry.
func (ta *twoAccounts) await(want map[string]transfer.EventKind) map[string]transfer.Event {
	ta.t.Helper()
	got := map[string]transfer.Event{}
	deadline := time.After(30 * time.Second)
	for len(got) < len(want) {
		select {
		case e := <-ta.events:
			k, ok := want[e.Job]
			if !ok {
				continue
			}
			// A retry without an error is a wait for the test's hold.
			if e.Kind == transfer.EventFailed || e.Kind == transfer.EventRetrying && e.Snap.Error != "" {
				ta.t.Fatalf("job %s: %s (%s)", e.Job, e.Kind, e.Snap.Error)
			}
			if e.Kind == k {
				got[e.Job] = e
			} else if e.Kind == transfer.EventDone || e.Kind == transfer.EventSignIn || e.Kind == transfer.EventCancelled {
				ta.t.Fatalf("job %s ended %s, want %s", e.Job, e.Kind, k)
			}
		case <-deadline:
			ta.t.Fatalf("within the deadline only %d of %d jobs got where they should", len(got), len(want))
		}
	}
	return got
}

// mailbox lists the ids of the messages in account's mailbox, read with
// a sign-in of its own that may read (Carrier's may only send).
func (ta *twoAccounts) mailbox(account string) []string {
	ta.t.Helper()
	cfg, err := auth.SandboxConfig(ta.base)
	if err != nil {
		ta.t.Fatal(err)
	}
	cfg.AuthParams = func(challenge, redirect, scope string) map[string]string {
		return map[string]string{sandbox.ProofParam: sandbox.ConsentProof("stand-in-token", challenge, redirect, scope)}
	}
	acct, err := auth.Login(context.Background(), cfg, auth.LoginOptions{Scopes: []string{"https://www.googleapis.com/auth/gmail.readonly"}, Hint: account, Browser: followRedirects})
	if err != nil {
		ta.t.Fatal(err)
	}
	tok, err := acct.Bearer(context.Background(), false)
	if err != nil {
		ta.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, ta.base+"/gmail/v1/users/me/messages", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ta.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		ta.t.Fatalf("%s's mailbox: %s", account, resp.Status)
	}
	var l struct{ Messages []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		ta.t.Fatal(err)
	}
	var ids []string
	for _, m := range l.Messages {
		ids = append(ids, m.ID)
	}
	return ids
}

func sentID(t *testing.T, e transfer.Event) string {
	t.Helper()
	var m struct{ ID string }
	if e.Snap.Response == nil || json.Unmarshal(e.Snap.Response.Body, &m) != nil || m.ID == "" {
		t.Fatalf("job %s: no message id in its answer", e.Job)
	}
	return m.ID
}

// Two accounts send at once; each message lands in its own mailbox.
func TestTwoAccountsSendEachIntoItsOwnMailbox(t *testing.T) {
	ta := openTwoAccounts(t)
	a, b := ta.send(ta.home, "from home"), ta.send(work, "from work")
	done := ta.await(map[string]transfer.EventKind{a: transfer.EventDone, b: transfer.EventDone})
	homeBox, workBox := strings.Join(ta.mailbox(ta.home), ","), strings.Join(ta.mailbox(work), ",")
	if homeBox != sentID(t, done[a]) || workBox != sentID(t, done[b]) {
		t.Fatalf("home's mailbox %q, work's %q: want home's message %s and work's %s each in its own", homeBox, workBox, sentID(t, done[a]), sentID(t, done[b]))
	}
	if done[a].Snap.Account != ta.home || done[b].Snap.Account != work {
		t.Errorf("jobs bound to %q and %q", done[a].Snap.Account, done[b].Snap.Account)
	}
}

// Jobs that follow a job (a Drive share, a batchCreate, a message that
// waits for its links) go as the account of the job they follow.
func TestAJobThatFollowsGoesAsItsAccount(t *testing.T) {
	ta := openTwoAccounts(t)
	ta.q.Hold("test")
	first := ta.send(work, "first")
	next, err := ta.q.Add(transfer.Spec{URL: ta.base + "/upload/gmail/v1/users/me/messages/send", ContentType: "message/rfc822", Path: apptest.Snap(t, ta.q, first).Path, Needs: []string{first}})
	if err != nil {
		t.Fatal(err)
	}
	if s := apptest.Snap(t, ta.q, next); s.Account != work {
		t.Fatalf("the following job is bound to %q, want %s", s.Account, work)
	}
	ta.q.Release("test")
}

// Signing one account out and keeping its jobs parks them; the other's
// go on; signing it in again finishes them.
func TestSignOutKeepingJobsParksOnlyThatAccount(t *testing.T) {
	ta := openTwoAccounts(t)
	ta.q.Hold("test")
	a, b := ta.send(ta.home, "kept"), ta.send(work, "goes on")
	if _, err := ta.g.SignOutAccount(context.Background(), ta.home, ta.q, KeepJobs); err != nil {
		t.Fatal(err)
	}
	if got := ta.g.Accounts(); len(got) != 1 || got[0] != work {
		t.Fatalf("accounts after signing %s out: %v", ta.home, got)
	}
	if _, err := auth.LoadAccount(ta.base, work); err != nil {
		t.Fatalf("the other account's sign-in went: %v", err)
	}
	ta.q.Release("test")
	got := ta.await(map[string]transfer.EventKind{a: transfer.EventSignIn, b: transfer.EventDone})
	if got[a].Snap.SignInFor != ta.home {
		t.Errorf("parked for %q, want %s", got[a].Snap.SignInFor, ta.home)
	}
	if _, err := ta.g.AddAccount(context.Background(), nil, ta.home); err != nil {
		t.Fatal(err)
	}
	ta.await(map[string]transfer.EventKind{a: transfer.EventDone})
	if n := len(ta.mailbox(ta.home)); n != 1 {
		t.Errorf("%d messages in %s's mailbox, want the kept one", n, ta.home)
	}
}

// Signing one account out and cancelling its jobs cancels those alone.
func TestSignOutCancellingJobsCancelsOnlyThatAccounts(t *testing.T) {
	ta := openTwoAccounts(t)
	ta.q.Hold("test")
	a, b := ta.send(ta.home, "cancelled"), ta.send(work, "goes on")
	cancelled, err := ta.g.SignOutAccount(context.Background(), ta.home, ta.q, CancelJobs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cancelled, ",") != a {
		t.Fatalf("cancelled %v, want %s alone", cancelled, a)
	}
	ta.q.Release("test")
	ta.await(map[string]transfer.EventKind{b: transfer.EventDone})
	if s := apptest.Snap(t, ta.q, a); s.State != transfer.StateCancelled {
		t.Errorf("%s's job is %s", ta.home, s.State)
	}
}

// A password change of one account parks its jobs alone; the other's
// finish; signing it in again finishes the parked ones.
func TestRevokedAccountParksOnlyItsJobs(t *testing.T) {
	ta := openTwoAccounts(t)
	if n, err := ta.sb.ChangePassword(ta.home); err != nil || n == 0 {
		t.Fatalf("password change: %d tokens ended, %v", n, err)
	}
	a, b := ta.send(ta.home, "parks"), ta.send(work, "goes")
	got := ta.await(map[string]transfer.EventKind{a: transfer.EventSignIn, b: transfer.EventDone})
	if got[a].Snap.SignInFor != ta.home {
		t.Errorf("parked for %q, want %s", got[a].Snap.SignInFor, ta.home)
	}
	if _, err := ta.g.AddAccount(context.Background(), nil, ta.home); err != nil {
		t.Fatal(err)
	}
	ta.await(map[string]transfer.EventKind{a: transfer.EventDone})
}

// What waits is counted in deliveries, not jobs (issue 32: signing out
// said "3 unfinished uploads" of one message): a message with its Drive
// upload and share is one message, a Photos batch with its files and its
// two calls is one upload, a timeline post another; a finished message
// and another account's jobs count for nothing.
func TestCountWaitingCountsDeliveries(t *testing.T) {
	const api = "http://127.0.0.1:9"
	job := func(id, url, account string, st transfer.State, needs ...string) transfer.Snapshot {
		return transfer.Snapshot{ID: id, URL: api + url, Account: account, State: st, Needs: needs}
	}
	me, other := "me@example.com", "other@example.com"
	jobs := []transfer.Snapshot{
		job("film", "/upload/drive/v3/files?uploadType=resumable", me, transfer.StateDone),
		job("share", "/drive/v3/files/F/permissions", me, transfer.StateSignIn, "film"),
		job("msg", "/upload/gmail/v1/users/me/messages/send?uploadType=resumable", me, transfer.StateWaiting, "film", "share"),
		job("p1", "/v1/uploads", me, transfer.StateQueued),
		job("p2", "/v1/uploads", me, transfer.StateQueued),
		job("p3", "/v1/uploads", me, transfer.StateFailed),
		job("batch1", "/v1/mediaItems:batchCreate", me, transfer.StateWaiting, "p1", "p2"),
		job("batch2", "/v1/mediaItems:batchCreate", me, transfer.StatePaused, "batch1", "p3"),
		job("post", "/upload/mirror/v1/timeline?uploadType=media", "", transfer.StateSignIn),
		job("old", "/upload/gmail/v1/users/me/messages/send?uploadType=media", me, transfer.StateDone),
		job("draft", "/upload/gmail/v1/users/me/drafts?uploadType=media", other, transfer.StateQueued),
	}
	jobs[8].SignInFor = me
	mine := func(s transfer.Snapshot) bool { return s.Account == me || s.Account == "" && s.SignInFor == me }
	if got, want := CountWaiting(jobs, mine), (Waiting{Messages: 1, Uploads: 2}); got != want {
		t.Errorf("%s waits for %+v, want %+v", me, got, want)
	}
	if got, want := CountWaiting(jobs, func(s transfer.Snapshot) bool { return s.Account == other }), (Waiting{Messages: 1}); got != want {
		t.Errorf("%s waits for %+v, want %+v", other, got, want)
	}
}
