package transfer

import "time"

// Chunks are sized from the pace the server confirms them at, so that a
// confirmation comes about every chunkTarget whatever the link: a 16 MiB
// chunk takes 11 s at 1.5 MB/s, and until its 308 nothing says how much
// arrived. Record.ChunkSize is the cap (the person's), never exceeded.
//
// A fast link pays for every request (a round trip, and the server's work
// at each chunk's end: Cloud Storage commits it), so chunks grow quickly
// there: a chunk's measured pace never overstates the link (the server
// answers only once it holds every byte, and a short chunk's time is
// mostly the round trip), so the next may be up to chunkGrowth times
// larger, 1 MiB then 16 then the cap. On loopback, a GiB went in 69
// requests at 4 times a step under a 16 MiB cap (docs/PERFORMANCE.md).
const (
	firstChunk  = 1 << 20         // before anything is measured
	chunkTarget = 3 * time.Second // what a chunk is sized to take
	chunkLow    = 2 * time.Second // quicker than this: grow
	chunkHigh   = 4 * time.Second // slower than this: shrink
	chunkGrowth = 16              // at most this many times the last size
)

// chunkSizer chooses the length of the next chunk; the zero value starts
// at firstChunk.
type chunkSizer struct {
	next int64
}

// size is the next chunk's length under limit: a multiple of ChunkQuantum
// (the last chunk of a file is cut shorter by the caller).
func (c *chunkSizer) size(limit int64) int64 {
	if c.next == 0 {
		c.next = firstChunk
	}
	return max(min(c.next, limit), ChunkQuantum)
}

// took notes that a chunk's request took d, from its first byte out to
// the server's answer, and the server stored kept bytes more: the next
// chunk is sized to take chunkTarget at that pace when d was outside
// chunkLow..chunkHigh.
func (c *chunkSizer) took(kept int64, d time.Duration, limit int64) {
	if kept <= 0 || d <= 0 {
		return
	}
	cur := c.size(limit)
	if d >= chunkLow && d <= chunkHigh {
		return
	}
	want := int64(float64(kept) / d.Seconds() * chunkTarget.Seconds())
	want = min(want, cur*chunkGrowth)
	want -= want % ChunkQuantum
	c.next = max(min(want, limit), ChunkQuantum)
}
