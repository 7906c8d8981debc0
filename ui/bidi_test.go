package ui

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
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
		// A number and its Latin unit in a right-to-left line are one piece
		// (fence): unfenced, the number counted as right-to-left for the
		// space between (rule N1) and was drawn after its unit.
		{"پیوست (293.0 KiB)", "(293.0 KiB) تسویپ", true},
		// The progress line: the rate and the minutes are two pieces, not
		// "KiB/s · 2 502.8" run together (issue 32).
		{"در حال بارگذاری · 502.8 KiB/s · 2 دقیقه مانده", "هدنام هقیقد 2 · 502.8 KiB/s · یراذگراب لاح رد", true},
		// A range of Latin digits reads as written, from its first end.
		{"1–3 از 16 بارگذاری", "یراذگراب 16 زا 1–3", true},
		// A date and a time read as written: x/text drew the date's parts
		// right to left, "07-12-2026".
		{"فرستادن در 2026-12-07 09:00.", ".09:00 2026-12-07 رد نداتسرف", true},
		// A number inside a name or an address is the name's.
		{"پرونده holiday-2024.zip به a1@x.ir", "a1@x.ir هب holiday-2024.zip هدنورپ", true},
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
		// A bare number after a Latin word reads with it (a subject in a
		// Transfers row); the rate's number stands apart from the unit
		// before it.
		{"Report 2024 · به zoe@example.com", "zoe@example.com هب · Report 2024", true},
		{"Done · 12.0 KiB/s · 3 دقیقه", "هقیقد 3 · 12.0 KiB/s · Done", true},
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

// A right-to-left paragraph too long for its label wraps in reading
// order: its first words open its first line, each line holds the words
// that follow the last, and each fits the label. (Given to Fyne in display
// order and wrapped by Fyne, its last words opened the first line.) A
// screen reader is given the paragraph in reading order.
func TestRightToLeftParagraphWrapsInReadingOrder(t *testing.T) {
	test.NewTempApp(t)
	windowRTL.Store(true)
	defer windowRTL.Store(false)
	logical := "بارگذاری‌هایی منتظر home@example.com هستند و Google نخست همین حساب را پیشنهاد می‌کند تا شما دوباره وارد شوید و بارگذاری‌ها ادامه یابند"
	l := newWrapLabel(logical)
	l.Resize(fyne.NewSize(260, 400))
	lines := strings.Split(l.Text, "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines at 260 px: %q", len(lines), l.Text)
	}
	words := strings.Fields(logical)
	fits := l.fits()
	k := 0
	for i, line := range lines {
		got := strings.Fields(strings.NewReplacer(string(lrm), "", string(rlm), "").Replace(line))
		if k+len(got) > len(words) {
			t.Fatalf("line %d holds more words than are left: %q", i, got)
		}
		want := slices.Clone(words[k : k+len(got)])
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("line %d holds %q, want the next words %q", i, got, want)
		}
		if !fits(line) {
			t.Errorf("line %d is wider than the label: %q", i, line)
		}
		k += len(got)
	}
	if k != len(words) {
		t.Errorf("the lines hold %d of %d words", k, len(words))
	}
	if l.Alignment != fyne.TextAlignTrailing || l.AccessibilityLabel() != logical {
		t.Errorf("aligned %v, read out as %q", l.Alignment, l.AccessibilityLabel())
	}
	// Wider, it breaks again for its width; English is left to Fyne, and
	// starts where the window's lines start: at the right here, at the
	// left in a left-to-right window.
	l.Resize(fyne.NewSize(2000, 400))
	if strings.Contains(l.Text, "\n") {
		t.Errorf("at 2000 px still broken: %q", l.Text)
	}
	english := "Uploads wait for home@example.com: once you give the client and press Sign in with Google, Google offers that account first."
	l.SetText(english)
	l.Resize(fyne.NewSize(260, 400))
	if strings.Contains(l.Text, "\n") || l.Alignment != fyne.TextAlignTrailing {
		t.Errorf("English broken by Carrier or aligned %v in a right-to-left window: %q", l.Alignment, l.Text)
	}
	windowRTL.Store(false)
	l = newWrapLabel(english)
	l.Resize(fyne.NewSize(260, 400))
	if strings.Contains(l.Text, "\n") || l.Alignment != fyne.TextAlignLeading {
		t.Errorf("English broken by Carrier or aligned %v in a left-to-right window: %q", l.Alignment, l.Text)
	}
}

// In a right-to-left window a check box stands to the right of its words,
// which end at it; in a left-to-right one Fyne's layout stays.
func TestCheckBoxMirroredRightToLeft(t *testing.T) {
	test.NewTempApp(t)
	place := func() (box, words fyne.CanvasObject) {
		c := newNamedCheck("بارگذاری‌ها ادامه یابند", nil)
		w := test.NewTempWindow(t, c)
		w.Resize(fyne.NewSize(400, 60))
		c.Resize(fyne.NewSize(400, 40))
		for _, o := range test.WidgetRenderer(c).Objects() {
			switch o.(type) {
			case *canvas.Image:
				box = o
			case *canvas.Text:
				words = o
			}
		}
		if box == nil || words == nil {
			t.Fatal("no box or no words in the check's renderer")
		}
		return box, words
	}
	box, words := place()
	if box.Position().X > words.Position().X {
		t.Errorf("left to right: the box at %v, the words at %v", box.Position(), words.Position())
	}
	windowRTL.Store(true)
	defer windowRTL.Store(false)
	box, words = place()
	if box.Position().X < 300 || box.Position().X < words.Position().X || words.(*canvas.Text).Alignment != fyne.TextAlignTrailing {
		t.Errorf("right to left: the box at %v, the words at %v aligned %v", box.Position(), words.Position(), words.(*canvas.Text).Alignment)
	}
}

// In a right-to-left window a row of choices reads from the right: the
// question, then its options leftwards, each mark to the right of its
// words; Tab still goes from the first option on.
func TestChoicesMirroredRightToLeft(t *testing.T) {
	test.NewTempApp(t)
	windowRTL.Store(true)
	defer windowRTL.Store(false)
	c := newChoices("پوسته", []string{"مانند سیستم", "روشن", "تیره"}, nil)
	w := test.NewTempWindow(t, c.Object)
	w.Resize(fyne.NewSize(600, 60))
	c.Object.Resize(fyne.NewSize(600, 40))
	objs := c.Object.Objects
	for i := 1; i < len(objs); i++ {
		if objs[i].Position().X >= objs[i-1].Position().X {
			t.Errorf("object %d at %v is not left of object %d at %v", i, objs[i].Position(), i-1, objs[i-1].Position())
		}
	}
	if end := objs[0].Position().X + objs[0].Size().Width; end < 590 {
		t.Errorf("the question ends at %v of 600, not at the right", end)
	}
	for _, b := range c.buttons {
		if b.IconPlacement != widget.ButtonIconTrailingText {
			t.Errorf("%q has its mark before its words", b.Text)
		}
	}
}

// A label of Latin words (a file's name, an address) starts where the
// window's lines start: at the right in a right-to-left window, so that a
// Persian Compose shows report.pdf beside its icon, not in the row's
// middle; at the left in a left-to-right one.
func TestLatinLabelStartsAtTheWindowsStart(t *testing.T) {
	test.NewTempApp(t)
	if l := newLabel("report.pdf"); l.Alignment != fyne.TextAlignLeading {
		t.Errorf("in a left-to-right window aligned %v", l.Alignment)
	}
	windowRTL.Store(true)
	defer windowRTL.Store(false)
	if l := newLabel("report.pdf"); l.Alignment != fyne.TextAlignTrailing {
		t.Errorf("in a right-to-left window aligned %v", l.Alignment)
	}
	if l := newLabel("گزارش.pdf"); l.Alignment != fyne.TextAlignTrailing {
		t.Errorf("Persian in a right-to-left window aligned %v", l.Alignment)
	}
}
