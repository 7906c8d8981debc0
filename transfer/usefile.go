package transfer

import (
	"context"
	"errors"
	"fmt"
)

// A file that changed after its upload began. The engine compares a job's
// file with what it recorded (size, modification time, on Linux the change
// time, and the hash of the prefix already sent) before every request, and
// stops the job for good (FailSourceChanged) rather than send a mix of old
// and new. Retry would stop the same way: the times it compares are the
// queued ones. Often the bytes are the same (a file saved again unchanged,
// touched by a backup or a sync tool, or put back as it was): the person
// may then accept the file as it is now (UseFile), which is Locate's check
// (sameFile: the size, and the hash of the prefix the server holds) on a
// failed job, and the job goes on from where the server stands.

// ErrNotChanged refuses UseFile on a job that did not stop because its file
// changed: there is no file to accept.
var ErrNotChanged = errors.New("the job did not stop because its file changed, so there is no file to accept")

// changedFile reports whether rec stopped for good because its file
// changed, and is a file of the person's (Carrier's own files are never
// accepted again: a message's spool is reopened in Compose instead).
func changedFile(rec *Record) error {
	if rec.State != StateFailed || rec.Failure == nil || rec.Failure.Code != FailSourceChanged || rec.ownFile() || rec.Path == "" {
		return ErrNotChanged
	}
	return nil
}

// CheckFile reports, changing nothing, whether UseFile would take path for
// job id: nil when the job stopped because its file changed and path holds
// the same bytes as far as the server holds them (its size, and the hash of
// the prefix already sent); ErrNotChanged, or ErrNotSameFile with how it
// differs, otherwise. It reads the file's prefix, so it is not for the UI
// thread.
func (q *Queue) CheckFile(ctx context.Context, id, path string) error {
	rec, err := q.failedRecord(id)
	if err != nil {
		return err
	}
	if err := changedFile(&rec); err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	if _, err := sameFile(ctx, &rec, path); err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return nil
}

// failedRecord is job id's record, the job taken from the journal if this
// queue does not hold it yet.
func (q *Queue) failedRecord(id string) (Record, error) {
	if err := q.claim(id); err != nil {
		return Record{}, err
	}
	q.mu.Lock()
	jb, err := q.lookup(id)
	q.mu.Unlock()
	if err != nil {
		return Record{}, err
	}
	return jb.record(), nil
}

// UseFile sends on a job that stopped because its file changed, taking the
// file at path as it is now (the job's own path, or the same file found
// elsewhere): only when it is the same file as far as the server holds it
// (CheckFile). Its path and times are recorded durably as the job goes
// back to the queue (a retry: failed to queued); its first request asks
// the server where it stands, and the rest of the file goes from there.
// The prefix is hashed again before any byte goes, so a file changed
// between this check and the send is stopped as before.
func (q *Queue) UseFile(ctx context.Context, id, path string) error {
	return q.repoint(ctx, id, path, MoveRetry, func(jb *job) error {
		rec := jb.record()
		return changedFile(&rec)
	})
}
