package ui

import (
	"fmt"
	"fyne.io/fyne/v2/lang"
	"image/color"
	"regexp"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Names a screen reader can say. Fyne 2.8 (-tags accessibility, Windows and
// macOS) names buttons, labels and links by their text, and reads only what
// sits directly in containers, one flat list: an entry, a check box or a
// custom bar has no name of its own, and what a widget.Form holds is never
// reached. So the screens lay fields out in containers, and these wrappers
// give the rest their names.

// namedEntry is an Entry with a name ("To", "Subject"). It also keeps the
// window's keyboard path: a focused entry receives every shortcut itself
// (Fyne gives the canvas's shortcuts nothing while an entry has focus), so
// onSubmit is how Ctrl+Enter reaches the screen from inside a field; and
// Tab always moves focus, even out of a multi-line entry (Fyne's would
// insert a tab character and trap the keyboard there: a mail body has no
// use for one, and Shift+Tab did nothing at all).
type namedEntry struct {
	widget.Entry
	inDialog // in a dialog, Escape is the dialog's
	name     string
	focused  bool
	onSubmit func()     // Ctrl+Enter (or Ctrl+keypad Enter) while the entry has focus
	onFocus  func(bool) // told after focus came or went
	// refreshNote shows the note under the entry again, its hint as it
	// is now (formRow).
	refreshNote func()
	// keys, when set, is offered each key first and reports whether it
	// took it (an address field's completion list: complete.go).
	keys func(*fyne.KeyEvent) bool
	// onPaste, when set, is offered Ctrl+V first and reports whether it
	// took it (files copied in a file manager: paste.go); else the text
	// is pasted.
	onPaste func(fyne.Clipboard) bool
}

func newNamedEntry(name string, multiLine bool) *namedEntry {
	e := &namedEntry{name: name}
	e.MultiLine = multiLine
	if multiLine {
		e.Wrapping = fyne.TextWrapWord
	}
	e.ExtendBaseWidget(e)
	return e
}

func (e *namedEntry) AccessibilityLabel() string {
	if e.Text == "" {
		return e.name + ", empty"
	}
	return e.name + ": " + e.Text
}

func (e *namedEntry) AccessibilityRole() fyne.AccessibleRole { return fyne.AccessibleRoleText }

func (e *namedEntry) TypedKey(ev *fyne.KeyEvent) {
	if e.keys != nil && e.keys(ev) {
		return
	}
	if !e.escaped(ev) {
		e.Entry.TypedKey(ev)
	}
}

// AcceptsTab is false so that the driver moves focus on Tab and Shift+Tab.
func (e *namedEntry) AcceptsTab() bool { return false }

// TypedShortcut runs onSubmit for Ctrl+Enter, and onPaste for Ctrl+V;
// every other shortcut (copy, undo, ...), and a paste onPaste left, is the
// Entry's.
func (e *namedEntry) TypedShortcut(s fyne.Shortcut) {
	if isSubmit(s) && e.onSubmit != nil {
		e.onSubmit()
		return
	}
	if p, ok := s.(*fyne.ShortcutPaste); ok && e.onPaste != nil && e.onPaste(p.Clipboard) {
		return
	}
	e.Entry.TypedShortcut(s)
}

// isSubmit reports whether s is Ctrl+Enter, from either Enter key.
func isSubmit(s fyne.Shortcut) bool {
	cs, ok := s.(*desktop.CustomShortcut)
	return ok && cs.Modifier == fyne.KeyModifierControl && (cs.KeyName == fyne.KeyReturn || cs.KeyName == fyne.KeyEnter)
}

func (e *namedEntry) FocusGained() {
	e.focused = true
	e.Entry.FocusGained()
	if e.onFocus != nil {
		e.onFocus(true)
	}
}

func (e *namedEntry) FocusLost() {
	e.focused = false
	e.Entry.FocusLost()
	if e.onFocus != nil {
		e.onFocus(false)
	}
}

// namedCheck is a Check that says whether it is on. In a dialog, Escape
// is the dialog's and Enter presses its default button, as beside any
// control that is not a button.
type namedCheck struct {
	widget.Check
	inDialog
}

func (c *namedCheck) TypedKey(ev *fyne.KeyEvent) {
	switch {
	case c.escaped(ev):
	case c.m != nil && (ev.Name == fyne.KeyReturn || ev.Name == fyne.KeyEnter):
		if b := c.m.defaultButton(); b != nil {
			b.Tapped(&fyne.PointEvent{})
		}
	default:
		c.Check.TypedKey(ev)
	}
}

func newNamedCheck(text string, changed func(bool)) *namedCheck {
	c := &namedCheck{}
	c.Text, c.OnChanged = display(text), changed
	c.ExtendBaseWidget(c)
	return c
}

// CreateRenderer lays the check out mirrored in a right-to-left window:
// its box on the right, its words beside it to the left, as a Persian,
// Hebrew or Arabic form has it (Fyne draws the box on the left).
func (c *namedCheck) CreateRenderer() fyne.WidgetRenderer {
	r := c.Check.CreateRenderer()
	if !windowRTL.Load() {
		return r
	}
	for _, o := range r.Objects() {
		if t, ok := o.(*canvas.Text); ok {
			t.Alignment = fyne.TextAlignTrailing
		}
	}
	return mirrored{r}
}

// mirrored is a renderer whose layout is its inner one's, mirrored left
// to right.
type mirrored struct{ fyne.WidgetRenderer }

func (m mirrored) Layout(size fyne.Size) {
	m.WidgetRenderer.Layout(size)
	mirrorPlaces(m.Objects(), size)
}

// mirrorPlaces moves objects laid out in an area of size to their mirror
// images across its middle.
func mirrorPlaces(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		p := o.Position()
		o.Move(fyne.NewPos(size.Width-p.X-o.Size().Width, p.Y))
	}
}

func (c *namedCheck) AccessibilityLabel() string {
	if c.Checked {
		return c.Text + " (on)"
	}
	return c.Text + " (off)"
}

func (c *namedCheck) AccessibilityRole() fyne.AccessibleRole { return fyne.AccessibleRoleButton }

// The transfer bar says how far the upload is.
func (b *dualBar) AccessibilityLabel() string {
	name := b.name
	if name == "" {
		name = lang.X("a11y.progress", "Upload progress")
	}
	return fmt.Sprintf("%s: %.0f%% confirmed by the server, %.0f%% sent", name, b.confirmed*100, b.sent*100)
}

func (b *dualBar) AccessibilityRole() fyne.AccessibleRole { return fyne.AccessibleRoleText }

// iconButton is a button that says its name: one that shows only its
// icon, or one whose text needs the row's file to make sense.
type iconButton struct {
	focusButton // its focus shows as an outline
	name        string
}

func newIconButton(name string, icon fyne.Resource, tapped func()) *iconButton {
	b := &iconButton{name: name}
	b.ring = canvas.NewRectangle(color.Transparent)
	b.Icon, b.OnTapped = icon, tapped
	b.ExtendBaseWidget(b)
	return b
}

func (b *iconButton) AccessibilityLabel() string { return b.name }

// TypedKey presses the button with Return as with Space.
func (b *iconButton) TypedKey(ev *fyne.KeyEvent) {
	if !pressedByReturn(&b.Button, ev) {
		b.Button.TypedKey(ev)
	}
}

// pressedByReturn presses b when ev is Return or Enter, as a native
// button does (Fyne's take only Space), and reports whether it was.
func pressedByReturn(b *widget.Button, ev *fyne.KeyEvent) bool {
	if ev.Name != fyne.KeyReturn && ev.Name != fyne.KeyEnter {
		return false
	}
	if !b.Disabled() {
		b.Tapped(&fyne.PointEvent{})
	}
	return true
}

// choices are a few buttons of which one is chosen, as radio buttons are,
// each saying its question and whether it is the one chosen ("Who can
// open the links: Recipients (chosen)"). Buttons, unlike a Select whose
// menu the bridge does not read, are reached and pressed like any other.
type choices struct {
	question string
	buttons  []*choiceButton
	chosen   int
	changed  func(int)
	Object   *fyne.Container
}

type choiceButton struct {
	focusButton // its focus shows as an outline
	c           *choices
	i           int
}

func newChoices(question string, options []string, changed func(int)) *choices {
	c := &choices{question: question, changed: changed}
	objs := []fyne.CanvasObject{newLabel(question + ":")}
	for i, o := range options {
		b := &choiceButton{c: c, i: i}
		b.ring = canvas.NewRectangle(color.Transparent)
		b.Text, b.Importance = display(o), widget.LowImportance
		if windowRTL.Load() {
			b.IconPlacement = widget.ButtonIconTrailingText // the mark to the right of its words
		}
		b.OnTapped = func() { c.choose(i) }
		b.ExtendBaseWidget(b)
		c.buttons = append(c.buttons, b)
		objs = append(objs, b)
	}
	c.Object = container.NewHBox(objs...)
	if windowRTL.Load() {
		// The question first from the right, its options after it
		// leftwards; the order of the objects, and so of Tab, stays.
		c.Object.Layout = mirroredLayout{c.Object.Layout}
	}
	c.show()
	return c
}

// mirrorRTL mirrors c's layout in a right-to-left window (mirroredLayout)
// and returns it; in a left-to-right one c is left as it is.
func mirrorRTL(c *fyne.Container) *fyne.Container {
	if windowRTL.Load() {
		c.Layout = mirroredLayout{c.Layout}
	}
	return c
}

// directional is an icon that points a way (Send's paper plane), drawn
// mirrored in a right-to-left window, where forward is leftwards.
func directional(icon fyne.Resource) fyne.Resource {
	if !windowRTL.Load() {
		return icon
	}
	return mirroredIcon(icon)
}

// mirroredLayout is a layout mirrored left to right within its container.
type mirroredLayout struct{ inner fyne.Layout }

func (m mirroredLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	m.inner.Layout(objects, size)
	mirrorPlaces(objects, size)
}

func (m mirroredLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	return m.inner.MinSize(objects)
}

func (c *choices) choose(i int) {
	if i == c.chosen {
		return
	}
	c.chosen = i
	c.show()
	if c.changed != nil {
		c.changed(i)
	}
}

// set shows option i as chosen without telling changed: the setting came
// from elsewhere (kept, or the tray).
func (c *choices) set(i int) {
	c.chosen = i
	c.show()
}

func (c *choices) show() {
	for i, b := range c.buttons {
		b.Icon = theme.RadioButtonIcon()
		if i == c.chosen {
			b.Icon = theme.RadioButtonCheckedIcon()
		}
		b.Refresh()
	}
}

// TypedKey chooses with Return as with Space.
func (b *choiceButton) TypedKey(ev *fyne.KeyEvent) {
	if !pressedByReturn(&b.Button, ev) {
		b.Button.TypedKey(ev)
	}
}

func (b *choiceButton) AccessibilityLabel() string {
	if b.i == b.c.chosen {
		return b.c.question + ": " + b.Text + " (chosen)"
	}
	return b.c.question + ": " + b.Text
}

// focusButton is a Button whose keyboard focus shows at every importance.
// Fyne shows focus by blending its focus colour (the primary colour, made
// pale) into the background, which on a primary-coloured button (Send, the
// chosen tab) changes nothing: the person pressing Tab cannot see that
// Enter or Space would send. It draws an outline in the text colour while
// focused.
type focusButton struct {
	widget.Button
	focused bool
	ring    *canvas.Rectangle
}

func newFocusButton(text string, icon fyne.Resource, tapped func()) *focusButton {
	b := &focusButton{ring: canvas.NewRectangle(color.Transparent)}
	b.Text, b.Icon, b.OnTapped = display(text), icon, tapped
	b.ExtendBaseWidget(b)
	return b
}

func (b *focusButton) FocusGained() {
	b.focused = true
	b.Button.FocusGained()
}

func (b *focusButton) FocusLost() {
	b.focused = false
	b.Button.FocusLost()
}

// TypedKey presses the button with Return as with Space.
func (b *focusButton) TypedKey(ev *fyne.KeyEvent) {
	if !pressedByReturn(&b.Button, ev) {
		b.Button.TypedKey(ev)
	}
}

func (b *focusButton) CreateRenderer() fyne.WidgetRenderer {
	return &focusRingRenderer{WidgetRenderer: b.Button.CreateRenderer(), b: b}
}

type focusRingRenderer struct {
	fyne.WidgetRenderer
	b *focusButton
}

func (r *focusRingRenderer) Objects() []fyne.CanvasObject {
	return append(r.WidgetRenderer.Objects(), r.b.ring)
}

func (r *focusRingRenderer) Layout(size fyne.Size) {
	r.WidgetRenderer.Layout(size)
	r.b.ring.Move(fyne.NewPos(0, 0))
	r.b.ring.Resize(size)
}

func (r *focusRingRenderer) Refresh() {
	r.WidgetRenderer.Refresh()
	ring := r.b.ring
	ring.FillColor, ring.StrokeColor, ring.StrokeWidth = color.Transparent, color.Transparent, 0
	if r.b.focused && !r.b.Disabled() {
		ring.StrokeColor = r.b.Theme().Color(theme.ColorNameForeground, fyne.CurrentApp().Settings().ThemeVariant())
		ring.StrokeWidth = 2
	}
	ring.CornerRadius = r.b.Theme().Size(theme.SizeNameInputRadius)
	ring.Refresh()
}

var viewBox = regexp.MustCompile(`viewBox="\s*([-\d.]+)[\s,]+[-\d.]+[\s,]+([\d.]+)`)

// mirroredIcon is an SVG icon drawn mirrored left to right, themed as the
// icon is (its colour follows the button's importance); an icon that is
// not SVG is returned as it is.
func mirroredIcon(icon fyne.Resource) fyne.Resource {
	svg := string(icon.Content())
	start := strings.Index(svg, "<svg")
	end := strings.LastIndex(svg, "</svg>")
	m := viewBox.FindStringSubmatch(svg)
	if start < 0 || end < 0 || m == nil {
		return icon
	}
	open := start + strings.Index(svg[start:], ">") + 1
	x, _ := strconv.ParseFloat(m[1], 64)
	width, _ := strconv.ParseFloat(m[2], 64)
	flipped := svg[:open] + fmt.Sprintf(`<g transform="matrix(-1 0 0 1 %g 0)">`, 2*x+width) + svg[open:end] + "</g>" + svg[end:]
	res := fyne.NewStaticResource(strings.TrimSuffix(icon.Name(), ".svg")+"-mirrored.svg", []byte(flipped))
	if _, ok := icon.(fyne.ThemedResource); ok {
		return theme.NewThemedResource(res)
	}
	return res
}
