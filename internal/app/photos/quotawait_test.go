package photos

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// quotaQueue is a journal the test writes: its jobs' states, and what the
// wait asked of it.
type quotaQueue struct {
	mu      sync.Mutex
	journal *transfer.Journal
	recs    []transfer.Snapshot
	adopted bool // ResumeJournal ran: paused jobs are the queue's
	calls   []string
	store   *delivery.Store // nil: none
}

func (f *quotaQueue) Journal() *transfer.Journal { return f.journal }

func (f *quotaQueue) DeliveryStore() *delivery.Store { return f.store }

// heldBatch stores the delivery of the held upload in state's store.
func heldBatch(t *testing.T, state string) (*delivery.Store, string) {
	t.Helper()
	store, err := delivery.Open(delivery.Dir(state))
	if err != nil {
		t.Fatal(err)
	}
	d := delivery.Delivery{ID: delivery.NewID(), Kind: delivery.KindPhotos, Created: time.Now(), Members: []delivery.Member{{Job: "held", Role: delivery.RolePhoto}}}
	if err := store.Put(d); err != nil {
		t.Fatal(err)
	}
	return store, d.ID
}

// resetOf is the reset delivery id of store waits for.
func resetOf(t *testing.T, store *delivery.Store, id string) time.Time {
	t.Helper()
	d, err := store.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return d.QuotaReset
}

func (f *quotaQueue) History() ([]transfer.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.recs), nil
}

func (f *quotaQueue) call(op, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op+" "+id)
}

func (f *quotaQueue) Pause(id string) error {
	f.call("pause", id)
	f.set(id, transfer.StatePaused)
	return nil
}

func (f *quotaQueue) Resume(_ context.Context, id string) error {
	f.mu.Lock()
	adopted := f.adopted
	f.mu.Unlock()
	if !adopted {
		return transfer.ErrUnknownJob
	}
	f.call("resume", id)
	f.set(id, transfer.StateQueued)
	return nil
}

func (f *quotaQueue) Retry(_ context.Context, id string) error {
	f.call("retry", id)
	f.set(id, transfer.StateQueued)
	return nil
}

func (f *quotaQueue) ResumeJournal(bool) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adopted = true
	return nil, nil
}

func (f *quotaQueue) set(id string, st transfer.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.recs {
		if f.recs[i].ID == id {
			f.recs[i].State, f.recs[i].Cause = st, nil
		}
	}
}

func (f *quotaQueue) done() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// clock is the wait's clock: After hands the test each wait asked for.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan quotaTimer
}

type quotaTimer struct {
	d    time.Duration
	fire chan time.Time
}

func (c *clock) set(w *QuotaWait) {
	w.Now = func() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
	w.After = func(d time.Duration) <-chan time.Time {
		t := quotaTimer{d, make(chan time.Time, 1)}
		c.waits <- t
		return t.fire
	}
}

// A new process finds in the journal the jobs the quota stopped (Photos
// jobs failed for it, and uploads an earlier process held for it) and
// sends them on at the reset computed as before, Pacific midnight after
// the failure; a job the person paused, or Gmail's quota, is not its
// business. The held uploads are taken up first when the reset comes
// before the queue took up the journal.
func TestQuotaWaitAfterARestart(t *testing.T) {
	state := t.TempDir()
	j, err := transfer.OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	pacific, _ := time.LoadLocation("America/Los_Angeles")
	failedAt := time.Date(2026, 11, 25, 15, 0, 0, 0, pacific)
	reset := time.Date(2026, 11, 26, 0, 0, 0, 0, pacific)
	quota := func(id, url string) transfer.Snapshot {
		return transfer.Snapshot{ID: id, URL: url, State: transfer.StateFailed, Cause: transfer.ErrDailyQuota, Updated: failedAt}
	}
	store, batch := heldBatch(t, state)
	f := &quotaQueue{journal: j, store: store, recs: []transfer.Snapshot{
		quota("photos-upload", "https://photoslibrary.googleapis.com/v1/uploads"),
		quota("photos-call", "http://127.0.0.1:5555/v1/mediaItems:batchCreate"),
		quota("gmail", "https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send?uploadType=resumable"),
		{ID: "held", URL: "https://photoslibrary.googleapis.com/v1/uploads", State: transfer.StatePaused, Owner: batch},
		{ID: "paused-by-person", URL: "https://photoslibrary.googleapis.com/v1/uploads", State: transfer.StatePaused},
	}}

	// The earlier process held one upload, and closed.
	before := NewQuotaWait(f)
	c := &clock{now: failedAt, waits: make(chan quotaTimer, 8)}
	c.set(before)
	ctx, stop := context.WithCancel(context.Background())
	before.Go = func(fn func(context.Context)) { go fn(ctx) }
	if err := before.Hold([]string{"held"}, reset); err != nil {
		t.Fatal(err)
	}
	<-c.waits
	stop()
	if at := resetOf(t, store, batch); !at.Equal(reset) {
		t.Fatalf("the held upload's delivery waits for %v, want %v", at, reset)
	}
	if _, err := os.Stat(filepath.Join(state, quotaFile)); !os.IsNotExist(err) {
		t.Fatalf("the side file of Carriers before deliveries was written: %v", err)
	}
	f.calls = nil

	// The next start, two hours later.
	w := NewQuotaWait(f)
	c = &clock{now: failedAt.Add(2 * time.Hour), waits: make(chan quotaTimer, 8)}
	c.set(w)
	fired := make(chan []string, 1)
	w.Fired = func(_ time.Time, ids []string) { fired <- ids }
	ctx, stop = context.WithCancel(context.Background())
	defer stop()
	at, ids, err := w.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !at.Equal(reset) || !slices.Equal(ids, []string{"held", "photos-call", "photos-upload"}) {
		t.Fatalf("Start found %v waiting for %v, want held, photos-call, photos-upload for %v", ids, at, reset)
	}
	// Seven hours to Pacific midnight, looked at by the wall clock a
	// minute at a time: a timer's clock stops while the computer sleeps.
	timer := <-c.waits
	if timer.d != time.Minute {
		t.Fatalf("the wait is %v, want a minute (then a look at the clock)", timer.d)
	}
	timer.fire <- c.now.Add(time.Minute)
	timer = <-c.waits // the reset still to come: it waits again
	if timer.d != time.Minute {
		t.Fatalf("the next wait is %v, want a minute", timer.d)
	}
	select {
	case t2 := <-c.waits:
		t.Fatalf("a second wait (%v) for the same reset", t2.d)
	default:
	}
	if calls := f.done(); len(calls) != 0 {
		t.Fatalf("before the reset: %v", calls)
	}
	waiting, _ := w.Waiting()
	if len(waiting) != 3 || !waiting["held"].Equal(reset) {
		t.Fatalf("waiting: %v", waiting)
	}

	c.mu.Lock()
	c.now = reset.Add(40 * time.Minute) // the computer slept through it
	c.mu.Unlock()
	timer.fire <- reset
	sent := <-fired
	slices.Sort(sent)
	if !slices.Equal(sent, []string{"held", "photos-call", "photos-upload"}) {
		t.Fatalf("sent on at the reset: %v", sent)
	}
	calls := f.done()
	slices.Sort(calls)
	if !slices.Equal(calls, []string{"resume held", "retry photos-call", "retry photos-upload"}) {
		t.Fatalf("at the reset: %v", calls)
	}
	if at := resetOf(t, store, batch); !at.IsZero() {
		t.Fatalf("the delivery still waits for %v after the reset", at)
	}
}

// The side file a Carrier before deliveries kept the held uploads in is
// read once: its reset goes into the held upload's delivery, the file is
// removed, and the upload is sent on at the reset.
func TestQuotaWaitReadsTheSideFileOfBefore(t *testing.T) {
	state := t.TempDir()
	j, err := transfer.OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	reset := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	side := filepath.Join(state, quotaFile)
	if err := os.WriteFile(side, []byte(`{"held":{"held":"`+reset.Format(time.RFC3339)+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	store, batch := heldBatch(t, state)
	f := &quotaQueue{journal: j, store: store, adopted: true, recs: []transfer.Snapshot{
		{ID: "held", URL: "https://photoslibrary.googleapis.com/v1/uploads", State: transfer.StatePaused, Owner: batch},
	}}
	w := NewQuotaWait(f)
	c := &clock{now: reset.Add(-time.Hour), waits: make(chan quotaTimer, 8)}
	c.set(w)
	ctx, stop := context.WithCancel(context.Background())
	at, ids, err := w.Start(ctx)
	if err != nil || !at.Equal(reset) || !slices.Equal(ids, []string{"held"}) {
		t.Fatalf("Start: %v %v %v", at, ids, err)
	}
	<-c.waits
	stop() // that process ends
	if got := resetOf(t, store, batch); !got.Equal(reset) {
		t.Fatalf("the delivery waits for %v, want %v", got, reset)
	}
	if _, err := os.Stat(side); !os.IsNotExist(err) {
		t.Fatalf("the side file stays: %v", err)
	}
	// A second start reads the delivery alone.
	w2 := NewQuotaWait(f)
	c.set(w2)
	fired := make(chan []string, 1)
	w2.Fired = func(_ time.Time, ids []string) { fired <- ids }
	ctx, stop = context.WithCancel(context.Background())
	defer stop()
	if at, ids, err := w2.Start(ctx); err != nil || !at.Equal(reset) || !slices.Equal(ids, []string{"held"}) {
		t.Fatalf("the next Start: %v %v %v", at, ids, err)
	}
	timer := <-c.waits
	c.mu.Lock()
	c.now = reset
	c.mu.Unlock()
	timer.fire <- reset
	if sent := <-fired; !slices.Equal(sent, []string{"held"}) {
		t.Fatalf("sent on at the reset: %v", sent)
	}
}

// A reset that passed while nothing ran sends the jobs on at once.
func TestQuotaWaitResetPassedWhileClosed(t *testing.T) {
	pacific, _ := time.LoadLocation("America/Los_Angeles")
	failedAt := time.Date(2026, 3, 7, 23, 30, 0, 0, pacific)
	f := &quotaQueue{adopted: true, recs: []transfer.Snapshot{
		{ID: "up", URL: "https://photoslibrary.googleapis.com/v1/uploads", State: transfer.StateFailed, Cause: transfer.ErrDailyQuota, Updated: failedAt},
	}}
	w := NewQuotaWait(f)
	c := &clock{now: failedAt.Add(3 * time.Hour), waits: make(chan quotaTimer, 8)}
	c.set(w)
	fired := make(chan []string, 1)
	w.Fired = func(_ time.Time, ids []string) { fired <- ids }
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if _, _, err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The reset is 2h30 past: no wait.
	if sent := <-fired; !slices.Equal(sent, []string{"up"}) {
		t.Fatalf("sent %v", sent)
	}
}
