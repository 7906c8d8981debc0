package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Config's zero values.
const (
	// DefaultChunkSize is 64 MiB: a gigabyte on a fast link goes in a
	// score of requests, at the wire's speed (16 MiB, the official
	// client's, made 69 on loopback and cost a tenth of the speed:
	// docs/PERFORMANCE.md). A broken connection costs nothing extra, since
	// the server keeps what arrived and Range says so; only a server that
	// drops a partial chunk makes Carrier send up to one chunk again.
	// Chunks stream from the file, so memory does not depend on the size.
	// It is a cap: chunks grow to it only on a link fast enough to confirm
	// it within a few seconds (chunksize.go), 22 MB/s and more.
	DefaultChunkSize    = 64 << 20
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
	// ChunkSize is the cap on chunks of jobs whose Spec has none: a
	// multiple of ChunkQuantum. Chunks start at 1 MiB and are sized from
	// the pace of confirmations for one every 2-4 s (chunksize.go), up to
	// this cap.
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
	// Bandwidth limits all uploads together to this many bytes per
	// second (0: no limit); SetBandwidth and SetSchedule change it.
	Bandwidth int64
	// MinSpeed abandons a request slower than a rate over a window;
	// see MinSpeed. Zero: DefaultMinSpeed.
	MinSpeed MinSpeed
	// Metered says which jobs wait while the connection is metered
	// (SetMetered); zero: none do.
	Metered MeteredPolicy
	// Events receives what happens to jobs; nil drops them. Progress events
	// are dropped when it is full; the others wait for room (or Close).
	// The queue never closes it.
	Events chan<- Event
}

// Queue schedules upload jobs on a few workers and keeps them in the
// journal; the Uploader does the uploading. Every change of a job's state
// goes through transition (jobs.go), along the table of lifecycle.go.
type Queue struct {
	journal   *Journal
	up        *Uploader
	clock     Clock
	chunkSize int64
	wakeCheck time.Duration
	wake      *waker
	holds     *holds
	bw        bandwidth
	meter     meter
	events    chan<- Event
	seq       atomic.Uint64

	ctx  context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup

	evMu     sync.RWMutex
	evClosed bool

	mu   sync.Mutex // guards the fields below and every job's queue-side fields
	jobs map[string]*job
	// ended holds the jobs that ended for good, but the last keepWhole
	// (recent, which stay whole in jobs), as what their snapshots show
	// (ended.go). A job is in jobs or in ended, never both.
	ended   map[string]*endedJob
	recent  []*job
	pending []*job
	signal  chan struct{}
	closed  bool
	// signins counts SignedIn calls: a job whose sign-in failed during a
	// run in which someone signed in tries again rather than park, since
	// the SignedIn that was meant for it may have come before it parked.
	signins uint64
	// parked is closed and replaced whenever a job parks, so Wait callers
	// of the jobs that need it look again.
	parked chan struct{}
	// needers indexes who needs whom: for a job's id, the jobs of this
	// queue whose Needs name it; waiting holds the jobs of this queue that
	// wait. Both are kept by putLocked, dropLocked and moved, so a job's
	// end looks only at the jobs that need it (deps.go).
	needers map[string][]*job
	waiting map[*job]struct{}
	// scheduled holds the jobs of this queue whose last bytes wait for
	// their SendAt (StateScheduled), kept by putLocked, dropLocked and
	// moved, so the clock's tick looks only at them (sendDue).
	scheduled map[*job]struct{}
	// looking holds the ghosts whose recorded path is being looked at
	// (ghost.go's findGhosts), so a start and a wake read a file once.
	looking map[string]bool
	// depSteps counts the jobs the dependency bookkeeping looked at (a
	// seam for tests: it grows with the edges touched, not the queue).
	depSteps atomic.Int64
	// pendingSteps counts the jobs looked at in the pending list (a seam
	// for tests).
	pendingSteps atomic.Int64
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
		journal:   j,
		clock:     cfg.Clock,
		chunkSize: cfg.ChunkSize,
		wakeCheck: cfg.WakeCheck,
		wake:      newWaker(),
		holds:     newHolds(),
		events:    cfg.Events,
		jobs:      map[string]*job{},
		ended:     map[string]*endedJob{},
		needers:   map[string][]*job{},
		waiting:   map[*job]struct{}{},
		scheduled: map[*job]struct{}{},
		signal:    make(chan struct{}, 1),
		parked:    make(chan struct{}),
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
	if q.wakeCheck <= 0 {
		q.wakeCheck = DefaultWakeCheck
	}
	if cfg.Bandwidth < 0 {
		return nil, fmt.Errorf("bandwidth limit %d is negative (0 is no limit)", cfg.Bandwidth)
	}
	if err := cfg.MinSpeed.check(); err != nil {
		return nil, err
	}
	q.bw.limit = NewLimiter(cfg.Bandwidth, q.clock)
	q.meter.policy = cfg.Metered.withDefaults()
	q.up = NewUploader(Uploader{
		Client:     cfg.Client,
		Auth:       cfg.Auth,
		Clock:      q.clock,
		Retry:      RetryPolicy{Base: cfg.RetryBase, MaxRetries: cfg.MaxRetries},
		Stall:      cfg.StallTimeout,
		SessionTTL: cfg.SessionTTL,
		Interrupt:  q.wake.Chan,
		Held:       q.holds.held,
		Limit:      q.bw.limit,
		MinSpeed:   cfg.MinSpeed,
	})
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
// them. Unfinished jobs stay in the journal and go on next time.
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
		jb.letGo()
		jb.notify()
	}
	return nil
}

func (q *Queue) emit(e Event) {
	q.evMu.RLock()
	defer q.evMu.RUnlock()
	if q.evClosed || q.events == nil {
		return
	}
	e.Job, e.Sent, e.Confirmed, e.Total, e.Rate = e.Snap.ID, e.Snap.Sent, e.Snap.Confirmed, e.Snap.Size, e.Snap.Rate
	e.Written, e.WriteRate, e.ConfirmedRate, e.ETA = e.Snap.Written, e.Snap.WriteRate, e.Snap.ConfirmedRate, e.Snap.ETA
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

// Wake acts as if the machine just woke: for callers that learn of a wake
// from the system (a power notification) before the clocks show it.
func (q *Queue) Wake() {
	q.up.Client.CloseIdleConnections()
	q.wake.Fire()
	q.findGhosts() // a drive plugged back in, a share reachable again
}

// watchWake compares the wall clock with the monotonic one; when the wall
// clock has moved further, the machine slept: every request in flight is
// abandoned and every waiting job asks its session at once. The same tick
// looks again at jobs that wait for jobs of another process, and sends the
// last bytes of scheduled jobs whose time came: by the wall clock, so a
// time passed while the machine slept is seen at the first tick after.
func (q *Queue) watchWake() {
	defer q.wg.Done()
	prevWall, prevMono := q.clock.Now(), q.clock.Elapsed()
	for tick := 1; ; tick++ {
		t := q.clock.NewTimer(q.wakeCheck)
		select {
		case <-q.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		wall, mono := q.clock.Now(), q.clock.Elapsed()
		if sleepGap(prevWall, prevMono, wall, mono) > max(q.wakeCheck, 2*time.Second) {
			q.Wake() // connections died with the sleep
		}
		prevWall, prevMono = wall, mono
		q.sendDue()
		if tick%recheckTicks == 0 {
			q.recheckWaiting("")
		}
	}
}

// recheckTicks: jobs waiting on another process's jobs look at the journal
// every few wake checks (a few seconds).
const recheckTicks = 3

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
		q.work(ctx, jb)
	}
}

// take pops the next pending job and marks it held by this worker.
func (q *Queue) take() (*job, context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.pending) == 0 {
		return nil, nil
	}
	i := slices.IndexFunc(q.pending, func(jb *job) bool {
		// A job held by Cancel or sendDue while it came to the queue is
		// theirs until they let go (settle pokes the workers then).
		if jb.run != nil {
			return false
		}
		rec := jb.record()
		return !q.meter.holdsBack(&rec)
	})
	if i < 0 {
		return nil, nil // what is left waits for the connection
	}
	jb := q.pending[i]
	if i == 0 { // the usual case: no copy of the rest of the list
		q.pending[0] = nil
		q.pending = q.pending[1:]
	} else {
		q.pending = slices.Delete(q.pending, i, i+1)
	}
	jb.pending = false
	if len(q.pending) > 0 {
		q.poke() // another worker may be idle
	}
	ctx, cancel := context.WithCancelCause(q.ctx)
	jb.run = &activeRun{cancel: cancel, done: make(chan struct{}), signins: q.signins}
	return jb, ctx
}

func (q *Queue) poke() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// work runs one job on the Uploader and moves it to where the run ended.
func (q *Queue) work(ctx context.Context, jb *job) {
	requeue := false
	defer func() {
		q.settle(jb)
		if requeue {
			// Back to the queue only once let go: there another worker
			// may take it at once, and this one's settle must not end
			// that worker's run.
			q.transition(jb, MoveStop, StateQueued, nil, Event{})
		}
	}()
	if err := q.transition(jb, MoveStart, StateRunning, nil, Event{}); err != nil && !jb.state().Active() {
		return // moved meanwhile (cancelled, say)
	}
	q.mu.Lock()
	resend := jb.resend
	q.mu.Unlock()
	w := Work{Record: jb.record(), Resend: resend, Sink: jobSink{q, jb}}
	for _, qt := range w.Record.Quote {
		id, _ := quoteOf(qt)
		// A job quoted is done (the call needs it), so its record holds
		// its result; the journal has it even when this process never ran it.
		var body []byte
		if r, err := q.journal.Load(id); err == nil && r.Response != nil {
			body = r.Response.Body
		}
		w.Quoted = append(w.Quoted, body)
	}
	resp, err := q.up.Upload(ctx, w)
	if c := context.Cause(ctx); err != nil && c != nil {
		err = c
	}
	switch {
	case err == nil:
		// The answer stays in memory while the queue holds the job: a copy
		// of its length, not the buffer it was read into (io.ReadAll's,
		// 512 bytes at least, for an upload token of 80).
		resp.Body = bytes.Clone(resp.Body)
		q.transition(jb, MoveFinish, StateDone, func(r *Record) {
			r.Response, r.Error, r.Retryable, r.Cause, r.Failure, r.Confirmed = resp, "", false, "", nil, r.Size
			r.Verified = resp.Verified
		}, Event{Response: resp})
	case errors.Is(err, errPaused):
		q.transition(jb, MovePause, StatePaused, nil, Event{})
	case errors.Is(err, errCancelling):
		// Cancel moves the job itself, once the session is deleted.
	case errors.Is(err, errClosed):
		q.transition(jb, MoveStop, StateQueued, nil, Event{})
	case errors.Is(err, errMetered):
		requeue = true // the metered rule holds it: it waits in the queue, without a worker
	case errors.Is(err, ErrSignInNeeded):
		requeue = q.park(jb, err)
	case errors.Is(err, ErrSourceMissing):
		q.lose(jb, err)
	case errors.Is(err, ErrScheduled):
		// Its last bytes wait for SendAt without a worker; the record,
		// durable now, keeps the session and the offset for a restart.
		q.transition(jb, MoveHoldLast, StateScheduled, nil, Event{})
	case errors.Is(err, ErrStartsLater):
		// Nothing sent yet: it waits, without a worker, for its start.
		q.transition(jb, MoveDefer, StateScheduled, nil, Event{})
	default:
		msg := err.Error()
		retry := retryable(err)
		cause, failure := causeOf(err), failureOf(err)
		q.transition(jb, MoveFail, StateFailed, func(r *Record) { r.Error, r.Retryable, r.Cause, r.Failure = msg, retry, cause, failure }, Event{Err: err, Message: msg})
	}
}

// settle lets go of a job a worker (or Cancel) held. A job that is
// scheduled and whose time came while it was held (the clock's tick
// passed it over then) is sent on at once, not a tick later.
func (q *Queue) settle(jb *job) {
	q.mu.Lock()
	if jb.run != nil {
		jb.run.cancel(nil)
		close(jb.run.done)
		jb.run = nil
	}
	if jb.pending {
		q.poke() // it came to the queue while held: a worker may take it now
	}
	jb.notify()
	_, scheduled := q.scheduled[jb]
	rec := jb.record()
	due := scheduled && !q.clock.Now().Before(rec.DueAt())
	q.endedLocked(jb)
	q.mu.Unlock()
	if due {
		q.sendDue()
	}
}

// hold waits until no worker (or Cancel) holds jb; q.mu is held on entry
// and exit, and released while waiting.
func (q *Queue) waitIdleLocked(ctx context.Context, jb *job) error {
	for jb.run != nil {
		done := jb.run.done
		q.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			q.mu.Lock()
			return ctx.Err()
		}
		q.mu.Lock()
	}
	return nil
}

// pushPendingLocked puts jb at the end of the pending list;
// removePendingLocked takes it out. A job knows whether it is in the list
// (job.pending), so a job that starts, taken from the list already, or is
// added does not cost a look through the whole list.
func (q *Queue) pushPendingLocked(jb *job) {
	q.pending = append(q.pending, jb)
	jb.pending = true
	q.poke()
}

func (q *Queue) removePendingLocked(jb *job) {
	if !jb.pending {
		return
	}
	for i, p := range q.pending {
		q.pendingSteps.Add(1)
		if p == jb {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			jb.pending = false
			return
		}
	}
}

func (q *Queue) lookup(id string) (*job, error) {
	jb, ok := q.jobs[id]
	if !ok && q.ended[id] != nil {
		// A person's move on a job that ended long ago: taken back whole,
		// so it is refused (or done) as it always was.
		jb, ok = q.wholeLocked(id), true
	}
	if !ok {
		return nil, fmt.Errorf("job %q: %w", id, ErrUnknownJob)
	}
	return jb, nil
}
