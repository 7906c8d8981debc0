package photos

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// The wait for Google Photos' daily quota, kept across restarts. Once the
// project's quota for the day is used up, Photos refuses every request
// until midnight Pacific time: a retry before then spends a request for
// nothing, and retrying all night is what peers get wrong. So the jobs the
// quota stopped wait for the reset and go on by themselves then:
//
//   - jobs that failed for it: the journal keeps their cause and when they
//     failed, from which the reset follows (PhotosDailyReset), so a new
//     process finds them and the reset they wait for as the old one did;
//   - uploads held before their first byte because the quota was known to
//     be used up (Hold): paused in the journal, which cannot tell them
//     from uploads the person paused, so the reset they wait for is kept
//     in their delivery (delivery.Delivery.QuotaReset: its paused jobs
//     wait for it). Carrier before deliveries kept the held jobs in
//     STATE/photos-quota.json: read once, never written again, and
//     removed once what it holds is in the deliveries.
//
// Any front end on the journal can run one: the window does from its
// start. `carrier resume` leaves what waits for a reset to come, names it
// and, with --wait, waits for the reset itself (Load, Waiting).

// quotaLook is how often a wait for a reset looks at the wall clock.
const quotaLook = time.Minute

// WaitUntil waits until the wall clock (now) reaches at, or ctx ends (its
// error then). It looks at the clock a minute at a time, with after's
// timers: a timer's clock stops while the computer sleeps, and a reset
// comes regardless, so one timer set for it would end late by as long as
// the lid was closed.
func WaitUntil(ctx context.Context, at time.Time, now func() time.Time, after func(time.Duration) <-chan time.Time) error {
	for t := now(); t.Before(at); t = now() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-after(min(at.Sub(t), quotaLook)):
		}
	}
	return nil
}

// deliveryStorer is a queue whose jobs' deliveries are stored (the app's
// Queue).
type deliveryStorer interface {
	DeliveryStore() *delivery.Store
}

// QuotaQueue is what the wait asks of a queue: the app's Queue has it.
type QuotaQueue interface {
	History() ([]transfer.Snapshot, error)
	Pause(id string) error
	Resume(ctx context.Context, id string) error
	Retry(ctx context.Context, id string) error
}

// QuotaWait sends jobs on at the daily quota's reset. Set its fields
// before Start; they are read by its waiters afterwards.
type QuotaWait struct {
	// Now and After are the clock (time.Now and time.After unless set):
	// tests give their own.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// Go runs a waiter (a goroutine unless set): a front end counts them
	// to stop them with itself. The waiter ends when ctx does.
	Go func(func(ctx context.Context))
	// Fired, when set, is told after a reset sent jobs on (from the
	// waiter's goroutine).
	Fired func(at time.Time, ids []string)

	q     QuotaQueue
	store *delivery.Store // the deliveries that keep the resets; nil: held jobs are not kept
	path  string          // the side file of Carriers before deliveries, "" for none

	mu     sync.Mutex
	ctx    context.Context
	held   map[string]time.Time // uploads Hold paused (or the side file named) → the reset they wait for
	resets map[string]time.Time // deliveries whose paused jobs wait for a reset → it
	armed  map[int64]bool       // resets (Unix seconds) a waiter waits for
}

// NewQuotaWait is a wait for q's jobs. The resets held jobs wait for are
// kept in their deliveries when q stores them (the app's Queue does).
func NewQuotaWait(q QuotaQueue) *QuotaWait {
	w := &QuotaWait{q: q, held: map[string]time.Time{}, resets: map[string]time.Time{}, armed: map[int64]bool{}, ctx: context.Background()}
	if j, ok := q.(interface{ Journal() *transfer.Journal }); ok && j.Journal() != nil {
		w.path = filepath.Join(filepath.Dir(j.Journal().Dir()), quotaFile)
	}
	if d, ok := q.(deliveryStorer); ok {
		w.store = d.DeliveryStore()
	}
	return w
}

// heldLocked is the reset a paused job s waits for, if it was held.
func (w *QuotaWait) heldLocked(s transfer.Snapshot) (time.Time, bool) {
	if s.State != transfer.StatePaused {
		return time.Time{}, false
	}
	if at, ok := w.held[s.ID]; ok {
		return at, true
	}
	at, ok := w.resets[s.Owner]
	return at, ok && s.Owner != ""
}

func (w *QuotaWait) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *QuotaWait) after(d time.Duration) <-chan time.Time {
	if w.After != nil {
		return w.After(d)
	}
	return time.After(d)
}

// QuotaStopped reports whether s is a Photos job that failed for the
// daily quota, and the reset it waits for. Gmail's and Drive's quotas are
// others, with resets of their own.
func QuotaStopped(s transfer.Snapshot) (time.Time, bool) {
	if s.State != transfer.StateFailed || !errors.Is(s.Cause, transfer.ErrDailyQuota) || !isPhotosCall(s.URL) {
		return time.Time{}, false
	}
	return PhotosDailyReset(s.Updated), true
}

// isPhotosCall says whether u is a call of the Photos Library API (an
// upload, a batchCreate, an album: the route table's), on Google or a
// sandbox.
func isPhotosCall(u string) bool { return delivery.RouteOf(u).Photos() }

// Start finds the journal's jobs the quota stopped (failed for it, or
// held by Hold in this or an earlier process) and sends each on at its
// reset: at once where the reset passed while nothing ran. It returns the
// soonest reset and the jobs waiting, for a front end to say so; none
// when nothing waits. Run it once the journal's jobs are taken up.
func (w *QuotaWait) Start(ctx context.Context) (time.Time, []string, error) {
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
	err := w.Load()
	recs, herr := w.q.History()
	if herr != nil {
		return time.Time{}, nil, herr
	}
	var ids []string
	resets := map[int64]time.Time{}
	err = errors.Join(err, w.migrate(recs))
	for _, s := range recs {
		at, ok := QuotaStopped(s)
		if !ok {
			w.mu.Lock()
			at, ok = w.heldLocked(s)
			w.mu.Unlock()
		}
		if ok {
			ids = append(ids, s.ID)
			resets[at.Unix()] = at
		}
	}
	w.forgetGone(recs)
	var soonest time.Time
	for _, at := range resets {
		if soonest.IsZero() || at.Before(soonest) {
			soonest = at
		}
		w.Expect(at)
	}
	return soonest, ids, err
}

// Load reads the resets the deliveries of jobs Hold paused in an earlier
// process wait for (and the side file of a Carrier before deliveries), for
// Waiting to name them too; Start does it itself.
func (w *QuotaWait) Load() error {
	held, err := w.load()
	resets, rerr := w.loadResets()
	w.mu.Lock()
	for id, at := range held {
		if _, ok := w.held[id]; !ok {
			w.held[id] = at
		}
	}
	for d, at := range resets {
		w.resets[d] = at
	}
	w.mu.Unlock()
	return errors.Join(err, rerr)
}

// loadResets reads the stored deliveries that wait for a reset.
func (w *QuotaWait) loadResets() (map[string]time.Time, error) {
	if w.store == nil {
		return nil, nil
	}
	ds, err := w.store.List()
	out := map[string]time.Time{}
	for _, d := range ds {
		if !d.QuotaReset.IsZero() {
			out[d.ID] = d.QuotaReset
		}
	}
	if err != nil {
		err = fmt.Errorf("cannot read the deliveries held for Google Photos' quota: %w", err)
	}
	return out, err
}

// setReset stores at (zero: none) as the reset delivery id's paused jobs
// wait for, and notes it (the caller holds mu).
func (w *QuotaWait) setResetLocked(id string, at time.Time) error {
	if at.IsZero() {
		delete(w.resets, id)
	} else {
		w.resets[id] = at
	}
	if w.store == nil || id == "" {
		return nil
	}
	d, err := w.store.Get(id)
	if errors.Is(err, delivery.ErrNotFound) || err == nil && d.QuotaReset.Equal(at) {
		return nil
	}
	if err == nil {
		d.QuotaReset = at
		err = w.store.Put(d)
	}
	if err != nil {
		return fmt.Errorf("cannot keep the uploads held for Google Photos' quota: %w", err)
	}
	return nil
}

// Hold pauses uploads that the quota, known to be used up, would refuse,
// and sends them on at the reset at: kept first in their deliveries, so a
// restart between the two still knows why they are paused.
func (w *QuotaWait) Hold(ids []string, at time.Time) error {
	owners := map[string]bool{}
	var err error
	if w.store != nil {
		recs, herr := w.q.History()
		err = herr
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		for _, s := range recs {
			if want[s.ID] && s.Owner != "" {
				owners[s.Owner] = true
			}
		}
	}
	w.mu.Lock()
	for _, id := range ids {
		w.held[id] = at
	}
	for d := range owners {
		err = errors.Join(err, w.setResetLocked(d, at))
	}
	w.mu.Unlock()
	for _, id := range ids {
		// One that failed for the quota already waits as it is.
		if perr := w.q.Pause(id); perr != nil && !errors.Is(perr, transfer.ErrIllegalMove) && !errors.Is(perr, transfer.ErrEnded) {
			err = errors.Join(err, perr)
		}
	}
	w.Expect(at)
	return err
}

// Expect makes sure jobs stopped by the quota go on at the reset at: a
// front end that saw one fail calls it. One waiter per reset; it sends on
// every job that waits for that reset or an earlier one.
func (w *QuotaWait) Expect(at time.Time) {
	w.mu.Lock()
	if w.armed[at.Unix()] {
		w.mu.Unlock()
		return
	}
	w.armed[at.Unix()] = true
	ctx := w.ctx
	w.mu.Unlock()
	wait := func(ctx context.Context) {
		if WaitUntil(ctx, at, w.now, w.after) == nil {
			w.fire(ctx, at)
		}
	}
	if w.Go != nil {
		w.Go(wait)
		return
	}
	go wait(ctx)
}

// Waiting is when the jobs the quota stopped go on, by job: the jobs Hold
// paused and those that failed for the quota, as the journal has them now.
func (w *QuotaWait) Waiting() (map[string]time.Time, error) {
	recs, err := w.q.History()
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range recs {
		if at, ok := QuotaStopped(s); ok {
			out[s.ID] = at
		} else if at, ok := w.heldLocked(s); ok {
			out[s.ID] = at
		}
	}
	return out, nil
}

// fire sends on what waits for the reset at or an earlier one, as the
// journal has it now: the person may have retried, resumed or cancelled
// some meanwhile.
func (w *QuotaWait) fire(ctx context.Context, at time.Time) {
	w.mu.Lock()
	delete(w.armed, at.Unix())
	w.mu.Unlock()
	recs, err := w.q.History()
	if err != nil {
		return
	}
	var sent []string
	for _, s := range recs {
		if reset, ok := QuotaStopped(s); ok && !reset.After(at) {
			if w.q.Retry(ctx, s.ID) == nil {
				sent = append(sent, s.ID)
			}
			continue
		}
		w.mu.Lock()
		reset, held := w.heldLocked(s)
		w.mu.Unlock()
		if held && !reset.After(at) {
			if w.resume(ctx, s.ID) == nil {
				sent = append(sent, s.ID)
			}
		}
	}
	w.mu.Lock()
	for id, reset := range w.held {
		if !reset.After(at) {
			delete(w.held, id)
		}
	}
	for d, reset := range w.resets {
		if !reset.After(at) {
			w.setResetLocked(d, time.Time{})
		}
	}
	w.mu.Unlock()
	if w.Fired != nil && ctx.Err() == nil {
		w.Fired(at, sent)
	}
}

// resume lets a held job go on. A process that starts after the reset
// may fire before it took up the journal's paused jobs: it takes them up
// first, as its start would.
func (w *QuotaWait) resume(ctx context.Context, id string) error {
	err := w.q.Resume(ctx, id)
	if r, ok := w.q.(interface {
		ResumeJournal(bool) ([]string, error)
	}); ok && errors.Is(err, transfer.ErrUnknownJob) {
		r.ResumeJournal(false)
		err = w.q.Resume(ctx, id)
	}
	return err
}

// forgetGone drops held jobs the journal no longer has paused (resumed,
// cancelled or forgotten by the person), and the resets of deliveries
// none of whose jobs is paused.
func (w *QuotaWait) forgetGone(recs []transfer.Snapshot) {
	paused := map[string]bool{}
	for _, s := range recs {
		if s.State == transfer.StatePaused {
			paused[s.ID] = true
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.held {
		if !paused[id] {
			delete(w.held, id)
		}
	}
	// A delivery none of whose jobs is paused any more waits for nothing.
	owners := map[string]bool{}
	for _, s := range recs {
		if s.State == transfer.StatePaused {
			owners[s.Owner] = true
		}
	}
	for d := range w.resets {
		if !owners[d] {
			w.setResetLocked(d, time.Time{})
		}
	}
}
