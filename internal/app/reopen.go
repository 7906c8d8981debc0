package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carrier/compose"
	"carrier/internal/app/message"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// A message's spool holds the bytes that go, not what the person wrote:
// attachments are copied in, large files replaced by links, Bcc may be
// gone. To reopen a cancelled or failed message in Compose, the fields as
// written are kept in its delivery (delivery.Delivery.Composed), stored
// before the message's job is queued, so a crash between the two leaves
// nothing unmatched. They are not given once the message is sent, and go
// when it is sent, forgotten or replaced; a cancelled or failed message
// keeps them, across restarts. A Carrier before deliveries kept them
// beside the journal, one small private file per message named after its
// spool file (STATE/composed): those are still read, never written.

// ErrNotKept says Carrier kept no copy of a message's fields to reopen.
var ErrNotKept = errors.New("Carrier kept no copy of this message to reopen: only messages written in Carrier can be reopened, and only until they are sent or cleared")

// composedOf is what a message queued without the Compose screen's
// choices keeps: its own fields.
func composedOf(msg *compose.Message, method compose.Method, up Upload) *message.Composed {
	return &message.Composed{To: msg.To, Cc: msg.Cc, Bcc: msg.Bcc, Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML,
		Attachments: append([]string(nil), msg.Attachments...), Method: method, DraftID: draftOf(up)}
}

// draftOf is the draft an upload updates or sends, from its metadata.
func draftOf(up Upload) string {
	if up.Path != routeDraftSend.path && !strings.HasPrefix(up.Path, routeDraft.path+"/") {
		return ""
	}
	var m struct{ ID string }
	if json.Unmarshal(up.Metadata, &m) == nil && m.ID != "" {
		return m.ID
	}
	if id, err := url.PathUnescape(strings.TrimPrefix(up.Path, routeDraft.path+"/")); err == nil {
		return id
	}
	return ""
}

// ComposedDir is the folder of the kept fields beside the journal of
// stateDir.
func ComposedDir(stateDir string) string { return filepath.Join(stateDir, "composed") }

// keptPath is where a Carrier before deliveries kept the fields of the
// message spooled at spoolPath.
func (q *Queue) keptPath(spoolPath string) string {
	if q.kept == "" || spoolPath == "" {
		return ""
	}
	return filepath.Join(q.kept, filepath.Base(spoolPath)+".json")
}

// keepIn puts kept in delivery d and stores it: before the message's job
// is queued, since once it is it may fail or be cancelled at once.
func (q *Queue) keepIn(d *delivery.Delivery, kept *message.Composed) error {
	d.Composed = kept
	err := q.dl.store.Put(*d)
	if err != nil {
		return fmt.Errorf("cannot keep the message to reopen: %w", err)
	}
	return nil
}

// drop forgets the fields kept of message s: in its delivery, and a file
// a Carrier before deliveries wrote.
func (q *Queue) drop(s transfer.Snapshot) error {
	var err error
	names := q.attachmentsOf(s)
	defer q.releaseCopies(names) // the attachments from programs nothing else names
	if s.Owner != "" {
		if d, gerr := q.dl.store.Get(s.Owner); gerr == nil && d.Composed != nil {
			d.Composed = nil
			err = q.dl.store.Put(d)
		}
	}
	if p := q.keptPath(s.Path); p != "" {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// Composed is the message of job id as the person wrote it, for Compose
// to reopen: kept while the job is unfinished, failed or cancelled, in
// this run or an earlier one.
func (q *Queue) Composed(id string) (*message.Composed, error) {
	s := snapOf(q.Queue, id)
	if s.ID == "" || s.State == transfer.StateDone {
		return nil, ErrNotKept
	}
	var c *message.Composed
	if d, err := q.dl.store.Get(s.Owner); s.Owner != "" && err == nil && d.Composed != nil {
		c = d.Composed
	} else {
		p := q.keptPath(s.Path)
		if p == "" {
			return nil, ErrNotKept
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotKept
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the message kept to reopen: %w", err)
		}
		c = &message.Composed{}
		if err := json.Unmarshal(data, c); err != nil {
			return nil, fmt.Errorf("the message kept to reopen is damaged: %w", err)
		}
	}
	c.From = id
	return c, nil
}

// Kept reports whether message id's fields are kept to reopen it: not
// once it was sent, cleared, or replaced by a message reopened from it.
func (q *Queue) Kept(id string) bool {
	_, err := q.Composed(id)
	return err == nil
}

// Replace is told that a message reopened from message id was queued:
// id's fields are no longer kept to reopen, and id, with its unfinished
// parts, is cancelled if it could still go (it failed, or it waits for a
// part), so the message is not sent twice. Its files already on Drive
// stay. "" does nothing; a message already ended needs no cancelling.
func (q *Queue) Replace(ctx context.Context, id string) {
	if id == "" {
		return
	}
	msg := snapOf(q.Queue, id)
	// Its delivery as the journal has it (the parts of an earlier run
	// too), cancelled unless it ended.
	q.Act(context.WithoutCancel(ctx), id, delivery.VerbCancel)
	q.drop(msg)
}

// OpenedGrace is how long the attachments of a draft opened in Compose
// are kept when no queued message names them: the draft may still be
// open in a window while another Carrier (a command) opens the queue.
const OpenedGrace = 7 * 24 * time.Hour

// sweepKept removes the kept fields no job may reopen (no job names their
// message, or it was sent) and the leftovers of writes a crash cut short,
// once older than the spool's grace (another process may be between
// writing one and queuing its job), and the folders of drafts'
// attachments no kept message names, once older than OpenedGrace. recs
// nil: the journal could not be read whole, and everything is kept.
func (q *Queue) sweepKept(recs []transfer.Snapshot) {
	if q.kept == "" {
		return
	}
	grace, now := SweepGrace, time.Now
	if q.spool != nil {
		grace, now = q.spool.grace, q.spool.now
	}
	olderThan := func(e fs.DirEntry, grace time.Duration) bool {
		fi, err := e.Info()
		return err == nil && now().Sub(fi.ModTime()) >= grace
	}
	wanted := map[string]bool{}
	for _, r := range recs {
		if r.State != transfer.StateDone && r.Path != "" {
			wanted[filepath.Base(r.Path)+".json"] = true
		}
	}
	named := map[string]bool{} // attachments' folders a kept message names
	entries, _ := os.ReadDir(q.kept)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(q.kept, e.Name())
		stale := strings.HasSuffix(e.Name(), ".tmp") || recs != nil && !wanted[e.Name()]
		if stale && olderThan(e, grace) {
			os.Remove(p)
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			var c message.Composed
			if json.Unmarshal(data, &c) == nil {
				for _, a := range c.Attachments {
					named[filepath.Dir(a)] = true
				}
			}
		}
	}
	if recs == nil {
		return
	}
	ds, err := q.dl.store.List()
	if err != nil {
		return // a delivery unread may name any of them
	}
	for _, d := range ds {
		if d.Composed != nil {
			for _, a := range d.Composed.Attachments {
				named[filepath.Dir(a)] = true
			}
		}
	}
	opened := q.openedDir()
	dirs, _ := os.ReadDir(opened)
	for _, e := range dirs {
		p := filepath.Join(opened, e.Name())
		if e.IsDir() && !named[p] && olderThan(e, OpenedGrace) {
			os.RemoveAll(p)
		}
	}
}
