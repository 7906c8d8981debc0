package transfer

import (
	"sync"
	"time"
)

// Pacing (issue 33). A chunk handed to the kernel at local speed does not
// reach the server faster: whatever the link cannot take yet waits in the
// socket's buffers and in any buffering middlebox on the way (a proxy, a
// router's queue), megabytes of it, and a reset throws all of that away,
// to be written again. So each chunk's body is written at the pace the
// server confirmed the last ones at, paceGain over it, and what is in
// flight stays near the bandwidth-delay product: the link stays full
// (the pace is above its rate), and a reset costs little more than what
// was on the wire.
//
// The pace follows the link up quickly: a chunk whose bytes all reached
// the server about as soon as they were written (the answer came one round
// trip after the last byte) was held back by the pace, not by the link,
// and the next one goes faster, by steps that grow while chunks keep up
// (paceProbes). A pace above paceFree, and the first chunk of an upload
// (nothing measured yet), are not paced at all: at such rates what a
// buffer holds is a fraction of a second's worth, and a fast link is never
// slowed by the pacing's own granularity. Through toxiproxy resetting
// every connection every 4 s (docs/PERFORMANCE.md), Carrier wrote 1.39
// times the file into the link unpaced, 1.02 times paced.
const (
	// The pace over the measured rate (the bytes a chunk's confirmation
	// kept over the request's time less a round trip): enough over it that
	// the link is never short of bytes and a chunk the pace held back is
	// told from one the link did (took), little enough that what waits in
	// buffers stays small.
	paceGain  = 1.05
	paceFree  = 64e6                  // bytes per second; faster is not paced
	paceSlice = 20 * time.Millisecond // what the pace may release at once
	// What a late wait may make up (refillLocked).
	paceCatchUp = 100 * time.Millisecond
	paceLeast   = 16 << 10 // the least burst, in bytes
	paceWait    = 100 * time.Millisecond
	// A chunk kept up with its pace when its answer came within this
	// share of its writing time (and paceSlack) after one round trip.
	paceKeptUp = 0.015
	paceSlack  = 15 * time.Millisecond
	// A chunk that took less than this beyond its round trip measures the
	// request's fixed costs more than the link (a busy machine's
	// scheduling, the server's commit): the next goes unpaced, and longer.
	paceMeasure = 100 * time.Millisecond
)

// paceClock times the pace: the body's bytes leave in real time, whatever
// clock the engine was given (a test's fake one moves only when told, and
// a body waiting on it would wait for ever). A test of the pacing sets it.
var paceClock = SystemClock()

// paceProbes are the steps up after chunks in a row that kept up with
// their pace, faster and faster: a link that got faster (a mobile link
// handed to a Wi-Fi) is followed within a few chunks, each shorter than
// the one before (the sizer sizes a chunk at the rate measured, and it
// goes at the pace). A step too far costs one chunk's overshoot, waiting
// in buffers, before the next measure brings the pace back.
var paceProbes = [...]float64{2, 4, 8}

// pacer releases a chunk's body bytes at the measured pace. One upload
// owns it; its body is read by the transport's goroutine while the
// upload's own goroutine measures between chunks, hence the lock.
type pacer struct {
	mu   sync.Mutex
	rate float64 // bytes per second; 0: not paced

	// The body being sent (begin).
	clock  Clock
	last   time.Duration // Clock.Elapsed at the last refill
	tokens float64       // bytes that may go now
	held   bool          // the pace held bytes back in this body
	began  time.Duration // Clock.Elapsed at the body's first byte; -1: none yet
	wrote  time.Duration // Clock.Elapsed at the body's last byte; -1: not all written
	answer time.Duration // Clock.Elapsed at the answer; -1: none
	size   int64         // the body's length
	sent   int64         // the body's bytes gone

	rtt    time.Duration // the shortest round trip seen; 0: none yet
	probes int           // chunks in a row that kept up with their pace
	// The link's rate as the last two chunks the link held back measured
	// it, the newer first: the pace goes over the higher, since a chunk's
	// measure runs a few percent either way (the server's time, a busy
	// machine's), and one low by chance would put the pace under the
	// link.
	seen [2]float64
}

// paceRate is the pace in force; 0: none.
func (p *pacer) paceRate() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate
}

// burst is what the pace lets go at once, and at most holds in store.
func (p *pacer) burstLocked() float64 {
	return max(p.rate*paceSlice.Seconds(), paceLeast)
}

// begin starts a body of size bytes at the pace in force.
func (p *pacer) begin(size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	clock := paceClock
	now := clock.Elapsed()
	p.clock, p.last, p.size, p.sent = clock, now, size, 0
	p.began, p.wrote, p.answer = -1, -1, -1
	p.held = false
	p.tokens = 0
	if p.rate > 0 {
		p.tokens = p.burstLocked()
	}
}

// refillLocked credits the time since the last refill at the pace, up
// to paceCatchUp's worth: a wait that ended late (a busy machine's timers
// overshoot by milliseconds) is made up at once, or the pace would fall
// below itself, and under the link's rate; more would be a burst.
func (p *pacer) refillLocked() {
	now := p.clock.Elapsed()
	if dt := now - p.last; dt > 0 && p.rate > 0 {
		p.tokens = min(p.tokens+p.rate*dt.Seconds(), max(p.rate*paceCatchUp.Seconds(), p.burstLocked()))
	}
	p.last = now
}

// take waits until the pace releases some of want bytes (want > 0) and
// reports how many. tick is called at least every paceWait while it
// waits (the stall watchdog: bytes the pace holds back are not a stall);
// stop ends the wait with errBodyClosed.
func (p *pacer) take(want int, stop <-chan struct{}, tick func()) (int, error) {
	if p == nil {
		return want, nil
	}
	p.mu.Lock()
	for {
		if p.clock == nil {
			p.mu.Unlock()
			return want, nil
		}
		if p.began < 0 {
			p.began = p.clock.Elapsed()
		}
		if p.rate <= 0 {
			p.mu.Unlock()
			return want, nil
		}
		p.refillLocked()
		need := min(float64(want), p.burstLocked())
		if p.tokens >= need {
			g := int(min(float64(want), p.tokens))
			p.tokens -= float64(g)
			p.mu.Unlock()
			return g, nil
		}
		wait := time.Duration((need - p.tokens) / p.rate * float64(time.Second))
		wait = min(max(wait, time.Millisecond), paceWait)
		p.held = true
		clock := p.clock
		p.mu.Unlock()
		if tick != nil {
			tick()
		}
		t := clock.NewTimer(wait)
		select {
		case <-t.C():
		case <-stop:
			t.Stop()
			return 0, errBodyClosed
		}
		p.mu.Lock()
	}
}

// gone notes that n of the bytes released went out; an unsent rest is
// given back.
func (p *pacer) gone(granted, n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clock == nil {
		return
	}
	if n < granted && p.rate > 0 {
		p.tokens += float64(granted - n)
	}
	p.sent += int64(max(n, 0))
	if p.sent >= p.size && p.wrote < 0 {
		p.wrote = p.clock.Elapsed()
	}
}

// roundTrip notes a request that carried no body took d, from sending
// to the answer read: the round trip is at most that.
func (p *pacer) roundTrip(d time.Duration) {
	if p == nil || d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rtt == 0 || d < p.rtt {
		p.rtt = d
	}
}

// answered notes the answer to the body's request came.
func (p *pacer) answered() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clock != nil {
		p.answer = p.clock.Elapsed()
	}
}

// took sets the pace after a chunk whose body (begin) the server kept
// kept bytes of.
func (p *pacer) took(kept int64) {
	if p == nil || kept <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clock == nil || p.began < 0 || p.wrote < 0 || p.answer < p.wrote {
		return // the body was never all written, or not answered: nothing to learn
	}
	d := p.answer - p.began   // from the first byte out to the answer
	lag := p.answer - p.wrote // from the last byte out to the answer
	if d <= 0 {
		return
	}
	if lag > 0 && (p.rtt == 0 || lag < p.rtt) {
		p.rtt = lag // the answer cannot come sooner than a round trip
	}
	writing := p.wrote - p.began
	// The link's rate: the bytes over the time the request took, less one
	// round trip (the first byte's way there, the answer's way back).
	span := d - p.rtt
	if span < d/2 {
		span = d / 2
	}
	rate := float64(kept) / span.Seconds()
	keptUp := lag-p.rtt <= time.Duration(paceKeptUp*float64(writing))+paceSlack
	switch {
	case p.rate > 0 && p.held && keptUp:
		// The pace held the bytes back and the link took them as they
		// came: it may take more.
		rate = max(rate, p.rate) * paceProbes[min(p.probes, len(paceProbes)-1)]
		p.probes++
		p.seen = [2]float64{}
	case p.rate > 0 && p.held:
		// The link held the bytes back: its rate is measured.
		p.seen[1], p.seen[0] = p.seen[0], rate
		rate = max(p.seen[0], p.seen[1]) * paceGain
		p.probes = 0
	default:
		// Not paced, or the pace never held a byte back: the measure is
		// the link's, or less (the source, the system), and it starts
		// the record afresh.
		p.seen = [2]float64{rate, 0}
		rate *= paceGain
		p.probes = 0
	}
	if rate >= paceFree || span < paceMeasure {
		rate = 0
	}
	p.rate = rate
}
