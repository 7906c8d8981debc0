package transfer

import (
	"sync"
	"time"
)

// Clock is the engine's view of time, injected so tests can move it.
//
// Elapsed should come from a clock that stops while the machine is
// suspended: Go's monotonic clock does on Linux (CLOCK_MONOTONIC) and macOS
// (CLOCK_UPTIME_RAW). When Now moves ahead of Elapsed, the machine slept,
// and the engine takes it as a wake: every connection it had is probably
// dead. On Windows Go reads the interrupt time, which counts through sleep
// (golang/go#36141), so there the comparison likely never fires and the
// system's power notifications (internal/platform, through Queue.Wake) tell
// the wake instead.
type Clock interface {
	Now() time.Time
	Elapsed() time.Duration
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer the engine uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// SystemClock is the real clock.
func SystemClock() Clock { return systemClock{start: time.Now()} }

type systemClock struct{ start time.Time }

func (systemClock) Now() time.Time { return time.Now() }

// Elapsed uses time.Since, which reads the monotonic clock carried by
// start; that is the same comparison as now.Sub(prev) against
// now.Round(0).Sub(prev.Round(0)), split so a fake clock can play it.
func (c systemClock) Elapsed() time.Duration { return time.Since(c.start) }

func (systemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.t.C }
func (t sysTimer) Stop() bool          { return t.t.Stop() }

// sleepGap is how much further the wall clock moved than the monotonic
// clock between two readings: the time the machine spent asleep.
func sleepGap(prevWall time.Time, prevMono time.Duration, wall time.Time, mono time.Duration) time.Duration {
	return wall.Round(0).Sub(prevWall.Round(0)) - (mono - prevMono)
}

// waker broadcasts wakes: whoever took Chan before Fire sees it closed.
type waker struct {
	mu sync.Mutex
	ch chan struct{}
}

func newWaker() *waker { return &waker{ch: make(chan struct{})} }

func (w *waker) Chan() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

func (w *waker) Fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.ch)
	w.ch = make(chan struct{})
}
