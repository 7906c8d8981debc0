package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// A progress bar fills from where the window's reading starts: from the
// left in English, from the right in a right-to-left window.
func TestBarFillsFromTheReadingStart(t *testing.T) {
	for _, rtl := range []bool{false, true} {
		windowRTL.Store(rtl)
		b := newDualBar()
		r := test.TempWidgetRenderer(t, b)
		b.Resize(fyne.NewSize(200, 10))
		b.Set(0.25, 0.5)
		r.Layout(b.Size())
		objs := r.Objects()
		sent, conf := objs[1], objs[2]
		wantConf, wantSent := float32(0), float32(0)
		if rtl {
			wantConf, wantSent = 150, 100
		}
		if conf.Position().X != wantConf || conf.Size().Width != 50 {
			t.Errorf("rtl=%v: the confirmed part at x=%v, %v wide; want x=%v, 50 wide", rtl, conf.Position().X, conf.Size().Width, wantConf)
		}
		if sent.Position().X != wantSent || sent.Size().Width != 100 {
			t.Errorf("rtl=%v: the sent part at x=%v, %v wide; want x=%v, 100 wide", rtl, sent.Position().X, sent.Size().Width, wantSent)
		}
	}
	windowRTL.Store(false)
}
