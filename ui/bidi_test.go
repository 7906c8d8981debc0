package ui

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/bidi"
)

// fyneShows is what Fyne v2.8.1 draws for s, left to right: its shaper
// (go-text's Segmenter) cuts s into runs by x/text's bidi with a
// left-to-right default, places the runs in stored order, and draws a
// right-to-left run reversed with its mirrored characters mirrored; the
// direction marks draw nothing.
func fyneShows(t *testing.T, s string) string {
	t.Helper()
	var out strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			out.WriteByte('\n')
		}
		if line == "" {
			continue
		}
		var p bidi.Paragraph
		if _, err := p.SetString(line, bidi.DefaultDirection(bidi.LeftToRight)); err != nil {
			t.Fatal(err)
		}
		o, err := p.Order()
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < o.NumRuns(); k++ {
			r := o.Run(k)
			if r.Direction() != bidi.RightToLeft {
				out.WriteString(r.String())
				continue
			}
			// The shaper cuts a run where the font changes: at worst
			// between every word and every other character. It draws each
			// piece reversed and mirrored, the pieces left to right.
			for _, piece := range pieces(r.String()) {
				out.WriteString(strings.NewReplacer("<", ">", ">", "<").Replace(bidi.ReverseString(piece)))
			}
		}
	}
	return strings.NewReplacer("\u200e", "", "\u200f", "").Replace(out.String())
}

func pieces(s string) []string {
	var out []string
	cur := ""
	for _, r := range s {
		if isWordRune(r) {
			cur += string(r)
			continue
		}
		if cur != "" {
			out = append(out, cur)
			cur = ""
		}
		out = append(out, string(r))
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// Each row is a string as stored (logical order) and as a reader must see
// it drawn, left to right, once visualText has prepared it for Fyne.
func TestBidiVisualOrder(t *testing.T) {
	for _, c := range []struct {
		in, want string
		rtl      bool
	}{
		{"Carrier (293.0 KiB)", "Carrier (293.0 KiB)", false},
		{"دوست <friend@example.ir>", "<friend@example.ir> تسود", true},
		// A number and a Latin unit in a right-to-left line are two runs: the
		// number counts as right-to-left for the space between (rule N1).
		{"پیوست (293.0 KiB)", "(KiB 293.0) تسویپ", true},
		{"سلام.", ".مالس", true},
		{"שלום עולם", "םלוע םולש", true},
		{"Hi سلام 123 ok", "Hi 123 مالس ok", false},
		{"From: علی <ali@example.ir>", "From: یلع <ali@example.ir>", false},
		{"۳ پیوست", "تسویپ ۳", true},
		{"مرحبا (عالم)", "(ملاع) ابحرم", true},
		{"one\nدو", "one\nود", false},
		{"۲–۴ از ۱۰ پیوست", "تسویپ ۱۰ زا ۴–۲", true}, // read from the right: ۲–۴
	} {
		got, rtl := visualText(c.in)
		if shown := fyneShows(t, got); shown != c.want || rtl != c.rtl {
			t.Errorf("visualText(%q) = %q, drawn %q, rtl %v; want %q, rtl %v", c.in, got, shown, rtl, c.want, c.rtl)
		}
	}
}

// Unprepared, the same strings are drawn with their runs in stored order
// and brackets at the wrong ends, as the issue saw them.
func TestFyneDrawsRunsInStoredOrder(t *testing.T) {
	if got, want := fyneShows(t, "دوست <friend@example.ir>"), "تسود >friend@example.ir<"; got != want {
		t.Errorf("Fyne's model draws %q, want %q", got, want)
	}
	if got, want := fyneShows(t, "پیوست (293.0 KiB)"), "تسویپ )293.0 KiB("; got != want {
		t.Errorf("Fyne's model draws %q, want %q", got, want)
	}
}

// In a window that speaks a right-to-left language, a paragraph with a
// right-to-left letter reads right to left even when it opens with a
// Latin name; one without stays left to right.
func TestBidiParagraphInRTLWindow(t *testing.T) {
	windowRTL.Store(true)
	defer windowRTL.Store(false)
	for _, c := range []struct {
		in, want string
		rtl      bool
	}{
		{"Carrier را باز کن", "نک زاب ار Carrier", true},
		{"Hello, world.", "Hello, world.", false},
		{"you@carrier.sandbox به نام", "مان هب you@carrier.sandbox", true},
	} {
		got, rtl := visualText(c.in)
		if shown := fyneShows(t, got); shown != c.want || rtl != c.rtl {
			t.Errorf("visualText(%q) drawn %q, rtl %v; want %q, rtl %v", c.in, shown, rtl, c.want, c.rtl)
		}
	}
}

// BenchmarkVisualText: the cost of preparing one mixed Persian line for a
// label, and of an English one, which is passed through.
func BenchmarkVisualText(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"persian", "فرستادن به نام you@carrier.sandbox روی این رایانه: سندباکس پیام‌ها را اینجا نگه می‌دارد (293.0 KiB)"},
		{"english", "Sending as you@carrier.sandbox on this computer: the sandbox keeps messages here (293.0 KiB)"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				visualText(c.s)
			}
		})
	}
}
