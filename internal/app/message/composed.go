// Package message is a message's data as the person writes it, apart
// from the queue that sends it: the fields of Compose (Composed), who may
// open its linked files (Share), what another program hands Carrier to
// send (mailto.go: ParseMailto, Opened), Compose's copy kept as written
// (unsent.go: UnsentStore) and the walk of a message's MIME parts
// (mimewalk.go: WalkLeaves). It imports nothing of internal/app, which
// imports it.
package message

import (
	"fmt"
	"os"
	"strings"
	"time"

	"carrier/compose"
)

// Composed is a message as the person wrote it in Compose: what reopening
// it puts back into the form.
type Composed struct {
	To, Cc, Bcc []string
	Subject     string
	Text        string
	HTML        string `json:",omitempty"`
	// Attachments are the files the person chose, those that went as
	// Drive links included, by their paths on this computer.
	Attachments []string
	Method      compose.Method
	// DraftID is the draft the message updates or sends, "" for none.
	DraftID string `json:",omitempty"`
	// Choose is the person's choice per file (true: a Drive link).
	Choose map[string]bool `json:",omitempty"`
	Share  Share           `json:",omitempty"`
	Expiry time.Duration   `json:",omitempty"`
	// From is the job the fields were kept for (app's Queue.Composed), "" for
	// a draft opened from the Mailbox: a message sent from them replaces
	// it (app's LinkOptions.Replaces).
	From string `json:"-"`
}

// Message is the compose.Message the fields make.
func (c *Composed) Message() *compose.Message {
	return &compose.Message{To: c.To, Cc: c.Cc, Bcc: c.Bcc, Subject: c.Subject, Text: c.Text, HTML: c.HTML,
		Attachments: append([]string(nil), c.Attachments...)}
}

// Missing are the attachments no longer at their paths (moved, deleted).
func (c *Composed) Missing() []string {
	var gone []string
	for _, p := range c.Attachments {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			gone = append(gone, p)
		}
	}
	return gone
}

// Share says who may open the linked files.
type Share int

const (
	ShareRecipients Share = iota // each recipient, by address (Gmail's default)
	ShareAnyone                  // anyone with the link
)

// ParseShare reads --share.
func ParseShare(s string) (Share, error) {
	switch strings.ToLower(s) {
	case "", "recipients":
		return ShareRecipients, nil
	case "anyone":
		return ShareAnyone, nil
	}
	return 0, fmt.Errorf("--share is recipients or anyone, not %q", s)
}
