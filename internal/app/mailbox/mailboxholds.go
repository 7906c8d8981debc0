package mailbox

import (
	"carrier/internal/delivery"
	"carrier/transfer"
)

// Holds reports whether what job s sent is the Mailbox's to show: the job
// went to the server the Mailbox reads (its Root: the embedded sandbox's,
// in the window), by the API root of its route (delivery.RouteRoot). A
// message sent to Google, or to another server, is not: the Mailbox reads
// no account's Gmail but the sandbox's.
func (m Mailbox) Holds(s transfer.Snapshot) bool {
	return m.Root != "" && delivery.AtRoot(s.URL, m.Root)
}
