package app

import (
	"errors"
	"fmt"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// Every job the app queues belongs to a delivery (internal/delivery): a
// message with its Drive uploads and shares, a draft, a Photos batch, an
// upload. The delivery is stored before its first job is queued, every
// job names it (transfer.Spec.Owner), and once its jobs are queued it is
// stored again with them as its members. A job that needs others belongs
// to theirs (a share to its file's upload, a message to its files, a
// batch's call to its pictures), so only a delivery's first jobs are
// given an owner by hand. A crash between queuing and the second write
// leaves jobs that name a delivery not listing them: reading the
// deliveries joins them (delivery.Reconcile).

// deliveries is the queue's store of deliveries, beside its journal.
type deliveries struct {
	store *delivery.Store
	now   func() time.Time
}

// BeginDelivery stores a new delivery of kind, with no member yet (and what the
// withs set), and returns it: queue its jobs with Owner set to its id,
// then EndDelivery it.
func (q *Queue) BeginDelivery(kind delivery.Kind, label, account string, with ...func(*delivery.Delivery)) (*delivery.Delivery, error) {
	d := &delivery.Delivery{ID: delivery.NewID(), Kind: kind, Created: q.dl.now().UTC(), Label: label, Account: account}
	for _, w := range with {
		w(d)
	}
	if err := q.dl.store.Put(*d); err != nil {
		return nil, fmt.Errorf("cannot record the delivery: %w", err)
	}
	return d, nil
}

// EndDelivery stores d with the members its queued jobs make (jobs: the journal's
// now), or removes it when none was queued.
func (q *Queue) EndDelivery(d *delivery.Delivery) error {
	// The queue's jobs are looked at one at a time, and only what the
	// delivery needs of its own is kept: a camera roll's delivery owns
	// 20,400 jobs, whose snapshots would otherwise be held at once.
	has := make(map[string]bool, len(d.Members))
	for _, m := range d.Members {
		has[m.Job] = false
	}
	var owned []delivery.Owned
	q.EachJob(func(s *transfer.Snapshot) {
		if _, ok := has[s.ID]; ok {
			has[s.ID] = true
		}
		if s.Owner == d.ID {
			owned = append(owned, delivery.Owned{ID: s.ID, URL: s.URL, Path: s.Path, Created: s.Created})
		}
	})
	nd, f := delivery.ReconcileJobs(*d, func(id string) bool { return has[id] }, owned)
	if f.Empty {
		return q.dl.store.Delete(d.ID)
	}
	*d = nd
	return q.dl.store.Put(nd)
}

// Owned wraps settings so that each spec it sets also names d as owner.
func Owned(d *delivery.Delivery, settings func(*transfer.Spec)) func(*transfer.Spec) {
	return func(s *transfer.Spec) {
		if settings != nil {
			settings(s)
		}
		s.Owner = d.ID
	}
}

// Deliveries are the journal's deliveries, oldest first: the stored ones,
// checked against the jobs (delivery.Of), and those of jobs from before
// deliveries, adopted. Stored deliveries whose jobs are all forgotten, and
// older than delivery.Grace (another process may be queuing a young one's
// jobs), are removed.
func (q *Queue) Deliveries() ([]delivery.Delivery, error) {
	ds, _, err := q.deliveries()
	return ds, err
}

// deliveries are Deliveries with the jobs they were read against, by id.
func (q *Queue) deliveries() ([]delivery.Delivery, map[string]transfer.Snapshot, error) {
	snaps, herr := q.History()
	byID := make(map[string]transfer.Snapshot, len(snaps))
	for _, s := range snaps {
		byID[s.ID] = s
	}
	stored, err := q.dl.store.Reconcile(byID, q.dl.now())
	return delivery.Of(snaps, stored), byID, errors.Join(herr, err)
}

// DeliveryOf is the delivery job belongs to, among ds.
func DeliveryOf(ds []delivery.Delivery, job string) (delivery.Delivery, bool) {
	for _, d := range ds {
		if _, ok := d.Member(job); ok {
			return d, true
		}
	}
	return delivery.Delivery{}, false
}

// Now is the time on the queue's clock (its Config's Clock, else the
// system's): a delivery's times are on it.
func (q *Queue) Now() time.Time { return q.dl.now() }

// DeliveryStore is the store of the queue's deliveries (a QuotaWait keeps
// the resets held jobs wait for in it).
func (q *Queue) DeliveryStore() *delivery.Store { return q.dl.store }
