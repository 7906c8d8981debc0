package mailbox

import (
	"testing"

	"carrier/transfer"
)

// The Mailbox shows what went to the server it reads (the embedded
// sandbox), whoever it went as; a message to Google, or to a server that
// only looks like the sandbox's address, is not its to show.
func TestMailboxHoldsWhatWentToItsServer(t *testing.T) {
	const sandbox = "http://127.0.0.1:4000"
	m := Mailbox{Root: sandbox}
	for _, c := range []struct {
		job  transfer.Snapshot
		want bool
	}{
		{transfer.Snapshot{URL: sandbox + "/upload/gmail/v1/users/me/messages/send"}, true},
		{transfer.Snapshot{URL: sandbox + "/upload/gmail/v1/users/me/drafts", Account: "ann@example.com"}, true}, // signed in to the sandbox standing in for Google
		{transfer.Snapshot{URL: "https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send", Account: "ann@gmail.com"}, false},
		{transfer.Snapshot{URL: "https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send"}, false},
		{transfer.Snapshot{URL: "http://127.0.0.1:40001/upload/gmail/v1/users/me/messages/send"}, false},
		{transfer.Snapshot{URL: "http://127.0.0.1:4000.example.com/upload/gmail/v1/users/me/messages/send"}, false},
		{transfer.Snapshot{}, false},
	} {
		if got := m.Holds(c.job); got != c.want {
			t.Errorf("%s as %q: Holds %v, want %v", c.job.URL, c.job.Account, got, c.want)
		}
	}
	if (Mailbox{Root: sandbox + "/"}).Holds(transfer.Snapshot{URL: sandbox + "/upload/gmail/v1/users/me/messages/send"}) != true {
		t.Error("a root given with its slash is the same server")
	}
	if (Mailbox{}).Holds(transfer.Snapshot{URL: "/upload/gmail/v1/users/me/messages/send"}) {
		t.Error("a Mailbox with no root holds nothing")
	}
}
