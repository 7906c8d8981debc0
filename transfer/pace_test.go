package transfer

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake server that takes its time on an injected clock: every request
// costs rtt, and a chunk's body bytes/bps more, moved on the clock before
// the request is answered. The uploader reads the clock after the answer,
// so what it measures is exact and nothing waits for real.
func pacedFake(t *testing.T, clock *FakeClock, bps float64, rtt time.Duration) *fakeServer {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		d := rtt
		if kind == "chunk" && r.ContentLength > 0 {
			d += time.Duration(float64(r.ContentLength) / bps * float64(time.Second))
		}
		clock.Advance(d)
		return false
	}
	return f
}

// chunkSizes are the body lengths of the chunk requests the fake saw.
func chunkSizes(t *testing.T, f *fakeServer) []int64 {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for _, l := range f.log {
		cr, ok := strings.CutPrefix(l, "chunk bytes ")
		if !ok || strings.HasPrefix(cr, "*") {
			continue
		}
		span, _, _ := strings.Cut(cr, "/")
		a, b, _ := strings.Cut(span, "-")
		first, _ := strconv.ParseInt(a, 10, 64)
		last, _ := strconv.ParseInt(b, 10, 64)
		out = append(out, last-first+1)
	}
	return out
}

// paceSink records each pace the uploader reports, with the clock's
// reading then, and the written offsets.
type paceSink struct {
	recSink
	clock *FakeClock
	mu    sync.Mutex
	paces []Pace
	at    []time.Duration
}

func (s *paceSink) Paced(p Pace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paces = append(s.paces, p)
	s.at = append(s.at, s.clock.Elapsed())
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// Issue 13: the rate shown must be the pace at which the server confirms
// bytes, the ETA the time the upload actually takes, on a 1.5 MB/s link
// with 80 ms round trips.
func TestConfirmedRateAndETAFollowTheServer(t *testing.T) {
	const bps = 1.5e6
	clock := NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := pacedFake(t, clock, bps, 80*time.Millisecond)
	path, _ := writeFile(t, 24<<20)
	u := NewUploader(Uploader{Clock: clock})
	sink := &paceSink{clock: clock}
	if _, err := u.Upload(ctxT(t), Work{Record: uploadRecord(t, f.url(), path, DefaultChunkSize), Sink: sink}); err != nil {
		t.Fatal(err)
	}
	end := clock.Elapsed()
	if len(sink.paces) < 4 {
		t.Fatalf("only %d confirmations measured; chunk sizes %v", len(sink.paces), chunkSizes(t, f))
	}
	if p := sink.paces[0]; p.Rate(0) != 0 || p.ETA(0) != 0 {
		t.Fatalf("a rate (%.0f B/s) or an ETA (%s) from the session's start alone, before the server confirmed any byte", p.Rate(0), p.ETA(0))
	}
	for i, p := range sink.paces {
		rate, eta, truth := p.Rate(0), p.ETA(0), end-sink.at[i]
		t.Logf("confirmation %d at %5.2fs: %7.0f B/s (%.1f%% off the link), ETA %5.2fs, truth %5.2fs", i, sink.at[i].Seconds(), rate, 100*(rate-bps)/bps, eta.Seconds(), truth.Seconds())
		if i < 2 {
			continue // the first chunk alone, latency-bound
		}
		if !within(rate, bps, 0.10) {
			t.Errorf("confirmation %d: rate %.0f B/s, the link gives %.0f", i, rate, bps)
		}
		if !within(eta.Seconds(), truth.Seconds(), 0.10) && (eta-truth).Abs() > time.Second {
			t.Errorf("confirmation %d: ETA %s, the upload took %s more", i, eta, truth)
		}
	}
}

// Between confirmations the ETA counts down; when one is overdue the rate
// falls and the ETA grows instead of freezing; neither is ever negative.
func TestPaceCountsDownAndNeverFreezes(t *testing.T) {
	// 9 MB confirmed over 6 s in 3 gaps: 1.5 MB/s, 12 MB left: 8 s.
	p := Pace{Bytes: 9e6, Span: 6 * time.Second, Gaps: 3, Left: 12e6}
	if r := p.Rate(0); r != 1.5e6 {
		t.Fatalf("rate %.0f", r)
	}
	if e := p.ETA(0); e != 8*time.Second {
		t.Fatalf("ETA %s, want 8s", e)
	}
	if e := p.ETA(1500 * time.Millisecond); e != 6500*time.Millisecond {
		t.Fatalf("ETA 1.5 s later %s, want 6.5s: it must count down between confirmations", e)
	}
	prev := time.Duration(0)
	for d := 6 * time.Second; d <= 60*time.Second; d += time.Second {
		e, r := p.ETA(d), p.Rate(d)
		if e <= 0 || r <= 0 {
			t.Fatalf("%s after the last confirmation: ETA %s, rate %.0f", d, e, r)
		}
		if prev != 0 && e <= prev {
			t.Fatalf("%s after the last confirmation (overdue): ETA %s, was %s a second before: frozen or counting down to nothing", d, e, prev)
		}
		prev = e
	}
	if r := p.Rate(60 * time.Second); r >= 1.5e6/5 {
		t.Fatalf("a minute without a confirmation still shows %.0f B/s", r)
	}
	if (Pace{}).Rate(time.Hour) != 0 || (Pace{}).ETA(time.Hour) != 0 {
		t.Fatal("an empty pace must say nothing")
	}
}

// The queue's events carry the confirmed rate and ETA, none before the
// server confirmed a chunk, while Written runs ahead of Confirmed.
func TestEventsCarryTheConfirmedRate(t *testing.T) {
	const bps = 1.5e6
	clock := NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := pacedFake(t, clock, bps, 80*time.Millisecond)
	path, _ := writeFile(t, 12<<20)
	h := newHarness(t, Config{Clock: clock, WakeCheck: time.Hour})
	id := h.add(Spec{URL: f.url(), Path: path, ContentType: "application/octet-stream"})
	h.mustDone(id)
	h.mu.Lock()
	defer h.mu.Unlock()
	var last Event
	confirmations := 0
	for _, e := range h.seen {
		if e.Job != id || e.Kind != EventProgress {
			continue
		}
		if e.Confirmed > last.Confirmed {
			confirmations++
		}
		if e.Confirmed == 0 && (e.ConfirmedRate != 0 || e.ETA != 0) {
			t.Fatalf("before any confirmation (written %d): rate %.0f, ETA %s", e.Written, e.ConfirmedRate, e.ETA)
		}
		if e.Rate != e.ConfirmedRate || e.Sent > e.Written || e.Sent < e.Confirmed {
			t.Fatalf("the old names differ from the new: %+v", e)
		}
		if confirmations >= 3 && e.Confirmed < e.Total && !within(e.ConfirmedRate, bps, 0.10) {
			t.Fatalf("after %d confirmations: rate %.0f B/s, the link gives %.0f (%s)", confirmations, e.ConfirmedRate, bps, e)
		}
		last = e
	}
	if confirmations < 3 {
		t.Fatalf("only %d confirmations seen", confirmations)
	}
	t.Log(last)
}

// Chunks are sized for a confirmation every 2-4 s: they grow to the cap on
// a fast link, stay small on a slow one, and settle where a chunk takes
// 2-4 s on a 1.5 MB/s one; every one but the last a multiple of 256 KiB,
// and the sums still verify (the last request carries X-Goog-Hash and at
// most 256 KiB).
func TestChunksSizedForAConfirmationEveryFewSeconds(t *testing.T) {
	const Q = ChunkQuantum
	for _, c := range []struct {
		name string
		bps  float64
		size int64
		cap  int64
		ok   func(i int, n int64, took time.Duration) string
	}{
		{"fast", 200e6, 40 << 20, 8 << 20, func(i int, n int64, _ time.Duration) string {
			if i >= 2 && n != 8<<20 {
				return "should be at the 8 MiB cap from the third chunk on"
			}
			return ""
		}},
		{"slow", 100e3, 3 << 20, 16 << 20, func(i int, n int64, _ time.Duration) string {
			if i >= 1 && n > 2*Q {
				return "too big for 100 kB/s (more than 4 s a chunk)"
			}
			return ""
		}},
		{"1.5MB/s", 1.5e6, 40 << 20, 16 << 20, func(i int, n int64, took time.Duration) string {
			if i >= 2 && (took < chunkLow || took > chunkHigh) {
				return fmt.Sprintf("took %s, not 2-4 s", took)
			}
			return ""
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			f := pacedFake(t, clock, c.bps, 80*time.Millisecond)
			f.sums = true
			path, _ := writeFile(t, c.size)
			rec := uploadRecord(t, f.url(), path, c.cap)
			rec.Checksums = []string{SumCRC32C}
			resp, err := NewUploader(Uploader{Clock: clock}).Upload(ctxT(t), Work{Record: rec})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Verified == "" {
				t.Fatal("not verified")
			}
			sizes := chunkSizes(t, f)
			t.Logf("chunk sizes (KiB): %v", kib(sizes))
			if sizes[0] != min(firstChunk, c.cap) {
				t.Fatalf("the first chunk carried %d KiB; it should start small, at %d KiB", sizes[0]>>10, firstChunk>>10)
			}
			var sum int64
			for i, n := range sizes {
				sum += n
				last := i == len(sizes)-1
				if !last && n%Q != 0 || n > c.cap {
					t.Fatalf("chunk %d: %d bytes (cap %d, quantum %d)", i, n, c.cap, Q)
				}
				if last && n > Q {
					t.Fatalf("the last request carries %d bytes; with sums it must carry at most %d", n, Q)
				}
				if last || i == len(sizes)-2 {
					continue // the tail is what is left
				}
				took := 80*time.Millisecond + time.Duration(float64(n)/c.bps*float64(time.Second))
				if why := c.ok(i, n, took); why != "" {
					t.Fatalf("chunk %d of %d KiB: %s; sizes %v KiB", i, n>>10, why, kib(sizes))
				}
			}
			if sum != c.size {
				t.Fatalf("the chunks carried %d bytes of %d", sum, c.size)
			}
			f.mu.Lock()
			hashes := len(f.googHash)
			f.mu.Unlock()
			if hashes != 1 {
				t.Fatalf("%d requests carried X-Goog-Hash, want the last one", hashes)
			}
		})
	}
}

func kib(s []int64) []int64 {
	out := make([]int64, len(s))
	for i, n := range s {
		out[i] = n >> 10
	}
	return out
}
