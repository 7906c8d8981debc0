package transfer

import (
	"context"
	"fmt"
	"time"
)

// Held last bytes (Spec.SendAt). One design serves Undo send and Send
// later: the time is in the record, not in a process, so a job keeps its
// hold across a restart or a kill and is sent by whichever Carrier holds
// it when the time comes; a time that passed while no Carrier ran (or
// while the machine slept) sends at once. The uploader sends every byte
// but the last request's and ends with ErrScheduled; the queue parks the
// job as StateScheduled, without a worker, and its clock's tick
// (watchWake) moves it back to the queue once SendAt has come (the move
// "due"). Undo is Cancel: the session is deleted, and a session whose last
// bytes never came creates nothing on the server in any case. A time
// further ahead than ScheduleLead would outlive the session Google keeps a
// week, so such a job opens none: the uploader ends with ErrStartsLater,
// the job waits as scheduled (the move "defer") until Record.DueAt, its
// time less ScheduleLead, and then uploads and holds as above.

// sendDue sends on the scheduled jobs whose time came. Each is held (as
// Cancel holds a job) while it moves, so a Cancel under way either comes
// first, and the job never goes, or waits for the move and cancels the
// queued job: never a worker sending a job Cancel is deleting the
// session of.
func (q *Queue) sendDue() {
	now := q.clock.Now()
	q.mu.Lock()
	var due []*job
	for jb := range q.scheduled {
		if rec := jb.record(); jb.run == nil && !now.Before(rec.DueAt()) {
			jb.run = &activeRun{cancel: func(error) {}, done: make(chan struct{})}
			due = append(due, jb)
		}
	}
	q.mu.Unlock()
	for _, jb := range due {
		q.transition(jb, MoveDue, StateQueued, nil, Event{})
		q.settle(jb)
	}
}

// SendNow sends a scheduled job's last bytes at once, its SendAt cleared
// (Send now on a scheduled message). A job still sending its first bytes
// or waiting for others is refused (ErrNotScheduled).
func (q *Queue) SendNow(ctx context.Context, id string) error {
	q.mu.Lock()
	jb, err := q.lookup(id)
	if err == nil {
		err = q.waitIdleLocked(ctx, jb)
	}
	if err == nil {
		if err = next(MoveSendNow, jb.state(), StateQueued); err != nil {
			err = fmt.Errorf("job %s: %w", id, err)
		}
	}
	q.mu.Unlock()
	if err != nil {
		return err
	}
	if err := q.transition(jb, MoveSendNow, StateQueued, func(r *Record) { r.SendAt = time.Time{} }, Event{}); err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return nil
}
