package compose

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"carrier/internal/memtest"
)

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func build(t *testing.T, m *Message, method Method) (*Spool, []byte) {
	t.Helper()
	sp, err := Build(context.Background(), m, method, t.TempDir())
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	raw, err := os.ReadFile(sp.Path)
	if err != nil {
		t.Fatal(err)
	}
	return sp, raw
}

// checkWire checks what every message must be on the wire: CRLF line ends,
// 7-bit headers, no line over 998 octets.
func checkWire(t *testing.T, raw []byte) {
	t.Helper()
	inHeader := true
	for i, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !bytes.HasSuffix(line, []byte("\r\n")) && i != len(bytes.SplitAfter(raw, []byte("\n")))-1 {
			t.Fatalf("line %d ends without CRLF: %q", i, line)
		}
		if len(line) > 1000 {
			t.Fatalf("line %d is %d octets", i, len(line)-2)
		}
		if inHeader {
			if string(line) == "\r\n" {
				inHeader = false
				continue
			}
			for _, c := range line {
				if c >= 0x80 {
					t.Fatalf("header line %d is not 7-bit: %q", i, line)
				}
			}
		}
	}
}

var dec = &mime.WordDecoder{}

func TestMessageRoundTrip(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix only: an attachment named with a \" (Windows forbids it in file names) and the spool's mode bits")
	}
	dir := t.TempDir()
	bin := randBytes(1, 300_000)
	longName := strings.Repeat("Überweisung-Юникод-", 8) + "報告.pdf"
	attach := []string{
		writeFile(t, dir, "résumé.pdf", []byte("%PDF-1.4 fake")),
		writeFile(t, dir, "data.bin", bin),
		writeFile(t, dir, longName, []byte("long name")),
		writeFile(t, dir, `quote"d.txt`, []byte("plain text attachment\n")),
	}
	subject := "Привет, 世界: " + strings.Repeat("a long subject that goes on ", 10) + "ünïcödé"
	m := &Message{
		From:        "Renée Dupont <renee@example.com>",
		To:          []string{"Zoë <zoe@example.com>, bob@example.com"},
		Cc:          []string{"\"Smith, John\" <john@example.com>"},
		Bcc:         []string{"secret@example.com"},
		ReplyTo:     []string{"replies@example.com"},
		Subject:     subject,
		Text:        "Bonjour — ça va?\nLine two has = signs and a very long line " + strings.Repeat("x", 2000) + "\n",
		HTML:        "<p>Bonjour — <b>ça va?</b></p>",
		Attachments: attach,
		InReplyTo:   "<parent@example.com>",
		References:  []string{"<root@example.com>"},
		Date:        time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
	}
	sp, raw := build(t, m, Send)
	checkWire(t, raw)
	sum := sha256.Sum256(raw)
	if sp.Size != int64(len(raw)) || sp.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("spool size/hash do not match its bytes")
	}
	if fi, _ := os.Stat(sp.Path); fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("spool file mode %v is readable by others", fi.Mode())
	}

	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	hdrs := map[string]string{}
	for _, k := range []string{"Subject", "From"} {
		v, err := dec.DecodeHeader(msg.Header.Get(k))
		if err != nil {
			t.Fatal(err)
		}
		hdrs[k] = v
	}
	if hdrs["Subject"] != subject {
		t.Errorf("Subject decodes to %q", hdrs["Subject"])
	}
	if from, _ := msg.Header.AddressList("From"); len(from) != 1 || from[0].Name != "Renée Dupont" || from[0].Address != "renee@example.com" {
		t.Errorf("From %v", from)
	}
	to, _ := msg.Header.AddressList("To")
	cc, _ := msg.Header.AddressList("Cc")
	bcc, _ := msg.Header.AddressList("Bcc")
	if len(to) != 2 || to[0].Name != "Zoë" || to[1].Address != "bob@example.com" || len(cc) != 1 || cc[0].Name != "Smith, John" || len(bcc) != 1 {
		t.Errorf("To %v Cc %v Bcc %v", to, cc, bcc)
	}
	if msg.Header.Get("In-Reply-To") != "<parent@example.com>" || msg.Header.Get("References") != "<root@example.com> <parent@example.com>" {
		t.Errorf("reply headers %q %q", msg.Header.Get("In-Reply-To"), msg.Header.Get("References"))
	}
	if d, err := msg.Header.Date(); err != nil || !d.Equal(m.Date) {
		t.Errorf("Date %v %v", d, err)
	}
	if id := msg.Header.Get("Message-Id"); !strings.HasSuffix(id, "@example.com>") {
		t.Errorf("Message-ID %q", id)
	}

	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("top Content-Type %q", msg.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	alt, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	amt, aparams, _ := mime.ParseMediaType(alt.Header.Get("Content-Type"))
	if amt != "multipart/alternative" {
		t.Fatalf("first part %q", amt)
	}
	ar := multipart.NewReader(alt, aparams["boundary"])
	for _, want := range []struct{ mt, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		p, err := ar.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		pmt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		// multipart.Reader decodes quoted-printable by itself.
		body, _ := io.ReadAll(p)
		if pmt != want.mt || pp["charset"] != "utf-8" || strings.ReplaceAll(string(body), "\r\n", "\n") != want.body {
			t.Errorf("%s part: %q charset %q body %q", want.mt, pmt, pp["charset"], body)
		}
	}
	wantNames := []string{"résumé.pdf", "data.bin", longName, `quote"d.txt`}
	wantData := [][]byte{[]byte("%PDF-1.4 fake"), bin, []byte("long name"), []byte("plain text attachment\n")}
	wantTypes := []string{"application/pdf", "application/octet-stream", "application/pdf", "text/plain"}
	for i := range wantNames {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("attachment %d: %v", i, err)
		}
		disp, dp, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		if err != nil || disp != "attachment" || dp["filename"] != wantNames[i] {
			t.Errorf("attachment %d: disposition %q -> %q %v (%v)", i, p.Header.Get("Content-Disposition"), disp, dp, err)
		}
		ct, cp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if name, err := dec.DecodeHeader(cp["name"]); err != nil || name != wantNames[i] {
			t.Errorf("attachment %d: Content-Type name %q -> %q", i, cp["name"], name)
		}
		if ct != wantTypes[i] {
			t.Errorf("attachment %d: type %q, want %q", i, ct, wantTypes[i])
		}
		data, err := io.ReadAll(base64.NewDecoder(base64.StdEncoding, p))
		if err != nil || !bytes.Equal(data, wantData[i]) {
			t.Errorf("attachment %d: bytes differ (%v)", i, err)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("more parts than attachments: %v", err)
	}
}

func TestSimpleBodies(t *testing.T) {
	_, raw := build(t, &Message{To: []string{"a@example.com"}, Text: "héllo\n"}, Send)
	checkWire(t, raw)
	msg, _ := mail.ReadMessage(bytes.NewReader(raw))
	body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if !strings.HasPrefix(msg.Header.Get("Content-Type"), "text/plain") || string(body) != "héllo\r\n" && string(body) != "héllo\n" {
		t.Errorf("text only: %q %q", msg.Header.Get("Content-Type"), body)
	}
	if msg.Header.Get("Subject") != "" || msg.Header.Get("From") != "" {
		t.Errorf("empty fields written: %q %q", msg.Header.Get("Subject"), msg.Header.Get("From"))
	}
	_, raw = build(t, &Message{To: []string{"a@example.com"}, Text: "t", HTML: "<i>h</i>"}, Send)
	msg, _ = mail.ReadMessage(bytes.NewReader(raw))
	if mt, _, _ := mime.ParseMediaType(msg.Header.Get("Content-Type")); mt != "multipart/alternative" {
		t.Errorf("text+html: %q", mt)
	}
}

func TestRefusedInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name   string
		m      Message
		fields []string
		say    string
	}{
		{"no recipient", Message{Text: "x"}, []string{"To"}, "at least one recipient"},
		{"bad address", Message{To: []string{"not an address"}}, []string{"To"}, "not an address"},
		{"bad cc and bcc together", Message{To: []string{"a@b.example"}, Cc: []string{"@@"}, Bcc: []string{"x@"}}, []string{"Cc", "Bcc"}, ""},
		{"header injection in subject", Message{To: []string{"a@b.example"}, Subject: "hi\r\nBcc: victim@example.com"}, []string{"Subject"}, "single line"},
		{"header injection in an address", Message{To: []string{"a@b.example\nBcc: v@example.com"}}, []string{"To"}, "line break"},
		{"bare LF in subject", Message{To: []string{"a@b.example"}, Subject: "a\nb"}, []string{"Subject"}, ""},
		{"two senders", Message{From: "a@b.example, c@d.example", To: []string{"a@b.example"}}, []string{"From"}, "one sender"},
		{"non-ASCII address", Message{To: []string{"ü@bücher.example"}}, []string{"To"}, "punycode"},
		{"a domain of one label", Message{To: []string{"gina@example"}}, []string{"To"}, "end of its domain"},
		{"missing attachment", Message{To: []string{"a@b.example"}, Attachments: []string{filepath.Join(dir, "gone.pdf")}}, []string{"Attachment"}, "gone.pdf"},
		{"folder attached", Message{To: []string{"a@b.example"}, Attachments: []string{dir}}, []string{"Attachment"}, "is a folder"},
		{"bad reply id", Message{To: []string{"a@b.example"}, InReplyTo: "nonsense"}, []string{"Message-ID"}, "id@host"},
		{"invalid UTF-8", Message{To: []string{"a@b.example"}, Text: "\xff\xfe"}, []string{"Body"}, "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spool := t.TempDir()
			_, err := Build(context.Background(), &c.m, Send, spool)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Build: %v", err)
			}
			var got []string
			for _, p := range ie.Problems {
				got = append(got, p.Field)
			}
			if strings.Join(got, ",") != strings.Join(c.fields, ",") || !strings.Contains(err.Error(), c.say) {
				t.Fatalf("problems %v (%v), want fields %v saying %q", got, err, c.fields, c.say)
			}
			if left, _ := os.ReadDir(spool); len(left) != 0 {
				t.Fatalf("a refused message left %d files", len(left))
			}
		})
	}
}

func TestSizeLimits(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(size)
		f.Close()
		return p
	}
	// 26.5 MiB of file is about 35.8 MiB encoded: over for send, fine for insert.
	over := sparse("big.bin", 26<<20+512<<10)
	m := &Message{To: []string{"a@b.example"}, Attachments: []string{over}}
	_, err := Build(context.Background(), m, Send, t.TempDir())
	var se *SizeError
	if !errors.As(err, &se) || se.Limit != LimitSend || se.Size <= LimitSend || !strings.Contains(err.Error(), "remove") {
		t.Fatalf("send over the limit: %v", err)
	}
	for _, method := range []Method{Draft} {
		if _, err := Build(context.Background(), m, method, t.TempDir()); !errors.As(err, &se) {
			t.Errorf("%s over the limit: %v", method, err)
		}
	}
	sp, err := Build(context.Background(), m, Import, t.TempDir())
	if err != nil || sp.Size <= LimitSend || sp.Size > LimitInsert {
		t.Fatalf("import of the same: %v", err)
	}
	// Just under: 26 MiB of file is about 35.1 MiB... pick one that fits.
	under := sparse("fits.bin", 25<<20)
	sp, err = Build(context.Background(), &Message{To: []string{"a@b.example"}, Attachments: []string{under}}, Send, t.TempDir())
	if err != nil {
		t.Fatalf("25 MiB attachment for send: %v", err)
	}
	if est := (&Message{To: []string{"a@b.example"}, Attachments: []string{under}}).EstimateSize(); est < sp.Size || est > sp.Size+8192 {
		t.Errorf("estimate %d vs real %d", est, sp.Size)
	}
}

// Attachments stream from disk into the spool: the heap never comes near
// the attachment's size while a message with a 32 MiB attachment is built.
func TestBuildMemoryStaysFlat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.bin")
	os.WriteFile(p, randBytes(3, 32<<20), 0o600)
	m := &Message{To: []string{"a@b.example"}, Attachments: []string{p}}
	runtime.GC()
	peak := memtest.PeakHeap(func() {
		if _, err := Build(context.Background(), m, Insert, t.TempDir()); err != nil {
			t.Fatal(err)
		}
	})
	if peak > 12<<20 {
		t.Fatalf("heap reached %d bytes while building a message with a 32 MiB attachment", peak)
	}
	t.Logf("peak heap %.1f MiB", float64(peak)/(1<<20))
}

func TestTimelineMedia(t *testing.T) {
	dir := t.TempDir()
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	cases := []struct {
		name string
		data []byte
		want string
		err  string
	}{
		{"pic.dat", png, "image/png", ""}, // content wins over a meaningless extension
		{"clip.mov", []byte("\x00\x00\x00\x14ftypqt  "), "video/quicktime", ""},
		{"song.m4a", []byte{0, 1, 2, 3, 4}, "audio/mp4", ""}, // unknown content: the extension tells
		{"notes.png", []byte("just text, not a picture"), "", "text/plain"},
		{"page.html", []byte("<html><body>x</body></html>"), "", "text/html"},
	}
	for _, c := range cases {
		p := writeFile(t, dir, c.name, c.data)
		tm, err := CheckTimelineMedia(p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "pictures, videos and sounds") {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err != nil || tm.MediaType != c.want {
			t.Errorf("%s: %v %v", c.name, tm, err)
		}
	}
	big := filepath.Join(dir, "big.jpg")
	os.WriteFile(big, append([]byte("\xff\xd8\xff"), make([]byte, LimitTimeline)...), 0o600)
	var se *SizeError
	if _, err := CheckTimelineMedia(big); !errors.As(err, &se) || !strings.Contains(err.Error(), "timeline takes at most 10.0 MiB") {
		t.Errorf("big picture: %v", err)
	}
	meta, _ := (&TimelineItem{Text: "Hi ☃", Notify: true}).Metadata()
	if string(meta) != `{"notification":{"level":"DEFAULT"},"text":"Hi ☃"}` {
		t.Errorf("metadata %s", meta)
	}
}

var _ = bufio.NewReader
