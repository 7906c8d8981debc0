package transfer

import (
	"errors"
	"fmt"
	"slices"
)

// Jobs that wait for jobs: a job's Needs must all be done before it
// starts. A need held by this queue tells its dependents when it ends
// (transition); a need held by another process is read from the journal
// every few seconds (watchWake).

// ErrNeeded refuses to forget a job an unfinished job still needs.
var ErrNeeded = errors.New("an unfinished job needs this one")

// needsMet reports whether every job jb needs is done, and if not, whether
// one of them cannot get there by itself (blocked). Queue.mu must be held.
func (q *Queue) needsMet(jb *job) (met bool, blocked string) {
	jb.mu.Lock()
	needs := jb.rec.Needs
	jb.mu.Unlock()
	met = true
	for _, id := range needs {
		st, label := q.needState(id)
		if st == StateDone {
			continue
		}
		met = false
		if label == "" {
			label = id
		}
		switch st {
		case StateFailed, StateCancelled:
			if blocked == "" {
				blocked = fmt.Sprintf("it needs %q, which %s", label, map[State]string{StateFailed: "failed", StateCancelled: "was cancelled"}[st])
			}
		case StateSignIn:
			if blocked == "" {
				blocked = fmt.Sprintf("it needs %q, which waits for a sign-in", label)
			}
		case StateMissing:
			if blocked == "" {
				blocked = fmt.Sprintf("it needs %q, whose file is no longer where it was", label)
			}
		case "":
			if blocked == "" {
				blocked = fmt.Sprintf("it needs job %s, which is no longer in the journal", id)
			}
		}
	}
	return met, blocked
}

// needState is where a needed job stands: this queue's view, or the
// journal's for a job another process holds. Queue.mu must be held.
func (q *Queue) needState(id string) (State, string) {
	if e, ok := q.ended[id]; ok {
		return e.state(), e.label
	}
	if n, ok := q.jobs[id]; ok {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.rec.State, n.rec.Label
	}
	rec, err := q.journal.Load(id)
	if err != nil {
		return "", ""
	}
	return rec.State, rec.Label
}

// putLocked takes jb into the queue's jobs and its index of who needs
// whom; dropLocked takes it out. Every job of q.jobs goes in and out
// through them. Queue.mu must be held.
func (q *Queue) putLocked(jb *job) {
	q.jobs[jb.id] = jb
	jb.mu.Lock()
	needs, st := jb.rec.Needs, jb.rec.State
	jb.mu.Unlock()
	for _, id := range needs {
		q.needers[id] = append(q.needers[id], jb)
	}
	if st == StateWaiting {
		q.waiting[jb] = struct{}{}
	}
	if st == StateScheduled {
		q.scheduled[jb] = struct{}{}
	}
}

// waitLocked counts jb, held back as it came to the queue (a job resumed
// or retried before the jobs it needs are done), among the waiting jobs,
// and notes why it cannot go on by itself, if so: a job it needs failed
// or was cancelled says so at once, as it does on a job added then
// (adopt). Queue.mu must be held.
func (q *Queue) waitLocked(jb *job) {
	q.waiting[jb] = struct{}{}
	_, blocked := q.needsMet(jb)
	jb.mu.Lock()
	jb.blocked = blocked
	jb.mu.Unlock()
}

func (q *Queue) dropLocked(jb *job) {
	delete(q.jobs, jb.id)
	delete(q.waiting, jb)
	delete(q.scheduled, jb)
	q.unneedLocked(jb)
}

// unneedLocked takes jb out of the index as a job that needs others (the
// others' needers), as it leaves the queue or ends for good (done or
// cancelled): a job that ended so waits for nothing and keeps nothing
// from being forgotten (neededLocked looks for unfinished needers), and
// a camera roll's 20,400 ended jobs would otherwise stay indexed.
// Queue.mu must be held.
func (q *Queue) unneedLocked(jb *job) {
	for _, id := range jb.record().Needs {
		ns := slices.DeleteFunc(q.needers[id], func(n *job) bool { return n == jb })
		if len(ns) == 0 {
			delete(q.needers, id)
		} else {
			q.needers[id] = ns
		}
	}
}

// recheckWaiting looks again at waiting jobs: those that need the job that
// just ended (ended != ""), or all of them. A job whose needs are done is
// released; one whose need failed says so. It looks only at the jobs the
// index names (q.needers, q.waiting), so a job's end costs as many steps
// as jobs need it, however many the queue holds.
func (q *Queue) recheckWaiting(ended string) {
	type verdict struct {
		jb      *job
		met     bool
		blocked string
	}
	var vs []verdict
	var changed []*job
	q.mu.Lock()
	var look []*job
	if ended != "" {
		look = q.needers[ended]
	} else {
		for jb := range q.waiting {
			look = append(look, jb)
		}
	}
	for _, jb := range look {
		q.depSteps.Add(1)
		if jb.state() == StateWaiting {
			met, blocked := q.needsMet(jb)
			vs = append(vs, verdict{jb, met, blocked})
		}
	}
	q.mu.Unlock()
	for _, v := range vs {
		if v.met {
			q.transition(v.jb, MoveRelease, StateQueued, nil, Event{})
			continue
		}
		v.jb.mu.Lock()
		differs := v.jb.blocked != v.blocked && v.jb.rec.State == StateWaiting
		if differs {
			v.jb.blocked = v.blocked
		}
		snap := q.snapLocked(v.jb)
		v.jb.mu.Unlock()
		if differs {
			q.emit(Event{Kind: EventWaiting, Snap: snap})
			changed = append(changed, v.jb)
		}
	}
	if len(changed) > 0 {
		// A Wait for a job that needs, through others, one that changed
		// looks again (stuckLocked): the waiting jobs that need it,
		// directly or through waiting ones.
		q.mu.Lock()
		seen := map[*job]bool{}
		for len(changed) > 0 {
			jb := changed[len(changed)-1]
			changed = changed[:len(changed)-1]
			if seen[jb] {
				continue
			}
			seen[jb] = true
			q.depSteps.Add(1)
			jb.notify()
			for _, n := range q.needers[jb.id] {
				if n.state() == StateWaiting {
					changed = append(changed, n)
				}
			}
		}
		q.mu.Unlock()
	}
}

// stuckLocked says why jb, waiting, cannot go on by itself: a job it needs
// failed, was cancelled, waits for a sign-in or is gone, directly or
// through jobs of this queue that wait in their turn; "" when nothing
// stops it. Queue.mu must be held.
func (q *Queue) stuckLocked(jb *job, seen map[string]bool) string {
	if seen[jb.id] {
		return ""
	}
	seen[jb.id] = true
	if _, blocked := q.needsMet(jb); blocked != "" {
		return blocked
	}
	for _, id := range jb.record().Needs {
		if n, ok := q.jobs[id]; ok && n.state() == StateWaiting {
			if blocked := q.stuckLocked(n, seen); blocked != "" {
				return blocked
			}
		}
	}
	return ""
}

// neededLocked reports whether an unfinished job of this queue needs id.
func (q *Queue) neededLocked(id string) bool {
	for _, jb := range q.needers[id] {
		q.depSteps.Add(1)
		if jb.state().Unfinished() {
			return true
		}
	}
	return false
}
