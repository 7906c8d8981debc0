package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"carrier/internal/app/message"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// Undo send: a message that is sent holds its last bytes for a few
// seconds (LinkOptions.SendAt, transfer.Spec.SendAt), and Undo within
// them cancels it, so the session is deleted and nothing reaches anyone,
// and gives back what the person composed to reopen it. The window and
// `carrier send --undo-window` both go through here.

// UndoWindows are the delays the person may choose between Send and the
// message leaving; 0 is off (it leaves at once).
var UndoWindows = []time.Duration{0, 5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second}

// DefaultUndoWindow is the window's delay until the person chooses one.
const DefaultUndoWindow = 10 * time.Second

// MaxUndoWindow bounds `carrier send --undo-window`: the hold is for a
// slip of the hand, not for Send later.
const MaxUndoWindow = 5 * time.Minute

// SendAfter is when a message sent now with an undo window of d leaves:
// zero (at once) when d is 0.
func SendAfter(now time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return now.Add(d).Round(0)
}

// ErrTooLateToUndo refuses Undo of a message whose last bytes already
// went: it reached its recipients.
var ErrTooLateToUndo = errors.New("the message was already sent; it can no longer be undone")

// Undone is what Undo leaves: the message's fields and attachments to
// reopen in Compose (nil when none were kept), and the files its links
// had already put on Drive, which are the person's to keep or delete as
// after a Cancel.
type Undone struct {
	Composed *message.Composed
	Files    []DriveFile
}

// Undo cancels the message job id (and the Drive uploads and shares it
// needs that have not ended) and returns what was composed. A message
// that went is refused (ErrTooLateToUndo).
func (q *Queue) Undo(ctx context.Context, id string) (Undone, error) {
	d, acted, err := q.act(ctx, id, delivery.VerbCancel)
	if errors.Is(err, ErrAlreadySent) || errors.Is(err, transfer.ErrAlreadyDone) {
		return Undone{}, ErrTooLateToUndo
	}
	msg := Head(d)
	if s, ok := q.Job(msg); err != nil && (!ok || s.State != transfer.StateCancelled) {
		if msg == "" {
			return Undone{}, err
		}
		return Undone{}, fmt.Errorf("the message was not undone: %w", err)
	}
	// The message is cancelled: nothing was sent. A part that could not
	// be stopped is said (err), its files listed all the same.
	kept, kerr := q.Composed(msg)
	if kerr != nil {
		kept = nil
	}
	return Undone{Composed: kept, Files: acted.OnDrive}, err
}
