package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Names a screen reader can say. Fyne 2.8 (-tags accessibility, Windows and
// macOS) names buttons, labels and links by their text, and reads only what
// sits directly in containers, one flat list: an entry, a check box or a
// custom bar has no name of its own, and what a widget.Form holds is never
// reached. So the screens lay fields out in containers, and these wrappers
// give the rest their names.

// namedEntry is an Entry with a name ("To", "Subject").
type namedEntry struct {
	widget.Entry
	name string
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

// namedCheck is a Check that says whether it is on.
type namedCheck struct{ widget.Check }

func newNamedCheck(text string, changed func(bool)) *namedCheck {
	c := &namedCheck{}
	c.Text, c.OnChanged = text, changed
	c.ExtendBaseWidget(c)
	return c
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
		name = "Upload progress"
	}
	return fmt.Sprintf("%s: %.0f%% confirmed by the server, %.0f%% sent", name, b.confirmed*100, b.sent*100)
}

func (b *dualBar) AccessibilityRole() fyne.AccessibleRole { return fyne.AccessibleRoleText }

// iconButton is a button that says its name: one that shows only its
// icon, or one whose text needs the row's file to make sense.
type iconButton struct {
	widget.Button
	name string
}

func newIconButton(name string, icon fyne.Resource, tapped func()) *iconButton {
	b := &iconButton{name: name}
	b.Icon, b.OnTapped = icon, tapped
	b.ExtendBaseWidget(b)
	return b
}

func (b *iconButton) AccessibilityLabel() string { return b.name }

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
	widget.Button
	c *choices
	i int
}

func newChoices(question string, options []string, changed func(int)) *choices {
	c := &choices{question: question, changed: changed}
	objs := []fyne.CanvasObject{widget.NewLabel(question + ":")}
	for i, o := range options {
		b := &choiceButton{c: c, i: i}
		b.Text, b.Importance = o, widget.LowImportance
		b.OnTapped = func() { c.choose(i) }
		b.ExtendBaseWidget(b)
		c.buttons = append(c.buttons, b)
		objs = append(objs, b)
	}
	c.Object = container.NewHBox(objs...)
	c.show()
	return c
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

func (b *choiceButton) AccessibilityLabel() string {
	if b.i == b.c.chosen {
		return b.c.question + ": " + b.Text + " (chosen)"
	}
	return b.c.question + ": " + b.Text
}
