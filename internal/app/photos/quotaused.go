package photos

import (
	"errors"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// historyWhere is a queue that reads only the jobs it is asked for, its
// journal one record at a time (the app's Queue, by its transfer.Queue).
type historyWhere interface {
	HistoryWhere(keep func(*transfer.Snapshot) bool) ([]transfer.Snapshot, error)
}

// UsedUp reports whether Google Photos' daily quota at the API root root
// is known to be used up at now, and the reset it turns over at: a Photos
// job to root failed for it since the last reset (PhotosQuotaUsedUp). A
// batch posted now is then held before its first byte (Hold). It reads
// the journal: a window calls it off its UI thread.
func (w *QuotaWait) UsedUp(root string, now time.Time) (time.Time, bool) {
	return PhotosQuotaUsedUp(w.q, root, now)
}

// PhotosQuotaUsedUp reports whether q's journal shows Google Photos'
// daily quota at the API root root used up at now, and the reset it
// turns over at: a Photos job (an upload, a batchCreate, an album, by the
// route table: Gmail's and Drive's quotas are others) to root (another
// root is another server, or another project's quota) failed for it, and
// the reset that failure waits for is still to come. Where q can
// (HistoryWhere), the journal is read one record at a time and none is
// kept: after a camera roll it holds 20,400.
func PhotosQuotaUsedUp(q QuotaQueue, root string, now time.Time) (time.Time, bool) {
	var reset time.Time
	found := false
	look := func(s *transfer.Snapshot) bool {
		if s.State != transfer.StateFailed || !errors.Is(s.Cause, transfer.ErrDailyQuota) {
			return false
		}
		at, ok := QuotaStopped(*s)
		if !ok || !at.After(now) || !delivery.AtRoot(s.URL, root) {
			return false
		}
		if !found || at.Before(reset) {
			reset, found = at, true
		}
		return false
	}
	if hw, ok := q.(historyWhere); ok {
		// A failure found is so whatever else could not be read.
		hw.HistoryWhere(look)
		return reset, found
	}
	recs, err := q.History()
	if err != nil {
		return time.Time{}, false
	}
	for i := range recs {
		look(&recs[i])
	}
	return reset, found
}
