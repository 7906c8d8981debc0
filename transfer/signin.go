package transfer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
)

// A job whose sign-in ended (its Authorizer said ErrSignInNeeded: the
// refresh answered invalid_grant, or no credential is stored) is parked in
// StateSignIn rather than failed: no retry is spent on it, since only a
// person can mend it, and its session and confirmed offset stay in the
// journal. SignedIn, or the next start (ResumeJournal tries each parked job
// once), sends it on: its first request asks the session where the server
// stands, so no byte goes twice, and a new session starts only when the
// server says the old one is gone.

// park moves a job its worker holds to StateSignIn. A sign-in that came
// while the job ran may be the one it needs: then it reports true, and the
// worker puts the job back in the queue once it lets go, to try with that
// sign-in (parked only if that fails too). Queued before the worker lets
// go, another worker could take it and have its run ended by this one's.
func (q *Queue) park(jb *job, err error) (requeue bool) {
	q.mu.Lock()
	again := jb.run != nil && jb.run.signins != q.signins
	q.mu.Unlock()
	if again {
		return true
	}
	msg, who, failure := err.Error(), accountNeeded(err), failureOf(err)
	q.transition(jb, MovePark, StateSignIn, func(r *Record) {
		r.Error, r.Retryable, r.Cause, r.Failure = msg, false, "", failure
		r.SignInFor = cmp.Or(who, r.Account)
	}, Event{Err: err, Message: msg})
	return false
}

// unparked clears what a parked job said.
func unparked(r *Record) { r.Error, r.SignInFor, r.Failure = "", "", nil }

// SignedIn tells the queue that account signed in again: every job parked
// for it (and every job of the default account "", which any sign-in may
// be) goes back to the queue, as do such jobs of the journal that no
// process holds (parked by a Carrier that has since ended). account "" wakes
// every parked job. It returns the ids sent on.
func (q *Queue) SignedIn(account string) ([]string, error) {
	matches := func(r *Record) bool {
		return r.State == StateSignIn && (account == "" || r.Account == "" || r.Account == account || r.SignInFor == account)
	}
	q.mu.Lock()
	q.signins++
	closed := q.closed
	var parked []*job
	for _, jb := range q.jobs {
		rec := jb.record()
		if matches(&rec) && jb.release != nil {
			parked = append(parked, jb)
		}
	}
	for _, jb := range parked {
		// The worker that parked it may not have let go yet; queued
		// before it does, a second worker could take it meanwhile.
		q.waitIdleLocked(context.Background(), jb)
	}
	q.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	var ids []string
	var errs []error
	for _, jb := range parked {
		if err := q.transition(jb, MoveUnpark, StateQueued, unparked, Event{}); err != nil && !errors.Is(err, ErrIllegalMove) {
			errs = append(errs, fmt.Errorf("job %s: %w", jb.id, err))
		}
		ids = append(ids, jb.id)
	}
	more, err := q.takeJournal(matches, false)
	return append(ids, more...), errors.Join(append(errs, err)...)
}

// Parked lists the jobs this queue holds that wait for a sign-in.
func (q *Queue) Parked() []Snapshot {
	var out []Snapshot
	for _, s := range q.Jobs() {
		if s.State == StateSignIn {
			out = append(out, s)
		}
	}
	return out
}

// stalledOnSignInLocked reports whether waiting job jb can go on only once
// someone signs in: each of its unfinished needs is parked, or waits
// itself for nothing but parked jobs. A need that runs, is queued, paused,
// failed or held by another process may still move (or has its own
// story), so jb is not stalled on a sign-in. Queue.mu must be held.
func (q *Queue) stalledOnSignInLocked(jb *job, seen map[string]bool) bool {
	if seen[jb.id] {
		return false
	}
	seen[jb.id] = true
	parked := false
	for _, id := range jb.record().Needs {
		var st State
		n, ok := q.jobs[id]
		if e, ended := q.ended[id]; ended {
			st, ok = e.state(), true
		} else if ok {
			st = n.state()
		}
		if !ok {
			return false
		}
		switch st {
		case StateDone:
		case StateSignIn:
			parked = true
		case StateWaiting:
			if !q.stalledOnSignInLocked(n, seen) {
				return false
			}
			parked = true
		default:
			return false
		}
	}
	return parked
}
