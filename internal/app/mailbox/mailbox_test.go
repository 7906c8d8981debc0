package mailbox

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// staleOnce is an Authorizer whose first token the server no longer
// takes; a refresh gives the good one.
type staleOnce struct {
	good      string
	refreshes atomic.Int32
}

func (s *staleOnce) Authorize(_ context.Context, r *http.Request) error {
	tok := "expired"
	if s.refreshes.Load() > 0 {
		tok = s.good
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

func (s *staleOnce) Refresh(context.Context) error { s.refreshes.Add(1); return nil }

// The Mailbox reads a sent message whole, its attachment as decoded
// bytes, and the account's address, from the sandbox; a token that
// expired on the way is refreshed once, as for the uploads (the window's
// reader did not, and said the server answered 401).
func TestMailboxReadsTheSandbox(t *testing.T) {
	e := testSandbox(t)
	raw := "From: me@example.com\r\nTo: zoe@example.com\r\nSubject: plans\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n" +
		"--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"garden.bin\"\r\n" +
		"Content-Transfer-Encoding: base64\r\n\r\n" + "cGxhbnMgZm9yIHRoZSBnYXJkZW4/Pg==" + "\r\n--b--\r\n"
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/upload/gmail/v1/users/me/messages/send?uploadType=media", strings.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+e.Token)
	req.Header.Set("Content-Type", "message/rfc822")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("send answered %s", resp.Status)
	}

	auth := &staleOnce{good: e.Token}
	mb := Mailbox{Root: e.URL, Auth: auth}
	ctx := context.Background()
	ids, err := mb.Messages(ctx)
	if err != nil || len(ids) != 1 {
		t.Fatalf("messages %v, %v", ids, err)
	}
	if auth.refreshes.Load() != 1 {
		t.Fatalf("%d refreshes, want 1", auth.refreshes.Load())
	}
	meta, err := mb.Metadata(ctx, ids[0], "Subject", "To")
	if err != nil || meta.Header("subject") != "plans" || meta.Header("To") != "zoe@example.com" {
		t.Fatalf("metadata %+v, %v", meta, err)
	}
	full, err := mb.Message(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	var att *MailAttachment
	full.Payload.Walk(func(p *MailPart) {
		if p.Filename != "" {
			att = &MailAttachment{MsgID: ids[0], AttID: p.Body.AttachmentID, Data: p.Body.Data, Name: p.Filename, Size: p.Body.Size}
		}
	})
	if att == nil {
		t.Fatalf("no attachment in %+v", full.Payload)
	}
	r, err := mb.Attachment(ctx, *att)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != "plans for the garden?>" {
		t.Fatalf("attachment %q, %v", b, err)
	}
	if addr, err := mb.Address(ctx); err != nil || addr == "" {
		t.Fatalf("address %q, %v", addr, err)
	}
	if _, err := mb.Content(ctx, "http://elsewhere.example/a.png"); !errors.Is(err, ErrElsewhere) {
		t.Fatalf("another server's address: %v", err)
	}
}
