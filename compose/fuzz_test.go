package compose

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMessage builds messages from arbitrary addresses, subjects, bodies
// and file names: the result is either a refusal that says what to fix, or
// a message whose headers are 7-bit, whose lines fit, and whose subject and
// attachment name read back as written.
func FuzzMessage(f *testing.F) {
	f.Add("Zoë <zoe@example.com>", "Grüße", "body\n", "résumé.pdf")
	f.Add("a@b.example", "hi\r\nBcc: x@y", "", "x")
	f.Add("\"weird, name\" <w@example.com>", strings.Repeat("long ", 100), strings.Repeat("x", 3000), strings.Repeat("名", 80)+".txt")
	f.Add("bad", "", "\xff", "..")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, to, subject, body, name string) {
		m := &Message{To: []string{to}, Subject: subject, Text: body}
		var attPath string
		if name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00") && len(name) < 200 {
			attPath = filepath.Join(dir, name)
			if err := os.WriteFile(attPath, []byte("attachment"), 0o600); err == nil {
				defer os.Remove(attPath)
				m.Attachments = []string{attPath}
			} else {
				attPath = ""
			}
		}
		var out bytes.Buffer
		err := m.Check()
		if err == nil {
			err = m.WriteTo(context.Background(), &out)
		}
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || len(ie.Problems) == 0 {
				t.Fatalf("refused without saying what to fix: %v", err)
			}
			return
		}
		raw := out.Bytes()
		head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
		for _, c := range head {
			if c >= 0x80 {
				t.Fatalf("header is not 7-bit:\n%s", head)
			}
		}
		for _, line := range bytes.Split(raw, []byte("\r\n")) {
			if len(line) > 998 {
				t.Fatalf("a line of %d octets", len(line))
			}
		}
		msg, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		if got, err := (&mime.WordDecoder{}).DecodeHeader(msg.Header.Get("Subject")); err != nil || utf8.ValidString(subject) && strings.TrimSpace(got) != strings.TrimSpace(subject) {
			t.Fatalf("subject %q reads back as %q (%v)", subject, got, err)
		}
		if attPath != "" && !bytes.Contains(raw, []byte("filename")) {
			t.Fatal("the attachment has no file name")
		}
	})
}
