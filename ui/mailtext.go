package ui

import (
	"net/url"
	"regexp"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// A message's text in the reading pane: paragraphs as wrapped labels, and
// each web address in it (http or https, nothing else) a link that opens
// in the system's browser, as the Drive links of a message with large
// files must. An address takes a row of its own, between the words
// before and after it.

// webAddress finds the http and https addresses in a text: up to a space,
// a quote or an angle bracket (a plain text's <https://...>).
var webAddress = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"]+`)

// textRows are the rows of a text: its paragraphs, cut where an address is.
func (m *mailboxScreen) textRows(text string) []fyne.CanvasObject {
	var rows []fyne.CanvasObject
	for _, p := range paragraphs(text) {
		var words []string // the lines since the last address
		flush := func() {
			if t := strings.TrimSpace(strings.Join(words, "\n")); t != "" {
				rows = append(rows, wrapped(t))
			}
			words = nil
		}
		for _, line := range strings.Split(p, "\n") {
			at := 0
			for _, loc := range webAddress.FindAllStringIndex(line, -1) {
				addr := trimAddress(line[loc[0]:loc[1]])
				u := webLink(addr)
				if u == nil {
					continue // left in the words
				}
				before, end := line[at:loc[0]], loc[0]+len(addr)
				if strings.HasSuffix(before, "<") && strings.HasPrefix(line[end:], ">") {
					before, end = before[:len(before)-1], end+1 // <https://...>: the brackets only mark it
				}
				words = append(words, before)
				flush()
				rows = append(rows, m.link(addr, u))
				at = end
			}
			words = append(words, line[at:])
		}
		flush()
	}
	return rows
}

// trimAddress leaves out what ends a sentence after an address: a full
// stop, a comma, a closing bracket the address did not open.
func trimAddress(s string) string {
	for len(s) > 0 {
		c := s[len(s)-1]
		switch {
		case strings.IndexByte(".,;:!?'", c) >= 0:
		case c == ')' && strings.Count(s, "(") < strings.Count(s, ")"):
		case c == ']' && strings.Count(s, "[") < strings.Count(s, "]"):
		default:
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

// webLink is s as an address to open: http or https with a host, and no
// user name (which can make an address look like another's); nil for
// anything else, which stays text.
func webLink(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return nil
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return nil
	}
	return u
}

// link is an address in a message's text, opened with the system's
// browser by a click, Space or Return.
func (m *mailboxScreen) link(text string, u *url.URL) fyne.CanvasObject {
	l := &mailLink{}
	l.Text, l.URL = text, u
	l.Wrapping = fyne.TextWrapBreak // an address has no spaces to wrap at
	l.OnTapped = func() {
		if err := m.openURL(u); err != nil {
			// No browser to open (no xdg-open, say): the address to open
			// by hand, in words rather than the opener's error.
			m.u.browserFailed(u.String())
		}
	}
	l.ExtendBaseWidget(l)
	return l
}

// mailLink is a hyperlink that Return opens too, as it presses a button.
type mailLink struct {
	widget.Hyperlink
}

func (l *mailLink) TypedKey(ev *fyne.KeyEvent) {
	if ev.Name == fyne.KeyReturn || ev.Name == fyne.KeyEnter {
		l.OnTapped()
		return
	}
	l.Hyperlink.TypedKey(ev)
}
