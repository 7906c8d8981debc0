package ui

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/transfer"
)

// WCAG 2.x relative luminance and contrast ratio.
func luminance(c color.Color) float64 {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	ch := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(n.R) + 0.7152*ch(n.G) + 0.0722*ch(n.B)
}

func contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// over is fg painted on an opaque bg.
func over(fg, bg color.Color) color.NRGBA {
	f := color.NRGBAModel.Convert(fg).(color.NRGBA)
	b := color.NRGBAModel.Convert(bg).(color.NRGBA)
	a := float64(f.A) / 255
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*a + float64(y)*(1-a))) }
	return color.NRGBA{R: mix(f.R, b.R), G: mix(f.G, b.G), B: mix(f.B, b.B), A: 0xff}
}

func hex(c color.Color) string {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return fmt.Sprintf("#%02x%02x%02x", n.R, n.G, n.B)
}

// backgrounds are the colours that fill a good part of r in img, other
// than ink itself and its anti-aliased edges: what the ink is read on.
// Each is returned once, the most common first; none when r holds nothing
// but the ink (text drawn on its own colour).
func backgrounds(img image.Image, r image.Rectangle, ink color.Color) []color.NRGBA {
	r = r.Intersect(img.Bounds())
	counts := map[color.NRGBA]int{}
	total := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			counts[color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)]++
			total++
		}
	}
	var out []color.NRGBA
	for c, n := range counts {
		if float64(n) >= 0.15*float64(total) && contrast(c, ink) >= 1.2 {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return counts[out[i]] > counts[out[j]] })
	return out
}

// ring is the band of width w just outside r, or, for a negative w, just
// inside it.
func ring(img image.Image, r image.Rectangle, w int) []color.NRGBA {
	outer, inner := r.Inset(-w), r
	if w < 0 {
		outer, inner = r, r.Inset(-w)
	}
	var px []color.NRGBA
	for y := outer.Min.Y; y < outer.Max.Y; y++ {
		for x := outer.Min.X; x < outer.Max.X; x++ {
			if p := image.Pt(x, y); !p.In(inner) && p.In(img.Bounds()) {
				px = append(px, color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA))
			}
		}
	}
	return px
}

func dominant(px []color.NRGBA) (color.NRGBA, bool) {
	counts := map[color.NRGBA]int{}
	var best color.NRGBA
	for _, c := range px {
		counts[c]++
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best, len(px) > 0
}

// drawnObject is a canvas object where the window draws it.
type drawnObject struct {
	o    fyne.CanvasObject
	box  image.Rectangle // where it lies, within what clips it
	full image.Rectangle // where it lies, unclipped
	in   []fyne.CanvasObject
}

// drawnObjects walks what the window draws: containers, and the objects
// of every widget's renderer, with their positions on the window.
func drawnObjects(o fyne.CanvasObject, at fyne.Position, clip image.Rectangle, in []fyne.CanvasObject, out *[]drawnObject) {
	if o == nil || !o.Visible() {
		return
	}
	pos := at.Add(o.Position())
	full := image.Rect(int(pos.X), int(pos.Y), int(math.Ceil(float64(pos.X+o.Size().Width))), int(math.Ceil(float64(pos.Y+o.Size().Height))))
	*out = append(*out, drawnObject{o: o, box: full.Intersect(clip), full: full, in: in})
	in = append(in[:len(in):len(in)], o)
	switch w := o.(type) {
	case *fyne.Container:
		for _, c := range w.Objects {
			drawnObjects(c, pos, clip, in, out)
		}
	case fyne.Widget:
		if _, scrolls := w.(*container.Scroll); scrolls {
			clip = clip.Intersect(full)
		}
		for _, c := range test.WidgetRenderer(w).Objects() {
			drawnObjects(c, pos, clip, in, out)
		}
	}
}

// layoutAll lays out everything again from the top, as the app's driver
// does before it draws after a change; the test canvas draws things where
// they were last put.
func layoutAll(o fyne.CanvasObject) {
	if o == nil || !o.Visible() {
		return
	}
	switch w := o.(type) {
	case *fyne.Container:
		if w.Layout != nil {
			w.Layout.Layout(w.Objects, w.Size())
		}
		for _, c := range w.Objects {
			layoutAll(c)
		}
	case fyne.Widget:
		r := test.WidgetRenderer(w)
		r.Layout(w.Size())
		for _, c := range r.Objects() {
			layoutAll(c)
		}
	}
}

// colourOf is the colour a themed icon is drawn in.
func colourOf(res fyne.Resource) (color.Color, fyne.ThemeColorName, bool) {
	th := fyne.CurrentApp().Settings().Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	switch r := res.(type) {
	case *theme.ThemedResource:
		name := r.ColorName
		if name == "" {
			name = theme.ColorNameForeground
		}
		return th.Color(name, v), name, true
	case *theme.DisabledResource:
		return th.Color(theme.ColorNameDisabled, v), theme.ColorNameDisabled, true
	}
	return nil, "", false
}

// contrastProblems measures every text, themed icon and control outline
// the window draws, against the pixels it is drawn on.
func contrastProblems(w fyne.Window) []string {
	// A capture first lets Fyne's cache drop the renderers it deems
	// expired (its clock is read at cleanings, so in a long run a renderer
	// made moments ago may be one) and make them again; the second is of
	// renderers that stay while they are walked.
	w.Canvas().Capture()
	layoutAll(w.Canvas().Content())
	img := w.Canvas().Capture()
	var objs []drawnObject
	drawnObjects(w.Canvas().Content(), fyne.NewPos(0, 0), img.Bounds(), nil, &objs)
	var problems []string
	seen := map[string]bool{}
	report := func(s string) {
		if !seen[s] {
			seen[s] = true
			problems = append(problems, s)
		}
	}
	for _, d := range objs {
		if d.box.Empty() {
			continue
		}
		switch o := d.o.(type) {
		case *canvas.Text:
			if strings.TrimSpace(o.Text) == "" {
				continue
			}
			// Only where the glyphs are: a label's box may be wider
			// than its text, and a bar's text covers part of the bar.
			width := int(math.Ceil(float64(fyne.MeasureText(o.Text, o.TextSize, o.TextStyle).Width)))
			x := d.full.Min.X
			switch o.Alignment {
			case fyne.TextAlignCenter:
				x += (d.full.Dx() - width) / 2
			case fyne.TextAlignTrailing:
				x = d.full.Max.X - width
			}
			r := image.Rect(x, d.full.Min.Y, x+width, d.full.Max.Y).Intersect(d.box)
			if r.Empty() {
				continue
			}
			measure(img, r, o.Color, 4.5, fmt.Sprintf("text %q", o.Text), report)
		case *canvas.Image:
			ink, name, ok := colourOf(o.Resource)
			if !ok || name == theme.ColorNameInputBackground || name == theme.ColorNameBackground {
				continue // a check box's fill, not a mark
			}
			what := "icon " + o.Resource.Name()
			if inCheck(d.in) {
				// The check box's outline: against what is around it, and
				// against its fill.
				what = "check box outline (" + string(name) + ")"
				if out, ok := dominant(ring(img, d.box, 2)); ok {
					if c := contrast(over(ink, out), out); c < 3 {
						report(fmt.Sprintf("%s is %.2f:1 on %s (%s), needs 3", what, c, hex(out), hex(over(ink, out))))
					}
				}
			}
			measure(img, d.box, ink, 3, what, report)
		case *canvas.Rectangle:
			if o.StrokeWidth <= 0 || o.StrokeColor == nil {
				continue
			}
			if _, _, _, a := o.StrokeColor.RGBA(); a == 0 {
				continue
			}
			what := fmt.Sprintf("outline of a %T", owner(d.in))
			sw := int(math.Ceil(float64(o.StrokeWidth)))
			for _, side := range []struct {
				where string
				px    []color.NRGBA
			}{{"outside", ring(img, d.box, 2)}, {"inside", ring(img, d.box.Inset(sw+1), -2)}} {
				bg, ok := dominant(side.px)
				if !ok {
					continue
				}
				if c := contrast(over(o.StrokeColor, bg), bg); c < 3 {
					report(fmt.Sprintf("%s is %.2f:1 against %s %s (%s), needs 3", what, c, side.where, hex(bg), hex(over(o.StrokeColor, bg))))
				}
			}
		}
	}
	return problems
}

func inCheck(in []fyne.CanvasObject) bool {
	for _, o := range in {
		switch o.(type) {
		case *widget.Check, *namedCheck:
			return true
		}
	}
	return false
}

// owner is the innermost widget an object is drawn for.
func owner(in []fyne.CanvasObject) fyne.CanvasObject {
	for i := len(in) - 1; i >= 0; i-- {
		if _, ok := in[i].(fyne.Widget); ok {
			return in[i]
		}
	}
	return nil
}

// measure checks ink against each colour it is drawn on in r.
func measure(img image.Image, r image.Rectangle, ink color.Color, need float64, what string, report func(string)) {
	bgs := backgrounds(img, r, ink)
	if len(bgs) == 0 {
		// Nothing but the ink and colours near it: measure against the
		// commonest.
		bg, _ := dominant(ring(img, r, -max(r.Dx(), r.Dy())))
		report(fmt.Sprintf("%s is %.2f:1 (%s on %s), needs %.1f", what, contrast(over(ink, bg), bg), hex(over(ink, bg)), hex(bg), need))
		return
	}
	for _, bg := range bgs {
		fg := over(ink, bg)
		if c := contrast(fg, bg); c < need {
			report(fmt.Sprintf("%s is %.2f:1 (%s on %s), needs %.1f", what, c, hex(fg), hex(bg), need))
		}
	}
}

// Every screen, in the light and the dark variant, at WCAG AA: text at
// 4.5:1, icons and the outlines of check boxes and entries at 3:1, each
// measured on the pixels the window draws.
func TestContrastOfEveryScreen(t *testing.T) {
	for _, v := range []struct {
		name    string
		variant fyne.ThemeVariant
	}{{"light", theme.VariantLight}, {"dark", theme.VariantDark}} {
		t.Run(v.name, func(t *testing.T) {
			inVariant := func(d *Deps) { fyne.CurrentApp().Settings().SetTheme(newThemeVariant(v.variant)) }
			check := func(h *harness, screen string) {
				t.Helper()
				for _, p := range contrastProblems(h.w) {
					t.Errorf("%s, %s: %s", v.name, screen, p)
				}
			}

			h := newHarness(t, func(o *harnessOpts) { o.deps = inVariant })
			h.w.Resize(fyne.NewSize(1100, 1000))
			c := h.u.compose
			c.attach(writeFile(t, "report.pdf", []byte("%PDF")), writeFile(t, "notes.txt", []byte("notes")))
			c.to.SetText("zoe@example.com, not an address")
			c.subject.SetText("Quarterly report")
			c.meter.SetValue(0.5) // the bar's text over its filled part and the rest
			h.u.Select("Compose")
			check(h, "Compose")

			h.u.Select("Media")
			check(h, "Media")
			h.u.Select("Account")
			check(h, "Account")

			h.putMail(withAttachments([]byte("%PDF")))
			m := h.openMail("Plans")
			if !strings.Contains(labelsIn(m.detail.Box), "2 attachments") {
				t.Fatal("the message's attachments are not listed")
			}
			check(h, "Mailbox")

			// Transfers with a row in every state, and the limits with a
			// limit that does not read.
			now := time.Now()
			recs := map[string]transfer.Snapshot{}
			for i, st := range []transfer.State{transfer.StateQueued, transfer.StateWaiting, transfer.StateRunning, transfer.StateRetrying, transfer.StatePaused, transfer.StateDone, transfer.StateFailed, transfer.StateCancelled} {
				id := fmt.Sprintf("j%d", i)
				s := transfer.Snapshot{ID: id, Label: "Report " + string(st) + " · to zoe@example.com", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 10 << 20, State: st, Created: now.Add(time.Duration(i) * time.Second)}
				if st == transfer.StateRunning || st == transfer.StatePaused {
					s.Sent, s.Confirmed, s.Rate = 6<<20, 4<<20, 1<<20
				}
				if st == transfer.StateFailed {
					s.Error = "Media type 'text/plain' is not supported"
				}
				if st == transfer.StateDone {
					s.Sent, s.Confirmed, s.Response = s.Size, s.Size, &transfer.Response{Status: 200}
				}
				recs[id] = s
			}
			fu := &fakeUploads{recs: recs}
			lim := &fakeLimits{read: readSpec}
			ft := newHarness(t, func(o *harnessOpts) {
				o.uploads, o.events = fu, make(chan transfer.Event, 64)
				o.deps = func(d *Deps) { inVariant(d); d.Limits = lim }
			})
			ft.w.Resize(fyne.NewSize(1100, 1800))
			ft.u.Select("Transfers")
			if len(ft.u.transfers.rows) != len(recs) {
				t.Fatalf("%d rows for %d jobs", len(ft.u.transfers.rows), len(recs))
			}
			n := ft.u.transfers.network
			test.Tap(choiceNamed(n.speed, speedCustom))
			n.custom.SetText("every evening")
			test.Tap(n.apply)
			if !n.problem.Visible() {
				t.Fatal("no problem shown for a limit that does not read")
			}
			// Every row is measured only if every row is on screen.
			var drawn []drawnObject
			layoutAll(ft.w.Canvas().Content())
			drawnObjects(ft.w.Canvas().Content(), fyne.NewPos(0, 0), image.Rect(0, 0, 1100, 1800), nil, &drawn)
			onScreen := map[fyne.CanvasObject]bool{}
			for _, d := range drawn {
				onScreen[d.o] = !d.box.Empty()
			}
			for id, r := range ft.u.transfers.rows {
				if !onScreen[r.state] {
					t.Errorf("the row of %s (%s) is not on screen", id, recs[id].State)
				}
			}
			if !onScreen[n.problem] {
				t.Error("the limit's problem is not on screen")
			}
			check(ft, "Transfers and Limits")
		})
	}
}

// The measure is of the pixels: a colour broken on purpose is caught, and
// named with its screen, its text and its ratio.
func TestContrastCatchesABrokenColour(t *testing.T) {
	saved := palette[theme.VariantLight][theme.ColorNameSuccess]
	palette[theme.VariantLight][theme.ColorNameSuccess] = rgb(0x43, 0xf4, 0x36) // Fyne's green
	defer func() { palette[theme.VariantLight][theme.ColorNameSuccess] = saved }()
	recs := map[string]transfer.Snapshot{"j1": {ID: "j1", Label: "Report · to zoe@example.com", URL: "http://127.0.0.1:9/upload/gmail/v1/users/me/messages/send", Size: 10, Confirmed: 10, Sent: 10, State: transfer.StateDone, Response: &transfer.Response{Status: 200}, Created: time.Now()}}
	h := newHarness(t, func(o *harnessOpts) {
		o.uploads, o.events = &fakeUploads{recs: recs}, make(chan transfer.Event, 1)
		o.deps = func(*Deps) { fyne.CurrentApp().Settings().SetTheme(newThemeVariant(theme.VariantLight)) }
	})
	h.u.Select("Transfers")
	problems := strings.Join(contrastProblems(h.w), "\n")
	if !strings.Contains(problems, `text "Sent" is 1.48:1`) {
		t.Fatalf("Fyne's green on white was not caught:\n%s", problems)
	}
}

// The person's light or dark choice draws Carrier's theme in that
// variant; applying Carrier's theme again keeps the choice.
func TestThemeChoiceKeepsCarriersColours(t *testing.T) {
	a := test.NewApp()
	defer test.NewApp()
	u := &UI{app: a}
	UseTheme(a)
	u.applyTheme(2)
	UseTheme(a)
	v, ok := a.Settings().Theme().(variantTheme)
	if !ok || v.variant != theme.VariantDark {
		t.Fatalf("the theme is %T after choosing dark", a.Settings().Theme())
	}
	if _, ours := v.Theme.(*carrierTheme); !ours {
		t.Fatalf("dark draws %T, not Carrier's theme", v.Theme)
	}
}
