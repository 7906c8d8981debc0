package ui

import (
	"mime"
	"net/url"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
)

// linksIn are the links of a pane, in order.
func linksIn(o fyne.CanvasObject) []*mailLink {
	var out []*mailLink
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *mailLink:
			out = append(out, w)
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}

// A message whose text isolates a file's name (FSI ... PDI, as Carrier's
// Drive-link text once did and other writers still do) reads in the
// Mailbox as its words, never as \u2068 escapes; its web address is a
// link that opens in the browser, and an address of any other scheme
// stays text.
func TestMailboxShowsIsolatesAsWordsAndLinksAsLinks(t *testing.T) {
	h := newHarness(t)
	drive := "https://drive.google.com/file/d/1AbC/view?usp=drivesdk"
	h.putMail("To: zoe@example.com\r\nSubject: " + mime.QEncoding.Encode("utf-8", "\u2068holiday-video.zip\u2069 for you") + "\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n" +
		"The film.\r\n\r\n1 file is shared with you on Google Drive:\r\n\r\n" +
		"\u2068holiday-video.zip\u2069 (38.1 MiB)\r\n" + drive + "\r\n\r\n" +
		"Or see <http://127.0.0.1:9/page>. Not ftp://files.example.com/x nor javascript:alert(1).\r\n")
	var opened []string
	h.u.mailbox.openURL = func(u *url.URL) error { opened = append(opened, u.String()); return nil }
	m := h.openMail("\u2068holiday-video.zip\u2069 for you")
	h.until("the text shown", func() bool { return strings.Contains(labelsIn(m.detail.Box), "The film.") })
	text := labelsIn(m.detail.Box) + labelsIn(m.list.Box)
	if strings.Contains(text, `\u206`) || strings.ContainsAny(text, "\u2068\u2069") {
		t.Errorf("the isolates are shown:\n%q", text)
	}
	for _, want := range []string{"Subject: holiday-video.zip for you\n", "holiday-video.zip (38.1 MiB)\n", "Or see\n", "\n. Not ftp://"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	links := linksIn(m.detail.Box)
	var names []string
	for _, l := range links {
		names = append(names, l.Text)
	}
	if strings.Join(names, " ") != drive+" http://127.0.0.1:9/page" {
		t.Fatalf("links %q, want the Drive link and the page (not ftp, not javascript)", names)
	}
	if !strings.Contains(text, "ftp://files.example.com/x nor javascript:alert(1).") {
		t.Errorf("the other schemes are not left as text:\n%s", text)
	}
	links[0].TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	links[1].TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	if strings.Join(opened, " ") != drive+" http://127.0.0.1:9/page" {
		t.Fatalf("opened %q", opened)
	}
}
