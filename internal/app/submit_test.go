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

// A message edited from a draft stays one draft: sent, the draft goes
// with it (drafts.send); saved, or queued by any other method, the draft
// is updated (drafts.update). Without a draft the method is the person's.
func TestEditingADraftMeansDraft(t *testing.T) {
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Report"}
	cases := []struct {
		draft  string
		method compose.Method
		want   compose.Method
		o      GmailOptions
		path   string
	}{
		{"", compose.Send, compose.Send, GmailOptions{}, "/upload/gmail/v1/users/me/messages/send"},
		{"", compose.Draft, compose.Draft, GmailOptions{}, "/upload/gmail/v1/users/me/drafts"},
		{"", compose.Insert, compose.Insert, GmailOptions{}, "/upload/gmail/v1/users/me/messages"},
		{"r-42", compose.Send, compose.Draft, GmailOptions{SendDraft: "r-42"}, "/upload/gmail/v1/users/me/drafts/send"},
		{"r-42", compose.Draft, compose.Draft, GmailOptions{DraftID: "r-42"}, "/upload/gmail/v1/users/me/drafts/r-42"},
		{"r-42", compose.Import, compose.Draft, GmailOptions{DraftID: "r-42"}, "/upload/gmail/v1/users/me/drafts/r-42"},
	}
	for _, c := range cases {
		o := EditDraft(c.draft, c.method)
		if o.DraftID != c.o.DraftID || o.SendDraft != c.o.SendDraft {
			t.Errorf("EditDraft(%q, %s) = %+v, want %+v", c.draft, c.method, o, c.o)
		}
		method, err := Prepare(msg, c.method, o)
		if err != nil || method != c.want {
			t.Errorf("draft %q, %s: goes by %s (%v), want %s", c.draft, c.method, method, err, c.want)
		}
		up, err := Message(msg, method, o)
		if err != nil || up.Path != c.path {
			t.Errorf("draft %q, %s: %s (%v), want %s", c.draft, c.method, up.Path, err, c.path)
		}
	}
}

// The CLI names the draft by flags: either flag makes a draft's method.
func TestDraftMethodFromFlags(t *testing.T) {
	for _, c := range []struct {
		o    GmailOptions
		in   compose.Method
		want compose.Method
	}{
		{GmailOptions{}, compose.Send, compose.Send},
		{GmailOptions{}, compose.Import, compose.Import},
		{GmailOptions{Thread: "t1", Labels: []string{"INBOX"}}, compose.Insert, compose.Insert},
		{GmailOptions{DraftID: "r-1"}, compose.Send, compose.Draft},
		{GmailOptions{SendDraft: "r-1"}, compose.Send, compose.Draft},
		{GmailOptions{SendDraft: "r-1"}, compose.Insert, compose.Draft},
	} {
		if got := DraftMethod(c.in, c.o); got != c.want {
			t.Errorf("DraftMethod(%s, %+v) = %s, want %s", c.in, c.o, got, c.want)
		}
	}
}

// A message with a problem is refused with every problem, before anything
// else is decided; a good one passes.
func TestPrepareChecksTheMessage(t *testing.T) {
	bad := &compose.Message{To: []string{"not an address"}, Subject: "two\nlines"}
	_, err := Prepare(bad, compose.Send, GmailOptions{})
	var ie *compose.InputError
	if !errors.As(err, &ie) || len(ie.Problems) != 2 {
		t.Fatalf("a bad address and a two-line subject: %v, want both problems", err)
	}
	if _, err := Prepare(&compose.Message{Subject: "nobody"}, compose.Draft, EditDraft("r-1", compose.Draft)); !errors.As(err, &ie) {
		t.Errorf("no recipient: %v, want an input error", err)
	}
	if m, err := Prepare(&compose.Message{Bcc: []string{"zoe@example.com"}}, compose.Send, GmailOptions{}); err != nil || m != compose.Send {
		t.Errorf("a good message: %s, %v", m, err)
	}
}

// Drive is asked for only when a file goes there, and only of someone who
// can say; what they say is returned as it is.
func TestMayDriveAsksOnlyWhenNeeded(t *testing.T) {
	ctx := context.Background()
	var asked []auth.Kind
	refuse := &NotAllowedError{Address: "zoe@example.com", Kind: auth.Links}
	may := func(_ context.Context, k auth.Kind) error {
		asked = append(asked, k)
		return refuse
	}
	if err := MayDrive(ctx, 0, may); err != nil || len(asked) != 0 {
		t.Errorf("no file in Drive: %v, asked %v; want nothing asked", err, asked)
	}
	if err := MayDrive(ctx, 3, nil); err != nil {
		t.Errorf("nobody to ask: %v", err)
	}
	var na *NotAllowedError
	if err := MayDrive(ctx, 2, may); !errors.As(err, &na) || na != refuse {
		t.Errorf("two files in Drive, not allowed: %v, want the refusal as it is", err)
	}
	if len(asked) != 1 || asked[0] != auth.Links {
		t.Errorf("asked %v, want once for %s", asked, auth.Links)
	}
	allow := func(context.Context, auth.Kind) error { return nil }
	if err := MayDrive(ctx, 1, allow); err != nil {
		t.Errorf("allowed: %v", err)
	}
}

// Submit asks Drive's permission itself, once, and only of a message
// whose files go as links: refused, nothing is queued and the refusal
// names the files (for the window's question) and carries the check's
// own error; allowed, or with no link, the message goes.
func TestSubmitAsksDriveBeforeQueuingLinks(t *testing.T) {
	sb := testSandbox(t)
	q := openTestQueue(t, t.TempDir(), sb.Token, nil)
	drive := Drive{Root: sb.URL, Auth: transfer.StaticToken(sb.Token)}
	ctx := context.Background()
	film := filepath.Join(t.TempDir(), "film.mov")
	if err := os.WriteFile(film, []byte(strings.Repeat("film ", 20000)), 0o600); err != nil {
		t.Fatal(err)
	}
	msg := &compose.Message{From: "me@example.com", To: []string{"zoe@example.com"}, Subject: "Film", Text: "Here.", Attachments: []string{film}}
	refuse := &NotAllowedError{Address: "me@example.com", Kind: auth.Links}
	var asked []auth.Kind
	opts := LinkOptions{Policy: compose.LinksAlways, May: func(_ context.Context, k auth.Kind) error {
		asked = append(asked, k)
		return refuse
	}}
	_, ids, err := q.Submit(ctx, drive, msg, compose.Send, GmailOptions{}, opts, nil)
	var refused *LinksNotAllowed
	var na *NotAllowedError
	if !errors.As(err, &refused) || !errors.As(err, &na) || na != refuse || len(refused.Linked) != 1 || refused.Linked[0] != film {
		t.Fatalf("a link not allowed: %v (%+v), want LinksNotAllowed naming %s around the refusal", err, refused, film)
	}
	if len(ids) != 0 || len(q.Jobs()) != 0 || len(asked) != 1 || asked[0] != auth.Links {
		t.Fatalf("refused: %d jobs queued (%d held), asked %v; want none queued, asked once for links", len(ids), len(q.Jobs()), asked)
	}

	asked = nil
	opts.Policy = compose.LinksNever // attached instead: Drive is not asked
	_, ids, err = q.Submit(ctx, drive, msg, compose.Send, GmailOptions{}, opts, nil)
	if err != nil || len(ids) != 1 || len(asked) != 0 {
		t.Fatalf("attached: %v, jobs %v, asked %v; want the message alone, nothing asked", err, ids, asked)
	}
	opts.Policy, opts.May = compose.LinksAlways, func(context.Context, auth.Kind) error { return nil }
	_, linked, err := q.Submit(ctx, drive, msg, compose.Send, GmailOptions{}, opts, nil)
	if err != nil || len(linked) != 3 {
		t.Fatalf("allowed: %v, jobs %v; want the file's upload, its share and the message", err, linked)
	}
	apptest.WaitDone(t, q, append(ids, linked...))
}
