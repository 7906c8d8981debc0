package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/apptest"
	"carrier/transfer"
)

// linkedMessage queues, as account, a message whose one file goes as a
// Drive link, held back so the test decides when each part runs: it
// returns the message's jobs (upload, share, message) by what they do.
func (ta *twoAccounts) linkedMessage(account string) (upload, share, message string) {
	ta.t.Helper()
	dir := ta.t.TempDir()
	file := filepath.Join(dir, "holiday.zip")
	if err := os.WriteFile(file, []byte(strings.Repeat("holiday ", 40000)), 0o600); err != nil {
		ta.t.Fatal(err)
	}
	msg := &compose.Message{From: account, To: []string{"zoe@example.com"}, Subject: "The pictures", Text: "Here they are.", Attachments: []string{file}}
	up, err := Message(msg, compose.Send, GmailOptions{})
	if err != nil {
		ta.t.Fatal(err)
	}
	d := Drive{Root: ta.base, Auth: ta.g.For(account)}
	ids, err := ta.q.SendWithLinks(context.Background(), d, msg, compose.Send, up, LinkOptions{Policy: compose.LinksAlways}, func(s *transfer.Spec) { s.Account = account })
	if err != nil {
		ta.t.Fatal(err)
	}
	for _, id := range ids {
		switch u := apptest.Snap(ta.t, ta.q, id).URL; {
		case strings.Contains(u, "/upload/drive/"):
			upload = id
		case strings.Contains(u, "/permissions"):
			share = id
		default:
			message = id
		}
	}
	if upload == "" || share == "" || message == "" {
		ta.t.Fatalf("jobs %v: want an upload, a share and a message", ids)
	}
	return upload, share, message
}

// Issue 32: a message whose Drive file finished uploading, its account
// signed out with its uploads kept (and the other account too) and signed
// in again from the window, with the client kept, no file asked for (the
// window's own sign-in asks for sending and drafts alone): the sign-in asks for Drive
// too, since a job of the account needs it, and the share and the
// message go, the message once.
func TestSigningInAgainAsksForWhatWaitingJobsNeed(t *testing.T) {
	ta := openTwoAccounts(t)
	ctx := context.Background()
	if err := ta.g.Allow(ctx, auth.Links); err != nil { // work, signed in last
		t.Fatal(err)
	}
	ta.q.Hold("test")
	upload, share, message := ta.linkedMessage(work)
	if err := ta.q.Pause(share); err != nil {
		t.Fatal(err)
	}
	ta.q.Release("test")
	ta.await(map[string]transfer.EventKind{upload: transfer.EventDone})

	w := WindowAccounts{G: ta.g, Q: ta.q}
	if err := w.SignOut(ctx, work, KeepJobs); err != nil {
		t.Fatal(err)
	}
	if err := ta.q.Resume(ctx, share); err != nil {
		t.Fatal(err)
	}
	ta.await(map[string]transfer.EventKind{share: transfer.EventSignIn})
	if err := w.SignOut(ctx, ta.home, KeepJobs); err != nil { // nobody is signed in now
		t.Fatal(err)
	}
	if !w.HasClient() {
		t.Fatal("with every account signed out, the client they signed in with is gone: the window would ask for its file again")
	}

	if _, err := w.Add(ctx, nil, work); err != nil { // the window's Sign in on the waiting account
		t.Fatal(err)
	}
	acct, err := auth.LoadAccount(ta.base, work)
	if err != nil {
		t.Fatal(err)
	}
	if !acct.Can(auth.Links) || !acct.Can(auth.Send) {
		t.Errorf("the new sign-in grants %v: want sending and Drive", acct.Scopes())
	}
	ta.await(map[string]transfer.EventKind{share: transfer.EventDone, message: transfer.EventDone})
	if n := len(ta.mailbox(work)); n != 1 {
		t.Errorf("%d messages in %s's mailbox, want the one sent", n, work)
	}
}

// A job refused for a scope its sign-in lacks (Drive's, after a sign-out
// and a sign-in that asked for sending alone, as an older Carrier or
// `carrier login` makes) waits for a sign-in instead of failing with a Retry refused the
// same way; signing the account in again from the window asks for Drive
// and sends the whole message on, once.
func TestAJobRefusedForAScopeWaitsForASignIn(t *testing.T) {
	ta := openTwoAccounts(t)
	ctx := context.Background()
	if err := ta.g.Allow(ctx, auth.Links); err != nil {
		t.Fatal(err)
	}
	ta.q.Hold("test")
	upload, share, message := ta.linkedMessage(work)
	w := WindowAccounts{G: ta.g, Q: ta.q}
	if err := w.SignOut(ctx, work, KeepJobs); err != nil { // Drive's grant is revoked
		t.Fatal(err)
	}
	if _, err := ta.g.AddAccount(ctx, nil, work); err != nil { // sending and drafts alone
		t.Fatal(err)
	}
	ta.q.Release("test")
	got := ta.await(map[string]transfer.EventKind{upload: transfer.EventSignIn})
	if s := got[upload].Snap; s.SignInFor != work || s.State != transfer.StateSignIn {
		t.Errorf("the upload is %s for %q, want waiting for %s to sign in", s.State, s.SignInFor, work)
	}
	if also := w.AlsoAsked(work); len(also) != 1 || also[0] != auth.Links {
		t.Errorf("signing %s in again also asks for %v, want Drive (links)", work, also)
	}
	if _, err := w.Add(ctx, nil, work); err != nil {
		t.Fatal(err)
	}
	ta.await(map[string]transfer.EventKind{upload: transfer.EventDone, share: transfer.EventDone, message: transfer.EventDone})
	if n := len(ta.mailbox(work)); n != 1 {
		t.Errorf("%d messages in %s's mailbox, want the one sent", n, work)
	}
}

func TestKindOfAJobFromItsURL(t *testing.T) {
	for u, want := range map[string]auth.Kind{
		"http://127.0.0.1:1/upload/gmail/v1/users/me/messages/send":                        auth.Send,
		"https://gmail.googleapis.com/upload/gmail/v1/users/me/drafts":                     auth.Drafts,
		"https://gmail.googleapis.com/upload/gmail/v1/users/me/drafts/send":                auth.Drafts,
		"https://gmail.googleapis.com/upload/gmail/v1/users/me/drafts/r123":                auth.Drafts,
		"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages":                   auth.Insert,
		"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/import":            auth.Insert,
		"https://www.googleapis.com/upload/drive/v3/files?fields=id":                       auth.Links,
		"https://www.googleapis.com/drive/v3/files/abc/permissions?fields=id":              auth.Links,
		"https://photoslibrary.googleapis.com/v1/uploads":                                  auth.Photos,
		"https://photoslibrary.googleapis.com/v1/mediaItems:batchCreate":                   auth.Photos,
		"https://photoslibrary.googleapis.com/v1/albums":                                   auth.Photos,
		"https://www.googleapis.com/upload/mirror/v1/timeline":                             auth.Timeline,
		"https://storage.googleapis.com/upload/storage/v1/b/bucket/o?uploadType=resumable": "",
		"https://www.googleapis.com/upload/mirror/v1/timeline/t1/attachments":              auth.Timeline,
		"http://127.0.0.1:4000/api/upload/gmail/v1/users/me/messages/send":                 auth.Send,
		"http://127.0.0.1:4000/api/v1/uploads":                                             auth.Photos,
		"https://example.com/elsewhere":                                                    "",
		"::not a URL":                                                                      "",
	} {
		if got := KindOf(u); got != want {
			t.Errorf("KindOf(%s) = %q, want %q", u, got, want)
		}
	}
}

// A request that went out before its account signed out here with its
// jobs kept, refused once the tokens were revoked, waits for a sign-in:
// the refresh it asks for says so, rather than that no token can be
// refreshed (which failed the job).
func TestARefreshAfterSigningOutWaitsForASignIn(t *testing.T) {
	c := NewCredentials(context.Background(), t.TempDir())
	c.SignedOut(work)
	err := c.Refresh(transfer.WithAccount(context.Background(), work))
	if !errors.Is(err, transfer.ErrSignInNeeded) {
		t.Fatalf("refresh for an account signed out: %v, want a sign-in needed", err)
	}
}
