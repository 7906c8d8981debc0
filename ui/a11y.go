package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
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
	return fmt.Sprintf("Upload progress: %.0f%% confirmed by the server, %.0f%% sent", b.confirmed*100, b.sent*100)
}

func (b *dualBar) AccessibilityRole() fyne.AccessibleRole { return fyne.AccessibleRoleText }

// iconButton is a button that shows only its icon and says its name.
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
