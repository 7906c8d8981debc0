package transfer

import (
	"os"
	"testing"
	"time"
)

// Progress alone is made durable at most once a second by the queue's
// clock (Config.Clock), not the system's: a queue whose clock moved two
// seconds writes the record, however little real time passed.
func TestProgressDurableByTheQueuesClock(t *testing.T) {
	clock := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	q, err := New(Config{StateDir: t.TempDir(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	rec := goodRecord()
	if err := q.journal.Save(rec); err != nil {
		t.Fatal(err)
	}
	jb := newJob(rec, nil)
	sink := jobSink{q, jb}
	stored := func() int64 {
		t.Helper()
		data, err := os.ReadFile(q.journal.path(rec.ID, ".json"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRecord(data)
		if err != nil {
			t.Fatal(err)
		}
		return r.Confirmed
	}
	checkpoint := func(confirmed int64) {
		t.Helper()
		r := jb.record()
		c := r.cursor()
		c.Confirmed = confirmed
		if err := sink.Checkpoint(c, false); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint(6)
	if got := stored(); got != 6 {
		t.Fatalf("the first progress is not in the record: %d", got)
	}
	checkpoint(7)
	if got := stored(); got != 6 {
		t.Errorf("progress within the second made the record durable: %d", got)
	}
	clock.Advance(2 * time.Second)
	checkpoint(8)
	if got := stored(); got != 8 {
		t.Errorf("two seconds on the queue's clock, and the record holds %d, not 8", got)
	}
}
