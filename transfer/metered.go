package transfer

import (
	"fmt"
	"sync"
)

// HeldMetered is Snapshot.Held for a job that waits because the
// connection is metered: a front end shows it with a way to send anyway
// (Queue.SendAnyway).
const HeldMetered = "Paused: metered connection"

// DefaultMeteredOver is MeteredPolicy.Over's default: 16 MiB. A message
// with a photo or two from a phone (3-6 MB each, a third more once
// base64-encoded in the mail) is under it and still goes; videos, folders
// of pictures and large Drive files, what a data plan feels, wait.
const DefaultMeteredOver = 16 << 20

// MeteredPolicy is the person's setting for metered connections: with
// Pause, a job larger than Over bytes waits while the connection is
// metered; without, everything goes. Over 0 is DefaultMeteredOver.
type MeteredPolicy struct {
	Pause bool
	Over  int64
}

func (p MeteredPolicy) withDefaults() MeteredPolicy {
	if p.Over <= 0 {
		p.Over = DefaultMeteredOver
	}
	return p
}

// meter is what the queue knows of the connection's cost.
type meter struct {
	mu     sync.Mutex
	on     bool // the system says the connection is metered
	policy MeteredPolicy
}

// holdsBack reports whether the metered rule keeps r from sending now.
func (m *meter) holdsBack(r *Record) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on && m.policy.Pause && !r.SendAnyway && r.Size > m.policy.Over && r.State.Unfinished() && r.State != StatePaused && r.State != StateSignIn
}

// errMetered stops a running job the metered rule now holds back; the
// worker puts it back in the queue, where it waits without a worker.
var errMetered = fmt.Errorf("held: %s", HeldMetered)

// SetMetered is the system's word on the connection: metered or not.
// While metered, jobs the policy holds back wait in the queue without a
// worker (small ones pass them); a request in flight for one is abandoned
// (the server keeps what arrived; its place is made durable). No retry is
// burnt. When it ends, they go on, each asking its session first.
func (q *Queue) SetMetered(on bool) {
	q.meter.mu.Lock()
	changed := q.meter.on != on
	q.meter.on = on
	q.meter.mu.Unlock()
	if changed {
		q.applyMetered()
	}
}

// SetMeteredPolicy is the person's setting, live.
func (q *Queue) SetMeteredPolicy(p MeteredPolicy) {
	p = p.withDefaults()
	q.meter.mu.Lock()
	changed := q.meter.policy != p
	q.meter.policy = p
	q.meter.mu.Unlock()
	if changed {
		q.applyMetered()
	}
}

// SendAnyway lets one job go on a metered connection from now on. It is
// kept in the journal, so a restart does not hold the job back again, and
// it stays for the job's life: the person decided about this file, not
// about this connection, and asking again at every change of network
// would nag.
func (q *Queue) SendAnyway(id string) error {
	q.mu.Lock()
	jb, err := q.lookup(id)
	q.mu.Unlock()
	if err != nil {
		return err
	}
	jb.mu.Lock()
	if !jb.rec.State.Unfinished() {
		jb.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, ErrEnded)
	}
	if jb.rec.SendAnyway {
		jb.mu.Unlock()
		return nil
	}
	nx := jb.rec
	nx.SendAnyway = true
	nx.Updated = q.clock.Now().Round(0)
	if err := q.journal.Save(&nx); err != nil {
		jb.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, err)
	}
	jb.rec = nx
	jb.lastDurable = q.clock.Now()
	jb.mu.Unlock()
	q.applyMetered()
	return nil
}

// applyMetered acts on a change of the metered rule: running jobs it now
// holds back are stopped, every job's row is told, and workers look at
// the queue again for jobs it let go.
func (q *Queue) applyMetered() {
	q.mu.Lock()
	jobs := make([]*job, 0, len(q.jobs))
	for _, jb := range q.jobs {
		jobs = append(jobs, jb)
		if jb.run != nil && jb.state().Active() {
			rec := jb.record()
			if q.meter.holdsBack(&rec) {
				jb.run.cancel(errMetered)
			}
		}
	}
	q.mu.Unlock()
	q.poke() // a worker that takes a job pokes the next
	for _, jb := range jobs {
		if jb.state().Unfinished() {
			q.emit(Event{Kind: EventProgress, Snap: q.snapshot(jb)})
		}
	}
}
