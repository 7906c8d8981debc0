// Package text makes text that came from elsewhere, or that a person
// wrote, safe to show: on a terminal, in a label or a notification.
package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable makes text that came from elsewhere (a server's error message,
// a file's name, a response body) safe to show on one line of a terminal,
// a label or a notification: terminal escape sequences (CSI, OSC, ...) are
// dropped whole, line breaks and tabs become spaces, and every other
// control character (C0, DEL, C1) and bidirectional override is written as
// a visible \x.. or \u.... escape, so nothing a server writes can move the
// cursor, retitle a window, hide text or make text read backwards. Invalid
// UTF-8 becomes U+FFFD.
func Printable(s string) string { return printable(s, false, false) }

// PrintableLines is Printable for text of several lines (a response body,
// errors joined one per line): line breaks and tabs are kept.
func PrintableLines(s string) string { return printable(s, true, false) }

// Readable is Printable for what a person wrote and reads (a message's
// subject, its text, a caption): the bidirectional embeddings, overrides
// and isolates are dropped, not written as escapes. In mail they are most
// often a writer's isolates around a name (FSI ... PDI), which a
// \u2068 would turn into junk; dropped, none of them can make text read
// backwards, and the window lays the text out by its letters.
func Readable(s string) string { return printable(s, false, true) }

// ReadableLines is Readable for text of several lines: line breaks and
// tabs are kept.
func ReadableLines(s string) string { return printable(s, true, true) }

func printable(s string, lines, dropBidi bool) string {
	if isPlain(s, lines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case r == 0x1b || r == 0x9b || r == 0x9d || r == 0x90 || r == 0x9e || r == 0x9f:
			n = escapeLen(s[i:])
		case r == '\r' && lines:
			// dropped: a carriage return alone rewrites the line it ends
		case r == '\n' || r == '\t' || r == '\r':
			if lines {
				b.WriteRune(r)
			} else {
				b.WriteByte(' ')
			}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isBidiControl(r) && dropBidi:
		case isBidiControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPlain is the fast path: most text has nothing to change.
func isPlain(s string, lines bool) bool {
	for _, r := range s {
		if r < 0x20 {
			if lines && (r == '\n' || r == '\t') {
				continue
			}
			return false
		}
		if r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError || isBidiControl(r) {
			return false
		}
	}
	return true
}

// isBidiControl is the embeddings, overrides and isolates of Unicode's
// bidirectional algorithm ("Trojan Source"); the implicit marks stay.
func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// escapeLen is the length of the escape sequence at the start of s (which
// starts with ESC or a C1 introducer), so that it is dropped whole: CSI
// ends with a final byte 0x40-0x7e; OSC, DCS, PM and APC end with BEL or
// ST (ESC \ or 0x9c); any other ESC takes its intermediates and final character.
func escapeLen(s string) int {
	r, n := utf8.DecodeRuneInString(s)
	kind := r
	if r == 0x1b {
		if len(s) < 2 {
			return 1
		}
		switch s[1] {
		case '[':
			kind, n = 0x9b, 2
		case ']':
			kind, n = 0x9d, 2
		case 'P':
			kind, n = 0x90, 2
		case '^':
			kind, n = 0x9e, 2
		case '_':
			kind, n = 0x9f, 2
		default: // intermediates (ESC ( B), then one final character
			i := 1
			for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
				i++
			}
			if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
				i++
			}
			return i
		}
	}
	i := n
	if kind == 0x9b { // CSI: parameters and intermediates, then a final byte
		for i < len(s) {
			c := s[i]
			i++
			if c >= 0x40 && c <= 0x7e {
				return i
			}
			if c < 0x20 || c >= 0x7f {
				return i - 1 // not a CSI after all: stop before the stray byte
			}
		}
		return i
	}
	for i < len(s) { // a string: up to BEL or ST
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}
