package transfer

import (
	"testing"
	"time"
)

// driveLimit moves the fake clock whenever a wait of the limiter (at most
// limitTick) is pending, until stop: fake time passes only while the limit
// holds bytes back, so bytes over fake time is the rate the limit allowed.
func driveLimit(clock *FakeClock, stop <-chan struct{}) {
	for {
		added := clock.TimerAdded()
		if _, next := clock.Timers(); next >= 0 && next <= limitTick {
			clock.Advance(next)
			continue
		}
		select {
		case <-stop:
			return
		case <-added:
		}
	}
}

// limitHarness is a queue whose clock moves only for its limit, once
// readers requests are waiting on it.
func limitHarness(t *testing.T, rate int64, readers int) (*harness, *FakeClock) {
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	h := newHarness(t, Config{Clock: clock, Workers: 3, Bandwidth: rate, StallTimeout: time.Hour, WakeCheck: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	stop := make(chan struct{})
	go func() {
		// Real time runs on while the fake clock jumps: uploads that start
		// late would find the others done. So the clock waits for all.
		for {
			l := h.q.bw.limit
			l.mu.Lock()
			n, note := l.waiting, l.waitNote
			l.mu.Unlock()
			if n >= readers {
				break
			}
			select {
			case <-stop:
				return
			case <-note:
			}
		}
		driveLimit(clock, stop)
	}()
	t.Cleanup(func() { close(stop) })
	return h, clock
}

// Uploads running at once share one limit: together they go at the rate,
// not each at it, and each gets about its share.
func TestLimitSharedByUploads(t *testing.T) {
	const Q = ChunkQuantum
	const rate = 256 << 10
	f := newFake(t)
	h, clock := limitHarness(t, rate, 3)
	var ids []string
	for range 3 {
		path, _ := writeFile(t, 2*Q)
		ids = append(ids, h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: 2 * Q}))
	}
	ended := map[string]time.Duration{}
	for _, id := range ids {
		h.mustDone(id)
		ended[id] = clock.Elapsed()
	}
	total := clock.Elapsed()
	_, received, _ := f.stats()
	if received != 6*Q {
		t.Fatalf("the server received %d bytes, want %d (nothing sent twice)", received, 6*Q)
	}
	got := float64(received) / total.Seconds()
	if got > 1.05*rate || got < 0.9*rate {
		t.Errorf("together the uploads went at %.0f B/s over %s of clock time; the limit is %d B/s", got, total, rate)
	}
	for id, at := range ended {
		if at < total/2 {
			t.Errorf("job %s ended at %s of %s: it did not share the limit with the others", id, at, total)
		}
	}
}

// A change of the limit reaches the request in flight: it goes on faster
// or slower, and is neither aborted nor sent again.
func TestLimitChangesMidChunk(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	h, clock := limitHarness(t, 64<<10, 1)
	path, data := writeFile(t, 4*Q)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: 4 * Q})
	e := h.await(func(e Event) bool { return e.Job == id && e.Kind == EventProgress && e.Written >= 64<<10 })
	if clock.Elapsed() < 900*time.Millisecond {
		t.Fatalf("%d bytes went in %s of clock time at a limit of 64 KiB/s", e.Written, clock.Elapsed())
	}
	h.q.SetBandwidth(128 << 10)
	if got := h.q.Bandwidth(); got != 128<<10 {
		t.Fatalf("Bandwidth() = %d after SetBandwidth(128 KiB)", got)
	}
	h.await(func(e Event) bool { return e.Job == id && e.Kind == EventProgress && e.Written >= 256<<10 })
	h.q.SetBandwidth(0)
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if f.count("chunk") != 1 || f.count("start") != 1 || f.count("status") != 0 {
		t.Errorf("%d chunks, %d starts, %d status queries: a change of limit must not cut the request", f.count("chunk"), f.count("start"), f.count("status"))
	}
	if _, received, _ := f.stats(); received != 4*Q {
		t.Errorf("received %d bytes, want %d", received, 4*Q)
	}
	for _, e := range h.seen {
		if e.Kind == EventRetrying {
			t.Errorf("retried: %s", e)
		}
	}
}

// A limit so low that the body is read less often than the stall timeout
// (a piece of 256 bytes every 2.56 s against a 1 s timeout) makes no
// stall: bytes held back by the limit are progress.
func TestLimitIsNotAStall(t *testing.T) {
	f := newFake(t)
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	lim := NewLimiter(100, clock)
	u := NewUploader(Uploader{Clock: clock, Stall: time.Second, Limit: lim, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, 1<<10)
	stop := make(chan struct{})
	defer close(stop)
	sink := &recSink{}
	done := runUpload(t, u, uploadRecord(t, f.url(), path, ChunkQuantum), sink)
	go driveLimit(clock, stop)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the upload did not end")
	}
	if len(sink.retries) != 0 || f.count("chunk") != 1 {
		t.Errorf("retries %+v, %d chunks: the throttled request was abandoned", sink.retries, f.count("chunk"))
	}
	if clock.Elapsed() < 7*time.Second { // 1 KiB at 100 B/s, less the first piece
		t.Errorf("1 KiB at 100 B/s took %s of clock time", clock.Elapsed())
	}
}

// The queue follows a timetable by its clock, until the person sets a
// rate of their own.
func TestScheduleSwitches(t *testing.T) {
	clock := NewFakeClock(time.Date(2026, 1, 5, 7, 59, 30, 0, time.UTC)) // a Monday
	h := newHarness(t, Config{Clock: clock, WakeCheck: time.Hour})
	tt, err := ParseBandwidth("08:00,1M 19:00,off")
	if err != nil {
		t.Fatal(err)
	}
	h.q.SetSchedule(tt)
	if got := h.q.Bandwidth(); got != 0 {
		t.Fatalf("before 08:00 the limit is %d, want off", got)
	}
	waitTimer(t, clock, 30*time.Second) // the schedule waits for 08:00
	clock.Advance(30 * time.Second)
	waitTimer(t, clock, time.Minute) // it applied 08:00 and waits for the next check
	if got := h.q.Bandwidth(); got != 1<<20 {
		t.Fatalf("at 08:00 the limit is %d, want 1 MiB/s", got)
	}
	h.q.SetBandwidth(5000)
	clock.Advance(12 * time.Hour)
	if got := h.q.Bandwidth(); got != 5000 {
		t.Fatalf("after SetBandwidth the timetable still set the limit to %d", got)
	}
}

// waitTimer waits until the clock's next timer is due in d.
func waitTimer(t *testing.T, clock *FakeClock, d time.Duration) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		added := clock.TimerAdded()
		if _, next := clock.Timers(); next == d {
			return
		}
		select {
		case <-added:
		case <-deadline:
			_, next := clock.Timers()
			t.Fatalf("no timer due in %s (the next is in %s)", d, next)
		}
	}
}
