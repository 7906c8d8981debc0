package ui

import (
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"golang.org/x/text/unicode/bidi"
)

// Fyne v2.8.1 lays a line out left to right (fyne-io/fyne#90): its
// shaper splits the text into runs of one direction and draws a
// right-to-left run reversed, with its letters joined and its brackets
// mirrored, but it places the runs in the order they are stored. A
// Persian, Hebrew or Arabic line, or any line that mixes them with Latin
// text, addresses or numbers, reads in the wrong order:
// `دوست <friend@example.ir>` as `دوست>friend@example.ir<`. So text meant
// for labels is given to Fyne with its runs already in display order, by
// the Unicode bidirectional algorithm (x/text resolves the levels; rule
// L2's reordering is done here since x/text leaves it undone), each run
// still in reading order for Fyne's shaper to reverse and join, and
// fenced with invisible direction marks (LRM, RLM) so that the shaper
// sees the same runs in the reordered line. A label whose paragraph is
// right-to-left is aligned to the right. Entries keep logical order:
// their text is edited, and a reordered copy would be saved as typed.

const (
	lrm = '\u200e'
	rlm = '\u200f'
	fsi = '\u2068' // first-strong isolate: a number's fence (fence)
	pdi = '\u2069' // pop directional isolate: its end
)

// fence isolates every number of a right-to-left line with its unit ("502.8 KiB/s",
// "12 bytes", "40%") and every range ("1–3") as a piece of text of its
// own (Unicode's first-strong isolate, FSI … PDI), before the line's
// levels are resolved. Unfenced, the algorithm joins a number to the
// Latin letters before it and parts it from its unit: in
// "در حال بارگذاری · 502.8 KiB/s · 2 دقیقه مانده" the 2 of the minutes
// took the direction of "KiB/s" and was drawn beside 502.8, "293.0 KiB"
// was drawn "KiB 293.0", and a range's two ends, parted by a dash, were
// placed right to left ("3–1"). Fenced, each reads as one word of its
// line, in its own direction. It is done here, when a label is drawn,
// rather than where the words are made, so that every screen gets it
// and no mark is ever stored, sent, or escaped by app.Printable; the
// marks are removed again after reordering. Only Latin digits are
// fenced: Carrier writes its numbers in Latin digits in every language
// (DEVELOPERS.md). A number inside a word, an address or a file name
// ("v2", "a1@x.ir", "file-2.zip") is left alone, and so is a bare
// number after a word, which reads with it ("Report 2024", "از 16").
func fence(line string) string {
	runes := []rune(line)
	var b strings.Builder
	last := 0
	for i := 0; i < len(runes); i++ {
		if !isDigit(runes[i]) || i > 0 && glued(runes[i-1]) {
			continue
		}
		end := numberEnd(runes, i)
		// A range ("1–3"), a date ("2026-12-07") or a time ("09:00") is
		// one piece: x/text drew a date's parts right to left
		// ("07-12-2026").
		for end+1 < len(runes) && strings.ContainsRune(joiners, runes[end]) && isDigit(runes[end+1]) {
			end = numberEnd(runes, end+1)
		}
		bare := end
		end = unitEnd(runes, end)
		if end < len(runes) && (isLetterOrDigit(runes[end]) || end+1 < len(runes) && glued(runes[end]) && isLetterOrDigit(runes[end+1])) {
			i = end
			continue // part of a word, an address or a name
		}
		if end == bare && !strings.ContainsAny(string(runes[i:end]), joiners+"\u066b\u066c") && afterWord(runes, i) {
			i = end
			continue // a bare number after a word is the word's: "Report 2024"
		}
		b.WriteString(string(runes[last:i]))
		b.WriteRune(fsi)
		b.WriteString(string(runes[i:end]))
		b.WriteRune(pdi)
		last, i = end, end-1
	}
	if last == 0 {
		return line
	}
	b.WriteString(string(runes[last:]))
	return b.String()
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// joiners join numbers into one piece: a range's dash, a date's hyphens,
// a time's colons.
const joiners = "–-:/"

// afterWord reports whether the nearest rune before i, spaces aside, is a
// letter.
func afterWord(runes []rune, i int) bool {
	for i--; i >= 0 && runes[i] == ' '; i-- {
	}
	return i >= 0 && unicode.IsLetter(runes[i])
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// glued is true of what binds a number into a word, an address or a name
// around it.
func glued(r rune) bool {
	return isLetterOrDigit(r) || strings.ContainsRune("._-@/:+#", r)
}

// separators are the decimal and thousands separators a number is written
// with: Latin ones, and the Arabic script's (Persian groups thousands with
// U+066C, "10٬000").
const separators = ".,\u066b\u066c"

// numberEnd is where the number starting at i ends: digits, with decimal
// or thousands separators between digits.
func numberEnd(runes []rune, i int) int {
	for i < len(runes) {
		switch {
		case isDigit(runes[i]):
			i++
		case strings.ContainsRune(separators, runes[i]) && i+1 < len(runes) && isDigit(runes[i+1]):
			i++
		default:
			return i
		}
	}
	return i
}

// units are those that follow a number after a space; "%" follows it at once.
var units = []string{"bytes", "byte", "KiB/s", "MiB/s", "GiB/s", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "B/s", "B"}

// unitEnd is where the unit after a number ending at i ends, or i.
func unitEnd(runes []rune, i int) int {
	if i < len(runes) && runes[i] == '%' {
		return i + 1
	}
	if i+1 >= len(runes) || runes[i] != ' ' {
		return i
	}
	rest := string(runes[i+1:])
	for _, u := range units {
		if strings.HasPrefix(rest, u) {
			end := i + 1 + utf8.RuneCountInString(u)
			if end == len(runes) || !isLetterOrDigit(runes[end]) {
				return end
			}
		}
	}
	return i
}

// isolates are the directional isolates' marks, read by the bidi
// algorithm and removed from what is drawn or read out.
var isolates = strings.NewReplacer("\u2066", "", "\u2067", "", "\u2068", "", "\u2069", "")

// unfenced is s without its isolates' marks.
func unfenced(s string) string {
	if !strings.ContainsAny(s, "\u2066\u2067\u2068\u2069") {
		return s
	}
	return isolates.Replace(s)
}

// visualText is s in display order, line by line, and whether its first
// line is right-to-left (by its first strong letter, as Unicode's rules
// P2 and P3 say).
func visualText(s string) (string, bool) {
	if !needsBidi(s) {
		return s, false
	}
	return visualWrapped(s, nil)
}

// needsBidi is false for text without a right-to-left letter, which is
// shown as stored: most of what Carrier says in English.
func needsBidi(s string) bool {
	for _, r := range s {
		if r < 0x0590 {
			continue
		}
		switch bidiClass(r) {
		case bidi.R, bidi.AL, bidi.AN:
			return true
		}
	}
	return false
}

func bidiClass(r rune) bidi.Class {
	p, _ := bidi.LookupRune(r)
	return p.Class()
}

// paragraphRTL applies rules P2 and P3: the first strong letter decides,
// as the Unicode algorithm has it (rule HL1 lets a higher protocol choose
// otherwise). Carrier does, when the window speaks a right-to-left
// language: a paragraph with any right-to-left letter in it reads right
// to left, as a Persian sentence that opens with "Carrier" or an address
// must; one without stays left to right (an English mail body).
func paragraphRTL(runes []rune) bool {
	if windowRTL.Load() {
		for _, r := range runes {
			if c := bidiClass(r); c == bidi.R || c == bidi.AL {
				return true
			}
		}
		return false
	}
	for _, r := range runes {
		switch bidiClass(r) {
		case bidi.L:
			return false
		case bidi.R, bidi.AL:
			return true
		}
	}
	return false
}

// windowRTL is whether the window's language reads right to left; set
// when the catalogues are loaded.
var windowRTL atomic.Bool

// visualBroken orders one paragraph's runs for display, says whether it
// is right-to-left, and breaks it into lines where fits says a line must
// end: the levels are the
// whole paragraph's (Unicode's rules up to L1), the reordering (L2) is of
// each line, so the paragraph's first words open its first line in either
// direction. fits reports whether a line of the paragraph's text, in
// reading order, fits; nil keeps the paragraph one line.
func visualBroken(line string, fits func(string) bool) (string, bool) {
	runes := []rune(line)
	if len(runes) == 0 {
		return line, false
	}
	rtl := paragraphRTL(runes)
	if rtl {
		// A left-to-right paragraph's numbers keep to the right-to-left
		// words before them, as Unicode's rules have it (markNumbers).
		line = fence(line)
		runes = []rune(line)
	}
	levels := bidiLevels(line, runes, rtl)
	if levels == nil {
		return line, rtl
	}
	var b strings.Builder
	for i, ln := range breakLines(runes, fits) {
		if i > 0 {
			b.WriteByte('\n')
		}
		reorder(&b, runes[ln[0]:ln[1]], levels[ln[0]:ln[1]])
	}
	return b.String(), rtl
}

// breakLines cuts runes into lines at spaces, each as long as fits allows
// (a word longer than a line stays whole, for the label to cut), and
// returns each line's bounds without the space it ends at.
func breakLines(runes []rune, fits func(string) bool) [][2]int {
	if fits == nil || fits(string(runes)) {
		return [][2]int{{0, len(runes)}}
	}
	var lines [][2]int
	start, lastSpace := 0, -1
	for i := 0; i <= len(runes); i++ {
		if i < len(runes) && runes[i] != ' ' {
			continue
		}
		if lastSpace > start && !fits(string(runes[start:i])) {
			lines = append(lines, [2]int{start, lastSpace})
			start = lastSpace + 1
		}
		lastSpace = i
	}
	return append(lines, [2]int{start, len(runes)})
}

// reorder writes one line's runs in display order (rule L2), each run
// fenced for Fyne's shaper.
func reorder(b *strings.Builder, runes []rune, levels []int) {
	// Rule L2 on the runes' places: from the highest level down to the
	// lowest odd one, reverse every stretch at that level or higher.
	maxLevel := 0
	for _, l := range levels {
		maxLevel = max(maxLevel, l)
	}
	order := make([]int, len(runes))
	for i := range order {
		order[i] = i
	}
	lv := append([]int(nil), levels...)
	for level := maxLevel; level >= 1; level-- {
		for i := 0; i < len(order); {
			if lv[i] < level {
				i++
				continue
			}
			j := i
			for j < len(order) && lv[j] >= level {
				j++
			}
			reverseRunes(order[i:j], lv[i:j])
			i = j
		}
	}
	// The runs in display order. Fyne's shaper reverses a right-to-left
	// run, but it also cuts runs where the font changes (Persian letters
	// and a space or a bracket may come from different fonts) and places
	// those pieces left to right. So a right-to-left run is handed over
	// as its words, each in reading order for the shaper to reverse and
	// join, and the characters between them one by one, already mirrored
	// and marked left-to-right.
	for i := 0; i < len(order); {
		if lv[i]%2 == 0 {
			b.WriteRune(lrm)
			for ; i < len(order) && lv[i]%2 == 0; i++ {
				b.WriteRune(runes[order[i]])
			}
			b.WriteRune(lrm)
			continue
		}
		if !isWordRune(runes[order[i]]) {
			b.WriteRune(lrm)
			b.WriteRune(mirror(runes[order[i]]))
			b.WriteRune(lrm)
			i++
			continue
		}
		j := i + 1
		for j < len(order) && lv[j]%2 == 1 && isWordRune(runes[order[j]]) {
			j++
		}
		b.WriteRune(rlm)
		for k := j - 1; k >= i; k-- {
			b.WriteRune(runes[order[k]])
		}
		b.WriteRune(rlm)
		i = j
	}
}

func reverseRunes(r []int, l []int) {
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
		l[i], l[j] = l[j], l[i]
	}
}

// isWordRune is true for the letters of a right-to-left word and what
// joins or marks them (vowel signs, ZWNJ, ZWJ).
func isWordRune(r rune) bool {
	switch bidiClass(r) {
	case bidi.R, bidi.AL, bidi.NSM:
		return true
	}
	return r == '\u200c' || r == '\u200d'
}

// mirror is r as drawn in a right-to-left run: "(" for ")", "<" for ">".
func mirror(r rune) rune {
	switch r {
	case '<':
		return '>'
	case '>':
		return '<'
	case '«':
		return '»'
	case '»':
		return '«'
	case '‹':
		return '›'
	case '›':
		return '‹'
	}
	if p, _ := bidi.LookupRune(r); p.IsBracket() {
		m, _ := utf8.DecodeRuneInString(bidi.ReverseString(string(r)))
		return m
	}
	return r
}

// bidiLevels is each rune's embedding level. x/text's ordering gives
// runs only as left-to-right or right-to-left; the levels follow from
// them. In a right-to-left paragraph the levels are 1 and 2 only. In a
// left-to-right one, digits after right-to-left letters sit at level 2
// (rule I1) inside a run marked left-to-right, and are told apart here so
// that `سلام 123` keeps its number on the left of the word.
func bidiLevels(line string, runes []rune, rtl bool) []int {
	var p bidi.Paragraph
	dir := bidi.LeftToRight
	if rtl {
		dir = bidi.RightToLeft
	}
	if _, err := p.SetString(line, bidi.DefaultDirection(dir)); err != nil {
		return nil
	}
	o, err := p.Order()
	if err != nil {
		return nil
	}
	levels := make([]int, 0, len(runes))
	prevRTL := false
	for i := 0; i < o.NumRuns(); i++ {
		run := o.Run(i)
		n := utf8.RuneCountInString(run.String())
		switch {
		case run.Direction() == bidi.RightToLeft:
			for k := 0; k < n; k++ {
				levels = append(levels, 1)
			}
			prevRTL = true
			continue
		case rtl:
			for k := 0; k < n; k++ {
				levels = append(levels, 2)
			}
		default:
			start := len(levels)
			for k := 0; k < n; k++ {
				levels = append(levels, 0)
			}
			if prevRTL {
				markNumbers(runes[start:start+n], levels[start:start+n])
			}
		}
		prevRTL = false
	}
	if len(levels) != len(runes) {
		return nil
	}
	return levels
}

// markNumbers raises to level 2 the number that opens a left-to-right run
// following right-to-left letters: it has no Latin letter before it, up
// to its last digit.
func markNumbers(runes []rune, levels []int) {
	end := 0
	for i, r := range runes {
		c := bidiClass(r)
		if c == bidi.L {
			break
		}
		if c == bidi.EN || c == bidi.AN {
			end = i + 1
		}
	}
	for i := 0; i < end; i++ {
		levels[i] = 2
	}
}

// setLabel shows text on l in display order, aligned to the right when it
// reads right to left or the window does (a file's Latin name in a Persian
// window starts at the right, as the lines around it do).
func setLabel(o fyne.CanvasObject, text string) {
	if w, ok := o.(*wrapLabel); ok {
		w.SetText(text)
		return
	}
	l := o.(*widget.Label)
	v, rtl := visualText(text)
	align := fyne.TextAlignLeading
	if rtl || windowRTL.Load() {
		align = fyne.TextAlignTrailing
	}
	if l.Alignment != align && (l.Alignment != fyne.TextAlignCenter || rtl) {
		l.Alignment = align
	}
	l.SetText(v)
}

// newLabel is a label showing text as setLabel does.
func newLabel(text string) *widget.Label {
	l := widget.NewLabel("")
	setLabel(l, text)
	return l
}

// boldLabel is newLabel in bold: a heading.
func boldLabel(text string) *widget.Label {
	l := newLabel(text)
	l.TextStyle = fyne.TextStyle{Bold: true}
	return l
}

// display is text in display order, for widgets that take a string
// without an alignment (buttons, check boxes, dialog titles).
func display(text string) string {
	v, _ := visualText(text)
	return v
}

// wrapLabel is a label that wraps its words, for text that may read right
// to left. Fyne wraps the text it is given from its start, and a
// right-to-left paragraph is given in display order (its last words
// first), so Fyne's own wrapping would put the paragraph's end on its
// first line. A wrapLabel keeps the text in reading order, breaks it into
// lines for its width itself, and reorders each line (visualBroken);
// Fyne then finds every line fits. Left-to-right text is left to Fyne.
type wrapLabel struct {
	widget.Label
	logical string
	width   float32 // the width the lines were broken for
}

func newWrapLabel(text string) *wrapLabel {
	l := &wrapLabel{}
	l.ExtendBaseWidget(l)
	l.Wrapping = fyne.TextWrapWord
	l.SetText(text)
	return l
}

// SetText shows text (in reading order) as setLabel does, broken into
// lines for the label's width when it needs reordering.
func (l *wrapLabel) SetText(text string) {
	l.logical = text
	l.show()
}

func (l *wrapLabel) Resize(size fyne.Size) {
	l.Label.Resize(size)
	if size.Width != l.width && needsBidi(l.logical) {
		l.show()
	}
}

// AccessibilityLabel is the text in reading order, for a screen reader,
// which reads text in its own order.
func (l *wrapLabel) AccessibilityLabel() string { return l.logical }

func (l *wrapLabel) show() {
	l.width = l.Size().Width
	v, rtl := l.logical, false
	if needsBidi(l.logical) {
		v, rtl = visualWrapped(l.logical, l.fits())
	}
	align := fyne.TextAlignLeading
	if rtl || windowRTL.Load() {
		align = fyne.TextAlignTrailing
	}
	moved := false
	if l.Alignment != align && (l.Alignment != fyne.TextAlignCenter || rtl) {
		l.Alignment, moved = align, true
	}
	if v != l.Text || moved {
		l.Label.SetText(v)
	}
}

// fits says whether a line fits the label as its rich text lays lines
// out (its width less the inner padding on each side); nil before the
// label has a width.
func (l *wrapLabel) fits() func(string) bool {
	th := l.Theme()
	room := l.width - 2*th.Size(theme.SizeNameInnerPadding) - 1
	if room <= 0 {
		return nil
	}
	name := l.SizeName
	if name == "" {
		name = theme.SizeNameText
	}
	size, style := th.Size(name), l.TextStyle
	return func(s string) bool { return fyne.MeasureText(unfenced(s), size, style).Width <= room }
}

// visualWrapped is visualText with each paragraph broken where fits says.
func visualWrapped(s string, fits func(string) bool) (string, bool) {
	lines := strings.Split(s, "\n")
	rtl := false
	for i, line := range lines {
		v, r := visualBroken(line, fits)
		lines[i] = unfenced(v)
		if i == 0 {
			rtl = r
		}
	}
	return strings.Join(lines, "\n"), rtl
}
