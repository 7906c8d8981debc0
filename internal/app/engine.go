package app

import (
	"path/filepath"

	"carrier/transfer"
)

// What the app reads of the engine's snapshots, states and events is here,
// in one place.

// needsFile reports whether a job in state st may still read its file: all
// but the ends a job never leaves. A failed job can be retried, and a
// state this code does not know is taken to need it.
func needsFile(st transfer.State) bool {
	return st != transfer.StateDone && st != transfer.StateCancelled
}

// neededBy says which files the jobs may still read. It goes by the file's
// name, which a spool makes unique: a job recorded with a relative path,
// or through another path to the same folder, still keeps its file.
func neededBy(recs []transfer.Snapshot) func(path string) bool {
	keep := map[string]bool{}
	for _, r := range recs {
		if needsFile(r.State) {
			keep[filepath.Base(r.Path)] = true
		}
	}
	return func(p string) bool { return keep[filepath.Base(p)] }
}

// ended returns the file of the job e says has reached an end for good.
func ended(e transfer.Event) (string, bool) {
	if e.Kind != transfer.EventDone && e.Kind != transfer.EventCancelled || needsFile(e.Snap.State) {
		return "", false
	}
	return e.Snap.Path, true
}

// droppable reports an event the engine itself drops when there is no
// room: the next one carries the same news.
func droppable(e transfer.Event) bool { return e.Kind == transfer.EventProgress }

// fileOf is a job's file: as the queue holds it, or as the journal does
// for a job the queue does not hold (finished before this run, or
// another process's).
func fileOf(q *transfer.Queue, id string) string {
	return snapOf(q, id).Path
}

// snapOf is job id as it stands: the queue's, else the journal's (zero
// when neither has it).
func snapOf(q *transfer.Queue, id string) transfer.Snapshot {
	if r, ok := q.Job(id); ok {
		return r
	}
	if r, err := q.Journal().Load(id); err == nil {
		return r.Snapshot()
	}
	return transfer.Snapshot{}
}

// PauseAll pauses every job that is unfinished and not paused yet.
func (q *Queue) PauseAll() {
	for _, r := range q.Jobs() {
		if r.State.Unfinished() && r.State != transfer.StatePaused {
			q.Pause(r.ID)
		}
	}
}

// Snap is job id as it stands: the queue's, else the journal's (zero
// when neither has it).
func (q *Queue) Snap(id string) transfer.Snapshot { return snapOf(q.Queue, id) }
