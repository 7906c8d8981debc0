package app

import (
	"context"
	"errors"
	"fmt"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// A person's verbs on a delivery (pause, resume, retry, cancel, send
// anyway) are done here, once for both front ends: the window's row
// buttons, its tray and notifications, and `carrier cancel`. Which jobs a
// verb moves is delivery.Targets' to say (the message first for a
// cancel); this moves them through the queue and says what came of it.

// ErrAlreadySent refuses to cancel a message that went: its links are
// in the recipients' mail, so its Drive files stay as they are.
var ErrAlreadySent = errors.New("the message was already sent; its Drive files stay shared")

// Movers are the queue's moves of one job that a verb makes, and the
// journal's jobs (finished ones too) that say which files a cancelled
// message left on Drive. *Queue is one; the window's tests give their
// own.
type Movers interface {
	Pause(id string) error
	Resume(ctx context.Context, id string) error
	Retry(ctx context.Context, id string) error
	Cancel(ctx context.Context, id string) error
	Jobs() []transfer.Snapshot
	History() ([]transfer.Snapshot, error)
}

// Acted is what a verb did: the jobs it moved, in the order it moved
// them, and for a cancelled message, the files its uploads had already
// put on Drive, the person's to keep or delete (DeleteFiles).
type Acted struct {
	Moved   []string
	OnDrive []DriveFile
}

// Acting is how a verb reaches the jobs: the queue's moves, and the
// setting that lets a job held for a metered connection go (nil: send
// anyway moves nothing).
type Acting struct {
	Jobs       Movers
	SendAnyway func(id string) error
}

// Act does verb to delivery id (or to the delivery job id is a member
// of), as it and its jobs stand in the journal now: Acting.Act over the
// queue's own deliveries and jobs.
func (q *Queue) Act(ctx context.Context, id string, verb delivery.Verb) (Acted, error) {
	_, acted, err := q.act(ctx, id, verb)
	return acted, err
}

// act is Act, with the delivery it was done to.
func (q *Queue) act(ctx context.Context, id string, verb delivery.Verb) (delivery.Delivery, Acted, error) {
	ds, snaps, err := q.deliveries()
	d, ok := DeliveryNamed(ds, id)
	if !ok {
		return d, Acted{}, errors.Join(fmt.Errorf("job %q: %w", id, transfer.ErrUnknownJob), err)
	}
	acted, err := Acting{Jobs: q, SendAnyway: q.SendAnyway}.Act(ctx, d, snaps, verb)
	return d, acted, err
}

// DeliveryNamed is the delivery among ds whose id is id, or that job id
// belongs to: what a person may name on the command line.
func DeliveryNamed(ds []delivery.Delivery, id string) (delivery.Delivery, bool) {
	for _, d := range ds {
		if d.ID == id {
			return d, true
		}
	}
	return DeliveryOf(ds, id)
}

// Act does verb to d, its jobs standing as snaps says (by job id,
// finished ones too): each job delivery.Targets names, in its order.
//
// Of a delivery of several jobs, a member that moved on by itself
// meanwhile (it ended, or is already paused) is no problem; a job alone
// reports why it could not move. Cancelling refuses a delivery that
// already ended (Ended), and when the message cannot be stopped (another
// Carrier holds it: transfer.ErrBusy) nothing else is touched; a message
// that went before the cancel reached it is refused as one that had
// gone. What else could not be moved is joined in the error, after the
// rest was moved. A cancelled message's files already on Drive are in
// Acted.OnDrive, however many of its jobs this cancel stopped.
func (a Acting) Act(ctx context.Context, d delivery.Delivery, snaps map[string]transfer.Snapshot, verb delivery.Verb) (Acted, error) {
	var do func(string) error
	switch verb {
	case delivery.VerbPause:
		do = a.Jobs.Pause
	case delivery.VerbResume:
		do = func(j string) error { return a.Jobs.Resume(ctx, j) }
	case delivery.VerbRetry:
		do = func(j string) error { return a.Jobs.Retry(ctx, j) }
	case delivery.VerbCancel:
		if err := Ended(d, snaps); err != nil {
			return Acted{}, err
		}
		do = func(j string) error { return a.Jobs.Cancel(ctx, j) }
	case delivery.VerbSendAnyway:
		if a.SendAnyway == nil {
			return Acted{}, nil // the connection's hold is not the person's to lift here
		}
		do = a.SendAnyway
	default:
		return Acted{}, fmt.Errorf("%s is not done to a delivery's jobs", verb)
	}
	lone := len(d.Members) == 1
	var acted Acted
	var problems []error
	for _, j := range delivery.Targets(d, snaps, verb) {
		err := do(j)
		if err == nil {
			acted.Moved = append(acted.Moved, j)
			continue
		}
		if m, _ := d.Member(j); verb == delivery.VerbCancel && m.Role == delivery.RoleMessage {
			if errors.Is(err, transfer.ErrAlreadyDone) {
				// It went before the cancel reached it.
				s := snaps[j]
				s.State = transfer.StateDone
				return acted, Ended(d, map[string]transfer.Snapshot{j: s})
			}
			if !expected(err) {
				return acted, err // stopped first, or nothing is touched
			}
		}
		// A job alone says why it could not move, but one cancelled is
		// what a cancel wants.
		if lone && !(verb == delivery.VerbCancel && errors.Is(err, transfer.ErrCancelled)) || !expected(err) {
			problems = append(problems, err)
		}
	}
	if verb == delivery.VerbCancel && (d.Kind == delivery.KindMessage || d.Kind == delivery.KindDraft) {
		if files := delivery.Files(d); len(files) > 0 {
			jobs, err := a.Jobs.History()
			if err != nil || len(jobs) == 0 {
				jobs = a.Jobs.Jobs()
			}
			acted.OnDrive = FilesOnDrive(jobs, files)
		}
	}
	return acted, errors.Join(problems...)
}

// expected are the answers of a job that moved on by itself meanwhile.
func expected(err error) bool {
	for _, e := range []error{transfer.ErrAlreadyDone, transfer.ErrCancelled, transfer.ErrEnded, transfer.ErrAlreadyPaused, transfer.ErrNotPaused, transfer.ErrNotFailed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Head is the job a delivery is named by: its message, or its last
// member (a batch's last call, which needs the rest); "" for none.
func Head(d delivery.Delivery) string {
	for _, m := range d.Members {
		if m.Role == delivery.RoleMessage {
			return m.Job
		}
	}
	if len(d.Members) > 0 {
		return d.Members[len(d.Members)-1].Job
	}
	return ""
}

// Ended refuses to cancel a delivery that finished, saying why: nil when
// it has not. Of a message, only the message's own job says: a message
// sent is refused (ErrAlreadySent: its links are in the recipients'
// mail), one put in Gmail otherwise (a draft saved, a message put in the
// mailbox) reached nobody.
func Ended(d delivery.Delivery, snaps map[string]transfer.Snapshot) error {
	head := Head(d)
	s, ok := snaps[head]
	if !ok || s.State != transfer.StateDone {
		return nil
	}
	r := delivery.RouteOf(s.URL)
	switch {
	case len(d.Members) == 1:
		return fmt.Errorf("job %s: %w", head, transfer.ErrAlreadyDone)
	case d.Kind != delivery.KindMessage && d.Kind != delivery.KindDraft:
		return fmt.Errorf("job %s: %w", head, transfer.ErrAlreadyDone)
	case r != delivery.RouteSend && r != delivery.RouteDraftSend:
		// A draft saved, a message put in the mailbox: it reached
		// nobody, and its files were shared with nobody.
		return fmt.Errorf("job %s: %w: it is in Gmail; its Drive files stay there, shared with nobody", head, transfer.ErrAlreadyDone)
	}
	return ErrAlreadySent
}
