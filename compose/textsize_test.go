package compose

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TextSize is the message's written size but for its attachments' parts:
// exact for a message without attachments (an empty one is a few hundred
// bytes, not a round 2 KiB), and with attachments plus EstimateAttachment
// for each it stays within a part header's slack of the real size.
func TestTextSizeIsTheWrittenSize(t *testing.T) {
	written := func(m *Message) int64 {
		var b bytes.Buffer
		if err := m.WriteTo(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return int64(b.Len())
	}
	for _, m := range []*Message{
		{},
		{To: []string{"zoe@example.com"}},
		{To: []string{"Zoë <zoe@example.com>, bob@example.com"}, Cc: []string{"amy@example.com"}, Subject: "Grüße", Text: strings.Repeat("A line of text = a line.\n", 200)},
		{To: []string{"zoe@example.com"}, Text: "x", HTML: "<p>x</p>"},
	} {
		got, want := m.TextSize(), written(m)
		// The Date header's length varies by a byte with the day.
		if got < want-1 || got > want+1 {
			t.Errorf("%+v: TextSize %d, written %d", m, got, want)
		}
	}
	dir := t.TempDir()
	m := &Message{To: []string{"zoe@example.com"}, Subject: "Files", Text: "Here."}
	var files int64
	for i, size := range []int{0, 1000, 100000} {
		p := filepath.Join(dir, "file-"+strings.Repeat("x", i*20)+".bin")
		if err := os.WriteFile(p, bytes.Repeat([]byte{7}, size), 0o600); err != nil {
			t.Fatal(err)
		}
		m.Attachments = append(m.Attachments, p)
		files += EstimateAttachment(p, int64(size))
	}
	est, wrote := m.TextSize()+files, written(m)
	if est < wrote || est > wrote+int64(len(m.Attachments))*300 {
		t.Errorf("with attachments: TextSize plus the files' estimates %d, written %d", est, wrote)
	}
}
