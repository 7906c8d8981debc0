package photos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// tokenDay is how long Photos keeps an upload token; one refused at
// least expiredAfter after its upload ended is taken as expired (the
// server's clock and this one may differ a little).
const expiredAfter = 23 * time.Hour

// photosAgain looks at a batchCreate call that is done: the items Photos
// refused whose upload ended a day or more before the call are uploaded
// again and created in a call that needs this one, unless one was
// queued already (the caller holds photosMu). The album and each item's
// description are the call's delivery's; for a call queued before
// deliveries kept them, template's (the call's body as queued, nil when
// the spool no longer holds it).
func (q *Queue) photosAgain(c transfer.Snapshot, recs []transfer.Snapshot, template []byte) (bool, error) {
	q.photosLooks.Add(1)
	if !isBatchCreate(c) || c.State != transfer.StateDone || c.Response == nil {
		return false, nil
	}
	v := viewOf(recs)
	v.byID[c.ID] = &c
	if len(v.againOf(&c)) > 0 {
		return false, nil // made again already
	}
	var ans batchCreateAnswer
	if json.Unmarshal(q.answerBody(c), &ans) != nil {
		return false, nil
	}
	var tmpl struct {
		AlbumID       string `json:"albumId"`
		NewMediaItems []struct {
			Description string `json:"description"`
		} `json:"newMediaItems"`
	}
	// The delivery keeps them for every call queued since deliveries
	// did; a call from before has them in its record (Metadata).
	// Read once there is an item to make again.
	var kept *delivery.Delivery
	read := sync.OnceFunc(func() {
		if d, err := q.DeliveryStore().Get(c.Owner); c.Owner != "" && len(c.Metadata) == 0 && err == nil && d.Kind == delivery.KindPhotos {
			kept = &d
		} else if template != nil {
			json.Unmarshal(bytes.ReplaceAll(template, []byte{0}, []byte(`""`)), &tmpl)
		}
	})
	uploads := quotedUploads(c)
	album := ""
	for _, qt := range c.Quote {
		if a, ok := strings.CutSuffix(qt, ".id"); ok {
			album = a
		}
	}
	// Uploads an earlier look at this call queued for it, in a process
	// that died before it queued their call: no call names them, and they
	// were queued after this call ended. They are used, not made a third
	// time.
	named := map[string]bool{}
	for _, r := range v.calls {
		for _, u := range quotedUploads(*r) {
			named[u] = true
		}
	}
	leftover := func(path string) string {
		for _, r := range recs {
			if r.Protocol == transfer.ProtocolGoogUpload && r.Path == path && r.URL == upRoot(c.URL)+"/v1/uploads" &&
				!named[r.ID] && r.State != transfer.StateCancelled && !r.Created.Before(c.Updated) {
				return r.ID
			}
		}
		return ""
	}
	var ids []string
	var items []photosNewItem
	for k, u := range uploads {
		up, ok := v.byID[u]
		if !ok || k >= len(ans.Results) || ans.Results[k].Status.Code == 0 || c.Updated.Sub(up.Updated) < expiredAfter {
			continue
		}
		read()
		id := leftover(up.Path)
		if id == "" {
			// As the account the first upload went with, not as whichever
			// this process is bound to: the call uses the token as that
			// account.
			var err error
			// The batch's delivery's too.
			id, err = q.addPhotosUpload(upRoot(c.URL), up.Path, up.ContentType, nil, "", func(s *transfer.Spec) { s.Account, s.Owner = up.Account, c.Owner })
			if err != nil {
				return len(ids) > 0, err
			}
		}
		named[id] = true
		ids = append(ids, id)
		it := photosNewItem{Name: filepath.Base(up.Path)}
		switch {
		case kept != nil:
			it.Description = kept.DescriptionOf(up.Path)
		case k < len(tmpl.NewMediaItems):
			it.Description = tmpl.NewMediaItems[k].Description
		}
		items = append(items, it)
	}
	if len(ids) == 0 {
		return false, nil
	}
	albumID := ""
	switch {
	case album != "":
	case kept != nil:
		albumID = kept.AlbumID
	default:
		albumID = tmpl.AlbumID
	}
	_, err := q.addBatchCreate(upRoot(c.URL), album, albumID, ids, items, c.ID, fmt.Sprintf("Google Photos · again: %d items whose upload expired", len(ids)))
	return true, err
}

// answerBody is the body of done job s's answer: its snapshot's, or
// the journal's when the queue let it go (dropAnswers).
func (q *Queue) answerBody(s transfer.Snapshot) []byte {
	switch {
	case s.Response == nil:
		return nil
	case s.AnswerInJournal:
		if r, err := q.Queue.Answer(s.ID); err == nil {
			return r.Body
		}
		return nil
	}
	return s.Response.Body
}

// dropAnswers lets the queue forget the answers of a batchCreate call
// just done and of the uploads it named, once the front end has seen its
// event (photosRecord remembered its items, photosSettle has its
// snapshot): the journal keeps them, read back by answerBody when a
// batch's results are asked. A camera roll's calls answer with about
// 0.9 KB per picture, which the queue would otherwise hold for every
// picture to the batch's end.
func (q *Queue) dropAnswers(e transfer.Event) {
	if e.Kind != transfer.EventDone || !isBatchCreate(e.Snap) {
		return
	}
	for _, u := range quotedUploads(e.Snap) {
		q.DropAnswer(u)
	}
	q.DropAnswer(e.Job)
}

// upRoot is the Photos root of a batchCreate call's URL, off the route
// table.
func upRoot(callURL string) string { return delivery.RootOf(callURL) }

// photosSweep makes again what done calls of the journal left expired
// with no call queued for them: the process that saw them done may have
// died before queueing it.
//
// recs is the history read, its jobs not done and its calls at least
// (err its failure), and ended when each upload ended; the history
// returned is recs, or the whole history read again when a call was
// queued.
func (q *Queue) photosSweep(recs []transfer.Snapshot, ended map[string]time.Time, err error) ([]transfer.Snapshot, error) {
	q.photosMu.Lock()
	defer q.photosMu.Unlock()
	if err != nil {
		return recs, err
	}
	// A call none of whose uploads ended a day before it has nothing
	// expired to make again, and is not looked at further (photosAgain
	// reads the whole history for each call it looks at: a camera roll
	// posted before is 400 calls of 50 over 20,400 records).
	out := recs
	var all []transfer.Snapshot // the whole history, read when a call needs it
	for _, r := range recs {
		if isBatchCreate(r) && r.State == transfer.StateDone && expiredUploads(r, ended) {
			if all == nil {
				if all, err = q.History(); err != nil {
					return out, err
				}
			}
			if added, _ := q.photosAgain(r, all, q.template(r)); added {
				if all, err = q.History(); err != nil {
					return all, err
				}
				out = all
			}
		}
	}
	return out, nil
}

// expiredUploads reports whether call c names an upload (when each
// ended: ended) that ended at least expiredAfter before c: only then may
// c have items to make again (photosAgain passes over the others, and
// over uploads no longer in the journal).
func expiredUploads(c transfer.Snapshot, ended map[string]time.Time) bool {
	for _, u := range quotedUploads(c) {
		if at, ok := ended[u]; ok && c.Updated.Sub(at) >= expiredAfter {
			return true
		}
	}
	return false
}

// template is the body of a call queued before deliveries kept its album
// and descriptions: its record's copy, or for a call queued before records
// kept one, kept from its spool file when it was done, or read from the
// spool while it is there.
func (q *Queue) template(c transfer.Snapshot) []byte {
	if len(c.Metadata) > 0 {
		return c.Metadata
	}
	if t, ok := q.photosTmpl[c.ID]; ok {
		return t
	}
	t, _ := os.ReadFile(c.Path)
	return t
}

// photosSettle makes the expired items of a call just done again from
// another goroutine, since the queue's events come through here; for a
// call with neither a delivery nor a template in its record (queued by an
// older Carrier) it first keeps the spool's, which goes once the event
// passes.
func (q *Queue) photosSettle(e transfer.Event) {
	if e.Kind != transfer.EventDone || !isBatchCreate(e.Snap) {
		return
	}
	if len(e.Snap.Metadata) == 0 && e.Snap.Owner == "" {
		tmpl, _ := os.ReadFile(e.Snap.Path)
		q.photosMu.Lock()
		if q.photosTmpl == nil {
			q.photosTmpl = map[string][]byte{}
		}
		q.photosTmpl[e.Snap.ID] = tmpl
		q.photosMu.Unlock()
	}
	go func() {
		q.photosMu.Lock()
		defer q.photosMu.Unlock()
		if !q.mayRemake(e.Snap) {
			return
		}
		if recs, err := q.History(); err == nil {
			q.photosAgain(e.Snap, recs, q.template(e.Snap))
		}
	}()
}

// PhotosCalls makes sure the items of the batch's done calls that expired
// are being made again, and returns every creation call of the batch, in
// order, those made for expired items included: a front end waits for
// them all.
func (q *Queue) PhotosCalls(b *PhotosBatch) ([]string, error) {
	q.photosMu.Lock()
	defer q.photosMu.Unlock()
	for {
		v, err := q.callsView()
		if err != nil {
			return nil, err
		}
		var recs []transfer.Snapshot // the whole history, read when a call may have items to make again
		var calls []string
		added := false
		var walk func(id string) error
		walk = func(id string) error {
			s, ok := v.byID[id]
			if !ok {
				return nil
			}
			calls = append(calls, id)
			if s.State == transfer.StateDone && q.mayRemake(*s) {
				if recs == nil {
					if recs, err = q.History(); err != nil {
						return err
					}
				}
				a, err := q.photosAgain(*s, recs, q.template(*s))
				if err != nil {
					return err
				}
				added = added || a
			}
			for _, r := range v.againOf(s) {
				if err := walk(r.ID); err != nil {
					return err
				}
			}
			return nil
		}
		for _, c := range b.Creates {
			if err := walk(c); err != nil {
				return nil, err
			}
		}
		if !added {
			return calls, nil
		}
	}
}

// PhotosMore makes sure the items that job id, a batchCreate call just
// done, found expired are being made again, and returns the jobs doing it
// (their uploads, then the call); none for any other job. A front end
// that waits for a list of jobs, as `carrier resume` does, waits for
// these too: they are queued after the list was made.
func (q *Queue) PhotosMore(id string) ([]string, error) {
	q.photosMu.Lock()
	defer q.photosMu.Unlock()
	recs, err := q.History()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(recs, func(r transfer.Snapshot) bool { return r.ID == id })
	if i < 0 || !isBatchCreate(recs[i]) || recs[i].State != transfer.StateDone {
		return nil, nil
	}
	c := recs[i]
	added, err := q.photosAgain(c, recs, q.template(c))
	if err != nil {
		return nil, err
	}
	if added {
		if recs, err = q.History(); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, r := range viewOf(recs).againOf(&c) {
		out = append(append(out, quotedUploads(*r)...), r.ID)
	}
	return out, nil
}
