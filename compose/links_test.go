package compose

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// parts reads a message back with the standard library alone (not the
// go-message that wrote it): every leaf part's media type and decoded body.
func parts(t *testing.T, raw []byte) map[string][]string {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var walk func(ct, cte string, body io.Reader)
	walk = func(ct, cte string, body io.Reader) {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatalf("content type %q: %v", ct, err)
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			}
		}
		if strings.EqualFold(cte, "quoted-printable") {
			body = quotedprintable.NewReader(body)
		}
		b, _ := io.ReadAll(body)
		out[mt] = append(out[mt], strings.ReplaceAll(string(b), "\r\n", "\n"))
	}
	walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	return out
}

// The links block, read back by parsers that did not write it: the text
// names each file with its size and link, the HTML holds an anchor per
// file whose text is the name (escaped, isolated) and whose href is the
// link; a hostile name changes neither.
func TestLinksInTextAndHTML(t *testing.T) {
	dir := t.TempDir()
	small := writeFile(t, dir, "kept.bin", []byte("kept attached"))
	links := []Link{
		{Name: "Holiday video.mov", Size: 2_000_000_000, URL: "https://drive.google.com/file/d/1AbC/view?usp=drivesdk"},
		{Name: "گزارش <b>نهایی</b>\u202e.pdf", Size: 300 << 20, URL: "http://127.0.0.1:8089/file/d/2XyZ/view?a=1&b=2"},
	}
	for _, c := range []struct {
		name        string
		html        string
		attachments []string
	}{
		{"text only, no attachments", "", nil},
		{"with an attachment", "", []string{small}},
		{"with the person's HTML", "<html><body><p>Hi &amp; welcome</p></body></html>", []string{small}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &Message{To: []string{"zoe@example.com"}, Subject: "Files", Text: "Here they are.\n", HTML: c.html, Attachments: c.attachments, Links: links}
			if err := m.Check(); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := m.WriteTo(context.Background(), &buf); err != nil {
				t.Fatal(err)
			}
			got := parts(t, buf.Bytes())
			if len(got["text/plain"]) != 1 || len(got["text/html"]) != 1 {
				t.Fatalf("parts: %v", keys(got))
			}
			text := got["text/plain"][0]
			if !strings.HasPrefix(text, "Here they are.") || !strings.Contains(text, "2 files are shared with you on Google Drive") {
				t.Fatalf("text:\n%s", text)
			}
			for _, l := range links {
				line := "\n" + plainName(l.Name) + "\n" + HumanSize(l.Size) + "\n" + l.URL + "\n"
				if !strings.Contains(text, line) {
					t.Errorf("text lacks %q:\n%s", line, text)
				}
			}
			// Nothing invisible that a plain reader shows as junk: no
			// override, embedding or isolate (U+202A-E, U+2066-9).
			if i := strings.IndexFunc(text, func(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }); i >= 0 {
				t.Errorf("a bidi control %q reached the text:\n%s", []rune(text[i:])[0], text)
			}
			anchors := readAnchors(t, got["text/html"][0])
			if len(anchors) != 2 {
				t.Fatalf("anchors %v in\n%s", anchors, got["text/html"][0])
			}
			for i, l := range links {
				if anchors[i][0] != l.URL || anchors[i][1] != plainName(l.Name) {
					t.Errorf("anchor %d: %q", i, anchors[i])
				}
			}
			if c.html != "" && !strings.Contains(got["text/html"][0], "<p>Hi &amp; welcome</p>") {
				t.Error("the person's HTML was lost")
			}
			if c.html != "" && strings.Index(got["text/html"][0], "carrier-drive-links") > strings.Index(got["text/html"][0], "</body>") {
				t.Error("the links went after </body>")
			}
			if n := int64(buf.Len()); m.EstimateSize() < n {
				t.Errorf("estimate %d under the real %d", m.EstimateSize(), n)
			}
		})
	}
	bad := &Message{To: []string{"zoe@example.com"}, Links: []Link{{Name: "x", URL: "javascript:alert(1)"}}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "not a web address") {
		t.Errorf("a javascript: link: %v", err)
	}
}

// readAnchors is each <a>'s href and text, by x/net/html's tokenizer.
func readAnchors(t *testing.T, doc string) [][2]string {
	z := html.NewTokenizer(strings.NewReader(doc))
	var out [][2]string
	in := -1
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken:
			tok := z.Token()
			if tok.Data == "a" {
				for _, a := range tok.Attr {
					if a.Key == "href" {
						out = append(out, [2]string{a.Val, ""})
						in = len(out) - 1
					}
				}
			}
		case html.EndTagToken:
			if z.Token().Data == "a" {
				in = -1
			}
		case html.TextToken:
			if in >= 0 {
				out[in][1] += z.Token().Data
			}
		}
	}
}

func keys(m map[string][]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

// Which files go as links: over the threshold always; then the largest of
// the rest until the message fits; none under --links never; all under
// always.
func TestPlanLinks(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, size int64) string {
		p := writeFile(t, dir, name, nil)
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := mk("big.mov", 300<<20)
	mid1 := mk("mid1.pdf", 12<<20)
	mid2 := mk("mid2.pdf", 14<<20)
	small := mk("small.txt", 2<<20)
	m := &Message{To: []string{"a@example.com"}, Attachments: []string{big, mid1, small, mid2}}
	attach, link := PlanLinks(m, Send, LinksAuto, DefaultLinkThreshold, nil)
	// 300 MiB is over the threshold; 12+14+2 MiB encode to about 38 MiB,
	// over Gmail's 35 MiB: the largest of the rest (mid2) goes too.
	if strings.Join(link, ",") != big+","+mid2 || strings.Join(attach, ",") != mid1+","+small {
		t.Fatalf("auto: attach %v, link %v", attach, link)
	}
	fits := &Message{Attachments: attach, Links: make([]Link, len(link))}
	if fits.EstimateSize() > Send.Limit() {
		t.Fatalf("what stays attached is %d, over the limit", fits.EstimateSize())
	}
	if a, l := PlanLinks(m, Send, LinksNever, 0, nil); len(l) != 0 || len(a) != 4 {
		t.Fatalf("never: %v %v", a, l)
	}
	if a, l := PlanLinks(m, Send, LinksAlways, 0, nil); len(a) != 0 || len(l) != 4 {
		t.Fatalf("always: %v %v", a, l)
	}
	// The person's choices come first: mid1 as a link, the big file kept
	// attached; the message is then over the limit, so the rest go too.
	if a, l := PlanLinks(m, Send, LinksAuto, 0, map[string]bool{mid1: true, big: false}); strings.Join(a, ",") != big || len(l) != 3 {
		t.Fatalf("choices: attach %v, link %v", a, l)
	}
	if _, l := PlanLinks(&Message{Attachments: []string{small, mid1}}, Send, LinksAuto, 0, nil); len(l) != 0 {
		t.Fatalf("a message that fits got links: %v", l)
	}
}
