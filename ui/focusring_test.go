package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Every button shows the keyboard focus as an outline in the text colour,
// at least 3:1 against the window's background in light and dark (WCAG's
// focus appearance): Fyne's own Button shows it only as a tint of its
// fill, invisible on a primary button and faint on the others.
func TestEveryButtonShowsItsFocus(t *testing.T) {
	h := newHarness(t)
	h.u.compose.to.SetText("zoe@example.com") // Send enabled
	for _, tb := range h.u.tabs.Items {
		h.u.tabs.Select(tb)
		var cs []fyne.CanvasObject
		controls(h.w.Canvas().Content(), &cs)
		for _, c := range cs {
			if b, ok := c.(*widget.Button); ok {
				t.Errorf("%s: %q shows its focus only as a tint", tb.Text, b.Text)
			}
		}
	}
}

// The outline is at least 3:1 against the window's background, light and
// dark (WCAG's focus appearance).
func TestFocusOutlineContrast(t *testing.T) {
	test.NewTempApp(t)
	for _, v := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
		th := variantTheme{newTheme(), v}
		fyne.CurrentApp().Settings().SetTheme(th)
		b := newFocusButton("Send", nil, func() {})
		b.Importance = widget.HighImportance
		w := test.NewWindow(b)
		w.Canvas().Focus(b)
		test.WidgetRenderer(b).Refresh()
		bg := th.Color(theme.ColorNameBackground, v)
		if b.ring.StrokeWidth < 2 {
			t.Fatalf("variant %d: the focused button has no outline", v)
		}
		if c := contrast(b.ring.StrokeColor, bg); c < 3 {
			t.Errorf("variant %d: the outline is %.2f:1 against the background, want 3:1", v, c)
		}
		w.Close()
	}
}
