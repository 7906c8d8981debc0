package transfer

import (
	"sort"
	"sync"
	"time"
)

// FakeClock is a Clock that moves only when told, for tests of backoff,
// stalls and wakes without real waiting. It is exported so that packages
// driving a Queue (the CLI, the UI) can test with it too.
type FakeClock struct {
	mu      sync.Mutex
	wall    time.Time
	mono    time.Duration
	timers  []*fakeTimer
	changed chan struct{} // closed and replaced whenever a timer is added
}

// NewFakeClock starts at wall time start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{wall: start.Round(0), changed: make(chan struct{})}
}

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

func (c *FakeClock) Elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

func (c *FakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.mono + d, ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.wall
		return t
	}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

// Advance moves both clocks by d, as when time passes awake, and fires the
// timers that fall due.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mono += d
	c.wall = c.wall.Add(d)
	sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at < c.timers[j].at })
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at <= c.mono {
			t.ch <- c.wall
		} else {
			keep = append(keep, t)
		}
	}
	c.timers = keep
}

// Suspend moves the wall clock by d and leaves the monotonic clock and the
// timers where they are, as a machine's sleep does.
func (c *FakeClock) Suspend(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
}

// Timers reports how many timers are waiting and when the next falls due
// (relative to now), so a test can wait for the engine to start waiting.
func (c *FakeClock) Timers() (n int, next time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next = -1
	for _, t := range c.timers {
		if d := t.at - c.mono; next < 0 || d < next {
			next = d
		}
	}
	return len(c.timers), next
}

// TimerAdded returns a channel closed when the next timer is made.
func (c *FakeClock) TimerAdded() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

type fakeTimer struct {
	c  *FakeClock
	at time.Duration
	ch chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}
