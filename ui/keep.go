package ui

import (
	"errors"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2/lang"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
)

// Compose is never lost: what it holds is kept on this computer as the
// person writes (the app's UnsentStore, beside the journal) and put back
// at the next start, with a word saying so. Each change takes a snapshot
// of the form on the UI thread, which costs no more than the size meter
// already does; a writer writes the newest snapshot off the UI thread at
// most once per keepDelay while typing goes on, at once when Compose was
// emptied, and once more, synchronously, when the UI closes, so the last
// keystrokes are written whatever path the window closes by (its close
// button, the tray's Quit, the session ending). The copy goes when
// Compose is empty: sent or saved as a draft once its job is queued, or
// discarded.

// UnsentStore keeps what Compose holds between runs (message.UnsentStore):
// Load gives back what was kept (nil when nothing was), Save replaces it,
// nil removing it. Both are called off the UI thread, but Load, once, at
// the start.
type UnsentStore interface {
	Load() (*message.Unsent, error)
	Save(*message.Unsent) error
}

// keepDelay is how long after a change Compose's copy is written: while
// typing goes on, it is written at most this often, so a crash loses at
// most this much.
const keepDelay = 500 * time.Millisecond

// localCopy writes Compose's snapshots to the store, the newest only, off
// the UI thread and one at a time, in the order they were taken.
type localCopy struct {
	store  UnsentStore
	delay  time.Duration
	failed func(error) // told, from the writer, when writing starts failing

	writing sync.Mutex // one write at a time
	mu      sync.Mutex
	next    *message.Unsent // the newest snapshot (nil: Compose is empty)
	pending bool            // next is not written yet
	timer   *time.Timer
	closed  bool
	broken  bool // the last write failed
}

// set takes Compose's newest snapshot; now writes it at once rather than
// after the delay.
func (l *localCopy) set(u *message.Unsent, now bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.next, l.pending = u, true
	switch {
	case now:
		go l.write()
	case l.timer == nil:
		l.timer = time.AfterFunc(l.delay, l.write)
	}
}

// write writes the newest snapshot if it is not written yet.
func (l *localCopy) write() {
	l.writing.Lock()
	defer l.writing.Unlock()
	l.mu.Lock()
	l.timer = nil
	u, pending := l.next, l.pending
	l.pending = false
	l.mu.Unlock()
	if !pending {
		return
	}
	err := l.store.Save(u)
	l.mu.Lock()
	tell := err != nil && !l.broken && !l.closed
	l.broken = err != nil
	l.mu.Unlock()
	if tell && l.failed != nil {
		l.failed(err)
	}
}

// queued says msg was queued (its job and its fields are on disk): when
// the newest snapshot is that message, unchanged since, the copy goes at
// once. Called off the UI thread.
func (l *localCopy) queued(msg *compose.Message) {
	l.mu.Lock()
	same := l.next != nil && sameMessage(l.next, msg)
	l.mu.Unlock()
	if same {
		l.set(nil, true)
	}
}

// sameMessage reports whether u holds msg as Compose made it (message).
func sameMessage(u *message.Unsent, msg *compose.Message) bool {
	join := func(l []string) string { return strings.Join(l, "\x00") }
	return join(u.To) == join(msg.To) && join(u.Cc) == join(msg.Cc) && join(u.Bcc) == join(msg.Bcc) &&
		u.Subject == msg.Subject && u.Text == msg.Text && join(u.Attachments) == join(msg.Attachments)
}

// flush writes what is not written yet, before returning; nothing is
// written after it.
func (l *localCopy) flush() {
	l.mu.Lock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	l.write()
}

// unsent is what the form holds, as the app keeps it; nil when it holds
// nothing a person wrote.
func (c *composeScreen) unsent() *message.Unsent {
	if c.blank() {
		return nil
	}
	k := &message.Unsent{Composed: message.Composed{
		To: field(c.to.Text), Cc: field(c.cc.Text), Bcc: field(c.bcc.Text),
		Subject: c.subject.Text, Text: c.body.Text,
		Attachments: append([]string(nil), c.attachments...),
		Method:      compose.Send,
		DraftID:     c.draft,
	}, From: c.from.sender()}
	if len(c.choice) > 0 {
		k.Choose = make(map[string]bool, len(c.choice))
		for p, link := range c.choice {
			k.Choose[p] = link
		}
	}
	if c.share.chosen == 1 {
		k.Share = message.ShareAnyone
	} else {
		k.Expiry = expiryTimes[c.expiry.chosen]
	}
	return k
}

// field is an address field's text as the app keeps it: as typed, one
// element (reopening joins them again).
func field(text string) []string {
	if text == "" {
		return nil
	}
	return []string{text}
}

// keepLocal hands the form as it is now to the writer: on the UI thread,
// after every change.
func (c *composeScreen) keepLocal() {
	if c.local == nil {
		return
	}
	u := c.unsent()
	c.local.set(u, u == nil)
}

// startKeeping puts back what the form held when Carrier last closed,
// then keeps it from now on. A copy that cannot be read is said in words,
// and its file is kept.
func (c *composeScreen) startKeeping(store UnsentStore) {
	if store == nil {
		return
	}
	k, err := store.Load()
	var bad *message.UnsentError
	switch {
	case errors.As(err, &bad) && bad.Kept != "":
		c.say(lang.X("compose.restore.damaged", "What you were writing when Carrier closed could not be read back ({{.Error}}). The file is kept as {{.File}}.", w{"Error": windowText(bad.Err.Error()), "File": app.Printable(bad.Kept)}))
	case errors.As(err, &bad):
		c.say(lang.X("compose.restore.failed", "What you were writing when Carrier closed could not be read ({{.Error}}). It stays in {{.File}}, and what you write now is not kept until Carrier starts again.", w{"Error": windowText(bad.Err.Error()), "File": app.Printable(bad.Path)}))
	case err != nil:
		c.say(windowText(err.Error()))
	case k != nil:
		c.restore(k)
	}
	c.local = &localCopy{store: store, delay: keepDelay, failed: func(err error) {
		c.u.do(func() {
			c.say(lang.X("compose.keep.failed", "What you write here is not being kept on this computer ({{.Error}}). Send it or save it as a draft before closing Carrier.", w{"Error": windowText(err.Error())}))
		})
	}}
	// A copy that could not be read is not written over, as said.
	c.local.broken = err != nil && bad != nil && bad.Kept == ""
}

// restore fills the form with what it held when Carrier closed, and says
// so: the attachments no longer on this computer are named, and a sender
// no longer signed in.
func (c *composeScreen) restore(k *message.Unsent) {
	words := []string{c.fill(&k.Composed, lang.X("compose.restored", "Restored what you were writing when Carrier closed"))}
	if k.From != "" && c.from.c != nil {
		if i := indexOf(c.from.accounts, k.From); i >= 0 {
			c.from.c.set(i)
		} else {
			words = append(words, lang.X("compose.restored.from", "It was to go as {{.Address}}, who is not signed in now.", w{"Address": app.Printable(k.From)}))
		}
	}
	words = append(words, lang.X("compose.restored.discard", "Discard empties Compose."))
	c.say(strings.Join(words, " "))
}

// askDiscard empties Compose, and its copy on this computer, once the
// person says so: No is the default.
func (c *composeScreen) askDiscard() {
	if c.busy || c.held || c.blank() {
		return
	}
	c.u.showRiskyConfirm(lang.X("compose.discard.title", "Discard this message?"),
		lang.X("compose.discard.ask", "Compose is emptied, and the copy Carrier keeps of it on this computer is deleted. This cannot be undone."),
		func(ok bool) {
			if ok && !c.busy && !c.held {
				c.clear()
				c.say("")
				c.focusTo()
			}
		})
}

// focusTo puts the keyboard's focus in To, so that what is typed when
// Compose opens lands there and Tab goes on from it; not while a dialog
// is open, whose buttons have it.
func (c *composeScreen) focusTo() {
	cv := c.u.win.Canvas()
	if cv == nil || len(c.u.modals) > 0 || cv.Overlays().Top() != nil || c.u.tabs == nil || c.u.tabs.Selected() != c.u.composeTab {
		return
	}
	cv.Focus(c.to)
}
