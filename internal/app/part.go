package app

import (
	"sync"

	"carrier/transfer"
)

// A Part is a service's side of the queue, kept outside this package:
// Google Photos' (internal/app/photos) makes again the items whose
// upload expired, remembers what was posted, and lets the queue forget
// answers the journal keeps. Every queue opened has one of each part
// added (AddPart), built as it opens; the queue runs them, in the order
// they were added, at its opening, at each of the engine's events and at
// its close. A part finds its queue by the value add was given.
type Part interface {
	// Keeps is asked of each record of the history the queue reads as it
	// opens: whether the part needs it among the records Opened is given
	// (the jobs not done are there anyway). Every record is asked.
	Keeps(s *transfer.Snapshot) bool
	// Opened is given that history (err: why it could not be read), before
	// the spool is swept, and returns the history the sweep reads: recs,
	// or what it read again after queuing jobs.
	Opened(recs []transfer.Snapshot, err error) ([]transfer.Snapshot, error)
	// See is given each of the engine's events before the spool lets go
	// of a finished job's file and before the front end hears of it; live
	// is false for those the engine sent before it stopped, as the queue
	// closes.
	See(e transfer.Event, live bool)
	// Closed waits for what the part does away from the events; the
	// queue calls it as it closes, once it has passed on its last event.
	Closed()
}

var (
	partsMu    sync.Mutex
	partsAdded []func(*Queue) Part
)

// AddPart has every queue opened from now on built with the part add
// makes of it. A service's package calls it from its init, so that a
// program that has the service has its part in every queue it opens.
func AddPart(add func(*Queue) Part) {
	partsMu.Lock()
	defer partsMu.Unlock()
	partsAdded = append(partsAdded, add)
}

// Parts are the queue's parts, in the order they were added.
func (q *Queue) Parts() []Part { return q.parts }

// StateDir is the folder of the queue's journal and of what is kept
// beside it.
func (q *Queue) StateDir() string { return q.state }

// partsSee gives e to each part.
func (q *Queue) partsSee(e transfer.Event, live bool) {
	for _, p := range q.parts {
		p.See(e, live)
	}
}
