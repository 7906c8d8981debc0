package compose

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// EncodedSize is the length of the message Build writes, to the byte, for
// messages of every shape: empty, text alone, a UTF-8 subject and names,
// HTML, several attachments of different types and sizes (around the
// base64 lines' edges), and Drive links; from the attachments as
// ReadAttachment read them once, and from a type not yet read the same
// as for application/octet-stream.
func TestEncodedSizeIsTheBuiltSize(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A name with a quote and a backslash, which a part's name escapes;
	// Windows forbids both in file names, so there an apostrophe stands in.
	quoted := `quote"and\back.docx`
	if runtime.GOOS == "windows" {
		quoted = "quote'and back.docx"
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 300)...)
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("x"), 56-9)...)
	files := []string{
		file("empty.bin", nil),
		file("one.dat", []byte{0}),
		file("line.pdf", pdf), // 56 bytes: 76 characters, one full line
		file("line and one.txt", bytes.Repeat([]byte("a"), 57)),
		file("two lines.csv", bytes.Repeat([]byte("1,2\n"), 114/4)),
		file("picture.png", png),
		file("تصویر سفر "+strings.Repeat("ب", 40)+".jpg", append([]byte("\xff\xd8\xff\xe0"), make([]byte, 5000)...)),
		file(quoted, bytes.Repeat([]byte{7, 9}, 1<<19+1)),
		file("report.eml", []byte("Subject: hi\r\n\r\nhello\r\n")),
	}
	links := []Link{
		{Name: "big.mov", Size: 30 << 20, URL: "https://drive.google.com/file/d/1" + strings.Repeat("A", 32) + "/view?usp=drivesdk"},
		{Name: "سفر.mp4", Size: 40 << 20, URL: "http://127.0.0.1:4000/file/d/1" + strings.Repeat("b", 32) + "/view?usp=drivesdk"},
	}
	text := strings.Repeat("A line of text = a line, with é and ü.\n", 300)
	cases := []struct {
		name string
		m    Message
	}{
		{"empty", Message{To: []string{"zoe@example.com"}}},
		{"text only", Message{To: []string{"zoe@example.com"}, Subject: "Plans", Text: text}},
		{"UTF-8 subject and names", Message{From: "Ann <ann@example.com>", To: []string{"Zoë Ünal <zoe@example.com>, bob@example.com"}, Cc: []string{"amy@example.com"},
			Subject: "Grüße aus der Stadt — سلام " + strings.Repeat("long ", 30), Text: "Hallo"}},
		{"HTML", Message{To: []string{"zoe@example.com"}, Text: "x", HTML: "<p>x " + strings.Repeat("y", 500) + "</p>"}},
		{"a reply", Message{To: []string{"zoe@example.com"}, Subject: "Re: Plans", Text: "yes", InReplyTo: "<a@b.example>", References: []string{"<c@d.example>"}}},
		{"one attachment", Message{To: []string{"zoe@example.com"}, Subject: "File", Text: "Here.", Attachments: files[5:6]}},
		{"several attachments of different types", Message{To: []string{"zoe@example.com"}, Subject: "Files", Text: text, Attachments: files}},
		{"a Drive link", Message{To: []string{"zoe@example.com"}, Subject: "Video", Text: "See the video.", Links: links[:1]}},
		{"Drive links, HTML and attachments", Message{To: []string{"zoe@example.com"}, Subject: "All", Text: text, HTML: "<html><body><p>All</p></body></html>",
			Links: links, Attachments: files[2:6]}},
	}
	for _, c := range cases {
		atts := make([]Attachment, len(c.m.Attachments))
		for i, p := range c.m.Attachments {
			a, err := ReadAttachment(p)
			if err != nil {
				t.Fatal(err)
			}
			atts[i] = a
		}
		sp, err := Build(t.Context(), &c.m, Send, filepath.Join(dir, "spool"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := c.m.EncodedSize(atts); got != sp.Size {
			t.Errorf("%s: EncodedSize %d, built %d bytes", c.name, got, sp.Size)
		}
		if fi, err := os.Stat(sp.Path); err != nil || fi.Size() != sp.Size {
			t.Fatalf("%s: the spool holds %v bytes (%v), Build said %d", c.name, fi.Size(), err, sp.Size)
		}
	}
	// A type not read yet counts as application/octet-stream: exact for
	// a file that is one.
	m := Message{To: []string{"zoe@example.com"}, Attachments: files[:2]}
	sp, err := Build(t.Context(), &m, Send, filepath.Join(dir, "spool"))
	if err != nil {
		t.Fatal(err)
	}
	unread := []Attachment{{Path: files[0], Size: 0}, {Path: files[1], Size: 1}}
	if got := m.EncodedSize(unread); got != sp.Size {
		t.Errorf("types not read: EncodedSize %d, built %d bytes", got, sp.Size)
	}
}

func TestReadAttachmentReadsSizeAndType(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.pdf")
	if err := os.WriteFile(p, []byte("%PDF-1.4\nbody"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := ReadAttachment(p)
	if err != nil || a != (Attachment{Path: p, Size: 13, Type: "application/pdf"}) {
		t.Fatalf("ReadAttachment = %+v, %v", a, err)
	}
	if _, err := ReadAttachment(filepath.Join(t.TempDir(), "gone.pdf")); err == nil {
		t.Fatal("a missing file read")
	}
}
