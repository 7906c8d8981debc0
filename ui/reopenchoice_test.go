package ui

import (
	"os"
	"path/filepath"
	"testing"

	"carrier/compose"
	"carrier/internal/app/message"
)

// A message reopened in Compose went with every file's way spelled out;
// only a way the person picked says "your choice": a big file Carrier
// itself sent as a link says why (over 25 MB), a small one is attached,
// and a small one the person sent as a link keeps that choice.
func TestReopenedWaysSayWhoChose(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "film.mov")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(30 << 20); err != nil { // sparse: no 30 MB written
		t.Fatal(err)
	}
	f.Close()
	small := writeFile(t, "notes.txt", []byte("notes"))
	chosen := writeFile(t, "slides.pdf", []byte("%PDF-1.4 slides"))
	c := h.u.compose
	c.fill(&message.Composed{To: []string{"zoe@example.com"}, Subject: "Film", Text: "Here.", Method: compose.Send,
		Attachments: []string{big, small, chosen}, Choose: map[string]bool{big: true, small: false, chosen: true}}, "Reopened")
	for p, want := range map[string]string{
		big:    "Drive link · over 23.8 MiB",
		small:  "Attached",
		chosen: "Drive link · your choice",
	} {
		r := c.attRows[p]
		if r == nil {
			t.Errorf("%s: no row", filepath.Base(p))
			continue
		}
		if r.how.Text != want {
			t.Errorf("%s: %q, want %q", filepath.Base(p), r.how.Text, want)
		}
	}
}
