//go:build !race

package transfer

// endedHeapBound is TestEndedJobsHeapPerJob's bound: 355 to 490 bytes a
// job measured (the endedJob, its map entry, the answer's status, the
// id, the queue's map of jobs grown while all were queued), 1,111 with
// every ended job kept whole.
const endedHeapBound = 700
