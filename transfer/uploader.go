package transfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// Uploader sends one file to one upload URI and stands alone: it depends
// only on what it is given. The Queue makes one and hands it each job; a
// program (or a test) may use it without a queue or a journal.
type Uploader struct {
	Client     *http.Client // nil: a client of its own; redirects are never followed either way
	Auth       Authorizer   // nil: no Authorization header
	Clock      Clock        // nil: the system clock
	Retry      RetryPolicy
	Stall      time.Duration // a request with no progress this long is abandoned; 0: DefaultStallTimeout
	SessionTTL time.Duration // sessions older than this are replaced; 0: DefaultSessionTTL
	// Interrupt returns a channel closed at the next wake of the machine:
	// requests in flight are abandoned and waits cut short. Nil: never.
	Interrupt func() <-chan struct{}
	// Held says why no request may go out now (asleep, offline), and
	// returns a channel closed when that ends; "" when requests may go.
	// Waiting while held burns no retry. Nil: never held.
	Held func() (reason string, released <-chan struct{})
	// Limit caps the bytes per second of every upload that shares it
	// (nil: no limit). Changing its rate reaches requests in flight.
	Limit *Limiter
	// MinSpeed abandons a request that trickles (see MinSpeed); zero:
	// DefaultMinSpeed.
	MinSpeed MinSpeed

	prepared bool // by NewUploader: defaults in, client copied
}

// NewUploader fills u's zero values with the defaults once, so that its
// uploads share one client and its connections.
func NewUploader(u Uploader) *Uploader { return u.withDefaults() }

// RetryPolicy is the backoff base*2^n + random(0..base), and how many
// failures in a row without progress it takes (n = 0..MaxRetries) before
// the next one ends the upload. A negative MaxRetries retries nothing.
type RetryPolicy struct {
	Base       time.Duration
	MaxRetries int
}

// Work is one upload for the Uploader: the job's record (its fixed fields
// say what to send, its Cursor where it stands) and where to report.
type Work struct {
	Record Record
	// Resend is the person's decision to send a media or multipart upload
	// again although its bytes may have arrived.
	Resend bool
	Sink   Sink // nil: nothing is kept or shown
	// Quoted are the results (Response.Body) of the jobs the record
	// quotes, in its order; the queue reads them from the journal.
	Quoted [][]byte
}

// Sink receives what an upload learns, to keep it and to show it.
type Sink interface {
	// Checkpoint keeps the cursor: durably when asked (a new session, the
	// bytes of a one-shot upload going out), lazily for a confirmed offset.
	// An error ends the upload: what is not kept cannot be resumed.
	Checkpoint(c Cursor, durable bool) error
	// Progress tells how far the bytes went: sent is the file offset the
	// network has read to; rate is in bytes per second.
	Progress(sent int64, rate float64)
	// Retrying says the upload waits before trying again; Retried that
	// it tries again.
	Retrying(RetryNotice)
	Retried()
}

// RetryNotice says why and how long an upload waits.
type RetryNotice struct {
	Attempt int           // consecutive failures so far without progress
	Wait    time.Duration // before the next try (0 after a wake)
	Reason  string        // what failed
	Woke    bool          // the machine woke from sleep: asking the session at once
	Held    bool          // held by the system (Reason says why) until it lets go: no retry burnt
	// Status is the HTTP status of the answer that failed (a 5xx, a 429),
	// so a front end can word the wait by its cause; 0 when no answer came
	// (the connection failed) or the failure was not one.
	Status int
}

// statusOf is the HTTP status of the server's refusal in err, or 0.
func statusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

// PaceSink is a Sink that is also told the pace of the server's
// confirmations, after each one (Since is 0 then).
type PaceSink interface {
	Sink
	Paced(Pace)
}

type nopSink struct{}

func (nopSink) Checkpoint(Cursor, bool) error { return nil }
func (nopSink) Progress(int64, float64)       {}
func (nopSink) Retrying(RetryNotice)          {}
func (nopSink) Retried()                      {}

// withDefaults fills the zero values. The client is copied: a 308 means
// "resume incomplete" here, never a redirect.
func (u Uploader) withDefaults() *Uploader {
	if u.prepared {
		return &u
	}
	u.prepared = true
	if u.Clock == nil {
		u.Clock = SystemClock()
	}
	if u.Retry.Base == 0 {
		u.Retry.Base = DefaultRetryBase
	}
	switch {
	case u.Retry.MaxRetries == 0:
		u.Retry.MaxRetries = DefaultMaxRetries
	case u.Retry.MaxRetries < 0:
		u.Retry.MaxRetries = -1
	}
	if u.Stall <= 0 {
		u.Stall = DefaultStallTimeout
	}
	u.MinSpeed = u.MinSpeed.withDefaults()
	if u.SessionTTL <= 0 {
		u.SessionTTL = DefaultSessionTTL
	}
	if u.Client != nil {
		c := *u.Client
		u.Client = &c
	} else {
		u.Client = &http.Client{Transport: bulkTransport()}
	}
	u.Client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if u.Interrupt == nil {
		never := make(chan struct{})
		u.Interrupt = func() <-chan struct{} { return never }
	}
	if u.Held == nil {
		u.Held = func() (string, <-chan struct{}) { return "", nil }
	}
	return &u
}

// upload is one Upload call in progress.
type upload struct {
	u    *Uploader
	rec  *Record // the caller's copy; the upload writes only its Cursor
	sink Sink
	f    *os.File

	quoted [][]byte // the results a call's body quotes (Work.Quoted)

	failures  int          // consecutive failures without progress: the n of the backoff
	restarts  int          // consecutive sessions lost without progress
	refreshed bool         // the token was refreshed since the last success
	best      int64        // highest offset confirmed on the current session in this call
	sent      int64        // bytes of the file handed to the transport, at the current position
	moved     int64        // bytes handed to the transport in this call, resends included: for the rate
	rate      rateMeter    // of bytes written to the connection
	conf      confirmMeter // of bytes the server confirmed
	// progMu guards what progress reports read and write: the
	// transport's goroutine reports as it reads the body, and trail's
	// goroutine reports what the throttle held back.
	progMu    sync.Mutex
	lastEmit  time.Duration
	heldBack  bool          // a report was throttled and not made since
	chunks    chunkSizer    // the length of the next chunk
	pace      pacer         // how fast a chunk's body is written (pacer.go)
	chunkTook time.Duration // the last chunk's request, first byte to answer
	cutAfter  int64         // body bytes the last chunk handed the transport before it failed
	quickAt   int64         // best when the session was last asked at once after a cut; -1: never
	asked     int           // status queries in a row that got no answer for a network reason, asked again quickly

	// The running sums of the file's bytes as they go out (checksum.go):
	// the source check's (sha: the SHA-256, or Record.SourceSum's; nil
	// when the caller gave the SHA-256 or the target's sums stand for it)
	// and the sums the target checks (nil when none). The transport's
	// goroutine feeds them, hence the lock.
	hashMu sync.Mutex
	sha    *sumGroup
	extra  *sumGroup
	late   []byte // the SHA-256 the end read for the target (lateSHA256)
}

// Upload runs the upload to its end: the server's final answer, or an
// error. When ctx is cancelled the error is ctx's cause.
func (u *Uploader) Upload(ctx context.Context, w Work) (*Response, error) {
	u = u.withDefaults()
	rec := w.Record
	ctx = withAccount(ctx, rec.Account)
	up := &upload{u: u, rec: &rec, sink: w.Sink, quickAt: -1, quoted: w.Quoted}
	if len(w.Quoted) != len(rec.Quote) {
		return nil, &permanent{fmt.Errorf("the call quotes %d jobs' results but was given %d", len(rec.Quote), len(w.Quoted))}
	}
	if up.sink == nil {
		up.sink = nopSink{}
	}
	if rec.Type != Resumable && rec.Type != Call && rec.Sent && !w.Resend {
		return nil, &permanent{fmt.Errorf("%w: this %s upload was interrupted after its bytes went out, and it cannot be asked whether it arrived, so it was not sent again (that could make a duplicate)", ErrMaybeSent, rec.Type)}
	}
	if err := up.openSource(ctx); err != nil {
		return nil, err
	}
	defer up.f.Close()
	up.best = rec.Confirmed
	up.sent = rec.Confirmed
	up.progress(true)
	var resp *Response
	var err error
	if rec.Type == Resumable {
		resp, err = up.resumable(ctx)
	} else {
		resp, err = up.oneShot(ctx)
	}
	if err != nil {
		return nil, up.judged(ctx, err)
	}
	// What the server reports of the bytes it holds, against the file.
	if resp.Verified, err = up.verify(ctx, resp); err != nil {
		return nil, err
	}
	up.sent = rec.Size
	up.progress(true)
	// The end, with the file's SHA-256 once every byte went through the
	// hash. Kept lazily: the caller records the end itself.
	sum := up.fileSum()
	_ = up.keep(false, func(c *Cursor) {
		c.Confirmed = rec.Size
		if sum != "" {
			c.SHA256, c.Hashed, c.HashState = sum, rec.Size, nil
		}
		c.Summed, c.SumState = 0, nil
	})
	return resp, nil
}

// judged is err, or the sign-in the Authorizer says a refusal needs
// (RefusalJudge): such a job waits for a sign-in rather than fail.
func (up *upload) judged(ctx context.Context, err error) error {
	j, ok := up.u.Auth.(RefusalJudge)
	var ae *APIError
	if !ok || !errors.As(err, &ae) || ctx.Err() != nil {
		return err
	}
	if signIn := j.SignInNeeded(ctx, up.rec.URL, ae); signIn != nil {
		return signIn
	}
	return err
}

// keep records a change of the cursor through the sink.
func (up *upload) keep(durable bool, change func(c *Cursor)) error {
	c := up.rec.cursor()
	change(&c)
	if err := up.sink.Checkpoint(c, durable); err != nil {
		return err
	}
	up.rec.setCursor(c)
	return nil
}

// confirm records an offset the server reported; moving forward is
// progress, which resets the backoff.
func (up *upload) confirm(off int64) error {
	if off > up.rec.Size {
		return &permanent{fmt.Errorf("the server claims to store %d bytes of a %d-byte file; it cannot be trusted with this upload", off, up.rec.Size)}
	}
	if off > up.best {
		up.best = off
		up.failures = 0
		up.restarts = 0
	}
	up.sent = off
	up.confirmed(off)
	var sums Cursor
	up.sumState(&sums)
	if off != up.rec.Confirmed || up.sha != nil && sums.Hashed != up.rec.Hashed || up.extra != nil && sums.Summed != up.rec.Summed {
		if err := up.keep(false, func(c *Cursor) {
			c.Confirmed = off
			if up.sha != nil {
				c.Hashed, c.HashState = sums.Hashed, sums.HashState
			}
			if up.extra != nil {
				c.Summed, c.SumState = sums.Summed, sums.SumState
			}
		}); err != nil {
			return err
		}
	}
	up.progress(true)
	return nil
}

// confirmed measures the pace of confirmations with one more, at off,
// and tells the sink.
func (up *upload) confirmed(off int64) {
	now := up.u.Clock.Elapsed()
	up.conf.add(now, off)
	if ps, ok := up.sink.(PaceSink); ok {
		ps.Paced(up.conf.estimate(up.rec.Size).pace(now))
	}
}

// progressEvery throttles progress reports of one upload.
const progressEvery = 100 * time.Millisecond

// sentTo notes that the transport has read the file up to off.
func (up *upload) sentTo(off int64) {
	up.progMu.Lock()
	defer up.progMu.Unlock()
	if off > up.sent {
		up.moved += off - up.sent
	}
	up.sent = off
	up.report(false)
}

// progress reports, at most every progressEvery unless forced (a
// confirmation is always worth showing).
func (up *upload) progress(force bool) {
	up.progMu.Lock()
	defer up.progMu.Unlock()
	up.report(force)
}

func (up *upload) report(force bool) {
	now := up.u.Clock.Elapsed()
	rate := up.rate.add(now, up.moved)
	if !force && now-up.lastEmit < progressEvery {
		up.heldBack = true
		return
	}
	up.lastEmit, up.heldBack = now, false
	up.sink.Progress(up.sent, rate)
}

// trail makes the report the throttle held back once its time comes,
// while a request body is out. The kernel's buffers and a proxy swallow a
// chunk's bytes in a burst and then the reads stop: without it, the last
// burst would be shown only when the answer came, seconds later.
func (up *upload) trail() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		// Real time paces it, not the uploader's Clock: it only decides
		// when to look, and a test's injected clock must not see its
		// timers among the waits it counts.
		tk := time.NewTicker(progressEvery)
		defer tk.Stop()
		for {
			select {
			case <-tk.C:
				up.progMu.Lock()
				if up.heldBack {
					up.report(false)
				}
				up.progMu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func (up *upload) refresh(ctx context.Context, cause error) error {
	if up.refreshed || up.u.Auth == nil {
		return &permanent{fmt.Errorf("%w even after a refresh: %w", ErrSignIn, cause)}
	}
	up.refreshed = true
	if err := up.u.Auth.Refresh(ctx); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return &permanent{fmt.Errorf("%w (%v) and they could not be refreshed: %w", ErrSignIn, cause, err)}
	}
	return nil
}

// backoff waits base*2^n + random(0..base) after a failure without
// progress, or gives up when n passed MaxRetries. A wake cuts the wait.
func (up *upload) backoff(ctx context.Context, cause error) error {
	u := up.u
	if held, err := up.waitHeld(ctx); held || err != nil {
		return err // the failure came of the hold: it counts for nothing
	}
	woke := errors.Is(cause, errWoke)
	if !woke && up.failures > u.Retry.MaxRetries {
		if fe := (*finishError)(nil); errors.As(cause, &fe) {
			return fmt.Errorf("%w: the server said the upload finished but, in %d tries, never answered with the uploaded resource; the session is kept, so trying again asks it once more: %w", ErrMaybeSent, up.failures, cause)
		}
		return fmt.Errorf("%w: gave up after %d tries in a row without progress; the session is kept: %w", ErrGaveUp, up.failures, cause)
	}
	wait := time.Duration(0)
	if !woke {
		wait = backoffWait(u.Retry.Base, up.failures)
		up.failures++
	}
	wake := u.Interrupt()
	t := u.Clock.NewTimer(wait)
	defer t.Stop()
	// Told after the timer exists, so whoever reacts finds the wait under way.
	up.sink.Retrying(RetryNotice{Attempt: up.failures, Wait: wait, Reason: cause.Error(), Woke: woke, Status: statusOf(cause)})
	defer up.sink.Retried()
	select {
	case <-t.C():
	case <-wake:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// authorize adds credentials; session requests get them only when the
// session lives on the target's own host.
func (up *upload) authorize(ctx context.Context, req *http.Request, target bool) error {
	if up.u.Auth == nil || (!target && !sameOrigin(up.rec.URL, up.rec.Session)) {
		return nil
	}
	if err := up.u.Auth.Authorize(ctx, req); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return &permanent{&credentialsError{err}}
	}
	return nil
}

// waitHeld waits while the system holds requests back (asleep, offline),
// telling so; it reports whether it waited.
func (up *upload) waitHeld(ctx context.Context) (bool, error) {
	reason, released := up.u.Held()
	if reason == "" {
		return false, nil
	}
	told := reason
	up.sink.Retrying(RetryNotice{Attempt: up.failures, Reason: reason, Held: true})
	defer func() { up.sink.Retried() }()
	for reason != "" {
		if reason != told { // held on for another reason: say so
			up.sink.Retried()
			up.sink.Retrying(RetryNotice{Attempt: up.failures, Reason: reason, Held: true})
			told = reason
		}
		select {
		case <-released:
		case <-ctx.Done():
			return true, context.Cause(ctx)
		}
		reason, released = up.u.Held()
	}
	return true, nil
}
