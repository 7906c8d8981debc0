package transfer

import (
	"context"
	"sync"
	"time"
)

// job is a job this queue holds. rec, live, blocked, heldWhy and
// lastDurable are guarded by mu; the rest by Queue.mu. Lock order:
// Queue.mu before job.mu, never the other way round.
type job struct {
	id string

	mu          sync.Mutex
	rec         Record
	live        liveProgress
	blocked     string    // waiting: why it cannot go on by itself
	heldWhy     string    // the system's hold the job waits on, while it does
	lastDurable time.Time // the last durable write of rec, by the queue's clock

	release func()     // the journal lock; nil once let go
	run     *activeRun // a worker (or Cancel) holds the job
	resend  bool       // the person chose to send a media/multipart job again
	pending bool       // in Queue.pending
	changed chan struct{}

	// doneSaved: the journal holds the record written when the job was
	// done, its answer whole; answerDropped: the queue forgot the
	// answer's body (DropAnswer); endSaved: the journal holds the record
	// written when the job ended for good (done or cancelled); recent: it
	// is among the jobs that ended last (Queue.recent, ended.go).
	doneSaved, answerDropped, endSaved, recent bool
}

type liveProgress struct {
	sent   int64
	rate   float64
	pace   Pace
	paceAt time.Duration // the clock's Elapsed when pace came
	acked  int64         // how far the peer acknowledged the bytes, when known
	known  bool          // acked is known (Linux, HTTP/1)
}

type activeRun struct {
	cancel  context.CancelCauseFunc
	done    chan struct{}
	signins uint64 // Queue.signins when the run began
}

func newJob(rec *Record, release func()) *job {
	return &job{id: rec.ID, rec: *rec, release: release}
}

func (jb *job) state() State {
	jb.mu.Lock()
	defer jb.mu.Unlock()
	return jb.rec.State
}

func (jb *job) record() Record {
	jb.mu.Lock()
	defer jb.mu.Unlock()
	return jb.rec
}

// notify wakes Wait callers; Queue.mu must be held. The channel is made
// by the first Wait after a change, not at each change: most of a camera
// roll's 20,400 jobs are never waited for one by one.
func (jb *job) notify() {
	if jb.changed != nil {
		close(jb.changed)
		jb.changed = nil
	}
}

// letGo releases the journal lock; Queue.mu must be held.
func (jb *job) letGo() {
	if jb.release != nil {
		jb.release()
		jb.release = nil
	}
}

// snapLocked is the job as people see it; jb.mu must be held.
func (q *Queue) snapLocked(jb *job) Snapshot {
	s := snapshotOf(&jb.rec)
	s.Seq = q.seq.Add(1)
	s.Blocked = jb.blocked
	s.AnswerInJournal = jb.answerDropped
	switch {
	case q.meter.holdsBack(&jb.rec):
		s.Held = HeldMetered
	case jb.rec.State.Active():
		s.Held = jb.heldWhy
	}
	if jb.rec.State.Active() {
		s.Written, s.WriteRate = max(jb.live.sent, 0), jb.live.rate
		if jb.live.paceAt != 0 || jb.live.pace != (Pace{}) {
			s.Pace = jb.live.pace
			s.Pace.Since += max(q.clock.Elapsed()-jb.live.paceAt, 0)
		}
		s.ConfirmedRate, s.ETA = s.Pace.Rate(0), s.Pace.ETA(0)
		s.Sent, s.Rate = s.Written, s.ConfirmedRate
		if jb.live.known {
			s.Acked = min(max(jb.live.acked, s.Confirmed), s.Written)
			s.Sent = s.Acked
		}
	}
	return s
}

func (q *Queue) snapshot(jb *job) Snapshot {
	jb.mu.Lock()
	defer jb.mu.Unlock()
	return q.snapLocked(jb)
}

// transition is the one place a job's state changes: it checks the move
// against the lifecycle, applies change to the record, writes the record
// to the journal, does the queue's bookkeeping and emits the event with
// the job's snapshot. A person's move stands only once on disk; the
// engine's stand in memory even when the journal fails (the error is
// returned), since they state what already happened on the wire.
func (q *Queue) transition(jb *job, m Move, to State, change func(*Record), ev Event) error {
	jb.mu.Lock()
	from := jb.rec.State
	nx := jb.rec
	if err := nx.move(m, to); err != nil {
		jb.mu.Unlock()
		return err
	}
	if change != nil {
		change(&nx)
	}
	nx.Updated = q.clock.Now().Round(0)
	err := q.journal.Save(&nx)
	if err != nil && person[m] {
		jb.mu.Unlock()
		return err
	}
	jb.rec = nx
	if err == nil {
		jb.lastDurable = q.clock.Now()
		jb.doneSaved = to == StateDone
		jb.endSaved = settled(to)
	}
	if to != StateWaiting {
		jb.blocked = ""
	}
	if !to.Active() {
		jb.live = liveProgress{}
	}
	jb.mu.Unlock()
	hold := q.moved(jb, from, to)
	ev.Kind = stateInfo(to).event
	ev.Snap = q.snapshot(jb)
	q.emit(ev)
	switch {
	case hold:
		q.transition(jb, MoveHold, StateWaiting, nil, Event{})
	case to == StateDone || to == StateFailed || to == StateCancelled || to == StateSignIn || from == StateSignIn ||
		to == StateMissing || from == StateMissing:
		q.recheckWaiting(jb.id)
	}
	return err
}

// moved does the queue's side of a move: the pending list, the journal
// lock of an ended job, Wait callers. It reports whether a job that came
// to the queue must wait for the jobs it needs first.
func (q *Queue) moved(jb *job, from, to State) (hold bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer jb.notify()
	if from == StateQueued {
		q.removePendingLocked(jb)
	}
	if to == StateWaiting && q.jobs[jb.id] == jb { // one being adopted goes in with putLocked
		q.waitLocked(jb)
	} else {
		delete(q.waiting, jb)
	}
	if to == StateScheduled && q.jobs[jb.id] == jb {
		q.scheduled[jb] = struct{}{}
	} else {
		delete(q.scheduled, jb)
	}
	switch {
	case to == StateQueued && !q.closed:
		if ok, _ := q.needsMet(jb); !ok {
			return true
		}
		q.pushPendingLocked(jb)
	case !to.Unfinished():
		jb.letGo()
		if settled(to) {
			q.unneedLocked(jb)
		}
	case to == StateSignIn:
		close(q.parked)
		q.parked = make(chan struct{})
	}
	return false
}

// durableEvery bounds how often progress alone is made durable: between
// those writes it goes to the journal's progress file without an fsync. A
// resume asks the server where it stands anyway; the journal's offset only
// tells a person, and survives any crash of Carrier itself.
const durableEvery = time.Second

// jobSink keeps what a job's upload learns: its cursor in the journal,
// its progress and retries as events.
type jobSink struct {
	q  *Queue
	jb *job
}

func (s jobSink) Checkpoint(c Cursor, durable bool) error {
	q, jb := s.q, s.jb
	jb.mu.Lock()
	defer jb.mu.Unlock()
	nx := jb.rec
	nx.setCursor(c)
	nx.Updated = q.clock.Now().Round(0)
	var err error
	if now := q.clock.Now(); durable || now.Sub(jb.lastDurable) >= durableEvery {
		if err = q.journal.Save(&nx); err == nil {
			jb.lastDurable = now
		}
	} else {
		// Progress alone is a courtesy to people: a resume asks the
		// server anyway, and the next durable save writes it. A failed
		// write (on Windows, another process reading the file at that
		// instant refuses the rename) must not fail the upload.
		_ = q.journal.SaveProgress(&nx)
	}
	if err == nil {
		jb.rec = nx
	}
	return err
}

func (s jobSink) Paced(p Pace) {
	jb := s.jb
	jb.mu.Lock()
	jb.live.pace, jb.live.paceAt = p, s.q.clock.Elapsed()
	jb.mu.Unlock()
}

func (s jobSink) Acked(off int64) {
	jb := s.jb
	jb.mu.Lock()
	jb.live.acked, jb.live.known = off, true
	snap := s.q.snapLocked(jb)
	jb.mu.Unlock()
	s.q.emit(Event{Kind: EventProgress, Snap: snap})
}

func (s jobSink) Progress(sent int64, rate float64) {
	jb := s.jb
	jb.mu.Lock()
	jb.live.sent, jb.live.rate = sent, rate
	snap := s.q.snapLocked(jb)
	jb.mu.Unlock()
	s.q.emit(Event{Kind: EventProgress, Snap: snap})
}

func (s jobSink) Retrying(n RetryNotice) {
	s.jb.mu.Lock()
	s.jb.heldWhy = ""
	if n.Held {
		s.jb.heldWhy = n.Reason
	}
	s.jb.mu.Unlock()
	s.q.transition(s.jb, MoveBackoff, StateRetrying, nil, Event{Attempt: n.Attempt, Wait: n.Wait, Reason: n.Reason, Woke: n.Woke, Held: n.Held, Status: n.Status})
}

func (s jobSink) Retried() {
	s.jb.mu.Lock()
	s.jb.heldWhy = ""
	s.jb.mu.Unlock()
	s.q.transition(s.jb, MoveAgain, StateRunning, nil, Event{})
}

// record is a job's record as this queue holds it, session included: for
// the package's own use, never for people. An ended job held as an
// endedJob is read from the journal (its answer's body left out when it
// was dropped).
func (q *Queue) record(id string) (Record, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.ended[id]; ok {
		return q.wholeLocked(id).record(), true
	}
	jb, ok := q.jobs[id]
	if !ok {
		return Record{}, false
	}
	return jb.record(), true
}
