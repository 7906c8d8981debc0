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
	"strings"

	"carrier/internal/delivery"
)

// Composed is a message as the person wrote it in Compose: what reopening
// it puts back into the form. It is the delivery's own record of it
// (delivery.Composed), so what is kept and what is stored are one type.
type Composed = delivery.Composed

// Share says who may open the linked files.
type Share = delivery.Share

const (
	ShareRecipients = delivery.ShareRecipients // each recipient, by address (Gmail's default)
	ShareAnyone     = delivery.ShareAnyone     // anyone with the link
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
