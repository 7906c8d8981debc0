package ui

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/transfer"
)

// changedUpload queues an upload of data to the sandbox's storage, lets
// the server take part of it, pauses it, lets change alter its file, and
// resumes it: the upload stops for good because its file changed. It
// returns the job and its row once the row has looked at the file.
func changedUpload(t *testing.T, h *harness, name string, data []byte, change func(path string)) (id, path string, row *transferRow) {
	t.Helper()
	path = writeFile(t, name, data)
	h.sb.SetFaults("rate=4MB")
	id, err := h.q.Add(transfer.Spec{URL: h.url + "/upload/storage/v1/b/ui-test/o?name=" + name, ContentType: "application/octet-stream", Path: path, ChunkSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	h.until("the server holds some of it", func() bool { s, _ := h.q.Job(id); return s.Confirmed >= 256<<10 })
	if err := h.q.Pause(id); err != nil {
		t.Fatal(err)
	}
	h.until("the upload paused", func() bool { return h.stateOf(id) == transfer.StatePaused })
	h.sb.SetFaults("")
	change(path)
	if err := h.q.Resume(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	h.until("the upload stopped, and its file looked at", func() bool {
		row = h.onlyRow()
		return row != nil && h.stateOf(id) == transfer.StateFailed && (row.useFile.Visible() || row.locate.Visible())
	})
	// Locate… is offered from the failure alone; the words of the look at
	// the file come when the look ends (in the background): wait for them
	// on the row, or a slow machine reads the words before the look.
	s := h.u.transfers
	h.until("the look at the file drawn", func() bool {
		rd := s.data(s.deliveryOf(id))
		if rd == nil {
			return false
		}
		words := s.changedFailureWords(rd, rd.view(id).snap)
		return words != "" && strings.HasPrefix(row.state.logical, words)
	})
	return id, path, row
}

// object is what the sandbox's storage holds under name.
func (h *harness) object(name string) []byte {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.url+"/storage/v1/b/ui-test/o/"+name+"?alt=media", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return got
}

// Issue 32: a file saved again with the same bytes after its upload began
// stops the upload, and Retry would stop it the same way. Its row offers
// no Retry but Use this file, saying the file was saved again and the part
// sent is unchanged; Use this file sends it on, and the object is the
// file's bytes.
func TestAChangedFileWithTheSameBytesOffersUseThisFile(t *testing.T) {
	h := newHarness(t)
	data := bytes.Repeat([]byte("same bytes "), 128<<10)[:1<<20]
	later := time.Now().Add(time.Hour)
	id, _, row := changedUpload(t, h, "saved.bin", data, func(path string) {
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
	})
	if !row.useFile.Visible() || row.retry.Visible() || row.locate.Visible() {
		t.Fatalf("a file saved again unchanged: Use this file %v, Retry %v, Locate %v; want Use this file alone",
			row.useFile.Visible(), row.retry.Visible(), row.locate.Visible())
	}
	if want := "saved.bin was saved again after its upload began"; !strings.Contains(row.state.logical, want) || !strings.Contains(row.state.logical, "the part already sent is unchanged") {
		t.Errorf("the row says %q, want %q and that the part sent is unchanged", row.state.logical, want)
	}
	test.Tap(row.useFile)
	h.until("the upload done", func() bool { return h.stateOf(id) == transfer.StateDone })
	if !bytes.Equal(h.object("saved.bin"), data) {
		t.Fatal("the object is not the file's bytes")
	}
	h.until("the row leaves Use this file", func() bool { return !row.useFile.Visible() })
}

// A file changed where the server already holds its bytes cannot be taken:
// the row says so (the part sent differs), offers neither Retry nor Use
// this file, but Locate… for the file as it was; a copy of it chosen there
// is taken and the upload ends with the original's bytes. A file of
// another size is said by its sizes.
func TestAChangedFileWithOtherBytesOffersLocate(t *testing.T) {
	h := newHarness(t)
	data := bytes.Repeat([]byte("first text "), 128<<10)[:1<<20]
	id, _, row := changedUpload(t, h, "edited.bin", data, func(path string) {
		other := bytes.Clone(data)
		other[5] ^= 1
		if err := os.WriteFile(path, other, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if row.useFile.Visible() || row.retry.Visible() || !row.locate.Visible() {
		t.Fatalf("a file changed in the part sent: Use this file %v, Retry %v, Locate %v; want Locate alone",
			row.useFile.Visible(), row.retry.Visible(), row.locate.Visible())
	}
	if want := "edited.bin changed after its upload began: its first "; !strings.Contains(row.state.logical, want) || !strings.Contains(row.state.logical, "are not the same any more") {
		t.Errorf("the row says %q, want %q… are not the same any more", row.state.logical, want)
	}
	kept := filepath.Join(t.TempDir(), "edited (original).bin")
	if err := os.WriteFile(kept, data, 0o600); err != nil {
		t.Fatal(err)
	}
	h.u.transfers.pickLocated = func(_ string, chosen func(string)) { chosen(kept) }
	test.Tap(row.locate)
	h.until("the upload done", func() bool { return h.stateOf(id) == transfer.StateDone })
	if !bytes.Equal(h.object("edited.bin"), data) {
		t.Fatal("the object is not the original's bytes")
	}
}

// A file grown after its upload began is said by its sizes now and then.
func TestAChangedFileOfAnotherSizeSaysBoth(t *testing.T) {
	h := newHarness(t)
	data := bytes.Repeat([]byte("grown text "), 128<<10)[:1<<20]
	_, _, row := changedUpload(t, h, "grown.bin", data, func(path string) {
		if err := os.WriteFile(path, append(bytes.Clone(data), make([]byte, 300<<10)...), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if want := "its size is now 1.3 MiB, not 1.0 MiB"; !strings.Contains(row.state.logical, want) {
		t.Errorf("the row says %q, want %q", row.state.logical, want)
	}
	if row.useFile.Visible() || row.retry.Visible() {
		t.Errorf("a grown file: Use this file %v, Retry %v", row.useFile.Visible(), row.retry.Visible())
	}
}

// A message whose Drive link's file was saved again unchanged stops, its
// row offering Use this file without Pause, and goes on with Use this
// file: the file reaches Drive and the message is sent, once.
func TestAMessageWhoseLinkWasSavedAgainGoesOnWithUseThisFile(t *testing.T) {
	hold, release := holdDriveUploads()
	defer release()
	h := newHarness(t, hold)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Plans")
	plan := patterned(t, "plan.pdf", 1<<20)
	drop(h, plan)
	test.Tap(c.attRows[plan].toggle) // as a Drive link
	test.Tap(c.sendBtn)
	var row *transferRow
	h.until("the message's row", func() bool { row = h.onlyRow(); return row != nil && len(row.partRows) == 1 && !c.busy })
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(plan, later, later); err != nil {
		t.Fatal(err)
	}
	release()
	h.until("Use this file offered", func() bool { return row.useFile.Visible() })
	// The message stands stopped: nothing of it moves, so its row offers
	// no Pause beside Use this file (its message job, waiting on the file,
	// could be paused, to no end).
	if row.pause.Visible() || row.retry.Visible() {
		t.Errorf("a stopped message's row offers Pause %v, Retry %v beside Use this file", row.pause.Visible(), row.retry.Visible())
	}
	test.Tap(row.useFile)
	h.until("the message sent", func() bool { return row.state.Text == "Sent" })
	if msgs := h.messages(); len(msgs) != 1 {
		t.Fatalf("%d messages arrived, want 1", len(msgs))
	}
	if files := h.driveFiles(); len(files) != 1 {
		t.Fatalf("%d files on Drive, want 1", len(files))
	}
}

// The row's words for a file it looked at say which file, how and when,
// without the engine's English line under them, which says the same:
// the row stays short.
func TestAChangedFilesWordsLeaveOutTheEnginesLine(t *testing.T) {
	h := newHarness(t)
	data := bytes.Repeat([]byte("short row "), 128<<10)[:1<<20]
	later := time.Now().Add(time.Hour)
	_, _, row := changedUpload(t, h, "short.bin", data, func(path string) {
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
	})
	if strings.Contains(row.state.logical, "nothing more was sent") || strings.Count(row.state.logical, "\n") > 0 {
		t.Errorf("the row says %q", row.state.logical)
	}
}
