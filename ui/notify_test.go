package ui

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"carrier/transfer"
)

// countingWindow counts the times it was shown.
type countingWindow struct {
	fyne.Window
	shows atomic.Int32
}

func (w *countingWindow) Show() { w.shows.Add(1); w.Window.Show() }

type notice struct {
	title, body string
	actions     []NoticeAction
}

// A failed job's notification offers Retry (which reaches the queue) and
// Show; a message sent to the sandbox offers Open in Mailbox, which brings
// the window back on the Mailbox; where the desktop's service fails,
// Fyne's notification says the same.
func TestNotificationsWithActions(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"m": {ID: "m", Label: "Minutes · to zoe@example.com", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 10, State: transfer.StateRunning, Created: time.Now()},
		"g": {ID: "g", Label: "To Google", URL: "https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send", Size: 10, State: transfer.StateRunning, Created: time.Now()},
		"p": {ID: "p", Path: "/tmp/cat.jpg", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 10, State: transfer.StateRunning, Created: time.Now()},
	}}
	events := make(chan transfer.Event, 64)
	var mu sync.Mutex
	var sent []notice
	var refuse error
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = fu, events
		o.deps = func(d *Deps) {
			d.Notify = func(title, body string, actions []NoticeAction) error {
				mu.Lock()
				defer mu.Unlock()
				if refuse != nil {
					return refuse
				}
				sent = append(sent, notice{title, body, actions})
				return nil
			}
		}
	})
	var fyneSent []*fyne.Notification
	h.u.fyneNotify = func(n *fyne.Notification) { mu.Lock(); fyneSent = append(fyneSent, n); mu.Unlock() }
	next := func(what string) notice {
		t.Helper()
		var n notice
		h.until(what, func() bool {
			mu.Lock()
			defer mu.Unlock()
			if len(sent) == 0 {
				return false
			}
			n, sent = sent[0], sent[1:]
			return true
		})
		return n
	}
	keys := func(n notice) []string {
		var out []string
		for _, a := range n.actions {
			out = append(out, a.Key+"="+a.Label)
		}
		return out
	}
	action := func(n notice, key string) func() {
		for _, a := range n.actions {
			if a.Key == key {
				return a.Do
			}
		}
		t.Fatalf("%q has no %s action: %v", n.title, key, keys(n))
		return nil
	}

	events <- fu.event(transfer.EventFailed, "m", func(s *transfer.Snapshot) { s.State, s.Error = transfer.StateFailed, "the server is busy" })
	n := next("the failure's notification")
	if n.title != "Carrier: failed" || n.body != "Minutes · to zoe@example.com: the server is busy" {
		t.Fatalf("failure: %q %q", n.title, n.body)
	}
	if !slices.Equal(keys(n), []string{"retry=Retry", "show=Show", "default=Show"}) {
		t.Fatalf("failure's actions: %v", keys(n))
	}
	h.u.tabs.Select(h.u.composeTab)
	win := &countingWindow{Window: h.w}
	h.u.win = win // hidden in the tray, as far as the UI knows
	action(n, "retry")()
	h.until("Retry to reach the queue", func() bool {
		fu.mu.Lock()
		defer fu.mu.Unlock()
		return slices.Contains(fu.calls, "retry m")
	})
	action(n, "show")()
	h.until("Show to bring the window back on Transfers", func() bool {
		return h.u.tabs.Selected() == h.u.transfersTab && win.shows.Load() == 1
	})

	events <- fu.event(transfer.EventDone, "m", func(s *transfer.Snapshot) { s.State, s.Confirmed = transfer.StateDone, 10 })
	n = next("the sent message's notification")
	if n.title != "Carrier: sent" || !slices.Equal(keys(n), []string{"mailbox=Open in Mailbox", "default=Show"}) {
		t.Fatalf("sent: %q %v", n.title, keys(n))
	}
	action(n, "mailbox")()
	h.until("Open in Mailbox to show the Mailbox", func() bool { return h.u.tabs.Selected() == h.u.mailboxTab && win.shows.Load() == 2 })

	events <- fu.event(transfer.EventDone, "g", func(s *transfer.Snapshot) { s.State, s.Confirmed = transfer.StateDone, 10 })
	if n = next("the Google message's notification"); !slices.Equal(keys(n), []string{"show=Show", "default=Show"}) {
		t.Fatalf("the Mailbox reads the sandbox only, not Google: %v", keys(n))
	}
	events <- fu.event(transfer.EventDone, "p", func(s *transfer.Snapshot) { s.State, s.Confirmed = transfer.StateDone, 10 })
	if n = next("the post's notification"); !slices.Equal(keys(n), []string{"show=Show", "default=Show"}) {
		t.Fatalf("a post is not in the Mailbox: %v", keys(n))
	}

	mu.Lock()
	refuse = errors.New("org.freedesktop.DBus.Error.ServiceUnknown")
	mu.Unlock()
	events <- fu.event(transfer.EventFailed, "p", func(s *transfer.Snapshot) { s.State, s.Error = transfer.StateFailed, "gone" })
	h.until("Fyne's notification where the service fails", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(fyneSent) == 1 && fyneSent[0].Title == "Carrier: failed" && fyneSent[0].Content == "cat.jpg: gone"
	})
}

// A message's notification opens that message in the Mailbox, whatever
// the Mailbox showed before and wherever the message stands in its list,
// by the Gmail id of Gmail's answer.
func TestOpenInMailboxOpensThatMessage(t *testing.T) {
	var mu sync.Mutex
	var sent []notice
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			d.Notify = func(title, body string, actions []NoticeAction) error {
				mu.Lock()
				defer mu.Unlock()
				sent = append(sent, notice{title, body, actions})
				return nil
			}
		}
	})
	h.sendMessage(t)
	var open func()
	h.until("the sent message's notification", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range sent {
			for _, a := range n.actions {
				if a.Key == "mailbox" {
					open = a.Do
				}
			}
		}
		return open != nil
	})
	for _, s := range []string{"Newer one", "Newest one"} {
		h.putMail("To: max@example.com\r\nSubject: " + s + "\r\n\r\nhello\r\n")
	}
	m := h.openMail("Newest one")
	h.u.Select("Compose")
	open()
	h.until("the Mailbox to show the message sent", func() bool {
		return h.u.tabs.Selected() == h.u.mailboxTab && !m.loading && strings.Contains(labelsIn(m.detail.Box), "Subject: Quarterly report")
	})
	if m.opened < 0 || m.items[m.opened].Title != "Quarterly report" {
		t.Fatalf("the list marks item %d as opened", m.opened)
	}
}
