package photos

import (
	"context"
	"sync"
	"testing"
	"time"

	"carrier/transfer"
)

// The app's Queue reads only the jobs it is asked for: the quota's fact
// goes through that, not through the whole history.
var _ historyWhere = (*Queue)(nil)

// countingQueue is a queue whose journal is a camera roll: it counts the
// whole histories read and the records walked one at a time.
type countingQueue struct {
	mu      sync.Mutex
	recs    []transfer.Snapshot
	where   bool // it has HistoryWhere
	whole   int  // History calls
	walked  int  // records HistoryWhere walked
	kept    int  // records HistoryWhere kept
	queries int  // HistoryWhere calls
}

func (q *countingQueue) History() ([]transfer.Snapshot, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.whole++
	return append([]transfer.Snapshot(nil), q.recs...), nil
}
func (q *countingQueue) Pause(string) error                   { return nil }
func (q *countingQueue) Resume(context.Context, string) error { return nil }
func (q *countingQueue) Retry(context.Context, string) error  { return nil }

// whereQueue is countingQueue with HistoryWhere, as the app's Queue has.
type whereQueue struct{ *countingQueue }

func (q whereQueue) HistoryWhere(keep func(*transfer.Snapshot) bool) ([]transfer.Snapshot, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queries++
	var out []transfer.Snapshot
	for i := range q.recs {
		s := q.recs[i] // a copy, as a record read is
		q.walked++
		if keep(&s) {
			q.kept++
			out = append(out, s)
		}
	}
	return out, nil
}

// A camera roll's journal: 20,000 uploads done, with a few failures among
// them (extra).
func cameraRoll(root string, at time.Time, extra ...transfer.Snapshot) []transfer.Snapshot {
	recs := make([]transfer.Snapshot, 0, 20000+len(extra))
	for i := range 20000 {
		recs = append(recs, transfer.Snapshot{ID: "up" + itoa(i), URL: root + "/v1/uploads", State: transfer.StateDone, Updated: at})
	}
	return append(recs, extra...)
}

// Whether Photos' quota is used up today is the app's fact, from the
// journal read one record at a time, none kept: never the whole history
// of a camera roll (20,000 records), which the window read on its way
// to post every batch. A Photos job to the root posted to that failed for
// the quota since the last reset says it is, with the reset; a failure
// for Gmail's quota, another server's Photos, or one before the last
// reset does not.
func TestPhotosQuotaUsedUpReadsNoWholeHistory(t *testing.T) {
	pacific, _ := time.LoadLocation("America/Los_Angeles")
	now := time.Date(2026, 11, 25, 16, 0, 0, 0, pacific)
	reset := time.Date(2026, 11, 26, 0, 0, 0, 0, pacific)
	const root = "https://photoslibrary.googleapis.com"
	quota := func(id, url string, at time.Time) transfer.Snapshot {
		return transfer.Snapshot{ID: id, URL: url, State: transfer.StateFailed, Cause: transfer.ErrDailyQuota, Updated: at}
	}
	today := now.Add(-time.Hour)
	yesterday := now.Add(-20 * time.Hour)
	for _, c := range []struct {
		name  string
		extra []transfer.Snapshot
		want  bool
	}{
		{"an upload refused today", []transfer.Snapshot{quota("u", root+"/v1/uploads", today)}, true},
		{"a batchCreate refused today", []transfer.Snapshot{quota("c", root+"/v1/mediaItems:batchCreate", today)}, true},
		{"Gmail's quota", []transfer.Snapshot{quota("g", "https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send", today)}, false},
		{"Drive's quota", []transfer.Snapshot{quota("d", "https://www.googleapis.com/upload/drive/v3/files", today)}, false},
		{"the sandbox's Photos", []transfer.Snapshot{quota("s", "http://127.0.0.1:5555/v1/uploads", today)}, false},
		{"before the last reset", []transfer.Snapshot{quota("y", root+"/v1/uploads", yesterday)}, false},
		{"nothing refused", nil, false},
	} {
		q := &countingQueue{recs: cameraRoll(root, yesterday, c.extra...)}
		w := NewQuotaWait(whereQueue{q})
		at, used := w.UsedUp(root+"/", now)
		if used != c.want || used && !at.Equal(reset) {
			t.Errorf("%s: used up %v at %v, want %v at %v", c.name, used, at, c.want, reset)
		}
		if q.whole != 0 || q.queries != 1 || q.kept != 0 || q.walked != len(q.recs) {
			t.Errorf("%s: %d whole histories read, %d queries, %d of %d records kept; want none whole, one query keeping none", c.name, q.whole, q.queries, q.kept, q.walked)
		}
	}

	// A queue that cannot read one record at a time is read whole: the
	// fact is the same.
	q := &countingQueue{recs: cameraRoll(root, yesterday, quota("u", root+"/v1/uploads", today))}
	if at, used := PhotosQuotaUsedUp(q, root, now); !used || !at.Equal(reset) || q.whole != 1 {
		t.Errorf("read whole: used up %v at %v after %d reads; want at %v", used, at, q.whole, reset)
	}
	// Past the reset, the quota is whole again.
	if _, used := PhotosQuotaUsedUp(whereQueue{q}, root, reset.Add(time.Minute)); used {
		t.Error("the quota is used up still after its reset")
	}
}
