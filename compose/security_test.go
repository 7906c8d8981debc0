package compose

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"
)

// Finding: attachment names with control characters went into headers.
// The attacker's step: hand the person a file whose name holds a line
// break and a header of its own (legal on Unix), or a right-to-left
// override that disguises its type.
func TestAttachmentNamesLoseTheirControls(t *testing.T) {
	dir := t.TempDir()
	names := []string{"report\r\nBcc: evil@example.com\r\nX-Evil: 1.txt", "bell\x07\x1b[2J.txt", "photo\u202egpj.exe", "bad\xffutf8.txt"}
	want := []string{"report__Bcc: evil@example.com__X-Evil: 1.txt", "bell__[2J.txt", "photo_gpj.exe", "bad_utf8.txt"}
	var paths, kept []string
	for i, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			if runtime.GOOS == "windows" { // Windows forbids control characters in file names
				continue
			}
			t.Fatal(err)
		}
		paths, kept = append(paths, p), append(kept, want[i])
	}
	want = kept
	sp, err := Build(context.Background(), &Message{To: []string{"a@example.com"}, Text: "t", Attachments: paths}, Send, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(sp.Path)
	if bytes.Contains(raw, []byte("\nBcc:")) || bytes.Contains(raw, []byte("\nX-Evil")) || bytes.ContainsAny(raw, "\x07\x1b") || bytes.Contains(raw, []byte("\u202e")) {
		t.Fatalf("a file name's controls reached the message:\n%s", raw)
	}
	mr, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if mr.Header.Get("Bcc") != "" || mr.Header.Get("X-Evil") != "" {
		t.Fatal("the file name added headers")
	}
	var got []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := p.Header.(*mail.AttachmentHeader); ok {
			n, _ := h.Filename()
			if p.Header.Get("Bcc") != "" || p.Header.Get("X-Evil") != "" {
				t.Fatal("the file name added headers to its part")
			}
			got = append(got, n)
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("names %q, want %q", got, want)
	}
}

// Finding: a growing attachment (a log being written) filled the disk
// before the size check. The attacker's step (or a busy log): make the
// file grow between its check and its read.
func TestGrowingAttachmentIsNotSpooled(t *testing.T) {
	for _, c := range []struct {
		name string
		to   int64
	}{{"a few bytes", 1<<20 + 10}, {"far past the limit (sparse)", 64 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "app.log")
			os.WriteFile(p, bytes.Repeat([]byte("log line\n"), (1<<20)/9+1), 0o600)
			os.Truncate(p, 1<<20)
			afterStat = func(string) { os.Truncate(p, c.to) }
			defer func() { afterStat = nil }()
			spool := t.TempDir()
			_, err := Build(context.Background(), &Message{To: []string{"a@example.com"}, Text: "t", Attachments: []string{p}}, Send, spool)
			if err == nil || !strings.Contains(err.Error(), "grew while it was being attached") {
				t.Fatalf("got %v", err)
			}
			if left, _ := os.ReadDir(spool); len(left) != 0 {
				t.Fatalf("the spool kept %v", left)
			}
		})
	}
}

// The spool itself stops at the method's limit, whatever WriteTo is given.
func TestSpoolStopsAtTheLimit(t *testing.T) {
	var sink bytes.Buffer
	cw := &countingWriter{w: &sink, limit: 100, method: Send}
	if _, err := cw.Write(make([]byte, 60)); err != nil {
		t.Fatal(err)
	}
	_, err := cw.Write(make([]byte, 60))
	var se *SizeError
	if !asSizeError(err, &se) || sink.Len() != 60 {
		t.Fatalf("wrote %d bytes past a limit of 100: %v", sink.Len(), err)
	}
}

func asSizeError(err error, se **SizeError) bool {
	e, ok := err.(*SizeError)
	*se = e
	return ok
}
