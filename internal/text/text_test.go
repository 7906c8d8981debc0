package text

import (
	"strings"
	"testing"
)

// What a hostile server may put in an error message or a body: nothing of
// it may reach a terminal, a label or a notification as a control.
func TestPrintableDefusesTerminalControls(t *testing.T) {
	cases := []struct{ in, one, lines string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"a\x1b]0;owned\x07b", "ab", "ab"},                                 // OSC: retitles the terminal
		{"a\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "alink", "alink"}, // OSC 8 hyperlink, ST-terminated
		{"\x1b[2J\x1b[1;1Hclean", "clean", "clean"},                        // CSI: clears the screen, moves the cursor
		{"\x1b[31mred\x1b[0m", "red", "red"},                               // SGR colours
		{"bell\x07 nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`, `bell\x07 nul\x00 del\x7f`},
		{"c1\u009b31mcsi", "c1csi", "c1csi"}, // the one-byte CSI
		{"nel\u0085x", `nel\x85x`, `nel\x85x`},
		{"line1\r\nline2\tend", "line1  line2 end", "line1\nline2\tend"},
		{"over\rwrite", "over write", "overwrite"},
		{"file\u202egnp.exe", `file\u202egnp.exe`, `file\u202egnp.exe`}, // right-to-left override
		{"bad \xff utf8", "bad \ufffd utf8", "bad \ufffd utf8"},
		{"trailing \x1b", "trailing ", "trailing "},
		{"\x1b(Bcharset", "charset", "charset"},
	}
	for _, c := range cases {
		if got := Printable(c.in); got != c.one {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.one)
		}
		if got := PrintableLines(c.in); got != c.lines {
			t.Errorf("PrintableLines(%q) = %q, want %q", c.in, got, c.lines)
		}
		for _, got := range []string{Printable(c.in), PrintableLines(c.in)} {
			if strings.ContainsAny(got, "\x1b\x07\x00\x7f\u009b\u0085\u202e\r") {
				t.Errorf("%q still holds a control: %q", c.in, got)
			}
		}
	}
}

// What a person wrote and reads (a subject, a message's text) loses its
// bidirectional controls instead of showing them as escapes: a writer's
// isolates around a name read as the name, an override can reverse
// nothing; the other controls are defused as Printable does, and the
// implicit marks (LRM, RLM) stay.
func TestReadableDropsBidiControls(t *testing.T) {
	cases := []struct{ in, one, lines string }{
		{"\u2068holiday-video.zip\u2069 (38.1 MiB)", "holiday-video.zip (38.1 MiB)", "holiday-video.zip (38.1 MiB)"},
		{"file\u202egnp.exe", "filegnp.exe", "filegnp.exe"},
		{"\u202bembedded\u202c\u2066\u2067x\u2069\u2069", "embeddedx", "embeddedx"},
		{"marks \u200e\u200f stay", "marks \u200e\u200f stay", "marks \u200e\u200f stay"},
		{"a\x1b[2Jb\x00\nc", `ab\x00 c`, "ab\\x00\nc"},
	}
	for _, c := range cases {
		if got := Readable(c.in); got != c.one {
			t.Errorf("Readable(%q) = %q, want %q", c.in, got, c.one)
		}
		if got := ReadableLines(c.in); got != c.lines {
			t.Errorf("ReadableLines(%q) = %q, want %q", c.in, got, c.lines)
		}
	}
}
