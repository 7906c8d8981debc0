package ui

import (
	"fyne.io/fyne/v2/lang"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// dualBar is a progress bar that tells the truth: the solid part is what
// the server confirmed it stores, the pale part beyond it what was sent
// but not yet confirmed.
type dualBar struct {
	widget.BaseWidget
	confirmed, sent float64 // fractions 0..1, sent >= confirmed
	name            string  // what the screen reader says it measures; "" for "Upload progress"
}

func newDualBar() *dualBar {
	b := &dualBar{}
	b.ExtendBaseWidget(b)
	return b
}

// Set updates both fractions; call it on the UI thread.
func (b *dualBar) Set(confirmed, sent float64) {
	confirmed, sent = clamp01(confirmed), clamp01(sent)
	if sent < confirmed {
		sent = confirmed
	}
	if b.confirmed == confirmed && b.sent == sent {
		return
	}
	b.confirmed, b.sent = confirmed, sent
	b.Refresh()
}

func clamp01(f float64) float64 { return max(0, min(1, f)) }

func (b *dualBar) CreateRenderer() fyne.WidgetRenderer {
	r := &dualBarRenderer{b: b, track: canvas.NewRectangle(color.Transparent), sent: canvas.NewRectangle(color.Transparent), conf: canvas.NewRectangle(color.Transparent)}
	r.applyTheme()
	return r
}

type dualBarRenderer struct {
	b                 *dualBar
	track, sent, conf *canvas.Rectangle
}

func (r *dualBarRenderer) applyTheme() {
	r.track.FillColor = theme.Color(theme.ColorNameInputBackground)
	p := theme.Color(theme.ColorNamePrimary)
	pr, pg, pb, _ := p.RGBA()
	r.conf.FillColor = p
	r.sent.FillColor = color.NRGBA{R: uint8(pr >> 8), G: uint8(pg >> 8), B: uint8(pb >> 8), A: 0x60}
	radius := theme.InputRadiusSize()
	r.track.CornerRadius, r.sent.CornerRadius, r.conf.CornerRadius = radius, radius, radius
}

// Layout fills the bar from the start of the reading direction: from the
// right in a right-to-left window.
func (r *dualBarRenderer) Layout(size fyne.Size) {
	r.track.Resize(size)
	for _, f := range []struct {
		o    fyne.CanvasObject
		frac float64
	}{{r.sent, r.b.sent}, {r.conf, r.b.confirmed}} {
		w := size.Width * float32(f.frac)
		f.o.Resize(fyne.NewSize(w, size.Height))
		x := float32(0)
		if windowRTL.Load() {
			x = size.Width - w
		}
		f.o.Move(fyne.NewPos(x, 0))
	}
}

func (r *dualBarRenderer) MinSize() fyne.Size {
	return fyne.NewSize(theme.Padding()*20, theme.Padding()*2.5)
}

func (r *dualBarRenderer) Refresh() {
	r.applyTheme()
	r.Layout(r.b.Size())
	canvas.Refresh(r.b)
}

func (r *dualBarRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.track, r.sent, r.conf}
}

func (r *dualBarRenderer) Destroy() {}

// sizeMeter is the message's size against its limit: a ProgressBar that
// turns to the theme's error colour, bar and text, while the message is
// over the limit, so the state shows in more than the words.
type sizeMeter struct {
	widget.ProgressBar
	over bool
}

func newSizeMeter() *sizeMeter {
	m := &sizeMeter{}
	m.Max = 1
	m.ExtendBaseWidget(m)
	return m
}

// setOver shows the meter in the error colour, or not.
func (m *sizeMeter) setOver(over bool) {
	if m.over != over {
		m.over = over
		m.Refresh()
	}
}

func (m *sizeMeter) CreateRenderer() fyne.WidgetRenderer {
	r := &sizeMeterRenderer{WidgetRenderer: m.ProgressBar.CreateRenderer(), m: m}
	r.recolour()
	return r
}

type sizeMeterRenderer struct {
	fyne.WidgetRenderer
	m *sizeMeter
}

func (r *sizeMeterRenderer) Refresh() {
	r.WidgetRenderer.Refresh()
	r.recolour()
}

// recolour puts the meter's own colours where the ProgressBar put the
// primary ones: its track (faded), its bar and its text. Within the
// limit they are barTheme's, which read over the whole length; over it,
// the theme's error colour. (A ThemeOverride container would do the
// first, but it is a widget, and Fyne's screen-reader bridge walks
// containers only: the meter would fall silent.)
func (r *sizeMeterRenderer) recolour() {
	v := fyne.CurrentApp().Settings().ThemeVariant()
	fill, text := barTheme{}.Color(theme.ColorNamePrimary, v), barTheme{}.Color(theme.ColorNameForegroundOnPrimary, v)
	if r.m.over {
		th := r.m.Theme()
		fill, text = th.Color(theme.ColorNameError, v), th.Color(theme.ColorNameForegroundOnError, v)
	}
	rects := 0
	for _, o := range r.WidgetRenderer.Objects() {
		switch o := o.(type) {
		case *canvas.Rectangle:
			if rects == 0 {
				cr, cg, cb, ca := fill.RGBA()
				o.FillColor = color.NRGBA{R: uint8(cr >> 8), G: uint8(cg >> 8), B: uint8(cb >> 8), A: uint8(ca>>8) / 2}
			} else {
				o.FillColor = fill
			}
			rects++
			o.Refresh()
		case *canvas.Text:
			o.Color = text
			o.Refresh()
		}
	}
}

// The size meter says its words: "Message size: 55.1 MiB, over the 35.0
// MiB limit by 20.1 MiB".
func (m *sizeMeter) AccessibilityLabel() string {
	if m.TextFormatter == nil {
		return lang.X("meter.name", "Message size")
	}
	return lang.X("meter.name.value", "Message size: {{.Size}}", w{"Size": m.TextFormatter()})
}

func (m *sizeMeter) AccessibilityRole() fyne.AccessibleRole { return fyne.AccessibleRoleText }
