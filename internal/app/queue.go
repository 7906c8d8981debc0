package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"carrier/compose"
	"carrier/internal/app/message"
	"carrier/internal/delivery"
	"carrier/internal/platform"
	"carrier/transfer"
)

// Queue is the transfer queue with the spool's lifecycle around it: a
// message's spool file goes when its job is done, cancelled or forgotten,
// and what no job needs is swept when the queue opens. Everything else is
// transfer.Queue's own.
type Queue struct {
	*transfer.Queue
	spool *Spool
	kept  string // the folder of the messages' fields as written (reopen.go)

	in   chan transfer.Event   // the engine's events
	out  chan<- transfer.Event // the caller's, passed on after the spool saw them
	stop chan struct{}
	done chan struct{}
	once sync.Once

	state string // cfg.StateDir
	parts []Part // the services' sides of the queue (AddPart), in order

	accountMu sync.Mutex
	account   string // Bind's

	dl deliveries // deliveries.go

	signals error // why the system's sleep and network signals are not heard; nil when they are

	// The attachments programs handed over (programcopies.go): their
	// folder, Compose's copy that may name them, and the removals under
	// way, which Close waits for.
	copiesMu     sync.Mutex
	copiesClosed bool // Close waits for the removals: none starts after
	copies       string
	unsent       *message.UnsentStore
	releaseMu    sync.Mutex
	releasing    sync.WaitGroup
}

// SystemSignals says why the system's sleep and network signals are not
// heard here (nil when they are): the clock comparison then notices wakes.
func (q *Queue) SystemSignals() error { return q.signals }

// OpenQueue starts a transfer queue on cfg and sweeps spool. The events go
// to cfg.Events as the engine's would, after the spool has let go of
// finished jobs' files: whoever sees a job done sees its spool gone.
func OpenQueue(cfg transfer.Config, spool *Spool) (*Queue, error) {
	// The journal holds session URIs (credentials) and the spool messages.
	if err := PrivateDir(cfg.StateDir); err != nil {
		return nil, err
	}
	if spool != nil {
		if _, err := os.Lstat(spool.dir); err == nil {
			if err := checkPrivate(spool.dir); err != nil {
				return nil, err
			}
		}
	}
	q := &Queue{spool: spool, kept: ComposedDir(cfg.StateDir), state: cfg.StateDir, out: cfg.Events, stop: make(chan struct{}), done: make(chan struct{})}
	q.in = make(chan transfer.Event, max(cap(cfg.Events), 64))
	cfg.Events = q.in
	tq, err := transfer.New(cfg)
	if err != nil {
		return nil, err
	}
	q.Queue = tq
	// Jobs ended for good leave the folder every start reads for the
	// journal's archive (transfer/archive.go): after a camera roll of
	// 20,000 pictures, the next start reads a few records, not 20,400.
	// A failure leaves them where they are, still read, still listed.
	tq.Journal().Compact()
	store, err := delivery.Open(delivery.Dir(cfg.StateDir))
	if err != nil {
		tq.Close()
		return nil, err
	}
	q.dl = deliveries{store: store, now: time.Now}
	if cfg.Clock != nil {
		q.dl.now = cfg.Clock.Now
	}
	partsMu.Lock()
	for _, add := range partsAdded {
		q.parts = append(q.parts, add(q))
	}
	partsMu.Unlock()
	// One read of the history for every sweep, one record at a time,
	// keeping the jobs not done (the spool's files and the kept fields
	// are theirs) and those the parts keep (Photos' calls, with when each
	// upload ended): after a camera roll the history is 20,400 records.
	// The whole history is read only when a call may have items to make
	// again.
	recs, err := q.HistoryWhere(func(s *transfer.Snapshot) bool {
		keep := false
		for _, p := range q.parts {
			if p.Keeps(s) {
				keep = true
			}
		}
		return s.State != transfer.StateDone || keep
	})
	if err == nil && recs == nil {
		recs = []transfer.Snapshot{} // read, and empty: nil says unread
	}
	for _, p := range q.parts {
		recs, err = p.Opened(recs, err)
	}
	q.sweep(recs, err)
	go q.pump()
	q.watchSystem()
	return q, nil
}

// Words for why uploads wait on the system; the front ends show them.
const (
	HeldAsleep  = "Sleeping: will resume on wake"
	HeldOffline = "Offline: waiting for the network"
)

// watchSystem hears the system's power and network signals: before a
// sleep, requests stop and every upload's place is kept; while offline,
// nothing is sent and no retry is burnt; on a wake or a network back,
// every upload asks its session where it stands at once. When traffic goes
// another way (a Wi-Fi switch, a VPN up or down), requests on the old way
// are abandoned at once rather than after the stall timeout, and idle
// connections are dropped (Wake drops the queue's; the process's default
// client carries the token refreshes and the mailbox's reads). Where the
// system cannot tell, the engine's clock comparison notices a wake by
// itself.
func (q *Queue) watchSystem() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-q.stop
		cancel()
	}()
	q.signals = platform.Watch(ctx, func(s platform.Signal) {
		switch s {
		case platform.Sleeping:
			q.Hold(HeldAsleep)
		case platform.Woke:
			q.Release(HeldAsleep)
			http.DefaultClient.CloseIdleConnections()
			q.Wake()
		case platform.NetworkDown:
			q.Hold(HeldOffline)
		case platform.NetworkUp:
			q.Release(HeldOffline)
			http.DefaultClient.CloseIdleConnections()
			q.Wake()
		case platform.PrimaryChanged:
			http.DefaultClient.CloseIdleConnections()
			q.Wake()
		case platform.Metered:
			q.SetMetered(true) // the person's policy (SetOnMetered) says what waits
		case platform.NotMetered:
			q.SetMetered(false)
		}
	})
}

// SetBandwidthSpec limits every upload together to a rate or a timetable
// in rclone's --bwlimit syntax ("off", "2M", "08:00,1M 19:00,off"), at
// once, requests in flight included.
func (q *Queue) SetBandwidthSpec(spec string) error {
	t, err := transfer.ParseBandwidth(spec)
	if err != nil {
		return err
	}
	q.SetSchedule(t)
	return nil
}

// SetOnMetered is the person's setting: whether large uploads (over the
// engine's default size) pause while the connection is metered.
func (q *Queue) SetOnMetered(pause bool) {
	q.SetMeteredPolicy(transfer.MeteredPolicy{Pause: pause})
}

// sweep takes from the spool what no job of the journal needs (recs,
// the history read, err its failure).
func (q *Queue) sweep(recs []transfer.Snapshot, err error) {
	if err != nil {
		q.spool.Sweep(nil) // a record unread may need any of them
		q.sweepKept(nil)
		return
	}
	q.spool.Sweep(neededBy(recs))
	q.sweepKept(recs)
}

// pump lets the parts and the spool see each event before passing it on.
func (q *Queue) pump() {
	defer close(q.done)
	for {
		select {
		case e := <-q.in:
			q.partsSee(e, true)
			q.settle(e)
			q.pass(e, true)
		case <-q.stop:
			for { // what the engine sent before it stopped
				select {
				case e := <-q.in:
					q.partsSee(e, false)
					q.settle(e)
					q.pass(e, false)
				default:
					return
				}
			}
		}
	}
}

// settle releases the file of a job that has reached an end, and the
// fields of a message that was sent (a cancelled one may be reopened).
func (q *Queue) settle(e transfer.Event) {
	if path, ok := ended(e); ok {
		q.spool.Release(path)
		if k := delivery.KindOf(e.Snap.URL); e.Snap.State == transfer.StateDone && (k == delivery.KindMessage || k == delivery.KindDraft) {
			q.drop(e.Snap)
		}
	}
}

// pass hands an event on as the engine would: progress only when there is
// room; the rest waits for room unless the queue is closing.
func (q *Queue) pass(e transfer.Event, wait bool) {
	if q.out == nil {
		return
	}
	if !wait || droppable(e) {
		select {
		case q.out <- e:
		default:
		}
		return
	}
	select {
	case q.out <- e:
	case <-q.stop:
		select {
		case q.out <- e:
		default:
		}
	}
}

// Close stops the queue, then passes on the events it sent before.
func (q *Queue) Close() error {
	err := q.Queue.Close()
	q.once.Do(func() { close(q.stop) })
	<-q.done
	for _, p := range q.parts {
		p.Closed()
	}
	q.copiesMu.Lock()
	q.copiesClosed = true
	q.copiesMu.Unlock()
	q.releasing.Wait()
	return err
}

// Forget removes a finished job from the journal, its spool file and
// its message's fields kept to reopen it.
func (q *Queue) Forget(id string) error {
	s := snapOf(q.Queue, id)
	if err := q.Queue.Forget(id); err != nil {
		return err
	}
	return errors.Join(q.spool.Release(s.Path), q.drop(s))
}

// AddMessage builds msg into the spool and queues spec (from Message's
// recipe) to send it, keeping msg's fields to reopen it. A spool the
// queue refused is removed at once.
func (q *Queue) AddMessage(ctx context.Context, spec transfer.Spec, msg *compose.Message, method compose.Method) (string, error) {
	return q.addMessage(ctx, spec, msg, method, composedOf(msg, method, Upload{}), nil)
}

// addMessage is AddMessage keeping kept as the message written, in dl,
// the delivery the message ends (nil: a message alone, a delivery of its
// own). The fields are kept before the job is queued: once it is, it may
// fail or be cancelled at once, and must be reopenable.
func (q *Queue) addMessage(ctx context.Context, spec transfer.Spec, msg *compose.Message, method compose.Method, kept *message.Composed, dl *delivery.Delivery) (string, error) {
	sp, err := q.spool.Build(ctx, msg, method)
	if err != nil {
		return "", err
	}
	spec.Path, spec.SHA256 = sp.Path, sp.SHA256
	if dl == nil && spec.Owner != "" {
		d, err := q.dl.store.Get(spec.Owner)
		if err != nil {
			return "", errors.Join(fmt.Errorf("cannot keep the message to reopen: %w", err), q.spool.Release(sp.Path))
		}
		dl = &d
	}
	if dl == nil {
		d, err := q.BeginDelivery(delivery.KindOf(spec.URL), spec.Label, q.AccountOr(spec.Account))
		if err != nil {
			return "", errors.Join(err, q.spool.Release(sp.Path))
		}
		defer q.EndDelivery(d)
		dl, spec.Owner = d, d.ID
	}
	if err := q.keepIn(dl, kept); err != nil {
		return "", errors.Join(err, q.spool.Release(sp.Path))
	}
	id, err := q.Add(spec)
	if err != nil {
		return "", errors.Join(err, q.spool.Release(sp.Path))
	}
	return id, nil
}

// AccountOr is account, or the one Bind gave the queue when it is "".
func (q *Queue) AccountOr(account string) string {
	if account != "" {
		return account
	}
	q.accountMu.Lock()
	defer q.accountMu.Unlock()
	return q.account
}

// SendMessage queues msg to Gmail on the API at root, by method.
func (q *Queue) SendMessage(ctx context.Context, root string, msg *compose.Message, method compose.Method) (string, error) {
	up, err := Message(msg, method, GmailOptions{})
	if err != nil {
		return "", err
	}
	return q.AddMessage(ctx, up.Spec(root), msg, method)
}

// PostTimeline queues a new timeline item with media and item's caption
// on the API at root.
func (q *Queue) PostTimeline(root string, media *compose.TimelineMedia, item compose.TimelineItem) (string, error) {
	up, err := Post(media, item, "")
	if err != nil {
		return "", err
	}
	spec := up.Spec(root)
	spec.Path = media.Path
	return q.Add(spec)
}
