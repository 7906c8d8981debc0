package transfer

import (
	"sync"
	"time"
)

// scheduleRecheck bounds the wait for a timetable's next change: the wait
// is timed by the monotonic clock, which stops while the machine sleeps
// and knows nothing of the wall clock being set, so the rate is looked up
// again at least this often.
const scheduleRecheck = time.Minute

// bandwidth is the queue's side of the limit: the one Limiter its uploads
// share, and the timetable that may be driving it.
type bandwidth struct {
	limit *Limiter
	mu    sync.Mutex
	gen   int // bumped by every SetBandwidth and SetSchedule: older schedules stop
}

// SetBandwidth limits every upload of the queue together to bytesPerSec
// (0: no limit), at once, requests in flight included; no request is
// aborted for it. It ends any timetable SetSchedule gave: the person's
// latest word wins.
func (q *Queue) SetBandwidth(bytesPerSec int64) {
	q.bw.mu.Lock()
	defer q.bw.mu.Unlock()
	q.bw.gen++
	q.bw.limit.SetRate(bytesPerSec)
}

// Bandwidth is the limit in force, in bytes per second; 0: none.
func (q *Queue) Bandwidth() int64 { return q.bw.limit.Rate() }

// SetSchedule makes the limit follow a timetable: its rate now, and each
// change at its time by the queue's clock, until SetBandwidth or another
// SetSchedule. The engine keeps the timetable, not the front ends, so the
// CLI and the window follow it alike and the queue's clock (a fake one in
// tests) times it.
func (q *Queue) SetSchedule(t Timetable) {
	q.bw.mu.Lock()
	q.bw.gen++
	gen := q.bw.gen
	q.bw.limit.SetRate(t.At(q.clock.Now()))
	q.bw.mu.Unlock()
	if t.Constant() {
		return
	}
	go q.followSchedule(t, gen)
}

func (q *Queue) followSchedule(t Timetable, gen int) {
	for {
		now := q.clock.Now()
		wait := min(t.Next(now).Sub(now), scheduleRecheck)
		timer := q.clock.NewTimer(max(wait, time.Millisecond))
		select {
		case <-q.ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
		q.bw.mu.Lock()
		if q.bw.gen != gen {
			q.bw.mu.Unlock()
			return
		}
		q.bw.limit.SetRate(t.At(q.clock.Now()))
		q.bw.mu.Unlock()
	}
}
