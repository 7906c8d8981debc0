package ui

import (
	"slices"
	"sync"
	"testing"
	"time"

	"carrier/transfer"
)

const (
	gmailSend  = "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send"
	driveFiles = "http://127.0.0.1:9/upload/drive/v3/files"
)

// The tray's words count messages (not the Drive parts a message waits
// for), show the confirmed share of all their bytes, and the time left at
// the running jobs' confirmed pace.
func TestTrayStatusWords(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name  string
		snaps []transfer.Snapshot
		want  string
	}{
		{"nothing", nil, "No uploads"},
		{"only finished", []transfer.Snapshot{{State: transfer.StateDone, Size: mib, Confirmed: mib}, {State: transfer.StateFailed, Size: mib}}, "No uploads"},
		{"two running, pace known", []transfer.Snapshot{
			{URL: gmailSend, State: transfer.StateRunning, Size: 60 * mib, Confirmed: 30 * mib, ConfirmedRate: 50 << 10},
			{URL: gmailSend, State: transfer.StateQueued, Size: 40 * mib, Confirmed: 13 * mib},
			{URL: gmailSend, State: transfer.StateDone, Size: 500 * mib, Confirmed: 500 * mib},
		}, "2 uploads · 43% · 19 min left"},
		{"one, before a pace", []transfer.Snapshot{{URL: gmailSend, State: transfer.StateRunning, Size: 10 * mib, Confirmed: 5 * mib}}, "1 upload · 50%"},
		{"never 100 while bytes are left", []transfer.Snapshot{{URL: gmailSend, State: transfer.StateRunning, Size: 1000, Confirmed: 999, ConfirmedRate: 1}}, "1 upload · 99% · 1 s left"},
		{"all paused", []transfer.Snapshot{
			{URL: gmailSend, State: transfer.StatePaused, Size: 10 * mib, Confirmed: 2 * mib},
			{URL: gmailSend, State: transfer.StatePaused, Size: 10 * mib, Confirmed: 2 * mib},
		}, "2 uploads paused · 20%"},
		{"paused bytes wait, not counted in the time", []transfer.Snapshot{
			{URL: gmailSend, State: transfer.StateRunning, Size: 10 * mib, Confirmed: 4 * mib, ConfirmedRate: mib},
			{URL: gmailSend, State: transfer.StatePaused, Size: 90 * mib},
		}, "2 uploads · 4% · 6 s left"},
		{"a message and its Drive parts are one upload", []transfer.Snapshot{
			{URL: driveFiles, State: transfer.StateRunning, Size: 90 * mib, Confirmed: 45 * mib, ConfirmedRate: 3 * mib / 2},
			{Type: transfer.Call, State: transfer.StateWaiting},
			{URL: gmailSend, State: transfer.StateWaiting, Size: 10 * mib},
		}, "1 upload · 45% · 37 s left"},
	}
	for _, c := range cases {
		if got := TrayStatus(c.snaps); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The tray's first line and tooltip follow the queue's events, and its
// Pause all and Resume all reach every job they should and no other.
func TestTrayMenuFollowsUploadsAndPausesAll(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"a": {ID: "a", URL: gmailSend, Size: 100, State: transfer.StateQueued, Created: time.Now()},
		"b": {ID: "b", URL: gmailSend, Size: 100, State: transfer.StateQueued, Created: time.Now()},
		"c": {ID: "c", URL: gmailSend, Size: 100, Confirmed: 100, State: transfer.StateDone, Created: time.Now()},
	}}
	events := make(chan transfer.Event, 64)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	var mu sync.Mutex
	var tips []string
	refreshed := 0
	menu := h.u.TrayMenu(TrayHooks{
		Show: func() {}, Quit: func() {},
		Refresh: func() { refreshed++ },
		Tooltip: func(s string) { mu.Lock(); tips = append(tips, s); mu.Unlock() },
	})
	status := menu.Items[0]
	item := func(label string) int {
		for i, it := range menu.Items {
			if it.Label == label {
				return i
			}
		}
		t.Fatalf("no %q in the tray's menu", label)
		return -1
	}
	pause, resume := menu.Items[item("Pause all")], menu.Items[item("Resume all")]
	item("Quit")
	h.until("the tray to count the journal's jobs", func() bool { return status.Label == "2 uploads · 0%" })
	if pause.Disabled || !resume.Disabled {
		t.Fatalf("nothing paused: Pause all disabled %v, Resume all disabled %v", pause.Disabled, resume.Disabled)
	}

	// Queued while nothing moves: no redraw ticker runs, the event alone
	// must reach the tray.
	events <- fu.event(transfer.EventQueued, "d", func(s *transfer.Snapshot) {
		s.ID, s.URL, s.Size, s.State = "d", gmailSend, 100, transfer.StateQueued
	})
	h.until("the tray to count a new job", func() bool { return status.Label == "3 uploads · 0%" })
	events <- fu.event(transfer.EventCancelled, "d", func(s *transfer.Snapshot) { s.State = transfer.StateCancelled })
	events <- fu.event(transfer.EventStarted, "a", func(s *transfer.Snapshot) { s.State = transfer.StateRunning })
	events <- fu.event(transfer.EventProgress, "a", func(s *transfer.Snapshot) { s.Confirmed, s.ConfirmedRate = 50, 10 })
	events <- fu.event(transfer.EventDone, "b", func(s *transfer.Snapshot) { s.State, s.Confirmed = transfer.StateDone, 100 })
	h.until("the tray to follow the events", func() bool { return status.Label == "1 upload · 50% · 5 s left" })
	h.until("the tooltip", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(tips) > 0 && tips[len(tips)-1] == "Carrier: 1 upload · 50% · 5 s left"
	})
	if refreshed == 0 {
		t.Fatal("the menu changed but was never redrawn")
	}

	pause.Action()
	if !slices.Equal(fu.calls, []string{"pause a"}) {
		t.Fatalf("Pause all: %v, want only the unfinished job paused", fu.calls)
	}
	events <- fu.event(transfer.EventPaused, "a", func(s *transfer.Snapshot) { s.State, s.ConfirmedRate = transfer.StatePaused, 0 })
	h.until("the tray to say paused", func() bool { return status.Label == "1 upload paused · 50%" })
	if !pause.Disabled || resume.Disabled {
		t.Fatalf("all paused: Pause all disabled %v, Resume all disabled %v", pause.Disabled, resume.Disabled)
	}
	resume.Action()
	h.until("Resume all to reach the queue", func() bool {
		fu.mu.Lock()
		defer fu.mu.Unlock()
		return slices.Equal(fu.calls, []string{"pause a", "resume a"})
	})
}
