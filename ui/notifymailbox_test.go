package ui

import (
	"slices"
	"sync"
	"testing"
	"time"

	"carrier/transfer"
)

// Open in Mailbox is offered for a message the Mailbox can show, as the
// app says (mailbox.Mailbox.Holds): one sent to the embedded sandbox, whose
// mail the Mailbox reads, whoever it went as. A message sent as a real
// Google account went to Gmail, which the Mailbox does not read: no
// Open in Mailbox, only Show.
func TestOpenInMailboxOnlyForTheSandboxsMail(t *testing.T) {
	var mu sync.Mutex
	var sent [][]string
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = &fakeUploads{recs: map[string]transfer.Snapshot{}}
		o.deps = func(d *Deps) {
			d.Notify = func(title, body string, actions []NoticeAction) error {
				var keys []string
				for _, a := range actions {
					keys = append(keys, a.Key)
				}
				mu.Lock()
				sent = append(sent, keys)
				mu.Unlock()
				return nil
			}
		}
	})
	next := func(what string) []string {
		t.Helper()
		var keys []string
		h.until(what, func() bool {
			mu.Lock()
			defer mu.Unlock()
			if len(sent) == 0 {
				return false
			}
			keys, sent = sent[0], sent[1:]
			return true
		})
		return keys
	}
	done := func(url, account string) transfer.Snapshot {
		return transfer.Snapshot{ID: "m", URL: url, Account: account, Label: "Minutes · to zoe@example.com", State: transfer.StateDone, Size: 10, Confirmed: 10, Created: time.Now()}
	}
	sandbox := h.u.deps.Endpoint
	for _, c := range []struct {
		what string
		snap transfer.Snapshot
		want []string
	}{
		{"to a real Google account", done("https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send?uploadType=resumable", "zoe.person@gmail.com"), []string{"show", "default"}},
		{"a draft to a real Google account", done("https://gmail.googleapis.com/upload/gmail/v1/users/me/drafts", "zoe.person@gmail.com"), []string{"show", "default"}},
		{"to the sandbox", done(sandbox+"/upload/gmail/v1/users/me/messages/send", ""), []string{"mailbox", "default"}},
		{"to the sandbox standing in for Google", done(sandbox+"/upload/gmail/v1/users/me/messages/send", "ann@example.com"), []string{"mailbox", "default"}},
		{"to another server", done("http://127.0.0.1:19/upload/gmail/v1/users/me/messages/send", ""), []string{"show", "default"}},
	} {
		h.u.notifyDelivery(c.snap.Label, true, c.snap)
		if keys := next(c.what); !slices.Equal(keys, c.want) {
			t.Errorf("a message %s: actions %v, want %v", c.what, keys, c.want)
		}
	}
}
