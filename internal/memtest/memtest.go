// Package memtest measures memory in tests: how high the heap gets while
// something runs, for tests that prove large data is streamed, not held.
package memtest

import (
	"runtime/metrics"
	"time"
)

// PeakHeap samples the heap's object bytes every millisecond while fn
// runs and returns the highest reading.
func PeakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	return <-done
}
