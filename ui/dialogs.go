package ui

import (
	"image/color"
	"net/url"
	"reflect"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Carrier's dialogs answer the keyboard as native ones do: Escape gives
// the answer that changes nothing (Keep uploading, Stay signed in, Close,
// a file dialog's Cancel), never the one that acts; Enter presses the
// focused button, or with none focused the dialog's default, the button
// marked as such (widget.HighImportance). Fyne 2.8.1 does neither: its
// dialogs ignore Escape, its buttons take only Space, and a key goes to
// the focused widget alone, to the canvas only when nothing has focus.
// So every dialog is made here: the canvas's key handler serves the
// top-most dialog when nothing in it has focus, and the dialog's own
// widgets (dialogButton, and Carrier's entries, check boxes, links and
// choices, which join the dialog when it is made) pass Escape to it when
// they have it.

// modal is one of Carrier's dialogs while it is open.
type modal struct {
	u       *UI
	safe    func()              // what Escape does
	overlay fyne.CanvasObject   // the dialog's pop-up on the window's canvas, once shown
	before  fyne.Focusable      // what had focus beneath it, given back when it closes
	parts   []fyne.CanvasObject // its content and buttons; nil: look in its pop-up
}

// defaultButton is the button Enter presses when nothing has focus.
func (m *modal) defaultButton() fyne.Tappable {
	if m.parts == nil {
		return defaultButton(popUpOf(m.overlay))
	}
	return defaultButton(m.parts...)
}

// escape gives the dialog's safe answer.
func (m *modal) escape() {
	if m.safe != nil {
		m.safe()
	}
}

// shown records the pop-up the dialog just put on the canvas, and gives
// focus to the button Enter would press, so the person sees it.
func (m *modal) shown() {
	c := m.u.win.Canvas()
	m.overlay = c.Overlays().Top()
	m.u.modals = append(m.u.modals, m)
	if b, ok := m.defaultButton().(fyne.Focusable); ok {
		c.Focus(b)
	}
}

// closed forgets the dialog and gives focus back to what had it, if that
// is still on the screen and can take it; otherwise nothing has focus,
// so the next key goes to the canvas rather than to a widget gone.
func (m *modal) closed() {
	for i, o := range m.u.modals {
		if o == m {
			m.u.modals = append(m.u.modals[:i], m.u.modals[i+1:]...)
			break
		}
	}
	c := m.u.win.Canvas()
	if m.before != nil && c.Focused() == m.before {
		c.Unfocus()
		c.Focus(m.before)
	}
}

// dialogKey is the window canvas's key handler: keys reach it when no
// widget has focus.
func (u *UI) dialogKey(ev *fyne.KeyEvent) {
	top := u.win.Canvas().Overlays().Top()
	if top == nil {
		return
	}
	var m *modal
	for _, o := range u.modals {
		if o.overlay == top {
			m = o
		}
	}
	switch ev.Name {
	case fyne.KeyEscape:
		if m != nil {
			m.escape()
		} else if b := dismissButton(popUpOf(top)); b != nil {
			// A dialog Fyne makes itself (a file dialog's "Overwrite?").
			b.Tapped(&fyne.PointEvent{})
		}
	case fyne.KeyReturn, fyne.KeyEnter:
		b := defaultButton(popUpOf(top))
		if m != nil {
			b = m.defaultButton()
		}
		if b != nil {
			b.Tapped(&fyne.PointEvent{})
		}
	}
}

// carrierDialog is a Fyne custom dialog made through newDialog.
type carrierDialog struct {
	*dialog.CustomDialog
	m *modal
}

// Show shows the dialog and gives focus to its default button.
func (d *carrierDialog) Show() {
	d.m.before = d.m.u.win.Canvas().Focused()
	d.CustomDialog.Show()
	d.m.shown()
}

// newDialog makes one of Carrier's dialogs over the window: content with
// its buttons (made by newDialogButton) in it, or in buttons, a row
// along the bottom. safe is the button Escape presses: the answer that
// changes nothing.
func (u *UI) newDialog(title string, content fyne.CanvasObject, safe *dialogButton, buttons ...fyne.CanvasObject) *carrierDialog {
	d := &carrierDialog{CustomDialog: dialog.NewCustomWithoutButtons(title, content, u.win)}
	d.m = &modal{u: u, parts: append([]fyne.CanvasObject{content}, buttons...)}
	d.m.safe = func() {
		if !safe.Disabled() {
			safe.Tapped(&fyne.PointEvent{})
		}
	}
	if len(buttons) > 0 {
		d.SetButtons(buttons)
	}
	join(d.m, content)
	for _, b := range buttons {
		join(d.m, b)
	}
	d.SetOnClosed(d.m.closed)
	return d
}

// showConfirm asks a question answered Yes or No, as dialog.ShowConfirm
// does: No is the safe answer, Yes the default.
func (u *UI) showConfirm(title, message string, done func(bool)) {
	u.confirm(title, dialogText(message), lang.X("dialog.yes", "Yes"), lang.X("dialog.no", "No"), false, done)
}

// showRiskyConfirm asks a question whose Yes loses something: No is the
// safe answer and the default too, and Yes is marked as dangerous.
func (u *UI) showRiskyConfirm(title, message string, done func(bool)) {
	u.confirm(title, dialogText(message), lang.X("dialog.yes", "Yes"), lang.X("dialog.no", "No"), true, done)
}

// showCustomConfirm is dialog.ShowCustomConfirm's question: content,
// answered with confirm (the default) or dismiss (the safe answer).
func (u *UI) showCustomConfirm(title, confirm, dismiss string, content fyne.CanvasObject, done func(bool)) {
	u.confirm(title, content, confirm, dismiss, false, done)
}

func (u *UI) confirm(title string, content fyne.CanvasObject, yes, no string, risky bool, done func(bool)) *carrierDialog {
	var d *carrierDialog
	answer := func(ok bool) func() {
		return func() {
			d.Hide()
			if done != nil {
				done(ok)
			}
		}
	}
	noBtn := newDialogButton(display(no), theme.CancelIcon(), answer(false))
	yesBtn := newDialogButton(display(yes), theme.ConfirmIcon(), answer(true))
	yesBtn.Importance = widget.HighImportance
	if risky {
		yesBtn.Importance, noBtn.Importance = widget.DangerImportance, widget.HighImportance
	}
	d = u.newDialog(display(title), content, noBtn, noBtn, yesBtn)
	d.Show()
	return d
}

// showInformation tells something, with OK.
func (u *UI) showInformation(title, message string) *carrierDialog {
	var d *carrierDialog
	ok := newDialogButton(display(lang.X("dialog.ok", "OK")), nil, func() { d.Hide() })
	ok.Importance = widget.HighImportance
	d = u.newDialog(display(title), dialogText(message), ok, ok)
	d.Show()
	return d
}

// dialogText is a dialog's message, wrapped, in display order.
func dialogText(message string) fyne.CanvasObject {
	l := newWrapLabel(message)
	return l
}

// showFileDialog shows one of Fyne's file dialogs as Carrier's: Escape
// cancels it (its callback gets nil), Enter presses Open or Save. Fyne
// puts the focus in a save dialog's name field, where Escape would not
// reach Carrier (Fyne's entry takes the key and drops it), so nothing
// has focus at first: Enter saves under the name offered, Escape
// cancels, and Tab reaches the field to change it.
func (u *UI) showFileDialog(d *dialog.FileDialog) {
	m := &modal{u: u, safe: d.Dismiss, before: u.win.Canvas().Focused()}
	d.SetOnClosed(m.closed)
	d.Show()
	m.overlay = u.win.Canvas().Overlays().Top()
	u.modals = append(u.modals, m)
	u.win.Canvas().Unfocus()
}

// popUpOf is the pop-up an overlay of the canvas shows. Fyne 2.8 puts
// each pop-up on the canvas inside a container of an internal type, whose
// exported Content is the pop-up: reflection reads it, since the type
// cannot be named. Anything else is itself.
func popUpOf(o fyne.CanvasObject) fyne.CanvasObject {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return o
	}
	if f := v.Elem().FieldByName("Content"); f.IsValid() && f.CanInterface() {
		if c, ok := f.Interface().(fyne.CanvasObject); ok && c != nil {
			return c
		}
	}
	return o
}

// join hands m to the widgets in o that pass keys to their dialog.
func join(m *modal, o fyne.CanvasObject) {
	if j, ok := o.(interface{ joinDialog(*modal) }); ok {
		j.joinDialog(m)
	}
	switch o := o.(type) {
	case *fyne.Container:
		for _, c := range o.Objects {
			join(m, c)
		}
	case *container.Scroll:
		join(m, o.Content)
	}
}

// buttons lists the buttons in a dialog's pop-up, as far as containers
// reach (a dialog's buttons sit in containers, not inside other widgets).
func buttons(o fyne.CanvasObject, out *[]fyne.CanvasObject) {
	if o == nil || !o.Visible() {
		return
	}
	switch b := o.(type) {
	case *widget.Button, *dialogButton:
		*out = append(*out, o)
		return
	case *widget.PopUp:
		buttons(b.Content, out)
	case *fyne.Container:
		for _, c := range b.Objects {
			buttons(c, out)
		}
	case *container.Scroll:
		buttons(b.Content, out)
	}
}

// defaultButton is the dialog's one enabled button marked as its
// default, or nil.
func defaultButton(in ...fyne.CanvasObject) fyne.Tappable {
	var all []fyne.CanvasObject
	for _, o := range in {
		buttons(o, &all)
	}
	var found fyne.Tappable
	for _, b := range all {
		var imp widget.Importance
		var disabled bool
		switch b := b.(type) {
		case *widget.Button:
			imp, disabled = b.Importance, b.Disabled()
		case *dialogButton:
			imp, disabled = b.Importance, b.Disabled()
		}
		if imp == widget.HighImportance && !disabled {
			if found != nil {
				return nil
			}
			found = b.(fyne.Tappable)
		}
	}
	return found
}

// dismissButton is, in a dialog Fyne made itself, the button that
// answers no: the one with the cancel icon, or the only button there is.
func dismissButton(o fyne.CanvasObject) fyne.Tappable {
	var all []fyne.CanvasObject
	buttons(o, &all)
	for _, b := range all {
		if b, ok := b.(*widget.Button); ok && b.Icon != nil && b.Icon.Name() == theme.CancelIcon().Name() && !b.Disabled() {
			return b
		}
	}
	if len(all) == 1 {
		return all[0].(fyne.Tappable)
	}
	return nil
}

// inDialog is what a widget needs to pass Escape to the dialog it is in.
type inDialog struct{ m *modal }

func (d *inDialog) joinDialog(m *modal) { d.m = m }

// escaped gives the dialog's safe answer for Escape; it reports whether
// the key was that.
func (d *inDialog) escaped(ev *fyne.KeyEvent) bool {
	if d.m == nil || ev.Name != fyne.KeyEscape {
		return false
	}
	d.m.escape()
	return true
}

// dialogButton is a button of one of Carrier's dialogs: Escape gives
// the dialog's safe answer, Enter and Space press it, and its focus
// shows whatever its importance.
type dialogButton struct {
	focusButton
	inDialog
}

// newDialogButton makes a dialog's button; text is in display order.
func newDialogButton(text string, icon fyne.Resource, tapped func()) *dialogButton {
	b := &dialogButton{}
	b.ring = canvas.NewRectangle(color.Transparent)
	b.Text, b.Icon, b.OnTapped = text, icon, tapped
	b.ExtendBaseWidget(b)
	return b
}

func (b *dialogButton) TypedKey(ev *fyne.KeyEvent) {
	switch {
	case b.escaped(ev):
	case ev.Name == fyne.KeyReturn || ev.Name == fyne.KeyEnter:
		if !b.Disabled() {
			b.Tapped(&fyne.PointEvent{})
		}
	default:
		b.focusButton.TypedKey(ev)
	}
}

// dialogLink is a hyperlink in a dialog.
type dialogLink struct {
	widget.Hyperlink
	inDialog
}

func newDialogLink(text string, u *url.URL) *dialogLink {
	l := &dialogLink{}
	l.Text, l.URL = text, u
	l.ExtendBaseWidget(l)
	return l
}

func (l *dialogLink) TypedKey(ev *fyne.KeyEvent) {
	if !l.escaped(ev) {
		l.Hyperlink.TypedKey(ev)
	}
}

// dialogSelect is a drop-down choice in a dialog.
type dialogSelect struct {
	widget.Select
	inDialog
}

func newDialogSelect(options []string, changed func(string)) *dialogSelect {
	s := &dialogSelect{}
	s.Options, s.OnChanged = options, changed
	s.ExtendBaseWidget(s)
	return s
}

func (s *dialogSelect) TypedKey(ev *fyne.KeyEvent) {
	if !s.escaped(ev) {
		s.Select.TypedKey(ev)
	}
}
