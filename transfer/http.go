package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Causes given to a request's context when the engine abandons it.
var (
	errStalled error = &abandonedError{"no progress within the stall timeout"}
	errWoke    error = &abandonedError{"the system woke from sleep or its network changed"}
)

// answer is a server's reply with its body read.
type answer struct {
	status int // with X-HTTP-Status-Code-Override applied
	header http.Header
	body   []byte
}

// maxAnswerBody bounds the final resource read into memory and the journal.
const maxAnswerBody = 8 << 20

// progressBody is a request body that reports each read, so the stall
// watchdog and progress events see bytes leave. It never reads a whole
// chunk: the transport pulls it through its own small buffer. Under a
// bandwidth limit it reads one small piece at a time, each when the limit
// allows it.
type progressBody struct {
	r      io.Reader
	mu     sync.Mutex
	n      int64
	closed bool
	onRead func(total int64) // called with the body bytes read so far

	pace *pacer // the upload's pacing (pacer.go); nil: none

	// Set by exchange before the request goes.
	limit     *Limiter
	stop      <-chan struct{} // the request ended: waits in the limiter end
	tick      func()          // the watchdog, told while the limit holds bytes back
	throttled atomic.Int64    // Clock.Elapsed+1 when the limit last held bytes back; 0: never
	clock     Clock
}

var errBodyClosed = errors.New("request body read after the request ended")

func (b *progressBody) Read(p []byte) (int, error) {
	granted, err := b.grant(len(p))
	if err != nil {
		return 0, err
	}
	n, err := b.r.Read(p[:granted])
	if rerr := b.report(granted, n); rerr != nil {
		return 0, rerr
	}
	return n, err
}

// sendTo is the bulk path of a body that is a range of the file
// (bulkConn.ReadFrom): up to max bytes, in bulkSend pieces each granted by
// the limit, sent from the file itself where the system can (sendFile).
// Each byte that leaves is counted as it leaves, so a large piece on a
// slow link still shows progress. handled is false for any other body:
// the caller copies it.
func (b *progressBody) sendTo(c *net.TCPConn, max int64) (sent int64, handled bool, err error) {
	t, ok := b.r.(*hashTee)
	if !ok {
		return 0, false, nil
	}
	bp := bulkBufs.Get().(*[]byte)
	defer bulkBufs.Put(bp)
	for sent < max {
		want := int(min(bulkSend, max-sent, t.left()))
		if want == 0 {
			return sent, true, nil
		}
		granted, err := b.grant(want)
		if err != nil {
			return sent, true, err
		}
		if b.isClosed() {
			b.limit.refund(granted)
			b.pace.gone(granted, 0)
			return sent, true, errBodyClosed
		}
		n, err := t.send(c, granted, *bp, b.advance)
		sent += int64(n)
		b.limit.refund(granted - n)
		b.pace.gone(granted, n)
		if err != nil {
			return sent, true, err
		}
		if n == 0 {
			return sent, true, io.ErrNoProgress
		}
	}
	return sent, true, nil
}

// grant is how many of want bytes the pace and the bandwidth limit let go
// now.
func (b *progressBody) grant(want int) (int, error) {
	if want == 0 {
		return 0, nil
	}
	if b.pace != nil {
		g, err := b.pace.take(want, b.stop, b.tick)
		if err != nil {
			return 0, err
		}
		want = g
	}
	if b.limit == nil {
		return want, nil
	}
	g, waited, err := b.limit.take(want, b.stop, b.tick)
	if err != nil {
		b.pace.gone(want, 0)
		return 0, err
	}
	if g < want {
		b.pace.gone(want-g, 0) // the limit's piece is smaller: the rest is the pace's again
	}
	if waited && b.clock != nil {
		b.throttled.Store(int64(b.clock.Elapsed()) + 1)
	}
	return g, nil
}

// report counts n bytes gone of the granted ones, giving the rest back to
// the limit.
func (b *progressBody) report(granted, n int) error {
	if n < granted {
		b.limit.refund(granted - n)
	}
	b.pace.gone(granted, n)
	return b.advance(n)
}

// advance counts n more bytes gone.
func (b *progressBody) advance(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		// The transport may read on after RoundTrip returned; once the
		// engine has moved on, those reads must not report progress.
		return errBodyClosed
	}
	if n > 0 {
		b.n += int64(n)
		if b.onRead != nil {
			b.onRead(b.n)
		}
	}
	return nil
}

func (b *progressBody) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func (b *progressBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

func (b *progressBody) count() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// watchdog abandons a request that makes no progress for the stall
// timeout, or when the machine wakes.
type watchdog struct {
	clock Clock
	last  atomic.Int64 // Clock.Elapsed at the last sign of life
	speed *speedRule   // nil: no body to hold to a minimum speed
}

func (w *watchdog) touch() { w.last.Store(int64(w.clock.Elapsed())) }

func (w *watchdog) run(stall time.Duration, wake <-chan struct{}, done <-chan struct{}, abandon context.CancelCauseFunc) {
	// The speed rule samples from the start, on ticks counted from it: a
	// tick handled late does not push the later ones back, so a trickle is
	// caught within a window and a tick however busy the machine is.
	start := w.clock.Elapsed()
	if w.speed != nil {
		w.speed.broken(start)
	}
	for {
		now := w.clock.Elapsed()
		idle := now - time.Duration(w.last.Load())
		wait := stall - idle
		if w.speed != nil {
			every := w.speed.every()
			wait = min(wait, every-(now-start)%every)
		}
		t := w.clock.NewTimer(wait)
		select {
		case <-t.C():
			now := w.clock.Elapsed()
			if now-time.Duration(w.last.Load()) >= stall {
				abandon(errStalled)
				return
			}
			if w.speed.broken(now) {
				abandon(tooSlow(w.speed.rule))
				return
			}
		case <-wake:
			t.Stop()
			abandon(errWoke)
			return
		case <-done:
			t.Stop()
			return
		}
	}
}

// touchReader reports reads of a response body to the watchdog.
type touchReader struct {
	r io.Reader
	w *watchdog
}

func (t touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.w.touch()
	}
	return n, err
}

// exchange sends req and reads the answer, under the stall watchdog. op and
// where name the request in errors (never the URI itself). A transport
// failure comes back as *NetError; the parent context's own cancellation
// comes back as its cause.
func (up *upload) exchange(ctx context.Context, req *http.Request, op, where string, body *progressBody) (*answer, error) {
	u := up.u
	sentAt := paceClock.Elapsed()
	w := &watchdog{clock: u.Clock}
	if body != nil && !u.MinSpeed.off() && req.ContentLength > 0 {
		w.speed = &speedRule{rule: u.MinSpeed, body: body, length: req.ContentLength}
	}
	w.touch()
	reqCtx, abandon := context.WithCancelCause(ctx)
	defer abandon(nil)
	done := make(chan struct{})
	watched := make(chan struct{})
	// Taken here, before the request goes out: a wake fired before the
	// watchdog's goroutine first runs must still reach it.
	wake := u.Interrupt()
	go func() {
		defer close(watched)
		w.run(u.Stall, wake, done, abandon)
	}()
	// The watches of the connection's path (deadpath.go), started as the
	// request gets one.
	var paths sync.WaitGroup
	defer func() {
		close(done)
		<-watched
		paths.Wait()
	}()
	if body != nil {
		body.limit, body.stop, body.tick, body.clock = u.Limit, reqCtx.Done(), w.touch, u.Clock
		inner := body.onRead
		body.onRead = func(n int64) {
			w.touch()
			if inner != nil {
				inner(n)
			}
		}
		defer body.Close()
		defer up.trail()()
	}
	// The connection is tied to the request while it is in flight, so
	// that abandoning the request resets it (engineConn); one whose answer
	// was read goes back to the pool untied, to be reused or closed
	// politely.
	var (
		tieMu   sync.Mutex
		release func()
	)
	untie := func() {
		tieMu.Lock()
		defer tieMu.Unlock()
		if release != nil {
			release()
			release = nil
		}
	}
	// While it is in flight, the connection's path is watched where the
	// system tells how far the peer acknowledged (deadpath.go).
	tied := httptrace.WithClientTrace(reqCtx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if ec := engineConnOf(i.Conn); ec != nil {
			tieMu.Lock()
			release = ec.carry(reqCtx)
			tieMu.Unlock()
		}
		if ec := pathOf(i.Conn); ec != nil {
			paths.Add(1)
			go func() {
				defer paths.Done()
				watchPath(pathClock, ec.probe, done, ec.deadPathFound(abandon))
			}()
		}
	}})
	req = req.WithContext(tied)
	resp, err := u.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if c := context.Cause(reqCtx); c != nil && c != context.Canceled {
			err = c
		}
		return nil, netError(op, where, err)
	}
	defer resp.Body.Close()
	w.touch()
	limit := int64(maxAnswerBody)
	if resp.StatusCode >= 300 {
		limit = maxErrorBody
	}
	data, err := io.ReadAll(io.LimitReader(touchReader{resp.Body, w}, limit))
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if c := context.Cause(reqCtx); c != nil && c != context.Canceled {
			err = c
		}
		return nil, netError(op+" (reading the answer)", where, err)
	}
	untie()
	if body == nil {
		up.pace.roundTrip(paceClock.Elapsed() - sentAt)
	}
	a := &answer{status: resp.StatusCode, header: resp.Header, body: data}
	// The official client asks for 200 + override instead of 308; some
	// servers answer that way unasked. Both mean the same.
	if ov := resp.Header.Get("X-HTTP-Status-Code-Override"); ov != "" && resp.StatusCode == http.StatusOK {
		if code, err := strconv.Atoi(strings.TrimSpace(ov)); err == nil && code >= 100 && code <= 599 {
			a.status = code
		}
	}
	return a, nil
}

// parseRange reads the stored range of a 308: "bytes=0-N" or "0-N" gives
// N+1 bytes stored; no header means none.
func parseRange(h http.Header) (int64, error) {
	v := strings.TrimSpace(h.Get("Range"))
	if v == "" {
		return 0, nil
	}
	s := strings.TrimPrefix(v, "bytes=")
	first, last, ok := strings.Cut(s, "-")
	if !ok {
		return 0, fmt.Errorf("unreadable Range header %q in the server's answer", v)
	}
	a, err1 := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	b, err2 := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
	if err1 != nil || err2 != nil || a != 0 || b < 0 || b == 1<<63-1 {
		return 0, fmt.Errorf("unreadable Range header %q in the server's answer", v)
	}
	return b + 1, nil
}

// withUploadType sets the uploadType query parameter, keeping the others.
func withUploadType(raw string, t UploadType) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("the upload URI is not a valid URI")
	}
	q := u.Query()
	q.Set("uploadType", string(t))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// sameOrigin reports whether a session URI is on the target's host, where
// the token may be sent; a session elsewhere gets no credentials.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}
