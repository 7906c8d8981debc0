// Package memtest measures memory in tests: how high the heap gets while
// something runs, for tests that prove large data is streamed, not held.
package memtest

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// PeakHeap samples the heap's object bytes every millisecond while fn
// runs and returns the highest reading above where the heap stood, just
// collected, when fn began: what earlier tests of the package left alive
// (a server still draining, a cache) is not fn's, and on a busy machine it
// moved the readings by as much as the bounds' headroom.
func PeakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
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
				done <- peak - min(peak, base)
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	return <-done
}
