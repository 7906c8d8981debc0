package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"carrier/transfer"
)

// Issue 32: Compose's meter is the size of the message as it is built, to
// the byte, once the attached files' types are read (off the UI thread,
// once each): a message without attachments, with text only, with a UTF-8
// subject, with several attachments of different types, and with a file
// sent as a Drive link, each sent and its spool's length compared with
// what the meter said.
func TestComposeMeterIsTheBuiltMessagesLength(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{3}, 40000)...)
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("stream "), 9000)...)
	cases := []struct {
		name, subject, body string
		files               []string
		links               int // the first links of files go as Drive links
	}{
		{"no attachment", "", "", nil, 0},
		{"text only", "Plans", strings.Repeat("A line of the plan = a line.\n", 400), nil, 0},
		{"a UTF-8 subject", "Grüße — سلام از سفر " + strings.Repeat("و ", 40), "Hallo", nil, 0},
		{"several attachments of different types", "Files", "Here they are.", []string{
			file("photo.png", png), file("report.pdf", pdf), file("notes.txt", []byte("plain notes\n")),
			file("data.bin", []byte{0, 1, 2, 0xff}), file("عکس سفر.jpg", append([]byte("\xff\xd8\xff\xe0"), make([]byte, 7001)...)),
		}, 0},
		{"a Drive link", "Film", "See the film.", []string{file("film.mov", bytes.Repeat([]byte("moov"), 20000)), file("cover.png", png)}, 1},
	}
	for _, tc := range cases {
		c.to.SetText("Zoë <zoe@example.com>")
		c.subject.SetText(tc.subject)
		c.body.SetText(tc.body)
		c.attach(tc.files...)
		for _, p := range tc.files[:tc.links] {
			test.Tap(c.attRows[p].toggle)
		}
		h.until("the files' types read", func() bool { return c.typesReading == 0 })
		meter := c.estimate()
		if want := meterWords(meter, 35<<20); !strings.HasSuffix(c.meterText, want) {
			t.Errorf("%s: the meter reads %q, not its size %q", tc.name, c.meterText, want)
		}
		before := map[string]bool{}
		for _, s := range h.q.Jobs() {
			before[s.ID] = true
		}
		test.Tap(c.sendBtn)
		var msg transfer.Snapshot
		h.until(tc.name+": the message queued", func() bool {
			for _, s := range h.q.Jobs() {
				if !before[s.ID] && strings.Contains(s.URL, "/gmail/") {
					msg = s
				}
			}
			return msg.ID != "" && !c.busy && len(c.attachments) == 0
		})
		if msg.Size != meter {
			t.Errorf("%s: the meter said %d bytes, the message built is %d", tc.name, meter, msg.Size)
		}
	}
}
