package transfer

import (
	"testing"
	"time"
)

// linkModel plays an upload's chunks through a pacer and the chunk sizer
// on a fake clock, over a link modelled as a queue: what is written waits
// in buffers (the socket's, a middlebox's: unbounded here, as megabytes
// are to a link of 1.5 MB/s) and leaves at the link's rate; the answer to
// a chunk comes a round trip after its last byte left. In flight is what
// was written and has not left: what a reset throws away.
type linkModel struct {
	rtt  time.Duration
	cost time.Duration            // the server's work at each chunk's end
	rate func(sent int64) float64 // the link's bytes per second once sent bytes went

	clock    *FakeClock
	p        pacer
	chunks   chunkSizer
	sent     int64   // bytes that left the buffers, over the upload
	inflight []int64 // the most in flight during each chunk
	paces    []float64
}

// run sends size bytes in chunks of at most limit and reports the time
// it took on the model's clock.
func (m *linkModel) run(t *testing.T, size, limit int64) time.Duration {
	t.Helper()
	m.clock = NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	saved := paceClock
	paceClock = m.clock
	defer func() { paceClock = saved }()
	m.clock.Advance(m.rtt) // the session's start
	m.p.roundTrip(m.rtt)
	start := m.clock.Elapsed()
	for off := int64(0); off < size; {
		n := min(m.chunks.size(limit), size-off)
		m.paces = append(m.paces, m.p.paceRate())
		began := m.clock.Elapsed()
		m.p.begin(n)
		// The writer: the transport reading the body through the pace in
		// pieces, as it does; the clock moves only when the pace waits.
		type write struct {
			at time.Duration
			n  int64
		}
		writes := make(chan write, 1<<16)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for left := n; left > 0; {
				g, err := m.p.take(int(min(left, 32<<10)), nil, nil)
				if err != nil {
					t.Error(err)
					return
				}
				m.p.gone(g, g)
				writes <- write{m.clock.Elapsed(), int64(g)}
				left -= int64(g)
			}
		}()
		for {
			added := m.clock.TimerAdded()
			if waiting, _ := m.clock.Timers(); waiting == 0 {
				select {
				case <-done:
				case <-added:
					continue
				}
			}
			if _, next := m.clock.Timers(); next >= 0 {
				m.clock.Advance(next)
				continue
			}
			break
		}
		<-done
		close(writes)
		// The link: each write leaves after those before it, at the rate.
		var (
			left    time.Duration = began // when the link is free again
			written int64
			worst   int64
			queue   []write // written, not yet left: when each piece leaves
		)
		for w := range writes {
			// Pieces that left before this write are no longer in flight.
			for len(queue) > 0 && queue[0].at <= w.at {
				queue = queue[1:]
			}
			start := max(left, w.at)
			left = start + time.Duration(float64(w.n)/m.rate(m.sent)*float64(time.Second))
			m.sent += w.n
			written += w.n
			queue = append(queue, write{left, w.n})
			var in int64
			for _, q := range queue {
				in += q.n
			}
			worst = max(worst, in)
		}
		m.inflight = append(m.inflight, worst)
		if d := left + m.cost + m.rtt - m.clock.Elapsed(); d > 0 {
			m.clock.Advance(d)
		}
		m.p.answered()
		m.p.took(n)
		m.chunks.took(n, m.clock.Elapsed()-began, limit)
		off += n
	}
	return m.clock.Elapsed() - start
}

// Issue 33: a chunk handed to the kernel at local speed waits in the
// buffers on the way (the socket's, a middlebox's), and a reset throws
// what waits there away. Once the link's rate is measured (after the
// first chunk, which goes unpaced), what was written and has not left
// stays within what the pace runs ahead of the link over a chunk: a
// small share of a chunk, where unpaced the buffers hold most of one.
// And the pace costs the upload no time.
func TestPacingBoundsBytesInFlight(t *testing.T) {
	const (
		bps  = 1.5e6
		rtt  = 80 * time.Millisecond
		size = 24 << 20
	)
	m := &linkModel{rtt: rtt, rate: func(int64) float64 { return bps }}
	took := m.run(t, size, DefaultChunkSize)
	// What the pace runs ahead of the link over the longest chunk the
	// sizer allows, and what it releases at once.
	bound := int64((paceGain-1)*bps*chunkHigh.Seconds()) + int64(max(paceGain*bps*paceSlice.Seconds(), paceLeast)) + 32<<10
	for i, in := range m.inflight {
		t.Logf("chunk %d: pace %7.0f B/s, at most %5d KiB in flight", i+1, m.paces[i], in>>10)
		if i > 0 && in > bound {
			t.Errorf("chunk %d: %d KiB in flight after the link's rate was measured; the pace allows %d KiB", i+1, in>>10, bound>>10)
		}
	}
	ideal := time.Duration(float64(size)/bps*float64(time.Second)) + time.Duration(len(m.inflight))*rtt
	t.Logf("took %s on the model's clock; the link alone %s", took, ideal)
	if took > ideal*102/100 {
		t.Errorf("the paced upload took %s where the link allows %s: the pace throttles the link", took, ideal)
	}
}

// Issue 33: the pace follows a link that got faster up quickly and never
// holds a fast one back. 1.5 MB/s for 6 MiB, then 40 MB/s: the upload
// ends within a few seconds of what the link allows, and the pace is
// soon off (at such rates a buffer holds a fraction of a second).
func TestPacingFollowsAFasterLink(t *testing.T) {
	const (
		slow = 1.5e6
		fast = 40e6
		rtt  = 40 * time.Millisecond
		size = 96 << 20
		at   = 6 << 20
	)
	m := &linkModel{rtt: rtt, rate: func(sent int64) float64 {
		if sent < at {
			return slow
		}
		return fast
	}}
	took := m.run(t, size, 64<<20)
	secs := float64(at)/slow + float64(size-at)/fast
	ideal := time.Duration(secs*float64(time.Second)) + time.Duration(len(m.paces))*rtt
	t.Logf("paces %v; took %s, the link alone %s", m.paces, took, ideal)
	if took > ideal+4*time.Second {
		t.Errorf("took %s on a link that allows %s: the pace held the faster link back", took, ideal)
	}
	if last := m.paces[len(m.paces)-1]; last != 0 && last < fast {
		t.Errorf("the last chunk went at a pace of %.0f B/s on a link of %.0f", last, fast)
	}
}

// Issue 33: on a busy machine a wait ends late, by milliseconds; the pace
// makes up the time at once, or it would fall below itself and under the
// link's rate, which it is only a few percent over.
func TestPaceKeepsItsRateWhenWaitsEndLate(t *testing.T) {
	clock := NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	saved := paceClock
	paceClock = clock
	defer func() { paceClock = saved }()
	const rate, size = 1.6e6, 4 << 20
	p := &pacer{rate: rate}
	p.begin(size)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for left := size; left > 0; {
			g, err := p.take(min(left, 32<<10), nil, nil)
			if err != nil {
				t.Error(err)
				return
			}
			p.gone(g, g)
			left -= g
		}
	}()
	for {
		added := clock.TimerAdded()
		if n, next := clock.Timers(); n > 0 {
			clock.Advance(next + 7*time.Millisecond) // every wait ends 7 ms late
			continue
		}
		select {
		case <-done:
		case <-added:
			continue
		}
		break
	}
	got := float64(size) / clock.Elapsed().Seconds()
	t.Logf("%.0f B/s at a pace of %.0f with every wait 7 ms late", got, rate)
	if got < rate*0.98 {
		t.Errorf("the body went at %.0f B/s, its pace is %.0f: late waits lost the time", got, rate)
	}
}

// Issue 33: a fast link is never paced by a short chunk's measure. On
// loopback a 1 MiB chunk's time is mostly the server's commit (20 ms
// here): read as a rate it says 50 MB/s of a 400 MB/s link; pacing by it
// would hold the next chunks back.
func TestPacingLeavesAFastLinkAlone(t *testing.T) {
	m := &linkModel{rtt: time.Millisecond, cost: 20 * time.Millisecond, rate: func(int64) float64 { return 400e6 }}
	m.run(t, 1<<30, DefaultChunkSize)
	t.Logf("paces %v", m.paces)
	for i, p := range m.paces {
		if p != 0 {
			t.Errorf("chunk %d of a GiB on a 400 MB/s link went at a pace of %.0f B/s", i+1, p)
		}
	}
}
