package transfer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Ghosts. A Drive link's file or a Photos upload is read in place, from
// where the person keeps it; moved or renamed after it was queued (or
// while the upload was interrupted), its job does not fail for good: it
// waits in StateMissing, with its session and confirmed offset, for the
// person to point at the file again (Locate). The file pointed at is
// taken only when it is the same file: its size, and the hash of the
// prefix already sent (the journal's HashState over Hashed bytes, the
// target's sums over Summed bytes). The job then goes on from where the
// server stands, as any resume does.
//
// A file that comes back to where it was (moved back, a drive plugged in
// again, a share reachable again) is found without the person: when the
// queue takes the ghost up at its start, at each wake or network back
// (Wake), and when the person asks to resume or retry it, its recorded
// path is looked at, and the same file there, by the same check, sends
// the job on. Another file there, or none, leaves it a ghost as it was.

var (
	// ErrSourceMissing: the job's file is no longer at its recorded path.
	ErrSourceMissing = errors.New("the file to upload is no longer where it was")
	// ErrNotSameFile refuses a file Locate was given that is not the
	// job's: another size, or other bytes where the server holds some.
	ErrNotSameFile = errors.New("that is not the file this upload was sending")
)

// missingErr is a ghost's error, naming where the file was.
type missingErr struct{ path string }

func (e *missingErr) Error() string { return fmt.Sprintf("the file is no longer at %s", e.path) }

func (e *missingErr) Unwrap() error { return ErrSourceMissing }

// ownFile reports whether the job's file is Carrier's own, which never
// becomes a ghost (nobody moves it; gone, it is gone): a spool made by
// compose, whose SHA-256 the caller gave (Spec.SHA256: no running hash
// state is kept for it), or a call's body.
func (r *Record) ownFile() bool {
	return r.Type == Call || r.SHA256 != "" && r.HashState == nil
}

// lose moves a job whose worker found its file gone to StateMissing.
func (q *Queue) lose(jb *job, err error) {
	msg := err.Error()
	q.transition(jb, MoveLose, StateMissing, func(r *Record) {
		r.Error, r.Retryable, r.Cause, r.Failure = msg, false, "", nil
	}, Event{Err: err, Message: msg})
}

// Locate sends a ghost (StateMissing) on from path, where the person says
// its file is now. The file must be the job's: a regular file of the
// recorded size whose bytes already sent hash as the journal recorded
// them; else Locate refuses it (ErrNotSameFile, in words) and the job stays
// a ghost. The new path, and the file's times there, are made durable
// before the job goes back to the queue; its first request then asks the
// server where it stands, so it goes on from there.
func (q *Queue) Locate(ctx context.Context, id, path string) error {
	return q.repoint(ctx, id, path, MoveLocate, nil)
}

// repoint sends job id back to the queue by move from the file at path,
// once sameFile takes it: Locate's and UseFile's common part. refuse, when
// given, may refuse the job first (under Queue.mu). The job is held, as
// Cancel holds one, while its file is read and its new path made durable.
func (q *Queue) repoint(ctx context.Context, id, path string, move Move, refuse func(*job) error) error {
	if err := q.claim(id); err != nil {
		return err
	}
	q.mu.Lock()
	jb, err := q.lookup(id)
	if err == nil {
		err = q.waitIdleLocked(ctx, jb)
	}
	if err == nil && q.closed {
		err = errClosed
	}
	if err == nil && refuse != nil {
		if err = refuse(jb); err != nil {
			err = fmt.Errorf("job %s: %w", id, err)
		}
	}
	if err == nil {
		if err = next(move, jb.state(), StateQueued); err != nil {
			err = fmt.Errorf("job %s: %w", id, err)
		}
	}
	if err == nil && jb.release == nil {
		jb.release, err = q.journal.Lock(id)
	}
	q.mu.Unlock()
	if err != nil {
		return err
	}
	rec := jb.record()
	at, err := sameFile(ctx, &rec, path)
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	err = q.transition(jb, move, StateQueued, func(r *Record) {
		r.Path, r.ModTime, r.ChangeTime = at.path, at.mod, at.change
		clearFailure(r)
	}, Event{})
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	return nil
}

// located is the file Locate accepted.
type located struct {
	path        string
	mod, change time.Time
}

// sameFile checks that path is rec's file: its size, then the prefix the
// journal kept sums of.
func sameFile(ctx context.Context, rec *Record, path string) (located, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return located{}, fmt.Errorf("cannot find %s: %w", path, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return located{}, fmt.Errorf("cannot open %s: %w", abs, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return located{}, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	if !fi.Mode().IsRegular() {
		return located{}, fmt.Errorf("%s is not a regular file", abs)
	}
	if fi.Size() != rec.Size {
		return located{}, fmt.Errorf("%w: %s is %d bytes, and the file queued was %d bytes", ErrNotSameFile, abs, fi.Size(), rec.Size)
	}
	check := func(names []string, states map[string][]byte, at int64) error {
		if at <= 0 {
			return nil
		}
		want := newSumGroup(names)
		if err := want.restore(states, at); err != nil {
			return err
		}
		err := checkPrefix(ctx, f, want)
		if errors.Is(err, ErrSourceChanged) {
			return fmt.Errorf("%w: the first %d bytes of %s, already sent, differ from the file's", ErrNotSameFile, at, abs)
		}
		return err
	}
	if err := check([]string{rec.sourceSum()}, map[string][]byte{rec.sourceSum(): rec.HashState}, rec.Hashed); err != nil {
		return located{}, err
	}
	if len(rec.Checksums) > 0 {
		if err := check(rec.Checksums, rec.SumState, rec.Summed); err != nil {
			return located{}, err
		}
	}
	return located{path: abs, mod: fi.ModTime(), change: changeTimeOf(abs, fi)}, nil
}

// ghost reports whether job id is one this queue holds in StateMissing.
func (q *Queue) ghost(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	jb, ok := q.jobs[id]
	return ok && jb.state() == StateMissing
}

// found sends ghost id on when the same file is back at its recorded
// path, as Locate would take it there; else the job stays a ghost, as it
// was, and the error says why: the file is still not there, or another
// file is.
func (q *Queue) found(ctx context.Context, id string) error {
	q.mu.Lock()
	jb, err := q.lookup(id)
	q.mu.Unlock()
	if err != nil {
		return err
	}
	rec := jb.record()
	// A look before reading: no file there is the usual answer.
	if fi, err := os.Stat(rec.Path); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("job %s: %w", id, &missingErr{path: rec.Path})
	}
	return q.Locate(ctx, id, rec.Path)
}

// findGhosts looks, off the caller's goroutine, at the recorded path of
// each ghost this queue holds (of those named, or all) and sends on those
// whose file is back (found). A ghost already being looked at is not
// looked at twice.
func (q *Queue) findGhosts(ids ...string) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	var ghosts []string
	look := func(id string, jb *job) {
		if jb.state() == StateMissing && !q.looking[id] {
			if q.looking == nil {
				q.looking = map[string]bool{}
			}
			q.looking[id] = true
			ghosts = append(ghosts, id)
		}
	}
	if len(ids) == 0 {
		for id, jb := range q.jobs {
			look(id, jb)
		}
	}
	for _, id := range ids {
		if jb, ok := q.jobs[id]; ok {
			look(id, jb)
		}
	}
	if len(ghosts) == 0 {
		q.mu.Unlock()
		return
	}
	q.wg.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.wg.Done()
		for _, id := range ghosts {
			q.found(q.ctx, id) // not back, or another file: it stays a ghost
			q.mu.Lock()
			delete(q.looking, id)
			q.mu.Unlock()
		}
	}()
}
