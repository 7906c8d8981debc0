package transfer

import (
	"sort"
	"strings"
	"sync"
)

// holds are the system's reasons to send nothing now (asleep, offline).
// While any stands, uploads wait without burning retries; when the last
// goes, they go on (Wake makes them ask their sessions first).
type holds struct {
	mu       sync.Mutex
	reasons  map[string]bool
	released chan struct{} // closed when the last reason goes
}

func newHolds() *holds {
	return &holds{reasons: map[string]bool{}, released: make(chan struct{})}
}

// held is Uploader.Held: the reasons in words, and a channel closed when
// they change.
func (h *holds) held() (string, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.reasons) == 0 {
		return "", nil
	}
	rs := make([]string, 0, len(h.reasons))
	for r := range h.reasons {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	return strings.Join(rs, "; "), h.released
}

func (h *holds) set(reason string, on bool) (changed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reasons[reason] == on {
		return false
	}
	if on {
		h.reasons[reason] = true
	} else {
		delete(h.reasons, reason)
	}
	close(h.released) // waiters look again
	h.released = make(chan struct{})
	return true
}

// Hold stops every upload from sending, for reason (words for people,
// e.g. "Offline: waiting for the network"): requests in flight are
// abandoned (the server keeps what arrived), every job's place is made
// durable, and nothing more goes out until Release(reason). A retry spent
// waiting for it is not counted.
func (q *Queue) Hold(reason string) {
	if !q.holds.set(reason, true) {
		return
	}
	q.wake.Fire() // abandon requests in flight
	q.mu.Lock()
	jobs := make([]*job, 0, len(q.jobs))
	for _, jb := range q.jobs {
		jobs = append(jobs, jb)
	}
	q.mu.Unlock()
	for _, jb := range jobs {
		jb.mu.Lock()
		if jb.rec.State.Unfinished() {
			if q.journal.Save(&jb.rec) == nil {
				jb.lastDurable = q.clock.Now()
			}
		}
		jb.mu.Unlock()
	}
}

// Release ends a Hold; when none is left, uploads go on, each asking its
// session where it stands first.
func (q *Queue) Release(reason string) {
	if q.holds.set(reason, false) {
		q.Wake()
	}
}
