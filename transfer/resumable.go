package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxRestarts bounds sessions lost in a row without progress.
const maxRestarts = 3

// resumable is the session loop of PROTOCOL.md section 4: start a session,
// send chunks from where the server says it stands, and after any doubt
// ask it (a status query) before sending more.
func (up *upload) resumable(ctx context.Context) (*Response, error) {
	rec := up.rec
	needStatus := rec.Session != "" // a session from before: where it stands is unknown
	offset := rec.Confirmed
	kept := 0 // chunk answers in a row that kept none of the bytes sent
	for {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		if held, err := up.waitHeld(ctx); err != nil {
			return nil, err
		} else if held {
			needStatus = rec.Session != "" // the world may have moved meanwhile
		}
		var (
			s    step
			next int64
			resp *Response
			err  error
		)
		switch {
		case rec.Session == "" && up.startsLater():
			// A session Google keeps a week would not last until SendAt:
			// nothing is opened yet, and the upload starts ScheduleLead
			// before the time.
			return nil, fmt.Errorf("%w (its upload starts %s)", ErrStartsLater, rec.DueAt().Format(time.RFC3339))
		case rec.Session == "":
			s = stepStart
			if err = up.initiate(ctx); err == nil {
				offset, up.best, up.sent, needStatus = 0, 0, 0, false
				up.confirmed(0) // a new session holds nothing: the pace's start
				continue
			}
			if errors.Is(err, errAlreadyMade) {
				s = stepStatus
				resp, err = up.existing(ctx)
			}
		case needStatus || up.expired():
			s = stepStatus
			next, resp, err = up.status(ctx)
			if err == nil && resp == nil {
				if up.expired() {
					// Unfinished and past its week: a new session is safer
					// than one the server may drop mid-way. The old one is
					// never sent to again, so it cannot complete.
					if err := up.dropSession("the upload session is older than its lifetime"); err != nil {
						return nil, err
					}
					continue
				}
				needStatus = false
				offset = next
				err = up.confirm(next)
			}
		case up.holdsLast() && offset >= up.lastFrom():
			// Every byte but the last request's is with the server: the
			// last wait for SendAt, and so does the message.
			return nil, fmt.Errorf("%w (until %s)", ErrScheduled, rec.SendAt.Format(time.RFC3339))
		default:
			s = stepChunk
			from := offset
			next, resp, err = up.chunk(ctx, offset)
			if err == nil && resp == nil {
				offset = next
				err = up.confirm(next)
				if err == nil && next > from {
					kept = 0
					up.chunks.took(next-from, up.chunkTook, rec.ChunkSize)
					up.pace.took(next - from)
				} else if err == nil {
					// Bytes went and the server kept none. A server may drop
					// a chunk, so once is sent again at once; again and again
					// is a failure like any other (backoff, counted), or it
					// would be a hot loop.
					if kept++; kept > 1 {
						err = &protocolError{fmt.Sprintf("the server kept none of the bytes sent from offset %d (it says it holds %d of %d)", from, next, rec.Size)}
					}
				}
			}
		}
		if resp != nil {
			return resp, nil
		}
		if err == nil {
			up.refreshed = false
			up.asked = 0
			continue
		}
		if ctx.Err() != nil {
			if s == stepChunk {
				up.askOnStop(ctx)
			}
			return nil, context.Cause(ctx)
		}
		switch decide(s, err) {
		case verdictAsk:
			needStatus = true
		case verdictNewSession:
			up.restarts++
			if up.restarts > maxRestarts {
				return nil, fmt.Errorf("the server lost the upload session %d times in a row; giving up: %w", up.restarts, err)
			}
			if err := up.dropSession("the upload session is gone (expired or cancelled on the server)"); err != nil {
				return nil, err
			}
		case verdictRefresh:
			if err := up.refresh(ctx, err); err != nil {
				return nil, err
			}
			needStatus = rec.Session != ""
		case verdictBackoffAsk, verdictRetry:
			needStatus = needStatus || s == stepChunk
			if s == stepStatus && up.mayAskAgain(err) {
				if err := up.askAgain(ctx, err); err != nil {
					return nil, err
				}
				continue
			}
			up.asked = 0
			if s == stepChunk && up.mayAskAtOnce(err) {
				if err := up.quickAsk(ctx, err); err != nil {
					return nil, err
				}
				continue
			}
			if err := up.backoff(ctx, err); err != nil {
				return nil, err
			}
		default:
			if s == stepStart && classify(err) == classGone {
				return nil, fmt.Errorf("the upload URI %s was not found: %w", targetWhere(rec.URL), err)
			}
			return nil, err
		}
	}
}

// ErrScheduled ends an upload whose last bytes wait for Record.SendAt:
// the server holds every byte but the last request's, in a session the
// record keeps, and nothing exists there until they go. The Queue moves
// the job to StateScheduled and sends it on at SendAt; a program using
// the Uploader alone calls Upload again then.
var ErrScheduled = errors.New("every byte but the last is with the server; the last wait for their time")

// ErrStartsLater ends an upload whose SendAt is further ahead than
// ScheduleLead before anything is sent: its session, which Google keeps a
// week, would expire before the time. The Queue moves the job to
// StateScheduled (the move "defer") and starts it at Record.DueAt.
var ErrStartsLater = errors.New("the upload starts closer to its time, so its session lasts until then")

// ScheduleLead is how long before its SendAt a held upload opens its
// session when the time is further ahead: Google forgets an unfinished
// session after a week (docs/PROTOCOL.md 4.1), and the day left over
// covers the upload itself and a laptop asleep at the start.
const ScheduleLead = 6 * 24 * time.Hour

// startsLater reports whether the upload must not open its session yet:
// its SendAt is more than ScheduleLead ahead.
func (up *upload) startsLater() bool {
	at := up.rec.SendAt
	return !at.IsZero() && up.u.Clock.Now().Before(at.Add(-ScheduleLead))
}

// holdsLast reports whether the request carrying the file's last bytes
// must wait: Record.SendAt is still ahead.
func (up *upload) holdsLast() bool {
	at := up.rec.SendAt
	return !at.IsZero() && up.u.Clock.Now().Before(at)
}

// lastFrom is where the request that finishes the upload starts while its
// bytes are held back: the file's last partial quantum, or its last whole
// one (every chunk but the last must be a multiple of the quantum), so
// what goes ahead is all a session takes short of finishing. A file of at
// most one quantum holds back the whole of it (a small message: only its
// session goes ahead).
func (up *upload) lastFrom() int64 {
	size := up.rec.Size
	if size == 0 {
		return 0
	}
	q := int64(ChunkQuantum)
	if up.rec.googUpload() {
		q = up.granularity()
	}
	return size - ((size-1)%q + 1)
}

// sendTo is how far the next chunk may reach: the file's end, or where
// the held-back last bytes begin.
func (up *upload) sendTo() int64 {
	if up.holdsLast() {
		return up.lastFrom()
	}
	return up.rec.Size
}

func (up *upload) expired() bool {
	rec := up.rec
	return rec.Session != "" && up.u.Clock.Now().Round(0).Sub(rec.SessionStarted.Round(0)) >= up.u.SessionTTL
}

func (up *upload) dropSession(why string) error {
	up.sink.Retrying(RetryNotice{Attempt: up.failures, Reason: why + "; starting a new one"})
	up.sink.Retried()
	up.best, up.sent = 0, 0
	return up.keep(true, func(c *Cursor) {
		c.Session = ""
		c.SessionStarted = time.Time{}
		c.Granularity = 0
		c.Confirmed = 0
	})
}

// initiate starts a session and records its URI before any byte is sent.
func (up *upload) initiate(ctx context.Context) error {
	rec := up.rec
	if rec.googUpload() {
		return up.googStart(ctx)
	}
	target, err := withUploadType(rec.URL, Resumable)
	if err != nil {
		return &permanent{err}
	}
	var body io.Reader = http.NoBody
	if len(rec.Metadata) > 0 {
		body = bytes.NewReader(rec.Metadata)
	}
	req, err := http.NewRequest(rec.Method, target, body)
	if err != nil {
		return &permanent{fmt.Errorf("cannot build the request: %w", err)}
	}
	if len(rec.Metadata) > 0 {
		req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	}
	req.Header.Set("X-Upload-Content-Type", rec.ContentType)
	req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(rec.Size, 10))
	if err := up.authorize(ctx, req, true); err != nil {
		return err
	}
	a, err := up.exchange(ctx, req, "start the upload session", targetWhere(rec.URL), nil)
	if err != nil {
		return err
	}
	if a.status/100 != 2 {
		if a.status == http.StatusConflict && rec.Existing != "" {
			return errAlreadyMade
		}
		if a.status == http.StatusPermanentRedirect {
			return &protocolError{"the server answered 308 to the start of a session"}
		}
		return parseAPIError(a.status, a.body)
	}
	loc := a.header.Get("Location")
	if loc == "" {
		return &permanent{errors.New("the server started no upload session (no Location in its answer); is the URI an upload URI (/upload/...)?")}
	}
	base, _ := url.Parse(target)
	lu, err := base.Parse(loc)
	if err != nil || (lu.Scheme != "http" && lu.Scheme != "https") {
		return &permanent{errors.New("the server's session URI is not a usable http(s) URI")}
	}
	if base.Scheme == "https" && lu.Scheme != "https" {
		// The file would leave in the clear, and the session URI with it.
		return &permanent{errors.New("the server answered an https upload with a session URI that is not https; nothing was sent")}
	}
	now := up.u.Clock.Now().Round(0)
	return up.keep(true, func(c *Cursor) {
		c.Session = lu.String()
		c.SessionStarted = now
		c.Confirmed = 0
	})
}

// errAlreadyMade says the start of a session was refused because the
// resource its metadata names exists (409, with Record.Existing set).
var errAlreadyMade = errors.New("the resource exists already")

// existing reads the resource an earlier attempt made, as the answer
// that finishes the upload: checked against the file's size here, and
// against its checksums by verify after.
func (up *upload) existing(ctx context.Context) (*Response, error) {
	rec := up.rec
	req, err := http.NewRequest(http.MethodGet, rec.Existing, http.NoBody)
	if err != nil {
		return nil, &permanent{errors.New("the existing resource's URI is unusable")}
	}
	if err := up.authorize(ctx, req, true); err != nil {
		return nil, err
	}
	a, err := up.exchange(ctx, req, "read the file an earlier attempt made", targetWhere(rec.Existing), nil)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK {
		return nil, parseAPIError(a.status, a.body)
	}
	if err := checkResource(a, rec.Size); err != nil {
		return nil, &permanent{fmt.Errorf("%w: the server says it holds this upload already, but what it holds is %w", ErrNotVerified, err)}
	}
	return finalResponse(a), nil
}

// status asks the session where it stands: the offset it stores, or the
// final resource when the upload already completed.
func (up *upload) status(ctx context.Context) (int64, *Response, error) {
	rec := up.rec
	if rec.googUpload() {
		return up.googQuery(ctx)
	}
	req, err := http.NewRequest(http.MethodPut, rec.Session, http.NoBody)
	if err != nil {
		return 0, nil, &permanent{errors.New("the recorded session URI is unusable")}
	}
	req.ContentLength = 0
	req.Header.Set("Content-Range", "bytes */"+strconv.FormatInt(rec.Size, 10))
	if err := up.authorize(ctx, req, false); err != nil {
		return 0, nil, err
	}
	a, err := up.exchange(ctx, req, "ask where the upload stands", sessionWhere(rec.Session), nil)
	if err != nil {
		return 0, nil, err
	}
	return up.sessionAnswer(a)
}

// chunk sends the bytes from off, up to one chunk, straight from the file.
func (up *upload) chunk(ctx context.Context, off int64) (int64, *Response, error) {
	rec := up.rec
	if err := up.checkUnchanged(up.f); err != nil {
		return 0, nil, err
	}
	// Bytes a process before this one sent go into the running sums
	// first, so they reach the end.
	if err := up.catchUp(ctx, off); err != nil {
		return 0, nil, err
	}
	if rec.googUpload() {
		return up.googChunk(ctx, off)
	}
	up.cutAfter = 0
	n := min(up.chunks.size(rec.ChunkSize), up.sendTo()-off)
	var cr, sums string
	var body *progressBody
	var rb io.Reader = http.NoBody
	var last []byte
	if up.extra != nil && n > 0 && off+n == rec.Size {
		// The last request states the file's sums, so they must be known
		// before it goes: it carries at most one quantum, read once into
		// memory through the sums, and the bytes before go on their own.
		tail := (n-1)%ChunkQuantum + 1
		if n > tail {
			n -= tail
		} else {
			last = make([]byte, n)
			if _, err := io.ReadFull(up.source(off, n), last); err != nil {
				return 0, nil, readError(err)
			}
			sums = up.goog()
		}
	}
	switch {
	case n <= 0:
		// Nothing left to send (an empty file, or every byte stored but
		// not yet finalized): state the total to finish.
		cr = "bytes */" + strconv.FormatInt(rec.Size, 10)
		n = 0
		sums = up.goog()
	default:
		cr = fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, rec.Size)
		var src io.Reader
		if last != nil {
			src = bytes.NewReader(last)
		} else {
			src = up.source(off, n)
		}
		body = &progressBody{r: src, onRead: func(m int64) { up.sentTo(off + m) }}
		rb = body
	}
	req, err := http.NewRequest(http.MethodPut, rec.Session, rb)
	if err != nil {
		return 0, nil, &permanent{errors.New("the recorded session URI is unusable")}
	}
	req.ContentLength = n
	req.Header.Set("Content-Range", cr)
	if sums != "" {
		req.Header.Set("X-Goog-Hash", sums)
	}
	if err := up.authorize(ctx, req, false); err != nil {
		return 0, nil, err
	}
	a, err := up.sendChunk(ctx, req, body, off, "send bytes "+cr[len("bytes "):])
	if err != nil {
		return 0, nil, err
	}
	next, resp, err := up.sessionAnswer(a)
	if sums != "" && a.status == http.StatusBadRequest && strings.Contains(strings.ToLower(string(a.body)), "match") {
		// The sums the last request stated are the file's; a refusal of
		// them says the server holds other bytes.
		err = &permanent{fmt.Errorf("%w: the server refused the file's checksums (%s), so what it received is not the file: %w", ErrNotVerified, sums, err)}
	}
	return next, resp, err
}

// sendChunk sends a request to the session that carries the file's bytes
// from off in body (nil: none), telling how far they went and reached,
// and timing it for the chunk sizer. After a failure cutAfter says how
// many of the bytes went out.
func (up *upload) sendChunk(ctx context.Context, req *http.Request, body *progressBody, off int64, op string) (*answer, error) {
	up.sent = off
	xctx := ctx
	if as, ok := up.sink.(AckSink); ok && body != nil {
		// Where the system tells, how far the bytes reached the peer.
		tr := &ackTracker{}
		xctx = httptrace.WithClientTrace(ctx, tr.trace())
		inner := body.onRead
		body.onRead = func(m int64) {
			tr.written.Store(m)
			inner(m)
		}
		stop := tr.follow(off, as.Acked)
		defer func() {
			stop()
			if n, ok := tr.body(); ok {
				as.Acked(off + n)
			}
		}()
	}
	if body != nil {
		// Written at the pace the server confirmed the last chunks at
		// (pacer.go).
		up.pace.begin(req.ContentLength)
		body.pace = &up.pace
	}
	began := up.u.Clock.Elapsed()
	a, err := up.exchange(xctx, req, op, sessionWhere(up.rec.Session), body)
	if body != nil {
		up.pace.answered()
	}
	if err != nil {
		if body != nil {
			up.cutAfter = body.count()
		}
		return nil, err
	}
	up.chunkTook = up.u.Clock.Elapsed() - began
	return a, nil
}

// sessionAnswer reads an answer from a session URI: 308 with a Range (or
// none, meaning zero), or the final resource, which must be one.
func (up *upload) sessionAnswer(a *answer) (int64, *Response, error) {
	switch {
	case a.status == http.StatusPermanentRedirect:
		off, err := parseRange(a.header)
		if err != nil {
			return 0, nil, &protocolError{err.Error()}
		}
		return off, nil, nil
	case a.status == http.StatusOK || a.status == http.StatusCreated:
		if err := checkResource(a, up.rec.Size); err != nil {
			return 0, nil, err
		}
		return 0, finalResponse(a), nil
	default:
		return 0, nil, parseAPIError(a.status, a.body)
	}
}

// CancelSession deletes an upload's session on the server, so it can
// never complete; 499 is the documented answer, and a session already
// gone is as good.
func (u *Uploader) CancelSession(ctx context.Context, rec Record) error {
	if rec.Session == "" {
		return nil
	}
	up := &upload{u: u.withDefaults(), rec: &rec, sink: nopSink{}}
	if rec.googUpload() {
		return up.googCancel(ctx)
	}
	req, err := http.NewRequest(http.MethodDelete, rec.Session, http.NoBody)
	if err != nil {
		return nil
	}
	if err := up.authorize(ctx, req, false); err != nil && !errors.Is(err, ErrSignInNeeded) {
		return err
	}
	// A parked job's sign-in is dead: its DELETE goes with the session URI
	// alone, which is all Cloud Storage asks; a server that wants more
	// refuses, and the cancel says the server was not told.
	a, err := up.exchange(ctx, req, "cancel the upload session", sessionWhere(rec.Session), nil)
	if err != nil {
		return err
	}
	switch {
	case a.status == 499, a.status == http.StatusNotFound, a.status == http.StatusGone, a.status/100 == 2:
		return nil
	}
	return parseAPIError(a.status, a.body)
}

// The wait before asking a session where it stands after a cut: short,
// random so that uploads cut by one event do not ask in step.
const (
	quickAskMin = 50 * time.Millisecond
	quickAskMax = 250 * time.Millisecond
)

// mayAskAtOnce reports whether a failed chunk deserves a status query at
// once rather than after the backoff: the connection broke (not the
// server's refusal: a 5xx or 429 says it is busy, and backing off is what
// it asks) after some of the body went out, and the last such quick ask
// was followed by progress. A server that cuts every request without
// keeping a byte gets one quick ask, then the counted backoff, so the
// retry budget still ends the upload.
func (up *upload) mayAskAtOnce(err error) bool {
	var ne *NetError
	if !errors.As(err, &ne) || errors.Is(err, errWoke) || up.cutAfter <= 0 {
		return false
	}
	return up.best != up.quickAt
}

// quickAsk waits a short jitter before the status query that follows a
// cut; the failure is not counted (progress resets the count anyway, and
// if the server kept nothing, the next failure backs off).
func (up *upload) quickAsk(ctx context.Context, cause error) error {
	if held, err := up.waitHeld(ctx); held || err != nil {
		return err
	}
	up.quickAt = up.best
	wait := quickAskMin + time.Duration(mrand.Int64N(int64(quickAskMax-quickAskMin)+1))
	t := up.u.Clock.NewTimer(wait)
	defer t.Stop()
	up.sink.Retrying(RetryNotice{Attempt: up.failures, Wait: wait, Reason: cause.Error() + "; asking the server where the upload stands", Status: statusOf(cause)})
	defer up.sink.Retried()
	select {
	case <-t.C():
	case <-up.u.Interrupt():
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// A status query that got no answer for a network reason (refused,
// reset, a name not found, a timeout: not an HTTP answer) is asked again
// on its own short schedule, uncounted: after a cut the link is often
// still broken for a moment, and the upload's backoff (a second and
// more) would cost most of the time lost. askAgainBase doubles to
// askAgainCap, each wait jittered over its upper half; after
// askAgainTries such queries in a row the next failure backs off,
// counted, so a server that cannot be reached still ends the upload after
// MaxRetries. A 5xx or 429 answer backs off as ever.
const (
	askAgainBase  = 100 * time.Millisecond
	askAgainCap   = time.Second
	askAgainTries = 5
)

// mayAskAgain reports whether a failed status query is asked again on the
// short schedule.
func (up *upload) mayAskAgain(err error) bool {
	var ne *NetError
	if !errors.As(err, &ne) || errors.Is(err, errWoke) {
		return false
	}
	return up.asked < askAgainTries
}

// askAgainWait is the wait before the n-th quick query again (n from 0).
func askAgainWait(n int) time.Duration {
	w := askAgainBase
	for i := 0; i < n && w < askAgainCap; i++ {
		w *= 2
	}
	w = min(w, askAgainCap)
	return w/2 + time.Duration(mrand.Int64N(int64(w/2)+1))
}

// askAgain waits before a status query again after one got no answer;
// the failure is not counted.
func (up *upload) askAgain(ctx context.Context, cause error) error {
	if held, err := up.waitHeld(ctx); held || err != nil {
		return err
	}
	wait := askAgainWait(up.asked)
	up.asked++
	wake := up.u.Interrupt()
	t := up.u.Clock.NewTimer(wait)
	defer t.Stop()
	up.sink.Retrying(RetryNotice{Attempt: up.failures, Wait: wait, Reason: cause.Error() + "; asking the server again where the upload stands"})
	defer up.sink.Retried()
	select {
	case <-t.C():
	case <-wake:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// stopAsk bounds the status query after a stop: a pause or a closing
// queue waits that long at most for an answer.
const stopAsk = 2 * time.Second

// askOnStop asks the session where it stands when the caller stopped the
// upload (a pause, a metered hold, the queue closing) while a chunk was
// going out: the server kept what arrived, and the cursor, so the job's
// row while paused and after a restart, should say so rather than the
// last confirmation, which may be far behind (a 16 MiB chunk cut at
// 11.9 MiB leaves it at 0). Not for a cancel: the session is deleted.
func (up *upload) askOnStop(ctx context.Context) {
	if up.cutAfter <= 0 || errors.Is(context.Cause(ctx), errCancelling) {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopAsk)
	defer cancel()
	next, resp, err := up.status(sctx)
	if err == nil && resp == nil && next > up.rec.Confirmed {
		_ = up.confirm(next) // a failure to keep it only leaves the older offset
	}
}
