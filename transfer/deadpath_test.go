package transfer

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"carrier/sandbox"
)

// fakePath is a probe whose state a function of the fake clock's time
// gives.
type fakePath struct {
	clock *FakeClock
	at    func(now time.Duration) pathState
}

func (p fakePath) path() (pathState, bool) { return p.at(p.clock.Elapsed()), true }

// runWatch runs watchPath on the fake clock for up to limit of its time,
// a poll at a time, and returns when it abandoned the request (-1: never)
// and with what.
func runWatch(t *testing.T, limit time.Duration, at func(time.Duration) pathState) (time.Duration, error) {
	t.Helper()
	clock := NewFakeClock(time.Now())
	done := make(chan struct{})
	defer close(done)
	var (
		mu    sync.Mutex
		cause error
		when  time.Duration = -1
	)
	over := make(chan struct{})
	go func() {
		defer close(over)
		watchPath(clock, fakePath{clock, at}, done, func(err error) {
			mu.Lock()
			cause, when = err, clock.Elapsed()
			mu.Unlock()
		})
	}()
	for clock.Elapsed() < limit {
		// Each poll: wait for the watch to arm its timer, then fire it.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if n, _ := clock.Timers(); n > 0 {
				break
			}
			select {
			case <-over:
				mu.Lock()
				defer mu.Unlock()
				return when, cause
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the watch never armed its timer")
			}
			time.Sleep(100 * time.Microsecond)
		}
		clock.Advance(ackPoll)
	}
	return -1, nil
}

func TestDeadPathAcksStop(t *testing.T) {
	// Acks move for 2 s, then stop with bytes pending: a dead path,
	// abandoned deadPath later (within a poll), not at the stall timeout.
	const stop = 2 * time.Second
	when, err := runWatch(t, time.Minute, func(now time.Duration) pathState {
		return pathState{acked: int64(min(now, stop) / time.Millisecond * 1000), pending: true, rto: 210 * time.Millisecond}
	})
	if !errors.Is(err, errDeadPath) {
		t.Fatalf("the watch ended with %v at %s, want the dead path", err, when)
	}
	if when < stop+deadPath || when > stop+deadPath+2*ackPoll {
		t.Fatalf("abandoned at %s, want %s after the acks stopped at %s", when, deadPath, stop)
	}
}

func TestDeadPathWaitsForSlowRTO(t *testing.T) {
	// A path whose retransmission timeout is a second (a satellite link)
	// gets four of them.
	when, err := runWatch(t, time.Minute, func(now time.Duration) pathState {
		return pathState{acked: 5000, pending: true, rto: time.Second}
	})
	if !errors.Is(err, errDeadPath) || when < 4*time.Second || when > 4*time.Second+2*ackPoll {
		t.Fatalf("abandoned at %s with %v, want at 4 s", when, err)
	}
}

func TestDeadPathSlowLinkKept(t *testing.T) {
	// One segment acknowledged every 1.4 s, for a minute: slow, not dead.
	when, err := runWatch(t, time.Minute, func(now time.Duration) pathState {
		return pathState{acked: int64(now / (1400 * time.Millisecond) * 1448), pending: true, rto: 300 * time.Millisecond}
	})
	if when >= 0 {
		t.Fatalf("a slow link was abandoned at %s: %v", when, err)
	}
}

func TestDeadPathAnswerAwaitedKept(t *testing.T) {
	// The body all acknowledged, the server's answer awaited for 40 s,
	// then a next request's bytes pending: the wait is the server's, and
	// the new bytes get their own deadPath from when they were written.
	const next = 40 * time.Second
	when, err := runWatch(t, time.Minute, func(now time.Duration) pathState {
		return pathState{acked: 1 << 20, pending: now >= next, rto: 210 * time.Millisecond}
	})
	if !errors.Is(err, errDeadPath) || when < next+deadPath || when > next+deadPath+2*ackPoll {
		t.Fatalf("abandoned at %s with %v, want only %s after bytes were pending at %s", when, err, deadPath, next)
	}
}

// frozenPath is the seam's probe for TestDeadPathUpload: a path that
// acknowledges everything at once, until frozen, when it acknowledges
// nothing more with bytes pending.
type frozenPath struct {
	frozen *atomic.Bool
	n      atomic.Int64
}

func (p *frozenPath) path() (pathState, bool) {
	if p.frozen.Load() {
		return pathState{acked: p.n.Load(), pending: true}, true
	}
	return pathState{acked: p.n.Add(1)}, true
}

// An upload on a path that dies mid-chunk (through the engine's own
// connection, whose probe is the seam's): the request is abandoned
// within seconds, not at the 30 s stall timeout, and the upload asks where
// it stands and finishes with the file's bytes.
func TestDeadPathUpload(t *testing.T) {
	var frozen atomic.Bool
	saved := dialPathProbe
	dialPathProbe = func(net.Conn) pathProbe { return &frozenPath{frozen: &frozen} }
	t.Cleanup(func() { dialPathProbe = saved })

	const Q = ChunkQuantum
	env := newSandbox(t, sandbox.Options{})
	// 2 MiB/s: each 4 MiB chunk takes two seconds to go.
	h := newHarness(t, Config{Auth: StaticToken(sbToken), Bandwidth: 2 << 20})
	path, data := writeFile(t, 48*Q)
	id := h.add(Spec{URL: env.objectURL("dead"), ContentType: "application/octet-stream", Path: path, ChunkSize: 16 * Q})
	var froze time.Time
	for {
		e := h.next(EventProgress, EventRetrying, EventDone, EventFailed)
		if e.Kind == EventDone || e.Kind == EventFailed {
			t.Fatalf("the upload ended (%s) with no dead path found", e)
		}
		if e.Kind == EventProgress && froze.IsZero() && e.Sent > 6*Q {
			froze = time.Now()
			frozen.Store(true)
		}
		if e.Kind == EventRetrying && !froze.IsZero() {
			if !strings.Contains(e.Reason, "went dead") {
				t.Fatalf("the frozen path ended in %q, want the dead path", e.Reason)
			}
			break
		}
	}
	took := time.Since(froze)
	frozen.Store(false)
	t.Logf("dead path found %s after the acknowledgements stopped", took.Round(time.Millisecond))
	// Far from the 30 s watchdog; deadPath plus a poll on an idle machine.
	if took > 10*time.Second {
		t.Fatalf("the dead path took %s to find", took)
	}
	h.mustDone(id)
	if !bytes.Equal(env.readBack(t, "dead"), data) {
		t.Fatal("bytes differ")
	}
}
