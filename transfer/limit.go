package transfer

import (
	"sync"
	"time"
)

// Limiter caps the bytes per second every upload sharing it sends, all
// together: a token bucket the request bodies draw from as the transport
// reads them. It never aborts a request; a body simply reads slower. The
// rate may change at any time and reaches reads in flight within
// limitTick. A nil *Limiter, or a rate of 0, limits nothing.
//
// Each read reserves its bytes in turn (a queue of debts, not a race for
// tokens), so uploads sharing a limit get about equal shares and the sum
// never runs ahead of the rate by more than one piece each.
type Limiter struct {
	clock Clock

	mu      sync.Mutex
	rate    int64         // bytes per second; 0: unlimited
	owed    float64       // bytes reserved since the start
	paid    float64       // bytes the rate has released since the start
	last    time.Duration // clock.Elapsed at the last refill
	changed chan struct{} // closed and replaced when the rate changes
}

// limitTick bounds every wait in the limiter, so a change of rate, a
// cancelled request and the stall watchdog are seen that often at least.
const limitTick = 100 * time.Millisecond

// NewLimiter limits to bytesPerSec (0: unlimited), timed by clock (nil:
// the system clock).
func NewLimiter(bytesPerSec int64, clock Clock) *Limiter {
	if clock == nil {
		clock = SystemClock()
	}
	l := &Limiter{clock: clock, changed: make(chan struct{}), last: clock.Elapsed()}
	l.SetRate(bytesPerSec)
	return l
}

// SetRate changes the limit; 0 (or less) removes it. Reads waiting under
// the old rate go on at the new one.
func (l *Limiter) SetRate(bytesPerSec int64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refillLocked()
	l.rate = max(bytesPerSec, 0)
	if l.rate == 0 {
		l.paid = l.owed // nothing is owed to no limit
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// Rate is the limit in bytes per second; 0: unlimited.
func (l *Limiter) Rate() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate
}

// piece is the most one read may take at rate r: a tenth of a second's
// worth, so the rate is smooth and waits short, between 256 bytes and
// 64 KiB.
func piece(r int64) int {
	return int(min(max(r/10, 256), 64<<10))
}

// refillLocked credits the time since the last refill at the rate. What
// an idle limit would store is capped at one piece, so a pause is not
// followed by a burst.
func (l *Limiter) refillLocked() {
	now := l.clock.Elapsed()
	dt := now - l.last
	l.last = now
	if l.rate == 0 {
		l.paid = l.owed
		return
	}
	if dt > 0 {
		l.paid += float64(l.rate) * dt.Seconds()
	}
	if most := l.owed + float64(piece(l.rate)); l.paid > most {
		l.paid = most
	}
}

// take reserves up to n bytes (n > 0) and waits until the rate released
// them. tick is called at least every limitTick while it waits (the
// stall watchdog: bytes held back by the limit are not a stall); stop
// ends the wait with errBodyClosed. waited reports whether it had to wait.
func (l *Limiter) take(n int, stop <-chan struct{}, tick func()) (granted int, waited bool, err error) {
	if l == nil {
		return n, false, nil
	}
	l.mu.Lock()
	l.refillLocked()
	if l.rate == 0 {
		l.mu.Unlock()
		return n, false, nil
	}
	granted = min(n, piece(l.rate))
	l.owed += float64(granted)
	ticket := l.owed
	for {
		l.refillLocked()
		if l.rate == 0 || l.paid >= ticket {
			l.mu.Unlock()
			return granted, waited, nil
		}
		wait := time.Duration((ticket - l.paid) / float64(l.rate) * float64(time.Second))
		wait = min(max(wait, time.Millisecond), limitTick)
		changed := l.changed
		l.mu.Unlock()
		waited = true
		if tick != nil {
			tick()
		}
		t := l.clock.NewTimer(wait)
		select {
		case <-t.C():
		case <-changed:
			t.Stop()
		case <-stop:
			t.Stop()
			l.refund(granted)
			return 0, true, errBodyClosed
		}
		l.mu.Lock()
	}
}

// refund gives back bytes reserved but not sent, so the uploads after
// them need not wait for them.
func (l *Limiter) refund(n int) {
	if l == nil || n <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rate != 0 {
		// Released as if the rate had paid them: every reservation
		// after them comes due that much sooner.
		l.paid = min(l.paid+float64(n), l.owed+float64(piece(l.rate)))
	}
}
