package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// A paged list shows the rows that fit and turns pages; every row is
// reached by the page buttons, a screen reader hears the rows on screen
// and the buttons, and the window does not grow with the rows.
func TestPagedListTurnsPages(t *testing.T) {
	test.NewTempApp(t)
	p := newPagedList("row")
	w := test.NewTempWindow(t, p.Object)
	for i := range 40 {
		p.Box.Add(widget.NewButton(fmt.Sprintf("row %02d", i), nil))
	}
	w.Resize(fyne.NewSize(300, 400))
	if min := w.Content().MinSize(); min.Height > 200 {
		t.Fatalf("40 rows ask for %v: the window would grow with them", min)
	}
	seen := map[string]bool{}
	pages := 0
	for {
		names := map[fyne.CanvasObject]string{}
		spoken(w.Content(), names)
		onPage := 0
		for o, n := range names {
			if b, ok := o.(*widget.Button); ok && strings.HasPrefix(b.Text, "row ") {
				if b.Position().Y+b.Size().Height > p.Box.Size().Height+1 {
					t.Fatalf("%s is read but drawn below the list (%v)", n, b.Position())
				}
				seen[n] = true
				onPage++
			}
		}
		if onPage == 0 {
			t.Fatal("a page with no rows")
		}
		if names[p.later] != "Later" || !strings.Contains(names[p.where], " of 40 rows") {
			t.Fatalf("the pager is not read: %q %q", names[p.later], names[p.where])
		}
		pages++
		if p.later.Disabled() {
			break
		}
		test.Tap(p.later)
		if pages > 40 {
			t.Fatal("Later never reaches the end")
		}
	}
	if len(seen) != 40 || pages < 4 {
		t.Fatalf("saw %d rows in %d pages", len(seen), pages)
	}
	// Back to the start with Earlier and with the wheel.
	test.Tap(p.earlier)
	if p.layout.first == 0 {
		t.Fatal("Earlier from the last page went to the first")
	}
	for range 50 {
		p.wheel.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.Delta{DY: 40}})
	}
	if p.layout.first != 0 || !p.earlier.Disabled() {
		t.Fatalf("the wheel did not turn back to the start: first %d", p.layout.first)
	}
	p.wheel.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.Delta{DY: -40}})
	if p.layout.first == 0 {
		t.Fatal("the wheel did not turn forward")
	}
	// Few rows: no pager.
	p.Box.Objects = p.Box.Objects[:2]
	p.ShowFirst()
	p.Box.Refresh()
	if p.later.Visible() || p.where.Text != "" {
		t.Fatalf("two rows that fit still show a pager: %q", p.where.Text)
	}
}
