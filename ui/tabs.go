package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// tabs are the window's screens: a row of buttons, and the screen chosen.
// Plain containers rather than container.AppTabs, so that a screen reader
// (Fyne 2.8 reads what sits in containers, and nothing inside other
// widgets) reaches the tab buttons and every control of the screen shown.
type tabs struct {
	Items      []*tab
	OnSelected func(*tab)
	bar        *fyne.Container
	stack      *fyne.Container
	selected   *tab
	content    *fyne.Container
}

type tab struct {
	Text    string
	button  *focusButton
	content fyne.CanvasObject
}

func newTab(text string, icon fyne.Resource, content fyne.CanvasObject) *tab {
	return &tab{Text: text, content: content, button: newFocusButton(text, icon, nil)}
}

func newTabs(items ...*tab) *tabs {
	// In a right-to-left window the first screen's button is at the right,
	// the others leftwards; Tab still goes first to last.
	t := &tabs{Items: items, bar: mirrorRTL(container.NewHBox()), stack: container.NewStack()}
	for _, it := range items {
		it := it
		it.button.OnTapped = func() { t.Select(it) }
		it.button.Importance = widget.LowImportance
		t.bar.Add(it.button)
		it.content.Hide()
		t.stack.Add(it.content)
	}
	top := container.NewVBox(t.bar, widget.NewSeparator())
	t.content = container.NewBorder(top, nil, nil, nil, t.stack)
	// Tab walks objects in this order: the tab buttons, then the screen's
	// controls, as they read (the border layout keeps its centre first).
	t.content.Objects = []fyne.CanvasObject{top, t.stack}
	if len(items) > 0 {
		t.Select(items[0])
	}
	return t
}

// Select shows it; the chosen tab's button stands out.
func (t *tabs) Select(it *tab) {
	if t.selected == it {
		return
	}
	for _, x := range t.Items {
		on := x == it
		if on {
			x.button.Importance = widget.HighImportance
			x.content.Show()
		} else {
			x.button.Importance = widget.LowImportance
			x.content.Hide()
		}
		x.button.Refresh()
	}
	t.selected = it
	t.stack.Refresh()
	if t.OnSelected != nil {
		t.OnSelected(it)
	}
}

func (t *tabs) Selected() *tab { return t.selected }
