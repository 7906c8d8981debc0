package ui

import (
	"fyne.io/fyne/v2/lang"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
)

// Limits is what the person's network settings need of the queue (the
// app's Queue): an upload speed shared by all uploads, changed while they
// run, and what a metered connection means for large uploads.
type Limits interface {
	// SetBandwidthSpec applies a limit or a timetable in rclone's
	// --bwlimit syntax ("off", "1M", "08:00,1M 19:00,off"), or says
	// plainly why spec is not one.
	SetBandwidthSpec(spec string) error
	// SetOnMetered says whether large uploads pause on a metered connection.
	SetOnMetered(pause bool)
	// SendAnyway lets one upload held for a metered connection go.
	SendAnyway(id string) error
}

// Where the settings are kept: the app's preferences (Fyne's, per app),
// read back when the window opens.
const (
	prefBandwidth = "bandwidth"  // rclone --bwlimit syntax; "" or "off": no limit
	prefMetered   = "on-metered" // "pause" or "continue"
)

// speedPresets are the limits offered in one press, on the Transfers
// screen and in the tray; anything else is typed (Custom).
var speedPresets = []struct{ name, spec string }{
	{"", "off"}, // "No limit", in the window's language
	{"256 KiB/s", "256K"},
	{"1 MiB/s", "1M"},
	{"4 MiB/s", "4M"},
}

const speedCustom = "Custom"

// networkSettings are the Transfers screen's controls of the upload speed
// and of metered connections (UI thread only).
type networkSettings struct {
	u       *UI
	speed   *choices
	custom  *namedEntry
	apply   *focusButton
	problem *wrapLabel
	metered *choices
	spec    string           // the limit applied now, as typed
	tray    []*fyne.MenuItem // the tray's presets, checked as the window's
	refresh func()           // redraws the tray's menu
	Object  fyne.CanvasObject
}

func newNetworkSettings(u *UI) *networkSettings {
	n := &networkSettings{u: u}
	names := make([]string, 0, len(speedPresets)+1)
	for _, p := range speedPresets {
		names = append(names, presetName(p.name))
	}
	names = append(names, lang.X("limits.custom", "Custom"))
	n.custom = newNamedEntry(lang.X("limits.entry", "Upload speed limit or timetable"), false)
	n.custom.SetPlaceHolder("2M, or a timetable: 08:00,1M 19:00,off")
	n.custom.OnSubmitted = func(string) { n.applyCustom() }
	n.apply = newFocusButton(lang.X("limits.apply", "Apply limit"), theme.ConfirmIcon(), n.applyCustom)
	n.problem = newWrapLabel("")
	n.problem.Importance = widget.DangerImportance
	n.problem.Hide()
	n.speed = newChoices(lang.X("limits.speed", "Upload speed"), names, func(i int) {
		if i < len(speedPresets) {
			n.set(speedPresets[i].spec)
			return
		}
		n.showCustom(true) // typed, then applied
		n.u.win.Canvas().Focus(n.custom)
	})
	n.metered = newChoices(lang.X("limits.metered", "On a metered connection"), []string{lang.X("limits.metered.pause", "Pause large uploads"), lang.X("limits.metered.continue", "Continue")}, func(i int) {
		pause := i == 0
		n.u.deps.Limits.SetOnMetered(pause)
		n.u.app.Preferences().SetString(prefMetered, map[bool]string{true: "pause", false: "continue"}[pause])
	})
	customRow := container.NewBorder(nil, nil, nil, n.apply, n.custom)
	n.Object = container.NewVBox(n.speed.Object, customRow, n.problem, n.metered.Object)
	n.load()
	return n
}

// load applies the kept settings to the queue and shows them. A kept
// limit that no longer reads (written by hand) is shown with its error
// and not applied.
func (n *networkSettings) load() {
	prefs := n.u.app.Preferences()
	pause := prefs.StringWithFallback(prefMetered, "pause") != "continue"
	n.u.deps.Limits.SetOnMetered(pause)
	n.metered.set(map[bool]int{true: 0, false: 1}[pause])
	spec := strings.TrimSpace(prefs.StringWithFallback(prefBandwidth, "off"))
	if spec == "" {
		spec = "off"
	}
	n.custom.SetText(spec)
	if err := n.u.deps.Limits.SetBandwidthSpec(spec); err != nil {
		n.show("off")
		n.custom.SetText(spec)
		n.showCustom(true)
		n.fail(err)
		return
	}
	n.show(spec)
}

// set applies spec (a preset, the tray's or the typed one), keeps it and
// shows it; a spec that does not read is shown with its error and changes
// nothing.
func (n *networkSettings) set(spec string) error {
	spec = strings.TrimSpace(spec)
	if err := n.u.deps.Limits.SetBandwidthSpec(spec); err != nil {
		n.fail(err)
		return err
	}
	n.u.app.Preferences().SetString(prefBandwidth, spec)
	n.show(spec)
	return nil
}

func (n *networkSettings) applyCustom() {
	if strings.TrimSpace(n.custom.Text) == "" {
		n.fail(errEmptyLimit)
		return
	}
	n.set(n.custom.Text)
}

type limitError string

func (e limitError) Error() string { return string(e) }

const errEmptyLimit = limitError(`Type a limit such as 2M (2 MiB/s), "off", or a timetable such as 08:00,1M 19:00,off`)

func (n *networkSettings) fail(err error) {
	setLabel(n.problem, lang.X("limits.failed", "That limit was not applied: {{.Error}}", w{"Error": app.Printable(err.Error())}))
	n.problem.Show()
}

// show puts the applied limit into the controls: its preset chosen, or
// Custom with the typed text; and the tray's checks.
func (n *networkSettings) show(spec string) {
	n.spec = spec
	n.problem.Hide()
	i := presetOf(spec)
	if i < 0 {
		n.speed.set(len(speedPresets))
		n.custom.SetText(spec)
		n.showCustom(true)
	} else {
		n.speed.set(i)
		n.showCustom(false)
	}
	for j, item := range n.tray {
		item.Checked = j == i
	}
	if n.refresh != nil {
		n.refresh()
	}
}

func (n *networkSettings) showCustom(on bool) {
	if on {
		n.custom.Show()
		n.apply.Show()
	} else {
		n.custom.Hide()
		n.apply.Hide()
	}
}

func presetOf(spec string) int {
	for i, p := range speedPresets {
		if strings.EqualFold(spec, p.spec) {
			return i
		}
	}
	return -1
}

// SpeedMenu is the tray's "Upload speed" item: the presets, the one
// applied checked, kept as the window's control is. refresh redraws the
// tray's menu (its Refresh) after a check moved. Nil when the queue takes
// no limit.
func (u *UI) SpeedMenu(refresh func()) *fyne.MenuItem {
	n := u.transfers.network
	if n == nil {
		return nil
	}
	n.tray = nil
	for i, p := range speedPresets {
		spec := p.spec
		item := fyne.NewMenuItem(presetName(p.name), func() { n.set(spec) })
		item.Checked = i == presetOf(n.spec)
		n.tray = append(n.tray, item)
	}
	n.refresh = refresh
	speed := lang.X("limits.speed", "Upload speed")
	return &fyne.MenuItem{Label: speed, ChildMenu: fyne.NewMenu(speed, n.tray...)}
}

// presetName is a preset's name as shown; the sizes are the same in every
// language.
func presetName(name string) string {
	if name == "" {
		return lang.X("limits.none", "No limit")
	}
	return name
}
