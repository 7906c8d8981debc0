package ui

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"carrier/transfer"
)

// overlayWords are the words of the window's top overlay (a dialog).
func overlayWords(w fyne.Window) string {
	top := w.Canvas().Overlays().Top()
	if top == nil {
		return ""
	}
	var words []string
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *wrapLabel:
			words = append(words, x.logical)
		case fyne.Widget:
			r := test.WidgetRenderer(x)
			for _, c := range r.Objects() {
				walk(c)
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		}
	}
	walk(popUpOf(top))
	return strings.Join(words, "\n")
}

// An upload whose file was moved shows as a ghost with Locate…, which
// opens a file dialog; another file chosen is refused in words and the
// upload keeps waiting; the file where it now is goes on to the end, the
// object the file's bytes.
func TestLocateGhostFromTheRow(t *testing.T) {
	h := newHarness(t)
	data := bytes.Repeat([]byte("ghost bytes "), 256<<10)[:3<<20]
	path := writeFile(t, "clip.bin", data)
	h.sb.SetFaults("rate=4MB")
	id, err := h.q.Add(transfer.Spec{URL: h.url + "/upload/storage/v1/b/ui-test/o?name=ghost", ContentType: "application/octet-stream", Path: path, ChunkSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	h.until("the server holds some of it", func() bool { s, _ := h.q.Job(id); return s.Confirmed >= 256<<10 })
	if err := h.q.Pause(id); err != nil {
		t.Fatal(err)
	}
	h.until("the upload paused", func() bool { return h.stateOf(id) == transfer.StatePaused })
	h.sb.SetFaults("")
	moved := filepath.Join(t.TempDir(), "moved clip.bin")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	if err := h.q.Resume(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	var row *transferRow
	h.until("the row shows a ghost", func() bool {
		for _, r := range h.u.transfers.rows {
			if strings.Contains(r.state.logical, "The file is no longer at "+path) && r.locate.Visible() {
				row = r
				return true
			}
		}
		return false
	})
	if row.retry.Visible() || row.pause.Visible() || !row.cancel.Visible() {
		t.Errorf("a ghost's buttons: retry %v, pause %v, cancel %v", row.retry.Visible(), row.pause.Visible(), row.cancel.Visible())
	}

	// Locate… opens a file dialog.
	if h.w.Canvas().Overlays().Top() != nil {
		t.Fatal("an overlay is open already")
	}
	test.Tap(row.locate)
	top := h.w.Canvas().Overlays().Top()
	if top == nil || len(h.u.modals) == 0 {
		t.Fatal("Locate… opened no file dialog")
	}
	h.u.modals[len(h.u.modals)-1].safe() // Escape's way out: the dialog's callback gets nothing

	// Another file (same size, other bytes where the server holds some)
	// is refused in words; the upload keeps waiting.
	other := bytes.Clone(data)
	other[10] ^= 1
	otherPath := writeFile(t, "other.bin", other)
	h.u.transfers.pickLocated = func(was string, chosen func(string)) {
		if was != path {
			t.Errorf("the dialog was asked for %q, want %q", was, path)
		}
		chosen(otherPath)
	}
	test.Tap(row.locate)
	h.until("the refusal", func() bool { return strings.Contains(overlayWords(h.w), "is not the file this upload was sending") })
	if !strings.Contains(overlayWords(h.w), otherPath) {
		t.Errorf("the refusal does not name the file: %s", overlayWords(h.w))
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
	if st := h.stateOf(id); st != transfer.StateMissing {
		t.Fatalf("after the refusal the upload is %s", st)
	}

	// The file where it now is: the upload goes on, and ends.
	h.u.transfers.pickLocated = func(_ string, chosen func(string)) { chosen(moved) }
	test.Tap(row.locate)
	h.until("the upload done", func() bool { return h.stateOf(id) == transfer.StateDone })
	req, _ := http.NewRequest("GET", h.url+"/storage/v1/b/ui-test/o/ghost?alt=media", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("the object is %d bytes, not the file's %d", len(got), len(data))
	}
	h.until("the row leaves the ghost", func() bool { return !row.locate.Visible() })
}

// The fake queue takes any file for a ghost, and says whom it was asked.
func (f *fakeUploads) Locate(_ context.Context, id, path string) error {
	return f.record("locate", id+" "+filepath.ToSlash(path))
}

// A batch whose folder of pictures moved is located by one picture: the
// others are looked for under their names in the folder chosen.
func TestLocateOneOfAMovedFolder(t *testing.T) {
	recs := photosBatch(3, transfer.StateMissing)
	fu := &fakeUploads{recs: recs}
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, make(chan transfer.Event, 16) })
	row := h.onlyRow()
	if row == nil || !row.locate.Visible() || !strings.Contains(row.state.logical, "/pics/pic00000.jpg") {
		t.Fatalf("the batch's row: %v", row)
	}
	h.u.transfers.pickLocated = func(_ string, chosen func(string)) { chosen(filepath.FromSlash("/new place/pic00000.jpg")) }
	test.Tap(row.locate)
	want := []string{"locate p00000 /new place/pic00000.jpg", "locate p00001 /new place/pic00001.jpg", "locate p00002 /new place/pic00002.jpg"}
	h.until("the three located", func() bool {
		fu.mu.Lock()
		defer fu.mu.Unlock()
		return len(fu.calls) >= len(want)
	})
	fu.mu.Lock()
	defer fu.mu.Unlock()
	if !slices.Equal(fu.calls, want) {
		t.Errorf("asked %q, want %q", fu.calls, want)
	}
}
