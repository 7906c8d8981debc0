package transfer

import (
	"testing"
	"time"
)

// requestsFor is how many requests the chunk sizer makes of size bytes on
// a link of bps with round trips of rtt, under the cap limit, and the
// longest a chunk after the first took (the first is sized before
// anything is measured).
func requestsFor(size, limit int64, bps float64, rtt time.Duration) (n int, longest time.Duration) {
	var c chunkSizer
	for off := int64(0); off < size; n++ {
		k := min(c.size(limit), size-off)
		d := rtt + time.Duration(float64(k)/bps*float64(time.Second))
		if n > 0 {
			longest = max(longest, d)
		}
		c.took(k, d, limit)
		off += k
	}
	return n, longest
}

// Issue 33: a fast link pays for every request (a round trip, the
// server's commit of each chunk), so chunks grow quickly from the measured
// pace to the default cap: a GiB on loopback (400 MB/s, 1 ms round trips)
// goes in a score of requests, where 4 times a step under a 16 MiB cap
// made 66. A slow link still has a confirmation every few seconds.
func TestChunksFewOnAFastLink(t *testing.T) {
	n, _ := requestsFor(1<<30, DefaultChunkSize, 400e6, time.Millisecond)
	t.Logf("1 GiB at 400 MB/s: %d requests under the default cap of %d MiB", n, DefaultChunkSize>>20)
	if n > 18 {
		t.Errorf("1 GiB on a 400 MB/s link took %d requests; a fast link wants few", n)
	}
	for _, c := range []struct {
		bps float64
		rtt time.Duration
	}{{100e3, 300 * time.Millisecond}, {1.5e6, 80 * time.Millisecond}, {12e6, 40 * time.Millisecond}} {
		n, longest := requestsFor(256<<20, DefaultChunkSize, c.bps, c.rtt)
		t.Logf("256 MiB at %.1f MB/s: %d requests, the longest %s", c.bps/1e6, n, longest)
		if longest > chunkHigh+c.rtt {
			t.Errorf("at %.1f MB/s a chunk took %s: the person waits longer than %s for a confirmation", c.bps/1e6, longest, chunkHigh)
		}
	}
}
