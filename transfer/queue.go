package transfer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults for Config's zero values.
const (
	// DefaultChunkSize is 16 MiB, as the official client's: a 35 MiB mail
	// goes in three round trips, and a gigabyte at the wire's speed
	// (docs/PERFORMANCE.md). A broken connection costs nothing extra, since
	// the server keeps what arrived and Range says so; only a server that
	// drops a partial chunk makes Carrier send up to one chunk again.
	// Chunks stream from the file, so memory does not depend on the size.
	DefaultChunkSize    = 16 << 20
	DefaultWorkers      = 3
	DefaultRetryBase    = time.Second
	DefaultMaxRetries   = 5
	DefaultStallTimeout = 30 * time.Second
	DefaultSessionTTL   = 7 * 24 * time.Hour
	// DefaultWakeCheck: one clock comparison a second costs nothing and
	// notices a wake within about a second (a sleep shorter than 2 s goes
	// unnoticed, and needs no noticing).
	DefaultWakeCheck = time.Second
)

// Config sets up a Queue. Zero values take the defaults above.
type Config struct {
	StateDir string       // the journal lives in StateDir/jobs
	Client   *http.Client // nil: a client of its own; redirects are never followed
	Auth     Authorizer   // nil: no Authorization header
	Workers  int          // jobs running at once
	// ChunkSize is used by jobs whose Spec has none: a multiple of
	// ChunkQuantum. A value at least the file's size sends it whole.
	ChunkSize int64
	// RetryBase is the base of the backoff base*2^n + random(0..base).
	RetryBase time.Duration
	// MaxRetries is the last n of the backoff: after waits for n = 0..
	// MaxRetries without the server confirming progress, the next failure
	// ends the job. Negative: no retry at all.
	MaxRetries   int
	StallTimeout time.Duration // a request with no progress this long is abandoned
	SessionTTL   time.Duration // sessions older than this are replaced
	Clock        Clock         // nil: the system clock
	WakeCheck    time.Duration // how often to compare the wall and monotonic clocks
	// Events receives what happens to jobs; nil drops them. Progress events
	// are dropped when it is full; the others wait for room (or Close).
	// The queue never closes it.
	Events chan<- Event
}

// Spec is what to upload.
type Spec struct {
	URL         string     // the media upload URI; uploadType is set from Type
	Method      string     // POST (default) or PUT (updates)
	Type        UploadType // default Resumable
	ContentType string     // media type of the file
	Metadata    []byte     // JSON; none for Media
	Path        string     // the file; it must not change until the job ends
	ChunkSize   int64      // 0: the queue's
	// SHA256 is the file's SHA-256 (hex) when the caller already knows it
	// (compose hashes a spool as it writes it): the engine then reads the
	// file only to send it. It is checked again on every resume.
	SHA256 string
	// Label names the job for people ("Report · to bob@example.com"); the
	// engine only keeps it. It must not hold a credential.
	Label string
}

// Queue runs upload jobs on a few workers and keeps them in the journal.
type Queue struct {
	journal    *Journal
	client     *http.Client
	auth       Authorizer
	clock      Clock
	chunkSize  int64
	retryBase  time.Duration
	maxRetries int
	stall      time.Duration
	sessionTTL time.Duration
	wakeCheck  time.Duration
	wake       *waker
	events     chan<- Event

	ctx  context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup

	evMu     sync.RWMutex
	evClosed bool

	mu      sync.Mutex
	jobs    map[string]*job
	pending []*job
	signal  chan struct{}
	closed  bool
}

// job is a job this queue holds. rec is guarded by recMu; the rest by
// Queue.mu. While a run is going, the run is rec's only writer.
type job struct {
	id    string // fixed; rec.ID is the same but rec changes under recMu
	recMu sync.Mutex
	rec   *Record

	release        func() // the journal lock; nil once released
	running        bool   // a worker (or Cancel) is working it
	cancel         context.CancelCauseFunc
	runDone        chan struct{}
	changed        chan struct{} // closed and replaced on every change, for Wait
	resendApproved bool          // the person chose to send a media/multipart job again
	lastDurable    time.Time     // the last durable write of rec, under recMu
}

// Why a run was stopped from outside.
var (
	errPaused     = errors.New("paused")
	errCancelling = errors.New("cancelled")
	errClosed     = errors.New("the upload queue was closed")
)

// ErrUnknownJob is returned for an id the queue does not hold.
var ErrUnknownJob = errors.New("no such job in this queue")

// New opens the journal and starts the workers. Jobs already in the
// journal are not touched until ResumeJournal.
func New(cfg Config) (*Queue, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("transfer: Config.StateDir is empty")
	}
	j, err := OpenJournal(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	q := &Queue{
		journal:    j,
		auth:       cfg.Auth,
		clock:      cfg.Clock,
		chunkSize:  cfg.ChunkSize,
		retryBase:  cfg.RetryBase,
		maxRetries: cfg.MaxRetries,
		stall:      cfg.StallTimeout,
		sessionTTL: cfg.SessionTTL,
		wakeCheck:  cfg.WakeCheck,
		wake:       newWaker(),
		events:     cfg.Events,
		jobs:       map[string]*job{},
		signal:     make(chan struct{}, 1),
	}
	if q.clock == nil {
		q.clock = SystemClock()
	}
	if q.chunkSize == 0 {
		q.chunkSize = DefaultChunkSize
	}
	if q.chunkSize < 0 || q.chunkSize%ChunkQuantum != 0 {
		return nil, fmt.Errorf("chunk size %d is not a positive multiple of 256 KiB (%d)", q.chunkSize, ChunkQuantum)
	}
	if q.retryBase == 0 {
		q.retryBase = DefaultRetryBase
	}
	switch {
	case q.maxRetries == 0:
		q.maxRetries = DefaultMaxRetries
	case q.maxRetries < 0:
		q.maxRetries = -1
	}
	if q.stall <= 0 {
		q.stall = DefaultStallTimeout
	}
	if q.sessionTTL <= 0 {
		q.sessionTTL = DefaultSessionTTL
	}
	if q.wakeCheck <= 0 {
		q.wakeCheck = DefaultWakeCheck
	}
	// A client of our own (or a copy of the caller's): redirects must not
	// be followed, since a 308 here means "resume incomplete", and a wake
	// closes idle connections that the sleep killed.
	if cfg.Client != nil {
		c := *cfg.Client
		q.client = &c
	} else {
		q.client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	q.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	workers := cfg.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	q.ctx, q.stop = context.WithCancelCause(context.Background())
	q.wg.Add(workers + 1)
	for range workers {
		go q.worker()
	}
	go q.watchWake()
	return q, nil
}

// Journal is the queue's journal, for listing jobs.
func (q *Queue) Journal() *Journal { return q.journal }

// Close stops every worker, abandoning requests in flight, and waits for
// them. Unfinished jobs stay in the journal and resume next time.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	q.mu.Unlock()
	q.stop(errClosed)
	q.wg.Wait()
	q.evMu.Lock()
	q.evClosed = true
	q.evMu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, jb := range q.jobs {
		if jb.release != nil {
			jb.release()
			jb.release = nil
		}
		q.notify(jb)
	}
	return nil
}

func (q *Queue) emit(e Event) {
	q.evMu.RLock()
	defer q.evMu.RUnlock()
	if q.evClosed || q.events == nil {
		return
	}
	if e.Kind == EventProgress {
		select {
		case q.events <- e:
		default: // the next one carries the totals
		}
		return
	}
	select {
	case q.events <- e:
	case <-q.ctx.Done():
	}
}

// notify wakes Wait callers; q.mu must be held.
func (q *Queue) notify(jb *job) {
	close(jb.changed)
	jb.changed = make(chan struct{})
}

// update changes a job's record and writes it to the journal; the change
// stands only once it is on disk.
func (q *Queue) update(jb *job, f func(*Record)) error {
	jb.recMu.Lock()
	cp := *jb.rec
	f(&cp)
	cp.Updated = q.clock.Now().Round(0)
	err := q.journal.Save(&cp)
	if err == nil {
		*jb.rec = cp
		jb.lastDurable = time.Now()
	}
	jb.recMu.Unlock()
	q.mu.Lock()
	q.notify(jb)
	q.mu.Unlock()
	return err
}

// durableEvery bounds how often progress alone is made durable: between
// those writes it goes to the journal's progress file without an fsync. A
// resume asks the server where it stands anyway; the journal's offset only
// tells a person, and survives any crash of Carrier itself.
const durableEvery = time.Second

// updateProgress records a confirmed offset and the hash state that goes
// with it: in the progress file at once, durably at most once a second.
func (q *Queue) updateProgress(jb *job, f func(*Record)) error {
	jb.recMu.Lock()
	durable := time.Since(jb.lastDurable) >= durableEvery
	jb.recMu.Unlock()
	if durable {
		return q.update(jb, f)
	}
	jb.recMu.Lock()
	f(jb.rec)
	jb.rec.Updated = q.clock.Now().Round(0)
	err := q.journal.SaveProgress(jb.rec)
	jb.recMu.Unlock()
	q.mu.Lock()
	q.notify(jb)
	q.mu.Unlock()
	return err
}

func (q *Queue) snapshot(jb *job) Record {
	jb.recMu.Lock()
	defer jb.recMu.Unlock()
	return *jb.rec
}

// Add records a job and queues it. The record is on disk before Add
// returns, so a crash from here on cannot lose it.
func (q *Queue) Add(spec Spec) (string, error) {
	rec, err := q.newRecord(spec)
	if err != nil {
		return "", err
	}
	release, err := q.journal.Lock(rec.ID)
	if err != nil {
		return "", err
	}
	if err := q.journal.Save(rec); err != nil {
		release()
		return "", err
	}
	id := rec.ID
	if err := q.adopt(&job{id: id, rec: rec, release: release, changed: make(chan struct{})}); err != nil {
		release()
		return "", err
	}
	return id, nil
}

func (q *Queue) adopt(jb *job) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return errClosed
	}
	q.jobs[jb.id] = jb
	state := jb.rec.State // no worker has it yet
	if state == StateQueued {
		q.enqueueLocked(jb)
	}
	q.mu.Unlock()
	r := q.snapshot(jb)
	kind := EventQueued
	if state == StatePaused {
		kind = EventPaused
	}
	q.emit(Event{Kind: kind, Job: r.ID, Confirmed: r.Confirmed, Sent: r.Confirmed, Total: r.Size})
	return nil
}

func (q *Queue) enqueueLocked(jb *job) {
	q.pending = append(q.pending, jb)
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *Queue) newRecord(spec Spec) (*Record, error) {
	now := q.clock.Now().Round(0)
	method := strings.ToUpper(spec.Method)
	if method == "" {
		method = http.MethodPost
	}
	typ := spec.Type
	if typ == "" {
		typ = Resumable
	}
	chunk := spec.ChunkSize
	if chunk == 0 {
		chunk = q.chunkSize
	}
	if chunk < 0 || chunk%ChunkQuantum != 0 {
		return nil, fmt.Errorf("chunk size %d is not a positive multiple of 256 KiB (%d)", chunk, ChunkQuantum)
	}
	var meta json.RawMessage
	if len(spec.Metadata) > 0 {
		if !json.Valid(spec.Metadata) {
			return nil, errors.New("the metadata is not valid JSON")
		}
		if typ == Media {
			return nil, errors.New("a media upload carries no metadata; use the multipart or resumable upload type")
		}
		meta = append(json.RawMessage(nil), spec.Metadata...)
	}
	if err := checkHTTPURL(spec.URL); err != nil {
		return nil, fmt.Errorf("the upload URI: %w", err)
	}
	path, err := filepath.Abs(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot find the file to upload: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the file to upload: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	var b [4]byte
	rand.Read(b[:])
	rec := &Record{
		Version:     recordVersion,
		ID:          now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:]),
		Created:     now,
		URL:         spec.URL,
		Method:      method,
		Type:        typ,
		ContentType: spec.ContentType,
		Metadata:    meta,
		Path:        path,
		Size:        fi.Size(),
		ModTime:     fi.ModTime(),
		ChangeTime:  changeTime(fi),
		ChunkSize:   chunk,
		Label:       spec.Label,
		SHA256:      strings.ToLower(spec.SHA256),
		State:       StateQueued,
		Updated:     now,
	}
	if rec.SHA256 != "" {
		rec.Hashed = rec.Size
	}
	if err := rec.validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// ResumeJournal takes up the journal's unfinished jobs that no other
// process holds. Queued jobs start (each first asks its session where it
// stands); paused jobs stay paused. With all, paused jobs and jobs that
// failed for a passing reason (the network, a server in trouble) start too,
// as `carrier resume` wants. It returns the ids taken; jobs it could not
// take (held elsewhere, unreadable) are reported in the error.
func (q *Queue) ResumeJournal(all bool) ([]string, error) {
	wanted := func(r *Record) bool {
		return r.State.Unfinished() || all && r.State == StateFailed && r.Retryable
	}
	recs, err := q.journal.List()
	errs := []error{err}
	var ids []string
	for _, rec := range recs {
		if !wanted(rec) {
			continue
		}
		q.mu.Lock()
		_, have := q.jobs[rec.ID]
		q.mu.Unlock()
		if have {
			continue
		}
		release, err := q.journal.Lock(rec.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", rec.ID, err))
			continue
		}
		// Read again under the lock: another process may have moved it on.
		if rec, err = q.journal.Load(rec.ID); err != nil || !wanted(rec) {
			release()
			errs = append(errs, err)
			continue
		}
		id := rec.ID
		jb := &job{id: id, rec: rec, release: release, changed: make(chan struct{})}
		if all && rec.State != StateQueued {
			if err := q.update(jb, func(r *Record) { r.State, r.Error, r.Retryable = StateQueued, "", false }); err != nil {
				release()
				errs = append(errs, err)
				continue
			}
		}
		if err := q.adopt(jb); err != nil {
			release()
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, errors.Join(errs...)
}

func (q *Queue) worker() {
	defer q.wg.Done()
	for {
		jb, ctx := q.take()
		if jb == nil {
			select {
			case <-q.signal:
				continue
			case <-q.ctx.Done():
				return
			}
		}
		q.runJob(ctx, jb)
	}
}

// take pops the next pending job and marks it running.
func (q *Queue) take() (*job, context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.pending) == 0 {
		return nil, nil
	}
	jb := q.pending[0]
	q.pending = q.pending[1:]
	if len(q.pending) > 0 {
		select { // another worker may be idle
		case q.signal <- struct{}{}:
		default:
		}
	}
	ctx, cancel := context.WithCancelCause(q.ctx)
	jb.running, jb.cancel, jb.runDone = true, cancel, make(chan struct{})
	return jb, ctx
}

func (q *Queue) runJob(ctx context.Context, jb *job) {
	defer func() {
		q.mu.Lock()
		jb.cancel(nil)
		jb.running, jb.cancel = false, nil
		close(jb.runDone)
		q.notify(jb)
		q.mu.Unlock()
	}()
	rec := q.snapshot(jb)
	q.emit(Event{Kind: EventStarted, Job: rec.ID, Confirmed: rec.Confirmed, Sent: rec.Confirmed, Total: rec.Size})
	r := &run{q: q, jb: jb, rec: jb.rec}
	resp, err := r.execute(ctx)
	switch {
	case err == nil:
		sum := r.fileSum()
		uerr := q.update(jb, func(r *Record) {
			r.State, r.Response, r.Error, r.Retryable = StateDone, resp, "", false
			r.Confirmed = r.Size
			if sum != "" {
				r.SHA256, r.Hashed, r.HashState = sum, r.Size, nil
			}
		})
		q.finish(jb)
		// The upload is done on the server whatever the journal says; a
		// journal that could not record it only costs a status query later.
		_ = uerr
		q.emit(Event{Kind: EventDone, Job: rec.ID, Sent: rec.Size, Confirmed: rec.Size, Total: rec.Size, Response: resp})
	case errors.Is(err, errPaused):
		cur := q.snapshot(jb)
		q.update(jb, func(r *Record) { r.State = StatePaused })
		q.emit(Event{Kind: EventPaused, Job: rec.ID, Confirmed: cur.Confirmed, Sent: cur.Confirmed, Total: cur.Size})
	case errors.Is(err, errCancelling), errors.Is(err, errClosed):
		// Cancel finishes the job itself; a closed queue leaves it queued
		// in the journal for next time.
	default:
		var perm *permanent
		retryable := !errors.As(err, &perm) && classify(err) == classRetry
		msg := err.Error()
		q.update(jb, func(r *Record) { r.State, r.Error, r.Retryable = StateFailed, msg, retryable })
		q.finish(jb)
		q.emit(Event{Kind: EventFailed, Job: rec.ID, Total: rec.Size, Err: err, Message: msg})
	}
}

// finish lets go of a job that reached an end.
func (q *Queue) finish(jb *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if jb.release != nil {
		jb.release()
		jb.release = nil
	}
}

// watchWake compares the wall clock with the monotonic one; when the wall
// clock has moved further, the machine slept: every request in flight is
// abandoned and every waiting job asks its session at once.
func (q *Queue) watchWake() {
	defer q.wg.Done()
	prevWall, prevMono := q.clock.Now(), q.clock.Elapsed()
	for {
		t := q.clock.NewTimer(q.wakeCheck)
		select {
		case <-q.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		wall, mono := q.clock.Now(), q.clock.Elapsed()
		if sleepGap(prevWall, prevMono, wall, mono) > max(q.wakeCheck, 2*time.Second) {
			q.client.CloseIdleConnections() // they died with the sleep
			q.wake.Fire()
		}
		prevWall, prevMono = wall, mono
	}
}

// Wake acts as if the machine just woke: for callers that learn of a wake
// from the system (a power notification) before the clocks show it.
func (q *Queue) Wake() {
	q.client.CloseIdleConnections()
	q.wake.Fire()
}

// claim takes a job of the journal that this queue does not hold (one that
// failed in an earlier run, say) without starting it, so the person can
// retry or cancel it. Jobs another process works stay theirs (ErrBusy).
func (q *Queue) claim(id string) error {
	q.mu.Lock()
	_, have := q.jobs[id]
	closed := q.closed
	q.mu.Unlock()
	if have || closed {
		return nil
	}
	release, err := q.journal.Lock(id)
	if err != nil {
		return err
	}
	rec, err := q.journal.Load(id)
	if err != nil {
		release()
		return fmt.Errorf("job %q: %w", id, ErrUnknownJob)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, have := q.jobs[id]; have || q.closed {
		release()
		return nil
	}
	q.jobs[id] = &job{id: id, rec: rec, release: release, changed: make(chan struct{})}
	return nil
}

func (q *Queue) lookup(id string) (*job, error) {
	jb, ok := q.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %q: %w", id, ErrUnknownJob)
	}
	return jb, nil
}

// waitIdle waits until no worker runs jb; q.mu is held on entry and exit.
func (q *Queue) waitIdleLocked(ctx context.Context, jb *job) error {
	for jb.running {
		ch := jb.runDone
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			q.mu.Lock()
			return ctx.Err()
		}
		q.mu.Lock()
	}
	return nil
}

func (q *Queue) removePendingLocked(jb *job) {
	for i, p := range q.pending {
		if p == jb {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			return
		}
	}
}

// Pause stops a job, abandoning its request in flight; its session is kept
// and Resume continues from where the server stands.
func (q *Queue) Pause(id string) error {
	q.mu.Lock()
	jb, err := q.lookup(id)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	if q.snapshot(jb).State != StateQueued {
		q.mu.Unlock()
		return fmt.Errorf("job %s is not running or waiting, so it cannot be paused", id)
	}
	if jb.running {
		jb.cancel(errPaused) // the worker records the pause
		q.mu.Unlock()
		return nil
	}
	q.removePendingLocked(jb)
	q.mu.Unlock()
	err = q.update(jb, func(r *Record) { r.State = StatePaused })
	rec := q.snapshot(jb)
	q.emit(Event{Kind: EventPaused, Job: id, Confirmed: rec.Confirmed, Sent: rec.Confirmed, Total: rec.Size})
	return err
}

// Resume queues a paused job again.
func (q *Queue) Resume(ctx context.Context, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	jb, err := q.lookup(id)
	if err != nil {
		return err
	}
	if err := q.waitIdleLocked(ctx, jb); err != nil {
		return err
	}
	if q.snapshot(jb).State != StatePaused {
		return fmt.Errorf("job %s is not paused", id)
	}
	return q.requeueLocked(jb, false)
}

// Retry queues a failed job again. For a media or multipart job whose
// bytes may have arrived, this is the person's decision to send it again.
func (q *Queue) Retry(ctx context.Context, id string) error {
	if err := q.claim(id); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	jb, err := q.lookup(id)
	if err != nil {
		return err
	}
	if err := q.waitIdleLocked(ctx, jb); err != nil {
		return err
	}
	if q.snapshot(jb).State != StateFailed {
		return fmt.Errorf("job %s has not failed, so there is nothing to retry", id)
	}
	return q.requeueLocked(jb, true)
}

func (q *Queue) requeueLocked(jb *job, approve bool) error {
	if q.closed {
		return errClosed
	}
	if jb.release == nil {
		release, err := q.journal.Lock(jb.id)
		if err != nil {
			return err
		}
		jb.release = release
	}
	q.mu.Unlock()
	err := q.update(jb, func(r *Record) { r.State, r.Error, r.Retryable = StateQueued, "", false })
	q.mu.Lock()
	if err != nil {
		return err
	}
	jb.resendApproved = jb.resendApproved || approve
	q.enqueueLocked(jb)
	rec := q.snapshot(jb)
	q.mu.Unlock()
	q.emit(Event{Kind: EventQueued, Job: rec.ID, Confirmed: rec.Confirmed, Sent: rec.Confirmed, Total: rec.Size})
	q.mu.Lock()
	return nil
}

// Cancel stops a job and deletes its session on the server, so it can
// never complete. It returns once the job is cancelled.
func (q *Queue) Cancel(ctx context.Context, id string) error {
	if err := q.claim(id); err != nil {
		return err
	}
	q.mu.Lock()
	jb, err := q.lookup(id)
	if err != nil {
		q.mu.Unlock()
		return err
	}
	if jb.running {
		jb.cancel(errCancelling)
	}
	if err := q.waitIdleLocked(ctx, jb); err != nil {
		q.mu.Unlock()
		return err
	}
	switch q.snapshot(jb).State {
	case StateDone:
		q.mu.Unlock()
		return fmt.Errorf("job %s already finished; there is nothing to cancel", id)
	case StateCancelled:
		q.mu.Unlock()
		return nil
	}
	q.removePendingLocked(jb)
	// Hold the job as running so no worker, Resume or Retry takes it while
	// the session is deleted.
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(q.ctx, func() { cancel(errClosed) })
	defer stop()
	jb.running, jb.cancel, jb.runDone = true, cancel, make(chan struct{})
	q.mu.Unlock()

	r := &run{q: q, jb: jb, rec: jb.rec}
	delErr := r.cancelSession(cctx)
	note := ""
	if delErr != nil {
		note = "cancelled here, but the server could not be told (" + delErr.Error() + "); its session expires within a week and is never sent to again"
	}
	err = q.update(jb, func(r *Record) { r.State, r.Error, r.Retryable = StateCancelled, note, false })
	q.mu.Lock()
	cancel(nil)
	jb.running, jb.cancel = false, nil
	close(jb.runDone)
	q.mu.Unlock()
	q.finish(jb)
	rec := q.snapshot(jb)
	q.emit(Event{Kind: EventCancelled, Job: id, Confirmed: rec.Confirmed, Total: rec.Size, Message: note})
	if delErr != nil {
		return fmt.Errorf("job %s cancelled, but deleting its session failed: %w", id, delErr)
	}
	return err
}

// Wait blocks until the job reaches an end (done, failed, cancelled) and
// returns its record.
func (q *Queue) Wait(ctx context.Context, id string) (Record, error) {
	for {
		q.mu.Lock()
		jb, err := q.lookup(id)
		if err != nil {
			q.mu.Unlock()
			return Record{}, err
		}
		rec := q.snapshot(jb)
		if !rec.State.Unfinished() && !jb.running {
			q.mu.Unlock()
			return rec, nil
		}
		if q.closed {
			q.mu.Unlock()
			return rec, errClosed
		}
		ch := jb.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return q.snapshot(jb), ctx.Err()
		case <-q.ctx.Done():
		}
	}
}

// Job returns a copy of one job's record.
func (q *Queue) Job(id string) (Record, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	jb, ok := q.jobs[id]
	if !ok {
		return Record{}, false
	}
	return q.snapshot(jb), true
}

// Jobs returns copies of every job's record, oldest first.
func (q *Queue) Jobs() []Record {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Record, 0, len(q.jobs))
	for _, jb := range q.jobs {
		out = append(out, q.snapshot(jb))
	}
	sortRecords(out)
	return out
}

func sortRecords(rs []Record) {
	slices.SortFunc(rs, func(a, b Record) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// History returns every job of the journal, oldest first: the ones this
// queue holds as they stand now, the rest (finished, or held by another
// process) as last written. Unreadable records are reported in the error.
func (q *Queue) History() ([]Record, error) {
	recs, err := q.journal.List()
	held := q.Jobs()
	byID := make(map[string]Record, len(held))
	for _, r := range held {
		byID[r.ID] = r
	}
	out := make([]Record, 0, len(recs)+len(held))
	for _, r := range recs {
		if h, ok := byID[r.ID]; ok {
			out = append(out, h)
			delete(byID, r.ID)
			continue
		}
		out = append(out, *r)
	}
	for _, r := range byID {
		out = append(out, r)
	}
	sortRecords(out)
	return out, err
}

// ErrUnfinished refuses to forget a job that may still be sent.
var ErrUnfinished = errors.New("the job is not finished: cancel it first")

// Forget removes a finished (done, failed or cancelled) job from the
// journal, with its session URI. Another process's jobs are left alone.
func (q *Queue) Forget(id string) error {
	q.mu.Lock()
	if jb, ok := q.jobs[id]; ok {
		rec := q.snapshot(jb)
		if rec.State.Unfinished() || jb.running {
			q.mu.Unlock()
			return ErrUnfinished
		}
		delete(q.jobs, id)
		if jb.release != nil {
			jb.release()
			jb.release = nil
		}
	}
	q.mu.Unlock()
	release, err := q.journal.Lock(id)
	if err != nil {
		return err
	}
	defer release()
	rec, err := q.journal.Load(id)
	if err != nil {
		return err
	}
	if rec.State.Unfinished() {
		return ErrUnfinished
	}
	return q.journal.Remove(id)
}
