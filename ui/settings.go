package ui

import (
	"fyne.io/fyne/v2/lang"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
)

// The person's settings, kept in the app's preferences (Fyne's, per app)
// and read back when the window opens. The upload speed and metered
// settings are limits.go's.
const (
	prefChaos      = "chaos"       // bool: the sandbox's faults on
	prefAskQuit    = "ask-quit"    // bool: ask before quitting while uploads run (no tray)
	prefTheme      = "theme"       // themeChoices' index: system, light, dark
	prefLinkShare  = "link-share"  // shareChoices' index
	prefLinkExpiry = "link-expiry" // expiryChoices' index
)

// themeChoices are the Theme setting's answers, in the window's language.
func themeChoices() []string {
	return []string{lang.X("settings.system", "As the system"), lang.X("settings.theme.light", "Light"), lang.X("settings.theme.dark", "Dark")}
}

// settingsSection is the Account screen's part that is about Carrier
// itself rather than the account: theme, start at login, the question
// asked on quitting.
type settingsSection struct {
	u       *UI
	theme   *choices
	lang    *choices
	login   *namedCheck  // nil when the system's login start is not offered
	mailApp *focusButton // Make Carrier my mail app; nil when not offered
	askQuit *namedCheck
	status  *wrapLabel
	restart *focusButton // Restart now, after a new language; nil without Deps.Restart
	Object  fyne.CanvasObject
}

func newSettingsSection(u *UI) *settingsSection {
	s := &settingsSection{u: u}
	prefs := u.app.Preferences()
	s.status = newWrapLabel("")
	s.status.Hide()
	s.theme = newChoices(lang.X("settings.theme", "Theme"), themeChoices(), func(i int) {
		prefs.SetInt(prefTheme, i)
		u.applyTheme(i)
	})
	if i := prefs.IntWithFallback(prefTheme, 0); i >= 0 && i < len(themeChoices()) {
		s.theme.set(i)
		u.applyTheme(i)
	}
	s.lang = s.languageChoice()
	s.askQuit = newNamedCheck(lang.X("settings.askquit", "Ask before quitting while uploads run (without a tray icon, closing the window quits)"), nil)
	s.askQuit.SetChecked(prefs.BoolWithFallback(prefAskQuit, true))
	s.askQuit.OnChanged = func(on bool) { prefs.SetBool(prefAskQuit, on) }
	heading := newLabel(lang.X("settings.heading", "Settings"))
	heading.TextStyle = fyne.TextStyle{Bold: true}
	box := container.NewVBox(heading, s.theme.Object, s.lang.Object, u.undoSetting().Object, u.openMediaSetting().Object)
	if u.deps.StartAtLogin != nil && u.deps.StartsAtLogin != nil {
		s.login = newNamedCheck(lang.X("settings.login", "Start Carrier when I log in, in the tray, so unfinished uploads go on after a restart"), nil)
		// The system's entry is the truth: the person may have removed it
		// in their desktop's settings since.
		on, err := u.deps.StartsAtLogin()
		if err != nil {
			s.say(lang.X("settings.login.unknown", "Could not read whether Carrier starts at login: {{.Error}}", w{"Error": app.Printable(err.Error())}))
		}
		s.login.SetChecked(on)
		s.login.OnChanged = s.setLogin
		box.Add(s.login)
	}
	box.Add(s.askQuit)
	if u.deps.MakeMailApp != nil {
		s.mailApp = newFocusButton(lang.X("settings.mailapp", "Make Carrier my mail app"), theme.MailComposeIcon(), s.makeMailApp)
		box.Add(mirrorRTL(container.NewHBox(s.mailApp)))
	}
	box.Add(s.status)
	if u.deps.Restart != nil {
		s.restart = newFocusButton(lang.X("settings.restart", "Restart now"), theme.ViewRefreshIcon(), u.deps.Restart)
		s.restart.Hide()
		box.Add(mirrorRTL(container.NewHBox(s.restart)))
	}
	s.Object = box
	return s
}

// languageChoice is the Language setting. Fyne's words are picked once,
// as Carrier starts, so a new choice is kept for the next start.
func (s *settingsSection) languageChoice() *choices {
	prefs := s.u.app.Preferences()
	names := append([]string{lang.X("settings.system", "As the system")}, languageNames[1:]...)
	c := newChoices(lang.X("settings.language", "Language"), names, nil)
	chosen := prefs.String(prefLanguage)
	for i, code := range languageCodes {
		if code == chosen {
			c.set(i)
		}
	}
	c.changed = func(i int) {
		if languageCodes[i] == prefs.String(prefLanguage) {
			return
		}
		prefs.SetString(prefLanguage, languageCodes[i])
		language := languageNames[i]
		if i == 0 {
			language = lang.X("settings.language.system", "the system's language")
		}
		// Fyne's words are picked once, as Carrier starts: the window
		// speaks the new language after a restart, which Carrier offers
		// where it can restart itself (Deps.Restart).
		if s.restart == nil {
			s.say(lang.X("settings.language.reopen", "Close and open Carrier again to see it in {{.Language}}.", w{"Language": language}))
			return
		}
		s.say(lang.X("settings.language.restart", "Carrier speaks {{.Language}} once it starts again. Uploads pause for the moment and go on after.", w{"Language": language}))
		s.restart.Show()
	}
	return c
}

func (s *settingsSection) say(text string) {
	setLabel(s.status, text)
	s.status.Show()
}

func (s *settingsSection) setLogin(on bool) {
	if err := s.u.deps.StartAtLogin(on); err != nil {
		s.say(app.Printable(err.Error()))
		// Shown as it stands, without coming back here.
		s.login.OnChanged = nil
		s.login.SetChecked(!on)
		s.login.OnChanged = s.setLogin
		return
	}
	if on {
		s.say(lang.X("settings.login.on", "Carrier will start in the tray when you log in."))
	} else {
		s.say(lang.X("settings.login.off", "Carrier will not start when you log in."))
	}
}

// makeMailApp makes Carrier the mail app and says what that changed: the
// app that was before, and on Windows that mail links are the person's
// to choose in Settings.
func (s *settingsSection) makeMailApp() {
	got, err := s.u.deps.MakeMailApp()
	if err != nil {
		s.say(app.Printable(err.Error()))
		return
	}
	var text string
	before := w{"Before": app.Printable(got.Before)}
	switch {
	case got.Already:
		text = lang.X("settings.mailapp.already", "Carrier is already your mail app.")
	case got.LinksInSettings && got.Before != "":
		text = lang.X("settings.mailapp.programs", "Other programs' \"Send by email\" now opens Carrier. Before, {{.Before}} did.", before)
	case got.LinksInSettings:
		text = lang.X("settings.mailapp.programs.first", "Other programs' \"Send by email\" now opens Carrier. No app did before.")
	case got.Before != "":
		text = lang.X("settings.mailapp.done", "Carrier now opens mail links and other programs' \"Send by email\". Before, {{.Before}} did.", before)
	default:
		text = lang.X("settings.mailapp.first", "Carrier now opens mail links and other programs' \"Send by email\". No app did before.")
	}
	if got.LinksInSettings {
		text += " " + lang.X("settings.mailapp.links", "Windows lets only you choose the app for mail links: choose Carrier for MAILTO in Settings > Apps > Default apps.")
	}
	s.say(text)
}

// applyTheme shows the window light or dark whatever the system says
// (1, 2), or as the system says (0), keeping whatever theme the app has
// otherwise.
func (u *UI) applyTheme(choice int) {
	settings := u.app.Settings()
	base := settings.Theme()
	if v, ok := base.(variantTheme); ok {
		base = v.Theme
	}
	switch choice {
	case 1:
		settings.SetTheme(variantTheme{base, theme.VariantLight})
	case 2:
		settings.SetTheme(variantTheme{base, theme.VariantDark})
	default:
		if base != settings.Theme() {
			settings.SetTheme(base)
		}
	}
}

// variantTheme is a theme drawn in one variant, light or dark, whatever
// variant Fyne asks for.
type variantTheme struct {
	fyne.Theme
	variant fyne.ThemeVariant
}

func (t variantTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, t.variant)
}

// keepChoice keeps c's answer in the preferences under key and shows the
// kept one now.
func keepChoice(prefs fyne.Preferences, key string, c *choices) {
	if i := prefs.IntWithFallback(key, c.chosen); i >= 0 && i < len(c.buttons) {
		c.set(i)
	}
	changed := c.changed
	c.changed = func(i int) {
		prefs.SetInt(key, i)
		if changed != nil {
			changed(i)
		}
	}
}

// quitQuestion is the question asked on closing the window while
// uploads run and no tray keeps them going.
type quitQuestion struct {
	d          *carrierDialog
	again      *namedCheck
	keep, quit *dialogButton
}

// askQuit asks whether to quit while uploads run. Keeping Carrier open is
// the answer that loses nothing, so it is the button with focus: Enter or
// Space keeps it. "Don't ask again" counts only with Quit, since a window
// that never closes is no answer to remember.
func (u *UI) askQuit(quit func()) {
	q := &quitQuestion{}
	q.again = newNamedCheck(lang.X("quit.again", "Don't ask again: quit at once next time"), nil)
	text := newWrapLabel(lang.X("quit.text", "Quit anyway? Unfinished uploads are kept and go on the next time Carrier starts."))
	q.keep = newDialogButton(display(lang.X("quit.keep", "Keep uploading")), nil, func() { q.d.Hide() })
	q.keep.Importance = widget.HighImportance
	q.quit = newDialogButton(display(lang.X("quit.quit", "Quit")), nil, func() {
		q.d.Hide()
		if q.again.Checked {
			u.app.Preferences().SetBool(prefAskQuit, false)
			u.account.settings.askQuit.SetChecked(false)
		}
		quit()
	})
	q.d = u.newDialog(display(lang.X("quit.title", "Uploads are still running")), container.NewVBox(text, q.again), q.keep, q.quit, q.keep)
	q.d.Resize(fyne.NewSize(480, 0))
	q.d.Show()
	u.win.Canvas().Focus(q.keep)
	u.quitAsked = q
}
