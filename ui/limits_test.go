package ui

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"carrier/internal/app"
	"carrier/transfer"
)

// fakeLimits records what the screens ask of the queue; read says whether
// a limit reads (the queue's parser in the tests that have a queue).
type fakeLimits struct {
	mu      sync.Mutex
	specs   []string // every limit asked for, applied or not
	applied string
	pause   []bool
	sent    []string
	read    func(string) error
}

func (f *fakeLimits) SetBandwidthSpec(spec string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.specs = append(f.specs, spec)
	if err := f.read(spec); err != nil {
		return err
	}
	f.applied = spec
	return nil
}

func (f *fakeLimits) SetOnMetered(pause bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pause = append(f.pause, pause)
}

func (f *fakeLimits) SendAnyway(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, id)
	return nil
}

func (f *fakeLimits) state() (applied string, pause []bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied, append([]bool(nil), f.pause...)
}

// readSpec stands for the queue's parser where no queue runs: a word it
// does not know is refused.
func readSpec(spec string) error {
	if spec == "" || strings.ContainsAny(spec, "xyz") {
		return errors.New(`"` + spec + `" is not a limit`)
	}
	return nil
}

func choiceNamed(c *choices, text string) *choiceButton {
	for _, b := range c.buttons {
		if b.Text == text {
			return b
		}
	}
	return nil
}

// The upload speed is changed on the Transfers screen (a preset, or a
// limit or timetable typed), applied at once and kept: a window opened
// later applies it again. A limit that does not read says why and changes
// nothing. The metered setting likewise.
func TestUploadSpeedIsAppliedAndKept(t *testing.T) {
	lim := &fakeLimits{read: readSpec}
	h := newHarness(t, func(o *harnessOpts) { o.deps = func(d *Deps) { d.Limits = lim } })
	n := h.u.transfers.network
	prefs := fyne.CurrentApp().Preferences()
	if applied, pause := lim.state(); applied != "off" || len(pause) != 1 || !pause[0] {
		t.Fatalf("at start: limit %q, pause %v; want no limit and large uploads paused on a metered connection", applied, pause)
	}
	if n.custom.Visible() {
		t.Error("the typed limit shows with a preset chosen")
	}

	test.Tap(choiceNamed(n.speed, "1 MiB/s"))
	if applied, _ := lim.state(); applied != "1M" || prefs.String(prefBandwidth) != "1M" {
		t.Fatalf("1 MiB/s pressed: applied %q, kept %q", applied, prefs.String(prefBandwidth))
	}

	test.Tap(choiceNamed(n.speed, speedCustom))
	if !n.custom.Visible() {
		t.Fatal("Custom pressed: no place to type the limit")
	}
	n.custom.SetText("08:00,1M 19:00,off")
	test.Tap(n.apply)
	if applied, _ := lim.state(); applied != "08:00,1M 19:00,off" || prefs.String(prefBandwidth) != "08:00,1M 19:00,off" {
		t.Fatalf("a timetable typed: applied %q, kept %q", applied, prefs.String(prefBandwidth))
	}
	if n.problem.Visible() {
		t.Errorf("a good timetable shows a problem: %q", n.problem.Text)
	}

	n.custom.SetText("fast")
	test.Type(n.custom, "x")
	n.custom.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !n.problem.Visible() || !strings.Contains(n.problem.Text, "is not a limit") {
		t.Errorf("a limit that does not read: problem %v %q", n.problem.Visible(), n.problem.Text)
	}
	if applied, _ := lim.state(); applied != "08:00,1M 19:00,off" || prefs.String(prefBandwidth) != "08:00,1M 19:00,off" {
		t.Fatalf("after a bad limit: applied %q, kept %q; want the timetable still", applied, prefs.String(prefBandwidth))
	}

	test.Tap(choiceNamed(n.metered, "Continue"))
	if _, pause := lim.state(); pause[len(pause)-1] || prefs.String(prefMetered) != "continue" {
		t.Fatalf("Continue pressed: pause %v, kept %q", pause, prefs.String(prefMetered))
	}

	// The next window (the next start) applies what was kept.
	again := &fakeLimits{read: readSpec}
	u := New(fyne.CurrentApp(), test.NewTempWindow(t, nil), Deps{Uploads: &fakeUploads{recs: nil}, Limits: again, Do: func(f func()) { f() }})
	defer u.Close()
	if applied, pause := again.state(); applied != "08:00,1M 19:00,off" || len(pause) != 1 || pause[0] {
		t.Fatalf("the next start: limit %q, pause %v; want the timetable and uploads going on a metered connection", applied, pause)
	}
	m := u.transfers.network
	if m.speed.chosen != len(speedPresets) || m.custom.Text != "08:00,1M 19:00,off" || m.metered.chosen != 1 {
		t.Errorf("the next start shows speed %d %q, metered %d", m.speed.chosen, m.custom.Text, m.metered.chosen)
	}
}

// The tray's Upload speed menu applies a preset as the window's control
// does, and both show the one applied.
func TestTraySpeedMenu(t *testing.T) {
	lim := &fakeLimits{read: readSpec}
	h := newHarness(t, func(o *harnessOpts) { o.deps = func(d *Deps) { d.Limits = lim } })
	refreshed := 0
	item := h.u.SpeedMenu(func() { refreshed++ })
	if item == nil || item.ChildMenu == nil || len(item.ChildMenu.Items) != len(speedPresets) {
		t.Fatalf("the tray's speed menu: %+v", item)
	}
	if !item.ChildMenu.Items[0].Checked {
		t.Error("No limit is not checked at start")
	}
	item.ChildMenu.Items[3].Action() // 4 MiB/s
	if applied, _ := lim.state(); applied != "4M" || fyne.CurrentApp().Preferences().String(prefBandwidth) != "4M" {
		t.Fatalf("4 MiB/s from the tray: applied %q", applied)
	}
	if !item.ChildMenu.Items[3].Checked || item.ChildMenu.Items[0].Checked || refreshed == 0 {
		t.Error("the tray's checks did not follow")
	}
	if h.u.transfers.network.speed.chosen != 3 {
		t.Errorf("the window shows speed %d after the tray chose 4 MiB/s", h.u.transfers.network.speed.chosen)
	}
	test.Tap(choiceNamed(h.u.transfers.network.speed, "256 KiB/s"))
	if !item.ChildMenu.Items[1].Checked || item.ChildMenu.Items[3].Checked {
		t.Error("the tray's checks did not follow the window")
	}
}

// On a metered connection a large message waits, its row saying so with
// Send anyway; pressed, the message goes. The queue is the app's, so the
// window's settings reach the engine.
func TestMeteredRowSendsAnyway(t *testing.T) {
	h := newHarness(t)
	h.q.SetMeteredPolicy(transfer.MeteredPolicy{Pause: true, Over: 1 << 10})
	h.q.SetMetered(true) // as NetworkManager would say (internal/app's tests)
	c := h.u.compose
	c.attach(writeFile(t, "scan.pdf", bytes.Repeat([]byte("%PDF"), 4<<10)))
	c.to.SetText("zoe@example.com")
	c.subject.SetText("The scan")
	c.body.SetText("Attached.")
	test.Tap(c.sendBtn)
	var row *transferRow
	h.until("the message held on the metered connection", func() bool {
		row = h.onlyRow()
		return row != nil && row.state.Text == "Paused: metered connection" && row.sendAnyway.Visible()
	})
	if row.amount.Text == "" || !strings.HasPrefix(row.amount.Text, "0 bytes of") {
		t.Errorf("held: amount %q", row.amount.Text)
	}
	test.Tap(row.sendAnyway)
	h.until("the message sent anyway", func() bool { return row.state.Text == "Sent" || row.state.Text == "Done" })
	if row.sendAnyway.Visible() {
		t.Error("Send anyway still shows on a sent message")
	}

	// The window's upload speed is the engine's.
	test.Tap(choiceNamed(h.u.transfers.network.speed, "256 KiB/s"))
	if got := h.q.Bandwidth(); got != 256<<10 {
		t.Errorf("256 KiB/s pressed: the queue limits to %d B/s", got)
	}
	n := h.u.transfers.network
	test.Tap(choiceNamed(n.speed, speedCustom))
	n.custom.SetText("every evening")
	test.Tap(n.apply)
	if !n.problem.Visible() || !strings.Contains(n.problem.Text, "every evening") || h.q.Bandwidth() != 256<<10 {
		t.Errorf("a timetable that does not read: %q, limit %d", n.problem.Text, h.q.Bandwidth())
	}
}

// A row held by the system says why in the words.
func TestSleepingRow(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"j1": {ID: "j1", Path: "/tmp/movie.mp4", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 100 << 20, State: transfer.StateRunning, Created: time.Now()},
	}}
	events := make(chan transfer.Event, 64)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	e := fu.event(transfer.EventRetrying, "j1", func(s *transfer.Snapshot) { s.State = transfer.StateRetrying })
	e.Held, e.Reason = true, app.HeldAsleep
	events <- e
	row := h.u.transfers.rowOf("j1")
	h.until("the row says the machine sleeps", func() bool { return row.state.Text == "Sleeping: will resume on wake" })
}

// A job the metered rule holds after it was queued (the connection became
// metered) is redrawn at once, though nothing moves to tick the rows.
func TestHeldLaterIsShown(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{
		"j1": {ID: "j1", Path: "/tmp/movie.mp4", URL: "http://127.0.0.1:9/upload/mirror/v1/timeline", Size: 100 << 20, State: transfer.StateQueued, Created: time.Now()},
	}}
	events := make(chan transfer.Event, 64)
	lim := &fakeLimits{read: readSpec}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = fu, events
		o.deps = func(d *Deps) { d.Limits = lim }
	})
	row := h.u.transfers.rowOf("j1")
	events <- fu.event(transfer.EventProgress, "j1", func(s *transfer.Snapshot) { s.Held = transfer.HeldMetered })
	h.until("the row held", func() bool { return row.state.Text == "Paused: metered connection" && row.sendAnyway.Visible() })
	test.Tap(row.sendAnyway)
	h.until("Send anyway reaches the queue", func() bool {
		lim.mu.Lock()
		defer lim.mu.Unlock()
		return len(lim.sent) == 1 && lim.sent[0] == "j1"
	})
	events <- fu.event(transfer.EventProgress, "j1", func(s *transfer.Snapshot) { s.Held = "" })
	h.until("the row let go", func() bool { return row.state.Text == "Queued" && !row.sendAnyway.Visible() })
}
