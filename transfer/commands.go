package transfer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// What a person asks of jobs. Each checks the move against the lifecycle
// first, so a refused one comes back as its named error (wrapped with the
// job's id) and changes nothing.

// Pause stops a job, abandoning its request in flight; its session is kept
// and Resume goes on from where the server stands. A running job is
// paused by its worker, which emits EventPaused once it stopped.
func (q *Queue) Pause(id string) error {
	q.mu.Lock()
	jb, err := q.lookup(id)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	if err := next(MovePause, jb.state(), StatePaused); err != nil {
		q.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, err)
	}
	if jb.run != nil && jb.state() == StateSignIn {
		// Its worker parked it and is letting go: the pause is this
		// function's to make, not the ended run's.
		q.waitIdleLocked(context.Background(), jb)
	}
	if jb.run != nil {
		jb.run.cancel(errPaused)
		q.mu.Unlock()
		return nil
	}
	q.removePendingLocked(jb) // so no worker takes it from here on
	q.mu.Unlock()
	return q.transition(jb, MovePause, StatePaused, nil, Event{})
}

// Resume lets a paused job go on. A ghost (StateMissing) goes on when
// its file is back at its recorded path, the same file (found); else it
// stays a ghost and the error says why.
func (q *Queue) Resume(ctx context.Context, id string) error {
	if q.ghost(id) {
		return q.found(ctx, id)
	}
	return q.requeue(ctx, id, MoveResume)
}

// Retry sends a failed job on. For a media or multipart job whose bytes
// may have arrived, this is the person's decision to send it again. A
// ghost is sent on as Resume does.
func (q *Queue) Retry(ctx context.Context, id string) error {
	if err := q.claim(id); err != nil {
		return err
	}
	if q.ghost(id) {
		return q.found(ctx, id)
	}
	return q.requeue(ctx, id, MoveRetry)
}

// requeue moves a paused or failed job back to the queue, once any worker
// that still holds it (a pause under way) has let go.
func (q *Queue) requeue(ctx context.Context, id string, m Move) error {
	q.mu.Lock()
	jb, err := q.lookup(id)
	if err == nil {
		err = q.waitIdleLocked(ctx, jb)
	}
	if err == nil && q.closed {
		err = errClosed
	}
	if err == nil {
		err = next(m, jb.state(), StateQueued)
		if err != nil {
			err = fmt.Errorf("job %s: %w", id, err)
		}
	}
	if err == nil && jb.release == nil {
		jb.release, err = q.journal.Lock(id)
	}
	if err == nil && m == MoveRetry {
		jb.resend = true // before a worker can take it
	}
	q.mu.Unlock()
	if err != nil {
		return err
	}
	if err := q.transition(jb, m, StateQueued, clearFailure, Event{}); err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return nil
}

// Cancel stops a job and deletes its session on the server, so it can
// never complete. It returns once the job is cancelled.
func (q *Queue) Cancel(ctx context.Context, id string) error {
	if err := q.claim(id); err != nil {
		return err
	}
	q.mu.Lock()
	jb, err := q.lookup(id)
	for err == nil {
		if err = next(MoveCancel, jb.state(), StateCancelled); err != nil || jb.run == nil {
			break
		}
		jb.run.cancel(errCancelling)
		err = q.waitIdleLocked(ctx, jb)
	}
	if err != nil {
		q.mu.Unlock()
		if errors.Is(err, ErrCancelled) {
			return nil
		}
		return fmt.Errorf("job %s: %w", id, err)
	}
	// Held as running, so no worker, Resume or Retry takes it while the
	// session is deleted.
	q.removePendingLocked(jb)
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(q.ctx, func() { cancel(errClosed) })
	defer stop()
	jb.run = &activeRun{cancel: cancel, done: make(chan struct{})}
	q.mu.Unlock()
	defer q.settle(jb)

	delErr := q.up.CancelSession(cctx, jb.record())
	note := ""
	if delErr != nil {
		note = "cancelled here, but the server could not be told (" + delErr.Error() + "); its session expires within a week and is never sent to again"
	}
	err = q.transition(jb, MoveCancel, StateCancelled, func(r *Record) {
		r.Error, r.Retryable, r.Cause, r.Failure = note, false, "", failureOf(ErrCancelled)
	}, Event{Message: note})
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	if delErr != nil {
		return fmt.Errorf("job %s cancelled, but deleting its session failed: %w", id, delErr)
	}
	return nil
}

// Wait blocks until the job ends (done, failed, cancelled), parks for a
// sign-in (StateSignIn: only a person can send it on from there) or lost
// its file (StateMissing: only the person's Locate sends it on), and no
// worker holds it, and returns it as it stands then. A job waiting for
// jobs of this queue that wait, in the end, only for a sign-in (a message
// whose Drive upload parked) is returned too, still waiting; so is a job
// that needs, directly or through waiting ones, one that failed or was
// cancelled (Blocked says which), since
// only a person's retry of that one can send it on: a command waiting for
// it would otherwise wait for ever.
func (q *Queue) Wait(ctx context.Context, id string) (Snapshot, error) {
	for {
		q.mu.Lock()
		if e, ok := q.ended[id]; ok {
			snap := q.endedSnapshot(id, e)
			q.mu.Unlock()
			return snap, nil
		}
		jb, err := q.lookup(id)
		if err != nil {
			q.mu.Unlock()
			return Snapshot{}, err
		}
		snap := q.snapshot(jb)
		if (!snap.State.Unfinished() || snap.State == StateSignIn || snap.State == StateMissing) && jb.run == nil {
			q.mu.Unlock()
			return snap, nil
		}
		if snap.State == StateWaiting && q.stalledOnSignInLocked(jb, map[string]bool{}) {
			q.mu.Unlock()
			return snap, nil
		}
		// Asked afresh: a need retried meanwhile is on its way again,
		// though the job's Blocked changes only when that need ends.
		if snap.State == StateWaiting && jb.run == nil {
			if blocked := q.stuckLocked(jb, map[string]bool{}); blocked != "" {
				q.mu.Unlock()
				snap.Blocked = blocked
				return snap, nil
			}
		}
		parked := q.parked
		if q.closed {
			q.mu.Unlock()
			return snap, errClosed
		}
		if jb.changed == nil {
			jb.changed = make(chan struct{})
		}
		ch := jb.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-parked:
		case <-ctx.Done():
			return q.snapshot(jb), ctx.Err()
		case <-q.ctx.Done():
		}
	}
}

// Job returns one job as it stands.
func (q *Queue) Job(id string) (Snapshot, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.ended[id]; ok {
		return q.endedSnapshot(id, e), true
	}
	jb, ok := q.jobs[id]
	if !ok {
		return Snapshot{}, false
	}
	return q.snapshot(jb), true
}

// Jobs returns every job this queue holds, oldest first.
func (q *Queue) Jobs() []Snapshot {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Snapshot, 0, len(q.jobs)+len(q.ended))
	for _, jb := range q.jobs {
		out = append(out, q.snapshot(jb))
	}
	for id, e := range q.ended {
		out = append(out, q.endedSnapshot(id, e))
	}
	sortSnapshots(out)
	return out
}

func sortSnapshots(ss []Snapshot) {
	slices.SortFunc(ss, func(a, b Snapshot) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// History returns every job of the journal, oldest first: the ones this
// queue holds as they stand now, the rest (finished, or held by another
// process) as last written. Unreadable records are reported in the error.
// The records of the jobs this queue holds are not read: a front end that
// asks after each of a batch's steps pays for the jobs of other
// processes, not again for the 20,000 of its own batch.
func (q *Queue) History() ([]Snapshot, error) {
	out := q.Jobs()
	held := make(map[string]bool, len(out))
	for _, s := range out {
		held[s.ID] = true
	}
	recs, err := q.journal.listSkipping(func(id string) bool { return held[id] })
	for _, r := range recs {
		s := snapshotOf(r)
		s.Seq = q.seq.Add(1)
		out = append(out, s)
	}
	sortSnapshots(out)
	return out, err
}

// EachJob calls fn with a snapshot of each job the queue holds, one at a
// time, in no order: a front end that wants a few words of each of a
// camera roll's 20,400 jobs keeps those, not 20,400 snapshots. fn runs
// with the queue locked: it must not call the queue.
func (q *Queue) EachJob(fn func(*Snapshot)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, jb := range q.jobs {
		s := q.snapshot(jb)
		fn(&s)
	}
	for id, e := range q.ended {
		s := q.endedSnapshot(id, e)
		fn(&s)
	}
}

// HistoryWhere is History with only the jobs keep accepts, oldest first:
// the snapshot of each other job is made and let go, and the journal's
// records are read one at a time, so a front end looking for a batch's
// few hundred calls among a camera roll's 20,400 jobs, or counting them,
// does not hold 20,400 snapshots or records. keep runs with the queue
// locked for the jobs it holds: it must not call the queue.
func (q *Queue) HistoryWhere(keep func(*Snapshot) bool) ([]Snapshot, error) {
	var out []Snapshot
	held := map[string]bool{}
	q.EachJob(func(s *Snapshot) {
		held[s.ID] = true
		if keep(s) {
			out = append(out, *s)
		}
	})
	err := q.journal.walkSkipping(func(id string) bool { return held[id] }, func(r *Record) {
		if s := snapshotOf(r); keep(&s) {
			s.Seq = q.seq.Add(1)
			out = append(out, s)
		}
	})
	sortSnapshots(out)
	return out, err
}

// Forget removes an ended (done, failed or cancelled) job from the
// journal, with its session URI. Another process's jobs are left alone.
func (q *Queue) Forget(id string) error {
	q.mu.Lock()
	if q.neededLocked(id) {
		q.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, ErrNeeded)
	}
	if jb, ok := q.jobs[id]; ok {
		if jb.state().Unfinished() || jb.run != nil {
			q.mu.Unlock()
			return fmt.Errorf("job %s: %w", id, ErrUnfinished)
		}
		q.dropLocked(jb)
		jb.letGo()
	}
	delete(q.ended, id)
	q.mu.Unlock()
	release, err := q.journal.Lock(id)
	if err != nil {
		return err
	}
	defer release()
	rec, err := q.journal.Load(id)
	if err != nil {
		return err
	}
	if rec.State.Unfinished() {
		return fmt.Errorf("job %s: %w", id, ErrUnfinished)
	}
	return q.journal.Remove(id)
}
