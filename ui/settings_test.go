package ui

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"carrier/internal/platform"
	"carrier/transfer"
)

// reopen builds a second window's screens on the same app, as the next
// start of Carrier reads the same preferences.
func (h *harness) reopen(t *testing.T) *UI {
	t.Helper()
	d := h.u.deps
	d.Events = nil
	u := New(fyne.CurrentApp(), test.NewTempWindow(t, nil), d)
	t.Cleanup(u.Close)
	return u
}

// Chaos mode is off until turned on, and then stays on at the next start
// (the sandbox told again); the theme and the link choices are kept too.
func TestSettingsAreRemembered(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads = fu })
	// The test app's own theme draws dark whatever is asked; Carrier's
	// draws each variant.
	fyne.CurrentApp().Settings().SetTheme(newTheme())
	a := h.u.account
	if a.chaos.Checked || len(h.faults) != 0 {
		t.Fatalf("chaos mode on a first start: checked %v, faults %v", a.chaos.Checked, h.faults)
	}
	if a.settings.theme.chosen != 0 || h.u.compose.share.chosen != 0 || h.u.compose.expiry.chosen != 0 {
		t.Fatal("a first start must follow the system's theme and share with recipients, for ever")
	}
	base := fyne.CurrentApp().Settings().Theme()
	test.Tap(a.chaos)
	test.Tap(a.settings.theme.buttons[2])
	test.Tap(h.u.compose.expiry.buttons[2])
	test.Tap(h.u.compose.share.buttons[1])
	bg := func() any {
		return fyne.CurrentApp().Settings().Theme().Color(theme.ColorNameBackground, theme.VariantLight)
	}
	dark := base.Color(theme.ColorNameBackground, theme.VariantDark)
	if bg() != dark || dark == base.Color(theme.ColorNameBackground, theme.VariantLight) {
		t.Fatal("Dark chosen, but the theme still draws light when the system is light")
	}

	fyne.CurrentApp().Settings().SetTheme(base) // as a new process starts
	u2 := h.reopen(t)
	if !u2.account.chaos.Checked {
		t.Error("chaos mode was not remembered")
	}
	h.mu.Lock()
	faults := append([]string(nil), h.faults...)
	h.mu.Unlock()
	if len(faults) != 2 || faults[1] != chaosFaults {
		t.Errorf("the next start must turn the sandbox's faults on again: %v", faults)
	}
	if u2.account.settings.theme.chosen != 2 || bg() != dark {
		t.Error("the dark theme was not remembered")
	}
	if u2.compose.share.chosen != 1 || u2.compose.expiry.chosen != 2 {
		t.Errorf("link choices: share %d expiry %d, want 1 and 2", u2.compose.share.chosen, u2.compose.expiry.chosen)
	}
	test.Tap(u2.account.settings.theme.buttons[0])
	if bg() != base.Color(theme.ColorNameBackground, theme.VariantLight) || fyne.CurrentApp().Settings().Theme() != base {
		t.Error("back to the system's choice, the theme must draw light when the system is light")
	}
	test.Tap(u2.account.chaos)
	if h.reopen(t).account.chaos.Checked {
		t.Error("chaos mode turned off came back on")
	}
}

// The question on quitting while uploads run has Keep uploading focused,
// so a key press keeps them; Quit with "Don't ask again" is remembered
// and the next close quits at once.
func TestQuitQuestionDefaultsToKeepAndRemembersQuit(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{"j": {ID: "j", State: transfer.StateRunning}}}
	h := newHarness(t, func(o *harnessOpts) { o.uploads = fu })
	quits := 0
	quit := func() { quits++ }
	hide := func() { t.Fatal("no tray: the window must not hide") }
	h.u.CloseRequested(false, quit, hide)
	q := h.u.quitAsked
	if q == nil || h.w.Canvas().Overlays().Top() == nil {
		t.Fatal("uploading without a tray: closing must ask")
	}
	if text := labelsIn(h.w.Canvas().Overlays().Top()); !strings.Contains(text, "Quit anyway?") {
		t.Fatalf("the question: %q", text)
	}
	if h.w.Canvas().Focused() != fyne.Focusable(q.keep) {
		t.Fatalf("focus on %T, want Keep uploading", h.w.Canvas().Focused())
	}
	h.w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	if quits != 0 || h.w.Canvas().Overlays().Top() != nil {
		t.Fatalf("the key pressed on the default answer: quit %d times, question open %v", quits, h.w.Canvas().Overlays().Top() != nil)
	}

	h.u.CloseRequested(false, quit, hide)
	q = h.u.quitAsked
	test.Tap(q.again)
	test.Tap(q.quit)
	if quits != 1 {
		t.Fatalf("Quit: quit %d times", quits)
	}
	if h.u.account.settings.askQuit.Checked {
		t.Error("the Account screen still says Carrier asks")
	}
	h.u.quitAsked = nil
	h.u.CloseRequested(false, quit, hide)
	if quits != 2 || h.u.quitAsked != nil {
		t.Fatalf("after Don't ask again: quit %d times, asked %v", quits, h.u.quitAsked != nil)
	}
	if h.reopen(t).account.settings.askQuit.Checked {
		t.Error("Don't ask again was not remembered")
	}
}

// In the sandbox the Account screen names the address messages go from.
func TestAccountNamesTheSandboxSender(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{}}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = fu
		o.deps = func(d *Deps) {
			d.Account = func() Account { return Account{Sandbox: true, Address: "you@carrier.sandbox"} }
		}
	})
	if got := h.u.account.who.Text; !strings.Contains(got, "you@carrier.sandbox on this computer") {
		t.Fatalf("account: %q", got)
	}
}

// Start at login shows what the system says, changes it, and when the
// system refuses, says why and shows it unchanged.
func TestStartAtLoginSetting(t *testing.T) {
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{}}
	on := true
	var fail error
	var calls []bool
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads = fu
		o.deps = func(d *Deps) {
			d.StartsAtLogin = func() (bool, error) { return on, nil }
			d.StartAtLogin = func(v bool) error {
				calls = append(calls, v)
				if fail != nil {
					return fail
				}
				on = v
				return nil
			}
		}
	})
	s := h.u.account.settings
	if s.login == nil || !s.login.Checked {
		t.Fatal("the system starts Carrier at login, but the check is off")
	}
	test.Tap(s.login)
	if on || len(calls) != 1 || calls[0] {
		t.Fatalf("unticked: on %v, calls %v", on, calls)
	}
	fail = errors.New("the autostart folder is read-only")
	test.Tap(s.login)
	if s.login.Checked || !strings.Contains(s.status.Text, "read-only") || len(calls) != 2 {
		t.Fatalf("refused: checked %v, status %q, calls %v", s.login.Checked, s.status.Text, calls)
	}
	fail = nil
	test.Tap(s.login)
	if !on || !s.login.Checked || len(calls) != 3 {
		t.Fatalf("ticked again: on %v, checked %v, calls %v", on, s.login.Checked, calls)
	}

	h2 := newHarness(t, func(o *harnessOpts) { o.uploads = fu })
	if h2.u.account.settings.login != nil {
		t.Error("start at login offered without a way to do it")
	}
}

// After a new language, Settings offers Restart now, which restarts
// Carrier (Deps.Restart) so that the window speaks it; without a way to
// restart, it says to close and open Carrier, naming the language.
func TestLanguageChoiceOffersRestart(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	restarts := 0
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) { d.Restart = func() { restarts++ } }
	})
	s := h.u.account.settings
	if s.restart == nil || s.restart.Visible() {
		t.Fatal("Restart now offered before any language was chosen")
	}
	test.Tap(choiceNamed(s.lang, display("فارسی")))
	if !s.restart.Visible() || !strings.Contains(s.status.logical, "فارسی") {
		t.Fatalf("after choosing Persian: Restart now shown %v, the setting says %q", s.restart.Visible(), s.status.logical)
	}
	test.Tap(s.restart)
	if restarts != 1 {
		t.Errorf("Restart now restarted %d times", restarts)
	}

	plain := newHarness(t)
	p := plain.u.account.settings
	test.Tap(choiceNamed(p.lang, display("العربية")))
	if p.restart != nil || p.status.logical != "Close and open Carrier again to see it in العربية." {
		t.Errorf("without a restart: Restart now %v, the setting says %q", p.restart != nil, p.status.logical)
	}
}

// Make Carrier my mail app says what it changed: the app that opened mail
// links before, none, nothing (already), on Windows that mail links are
// chosen in Settings; a refusal in its own words. Not offered without a
// way to do it.
func TestMakeMailAppSetting(t *testing.T) {
	var answer platform.MailApp
	var fail error
	calls := 0
	h := newHarness(t, func(o *harnessOpts) {
		o.deps = func(d *Deps) {
			d.MakeMailApp = func() (platform.MailApp, error) {
				calls++
				return answer, fail
			}
		}
	})
	s := h.u.account.settings
	if s.mailApp == nil {
		t.Fatal("Make Carrier my mail app is not offered")
	}
	for _, c := range []struct {
		answer platform.MailApp
		fail   error
		want   []string
		not    string
	}{
		{platform.MailApp{Before: "thunderbird.desktop"}, nil, []string{"Carrier now opens mail links", "Before, thunderbird.desktop did."}, "Settings > Apps"},
		{platform.MailApp{}, nil, []string{"Carrier now opens mail links", "No app did before."}, "Settings > Apps"},
		{platform.MailApp{Before: "app.carrier.desktop.desktop", Already: true}, nil, []string{"already your mail app"}, "Settings > Apps"},
		{platform.MailApp{Before: "Microsoft Outlook", LinksInSettings: true}, nil, []string{`"Send by email" now opens Carrier`, "Before, Microsoft Outlook did.", "Settings > Apps > Default apps"}, "opens mail links"},
		{platform.MailApp{}, errors.New("gio: Failed to load info for handler"), []string{"Failed to load info"}, "now opens"},
	} {
		answer, fail = c.answer, c.fail
		before := calls
		test.Tap(s.mailApp)
		if calls != before+1 {
			t.Fatalf("the button made %d calls", calls-before)
		}
		got := s.status.Text
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("for %+v, %v it says %q, want %q in it", c.answer, c.fail, got, w)
			}
		}
		if strings.Contains(got, c.not) {
			t.Errorf("for %+v, %v it says %q, with %q", c.answer, c.fail, got, c.not)
		}
	}

	h2 := newHarness(t)
	if h2.u.account.settings.mailApp != nil {
		t.Error("Make Carrier my mail app offered without a way to do it")
	}
}
