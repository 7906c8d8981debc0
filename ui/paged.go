package ui

import (
	"fmt"
	"fyne.io/fyne/v2/lang"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// A paged list shows as many rows as fit, and turns pages instead of
// scrolling. Fyne 2.8's screen-reader bridge reads only what sits in
// containers (a container.Scroll, a widget.List or a Split is a widget it
// does not enter), so a scrolled list would be silent: every row of a
// paged list sits in a plain container, the rows on screen are what is
// read, and the page buttons ("Earlier", "Later") are read and pressed like
// any other. The mouse wheel and the page keys turn pages too, and the
// window never grows with the number of rows.

// pageLayout lays rows out top to bottom from first, hiding the rows that
// do not fit (at least one is always shown).
type pageLayout struct {
	rows   int // if set, the list asks for the height of this many rows (or all, when fewer)
	first  int
	shown  int // rows on screen after the last layout
	total  int
	gap    float32
	onPage func() // told after every layout, to update the pager
}

func (l *pageLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	l.total = len(objs)
	if l.first >= len(objs) {
		l.first = max(len(objs)-1, 0)
	}
	y, shown := float32(0), 0
	for i, o := range objs {
		if i < l.first {
			o.Hide()
			continue
		}
		// A wrapping label knows its height only at a width: give it
		// the width first.
		o.Resize(fyne.NewSize(size.Width, o.Size().Height))
		h := o.MinSize().Height
		if shown > 0 && y+h > size.Height {
			for _, rest := range objs[i:] {
				rest.Hide()
			}
			break
		}
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		o.Show()
		y += h + l.gap
		shown++
	}
	l.shown = shown
	if l.onPage != nil {
		l.onPage()
	}
}

// MinSize is the widest row and the tallest one, so that any row fits
// alone and the list never asks for the height of all of them.
func (l *pageLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	tall := float32(0) // the first rows' heights, when rows is set
	for i, o := range objs {
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height = max(s.Height, m.Height)
		if i < l.rows {
			tall += m.Height
			if i > 0 {
				tall += l.gap
			}
		}
	}
	s.Height = max(s.Height, tall)
	return s
}

// pagedList holds rows (its Box's Objects, which callers add to and take
// from like a VBox's) and the pager under them.
type pagedList struct {
	Box     *fyne.Container
	layout  *pageLayout
	earlier *focusButton
	later   *focusButton
	where   *widget.Label
	place   string // where's words, in reading order
	wheel   *pageWheel
	pager   *fyne.Container
	Object  fyne.CanvasObject
	noun    string // "upload", "item": what the position line counts
	compact bool   // the pager takes no room while every row shows

	// Rows made as they come into view (SetRows): Box holds a window of
	// at most rowWindow of them from base, so that a folder of 20,000
	// pictures makes a page's rows, not 20,000 (the window spent 22 s of
	// its UI thread and 220 MiB making and measuring every row).
	src   func(i int) fyne.CanvasObject
	n     int
	base  int
	built func() // told after a window of rows was made
}

// rowWindow is how many rows SetRows makes at a time: more than a page of
// the smallest rows on a tall screen.
const rowWindow = 100

// SetRows shows n rows, row(i) making the i-th when it comes into view
// (each time it does); the list starts at its first row.
func (p *pagedList) SetRows(n int, row func(i int) fyne.CanvasObject) {
	p.src, p.n, p.base = row, n, 0
	p.fill()
}

// fill makes the window of rows from base.
func (p *pagedList) fill() {
	objs := make([]fyne.CanvasObject, 0, min(rowWindow, p.n-p.base))
	for i := p.base; i < p.n && i < p.base+rowWindow; i++ {
		objs = append(objs, p.src(i))
	}
	p.Box.Objects = objs
	p.layout.first = 0
	p.Box.Refresh()
	if p.built != nil {
		p.built()
	}
}

// firstShown is the row at the top of the page.
func (p *pagedList) firstShown() int {
	if p.src != nil {
		return p.base + p.layout.first
	}
	return p.layout.first
}

// total is how many rows the list has.
func (p *pagedList) total() int {
	if p.src != nil {
		return p.n
	}
	return len(p.Box.Objects)
}

func newPagedList(noun string) *pagedList {
	p := &pagedList{noun: noun, layout: &pageLayout{gap: theme.Padding()}}
	p.Box = container.New(p.layout)
	p.earlier = newFocusButton(lang.X("paged.earlier", "Earlier"), theme.MoveUpIcon(), func() { p.turn(-1) })
	p.later = newFocusButton(lang.X("paged.later", "Later"), theme.MoveDownIcon(), func() { p.turn(+1) })
	p.where = widget.NewLabel("")
	p.layout.onPage = p.showPlace
	p.wheel = newPageWheel(p)
	p.pager = mirrorRTL(container.NewHBox(p.earlier, p.later, p.where))
	p.Object = container.NewBorder(nil, p.pager, nil, nil, container.NewStack(container.NewPadded(p.Box), p.wheel))
	p.showPlace()
	return p
}

// turn moves a page: by the rows now shown, forward or back.
func (p *pagedList) turn(dir int) {
	step := max(p.layout.shown, 1)
	if p.src != nil {
		base := min(p.base+dir*step, p.n-1)
		base = max(base, 0)
		if base != p.base {
			p.base = base
			p.fill()
		}
		return
	}
	first := p.layout.first + dir*step
	first = min(first, len(p.Box.Objects)-1)
	first = max(first, 0)
	if first == p.layout.first {
		return
	}
	p.layout.first = first
	p.Box.Refresh()
}

// ShowFirst goes back to the first page (a new row at the top).
func (p *pagedList) ShowFirst() {
	if p.src != nil && p.base != 0 {
		p.base = 0
		p.fill()
		return
	}
	if p.layout.first != 0 {
		p.layout.first = 0
		p.Box.Refresh()
	}
}

// showPlace says which rows are on screen, and lets only the moves that
// go somewhere be pressed.
func (p *pagedList) showPlace() {
	total, first, shown := p.total(), p.firstShown(), p.layout.shown
	text := ""
	if total > shown && shown > 0 {
		text = placeWords(p.noun, first+1, first+shown, total)
	}
	if p.place != text {
		p.place = text
		setLabel(p.where, text) // in display order: "1–5 از 20٬000 مورد" read from the right
	}
	setEnabled(p.earlier, first > 0)
	setEnabled(p.later, first+shown < total)
	visible := total > shown
	if p.layout.rows > 0 && total > p.layout.rows {
		// More rows than the list asks room for: the pager shows, known
		// before any layout, so that its room is asked for with the rows
		// (shown only from a layout, it had no room until the next one).
		visible = true
	}
	if visible != p.earlier.Visible() {
		if visible {
			p.earlier.Show()
			p.later.Show()
		} else {
			p.earlier.Hide()
			p.later.Hide()
		}
	}
	if p.compact && visible != p.pager.Visible() {
		if visible {
			p.pager.Show()
		} else {
			p.pager.Hide()
		}
	}
}

func setEnabled(b fyne.Disableable, on bool) {
	if on && b.Disabled() {
		b.Enable()
	} else if !on && !b.Disabled() {
		b.Disable()
	}
}

// pageWheel lies over the rows and turns pages with the mouse wheel. It
// takes nothing else: taps, hovers and keys reach the rows under it, and
// the screen reader, which skips widgets without a name, does not see it.
type pageWheel struct {
	widget.BaseWidget
	p       *pagedList
	pending float32
}

func newPageWheel(p *pagedList) *pageWheel {
	w := &pageWheel{p: p}
	w.ExtendBaseWidget(w)
	return w
}

func (w *pageWheel) Scrolled(e *fyne.ScrollEvent) {
	w.pending += e.Scrolled.DY
	const notch = 40 // a wheel's notch, about; a touchpad's small moves add up
	switch {
	case w.pending >= notch:
		w.pending = 0
		w.p.turn(-1)
	case w.pending <= -notch:
		w.pending = 0
		w.p.turn(+1)
	}
}

func (w *pageWheel) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewWithoutLayout())
}

// placeWords is "3–10 of 25 uploads" in the window's language; the count
// decides the plural form.
func placeWords(noun string, first, last, total int) string {
	f := w{"First": groupCount(first), "Last": groupCount(last), "Total": groupCount(total)} // "1–5 of 20,000 items"
	switch noun {
	case "attachment":
		return lang.XN("paged.attachments", "{{.First}}–{{.Last}} of {{.Total}} attachments", total, f)
	case "item":
		return lang.XN("paged.items", "{{.First}}–{{.Last}} of {{.Total}} items", total, f)
	case "line":
		return lang.XN("paged.lines", "{{.First}}–{{.Last}} of {{.Total}} lines", total, f)
	case "upload":
		return lang.XN("paged.uploads", "{{.First}}–{{.Last}} of {{.Total}} uploads", total, f)
	}
	return fmt.Sprintf("%d–%d of %d %ss", first, last, total, noun)
}
