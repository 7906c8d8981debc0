// Package apptest holds the test helpers the packages of internal/app
// share (the queue's core and the services beside it): reading a job
// from a queue or its journal, and waiting for jobs to be done. Only
// tests import it.
package apptest

import (
	"context"
	"errors"
	"testing"
	"time"

	"carrier/transfer"
)

// Queue is what the helpers read of a queue: *app.Queue, and the
// services built on it (*photos.Queue).
type Queue interface {
	Job(id string) (transfer.Snapshot, bool)
	Wait(ctx context.Context, id string) (transfer.Snapshot, error)
	History() ([]transfer.Snapshot, error)
}

// Snap is job id as the queue holds it; the test fails without one.
func Snap(t testing.TB, q Queue, id string) transfer.Snapshot {
	t.Helper()
	s, ok := q.Job(id)
	if !ok {
		t.Fatalf("no job %s", id)
	}
	return s
}

// JobOf reads job id from the journal's history.
func JobOf(t testing.TB, q Queue, id string) transfer.Snapshot {
	t.Helper()
	h, err := q.History()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no job %s", id)
	return transfer.Snapshot{}
}

// WaitDone waits for each job to end, and fails the test unless each
// ended done (a job done before this queue opened is read from the
// journal).
func WaitDone(t testing.TB, q Queue, ids []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, id := range ids {
		s, err := q.Wait(ctx, id)
		if errors.Is(err, transfer.ErrUnknownJob) {
			s, err = JobOf(t, q, id), nil // done before this queue opened
		}
		if err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		if s.State != transfer.StateDone {
			t.Fatalf("job %s (%s) ended %s: %s", id, s.Label, s.State, s.Error)
		}
	}
}

// StoredRecord is job id's record as the journal in state holds it.
func StoredRecord(t testing.TB, state, id string) *transfer.Record {
	t.Helper()
	j, err := transfer.OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	r, err := j.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
