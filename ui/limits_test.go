package ui

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
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
