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
	if n.title != "Carrier: failed" || n.body != "Minutes · to zoe@example.com: The upload failed. What went wrong is below.\n\u200ethe server is busy" {
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
		return len(fyneSent) == 1 && fyneSent[0].Title == "Carrier: failed" && fyneSent[0].Content == "cat.jpg: The upload failed. What went wrong is below.\n\u200egone"
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

// Jobs parked for a sign-in tell the person once an account, not once a
// job nor once an event, with a Sign in button that starts that account's
// sign-in on the Account screen; the tray has a Sign in item for each
// account whose jobs wait, only while they wait.
func TestParkedJobsNotifyOnceAnAccount(t *testing.T) {
	const work, home = "work@example.com", "home@example.com"
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"a1": {ID: "a1", Label: "One · to zoe@example.com", URL: gmailSend, Size: 100, State: transfer.StateRunning, Account: work, Created: time.Now()},
		"a2": {ID: "a2", Label: "Two · to zoe@example.com", URL: gmailSend, Size: 100, State: transfer.StateRunning, Account: work, Created: time.Now()},
		"b1": {ID: "b1", Label: "Three · to zoe@example.com", URL: gmailSend, Size: 100, State: transfer.StateRunning, Account: home, Created: time.Now()},
	}}
	fa := &fakeAccounts{list: []string{work, home}}
	events := make(chan transfer.Event, 64)
	var mu sync.Mutex
	var sent []notice
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = fu, events
		o.deps = func(d *Deps) {
			d.Accounts = fa
			d.Notify = func(title, body string, actions []NoticeAction) error {
				mu.Lock()
				defer mu.Unlock()
				sent = append(sent, notice{title, body, actions})
				return nil
			}
		}
	})
	menu := h.u.TrayMenu(TrayHooks{Show: func() {}, Quit: func() {}})
	trayItems := func() []string {
		var l []string
		for _, it := range menu.Items {
			if strings.HasPrefix(it.Label, "Sign in") {
				l = append(l, it.Label)
			}
		}
		return l
	}
	told := func() []notice {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sent)
	}
	park := func(id, who string) {
		events <- fu.event(transfer.EventSignIn, id, func(s *transfer.Snapshot) { s.State, s.SignInFor = transfer.StateSignIn, who })
	}
	if l := trayItems(); len(l) != 0 {
		t.Fatalf("the tray offers a sign-in while nothing waits: %v", l)
	}

	park("a1", work)
	h.until("work's notification", func() bool { return len(told()) == 1 })
	n := told()[0]
	if n.title != "Carrier: sign in again" || n.body != "Sign in to "+work+" again to continue" || len(n.actions) != 2 || n.actions[0].Key != "signin" || n.actions[0].Label != "Sign in" {
		t.Fatalf("work's notification: %q %q %v", n.title, n.body, n.actions)
	}
	park("a2", work) // the same account: no second notification
	events <- fu.event(transfer.EventProgress, "b1", func(s *transfer.Snapshot) { s.Confirmed = 50 })
	park("b1", home)
	h.until("home's notification and both in the tray", func() bool {
		return len(told()) >= 2 && slices.Equal(trayItems(), []string{"Sign in to " + home + " again to continue", "Sign in to " + work + " again to continue"})
	})

	// Sign in starts work's sign-in, as the Account screen's Sign in again.
	h.u.tabs.Select(h.u.composeTab)
	n.actions[0].Do()
	h.until("the sign-in of work to start on the Account screen", func() bool {
		fa.mu.Lock()
		defer fa.mu.Unlock()
		return h.u.tabs.Selected() == h.u.accountTab && slices.Equal(fa.hints, []string{work}) && len(fa.added) == 1 && fa.added[0] == nil
	})
	// work signed in: its jobs go on; its tray item goes, home's stays.
	for _, id := range []string{"a1", "a2"} {
		events <- fu.event(transfer.EventQueued, id, func(s *transfer.Snapshot) { s.State, s.SignInFor = transfer.StateQueued, "" })
	}
	h.until("work's tray item to go", func() bool {
		return slices.Equal(trayItems(), []string{"Sign in to " + home + " again to continue"})
	})
	for _, it := range menu.Items {
		if strings.Contains(it.Label, home) {
			it.Action()
		}
	}
	h.until("the tray's Sign in to start home's sign-in", func() bool {
		fa.mu.Lock()
		defer fa.mu.Unlock()
		return slices.Equal(fa.hints, []string{work, home})
	})
	events <- fu.event(transfer.EventQueued, "b1", func(s *transfer.Snapshot) { s.State, s.SignInFor = transfer.StateQueued, "" })
	h.until("no sign-in left in the tray", func() bool { return len(trayItems()) == 0 })
	if l := told(); len(l) != 2 || l[1].body != "Sign in to "+home+" again to continue" {
		var bodies []string
		for _, n := range l {
			bodies = append(bodies, n.body)
		}
		t.Fatalf("notifications: %q, want one for work and one for home", bodies)
	}
	// Tried and parked again without going on (a start, a sign-in as
	// someone else): nobody is told twice.
	park("a1", work)
	park("b1", home)
	h.until("both in the tray again", func() bool { return len(trayItems()) == 2 })
	// Parked anew after its jobs went on: told again, once.
	events <- fu.event(transfer.EventQueued, "a1", func(s *transfer.Snapshot) { s.State, s.SignInFor = transfer.StateQueued, "" })
	events <- fu.event(transfer.EventStarted, "a1", func(s *transfer.Snapshot) { s.State = transfer.StateRunning })
	events <- fu.event(transfer.EventProgress, "a1", func(s *transfer.Snapshot) { s.Confirmed = 60 })
	events <- fu.event(transfer.EventRetrying, "a1", func(s *transfer.Snapshot) { s.State = transfer.StateRetrying })
	park("a1", work)
	park("a2", work)
	h.until("work's second notification", func() bool { return len(told()) >= 3 })
	if l := told(); len(l) != 3 || l[2].body != "Sign in to "+work+" again to continue" {
		var bodies []string
		for _, n := range l {
			bodies = append(bodies, n.body)
		}
		t.Fatalf("notifications: %q, want work, home, then work again", bodies)
	}
	// home's job cancelled, then a new one of home parks: told again.
	events <- fu.event(transfer.EventCancelled, "b1", func(s *transfer.Snapshot) { s.State, s.SignInFor = transfer.StateCancelled, "" })
	events <- fu.event(transfer.EventQueued, "b2", func(s *transfer.Snapshot) {
		s.ID, s.URL, s.Size, s.State, s.Account = "b2", gmailSend, 100, transfer.StateQueued, home
	})
	park("b2", home)
	h.until("home's second notification", func() bool { return len(told()) == 4 })
}

// watchedAccounts are fakeAccounts that tell of changes made outside the
// window, as app.WindowAccounts does.
type watchedAccounts struct {
	*fakeAccounts
	hooks []func()
}

func (w *watchedAccounts) OnChange(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hooks = append(w.hooks, f)
}

// changedElsewhere signs list in, as `carrier login` in a terminal does,
// and tells the window.
func (w *watchedAccounts) changedElsewhere(list ...string) {
	w.mu.Lock()
	w.list = list
	hooks := slices.Clone(w.hooks)
	w.mu.Unlock()
	for _, f := range hooks {
		f()
	}
}

// A sign-in or sign-out made outside the window (carrier login or logout
// in a terminal) shows at once on the Account screen and in Compose's
// From.
func TestAccountsChangedElsewhereShow(t *testing.T) {
	const work, home = "work@example.com", "home@example.com"
	fa := &watchedAccounts{fakeAccounts: &fakeAccounts{list: []string{work}}}
	h := newHarness(t, func(o *harnessOpts) { o.deps = func(d *Deps) { d.Accounts = fa } })
	shown := func() []string {
		var l []string
		for a := range h.u.account.accounts.outs {
			l = append(l, a)
		}
		slices.Sort(l)
		return l
	}
	if l := shown(); !slices.Equal(l, []string{work}) {
		t.Fatalf("the Account screen lists %v", l)
	}
	fa.changedElsewhere(home, work)
	h.until("the Account screen and From to list the account signed in elsewhere", func() bool {
		return slices.Equal(shown(), []string{home, work}) && slices.Equal(h.u.compose.from.accounts, []string{home, work})
	})
	fa.changedElsewhere(home)
	h.until("the account signed out elsewhere to go", func() bool {
		return slices.Equal(shown(), []string{home}) && slices.Equal(h.u.compose.from.accounts, []string{home})
	})
}
