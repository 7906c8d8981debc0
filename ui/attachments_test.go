package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"carrier/internal/memtest"
)

// pattern yields n bytes that differ along the way (so their base64 is
// no run of one letter) without holding them.
type pattern struct{ i, n int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.i >= p.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(b)), p.n-p.i))
	for j := range b[:k] {
		x := uint64(p.i + int64(j))
		b[j] = byte(x*2654435761>>13) ^ byte(x>>8)
	}
	p.i += int64(k)
	return k, nil
}

func patternSum(n int64) [32]byte {
	h := sha256.New()
	io.Copy(h, &pattern{n: n})
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// attachmentServer answers attachments.get as Gmail does, the bytes as
// one base64url string, encoded as they are written. With stopAt > 0 it
// sends that many bytes, says so on reached, and holds the answer open
// until the client goes.
func attachmentServer(t *testing.T, size, stopAt int64, reached chan<- struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		fmt.Fprintf(w, "{\n  \"size\": %d,\n  \"data\": \"", size)
		enc := base64.NewEncoder(base64.URLEncoding, w)
		if stopAt > 0 {
			io.Copy(enc, io.LimitReader(&pattern{n: size}, stopAt))
			w.(http.Flusher).Flush()
			reached <- struct{}{}
			<-r.Context().Done()
			return
		}
		io.Copy(enc, &pattern{n: size})
		enc.Close()
		io.WriteString(w, "\"\n}\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// standalone is a Mailbox screen reading from endpoint, outside a window.
func standalone(t *testing.T, endpoint string) *mailboxScreen {
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	return &mailboxScreen{u: &UI{ctx: ctx, deps: Deps{Endpoint: endpoint, Client: http.DefaultClient}}}
}

// A 100 MiB attachment goes to disk as it arrives: the heap stays flat
// (reading the answer whole, as Carrier once did, holds 233 MiB), and the
// file holds its bytes exactly.
func TestLargeAttachmentStreamsToDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MiB")
	}
	const size = 100 << 20
	srv := attachmentServer(t, size, 0, nil)
	m := standalone(t, srv.URL)
	dest := filepath.Join(t.TempDir(), "big.bin")
	var err error
	var reports int
	peak := memtest.PeakHeap(func() {
		err = m.fetchToFile(context.Background(), mailAttachment{msgID: "m", attID: "a", name: "big.bin", size: size}, dest, func(int64) { reports++ })
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak heap %.1f MiB for a %d MiB attachment; %d progress reports", float64(peak)/(1<<20), size>>20, reports)
	if peak > 16<<20 {
		t.Fatalf("the heap grew by %.1f MiB while a 100 MiB attachment was fetched", float64(peak)/(1<<20))
	}
	if reports < 100 {
		t.Errorf("%d progress reports for 100 MiB", reports)
	}
	f, err := os.Open(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if n, _ := io.Copy(h, f); n != size || !bytes.Equal(h.Sum(nil), func() []byte { s := patternSum(size); return s[:] }()) {
		t.Fatalf("the file holds %d bytes, not the attachment's", n)
	}
}

// The answer is read as JSON wherever its data member lies, padded or
// not, escaped or not; what base64url cannot hold, and answers cut short
// or without data, are refused.
func TestAttachmentAnswerDecoding(t *testing.T) {
	want := []byte("plans for the garden?>") // 22 bytes: base64 ends in "=="
	padded := base64.URLEncoding.EncodeToString(want)
	raw := base64.RawURLEncoding.EncodeToString(want)
	escaped := strings.ReplaceAll(strings.Replace(padded, "B", `\u0042`, 1), "=", `\u003d`)
	for _, c := range []struct {
		name, answer string
		ok           bool
	}{
		{"padded, last", `{"size":22,"data":"` + padded + `"}`, true},
		{"unpadded, first, spaced", "{ \"data\" :\n \"" + raw + "\" , \"size\": 22}", true},
		{"after nested members", `{"x":{"data":"QUJD","y":[1,"\""]},"size":22,"data":"` + padded + `"}`, true},
		{"escaped letters", `{"data":"` + escaped + `"}`, true},
		{"cut short", `{"data":"` + raw[:10], false},
		{"no data", `{"size":22}`, false},
		{"not a string", `{"data":22}`, false},
		{"standard base64", `{"data":"` + base64.StdEncoding.EncodeToString([]byte("??>>??>>??>>??>>??>>??")) + `"}`, false},
		{"letters after padding", `{"data":"` + padded + `QQ"}`, false},
		{"an escaped quote", `{"data":"QUJD\"RA"}`, false},
		{"not JSON", `data: QUJD`, false},
		// What comes besides the data is a few short fields: a server
		// sending more than the bytes' base64 and 64 KiB is refused.
		{"a long member first", `{"x":"` + strings.Repeat("x", 100<<10) + `","data":"` + padded + `"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, c.answer) }))
			defer srv.Close()
			m := standalone(t, srv.URL)
			var out bytes.Buffer
			err := m.fetchAttachment(context.Background(), mailAttachment{msgID: "m", attID: "a", name: "plan.txt", size: int64(len(want))}, &out, nil)
			if c.ok && (err != nil || !bytes.Equal(out.Bytes(), want)) {
				t.Fatalf("got %q, %v", out.Bytes(), err)
			}
			if !c.ok && err == nil {
				t.Fatalf("accepted, as %q", out.Bytes())
			}
		})
	}
}

// An answer with more or fewer bytes than the message says leaves
// nothing under the file's name, nor the part file beside it.
func TestAttachmentOfWrongSizeLeavesNothing(t *testing.T) {
	srv := attachmentServer(t, 3<<20, 0, nil)
	m := standalone(t, srv.URL)
	for _, size := range []int64{3<<20 - 1, 3<<20 + 1, 4 << 20} {
		dir := t.TempDir()
		err := m.fetchToFile(context.Background(), mailAttachment{msgID: "m", attID: "a", name: "x.bin", size: size}, filepath.Join(dir, "x.bin"), nil)
		if err == nil {
			t.Fatalf("a %d-byte answer accepted as %d bytes", 3<<20, size)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("after %v, the folder holds %v", err, left)
		}
	}
}

// Saving a large attachment shows its progress under its row with
// Cancel; cancelled, it leaves neither the file the save dialog made nor
// a part file, and the row is as before.
func TestSaveLargeAttachmentCancelled(t *testing.T) {
	h := newHarness(t)
	const size = 8 << 20
	reached := make(chan struct{}, 1)
	srv := attachmentServer(t, size, 3<<20, reached)
	h.u.deps.Endpoint = srv.URL
	m := h.u.mailbox
	dir := t.TempDir()
	dest := filepath.Join(dir, "film.mp4")
	m.chooseSave = func(name string, done func(fyne.URIWriteCloser, error)) {
		w, err := storage.Writer(storage.NewFileURI(filepath.Join(dir, name)))
		done(w, err)
	}
	r := m.attachmentRow(mailAttachment{msgID: "m", attID: "a", name: "film.mp4", size: size})
	test.Tap(r.save)
	<-reached
	h.until("progress shown", func() bool { return r.busy.Visible() && r.bar.Value > 0.3 })
	if !r.save.Disabled() || !r.open.Disabled() {
		t.Error("Open and Save… can be pressed while the attachment is being fetched")
	}
	test.Tap(r.stop)
	h.until("stopped", func() bool { return strings.HasPrefix(m.status.Text, "Stopped fetching film.mp4") })
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("cancelled, the folder holds %v", left)
	}
	if r.busy.Visible() || r.save.Disabled() || r.open.Disabled() {
		t.Error("the row still shows a fetch")
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("%s: %v", dest, err)
	}
}

// Opening a large attachment cut short by the server keeps no copy.
func TestOpenAttachmentCutShortKeepsNothing(t *testing.T) {
	h := newHarness(t)
	const size = 2 << 20
	reached := make(chan struct{}, 1)
	srv := attachmentServer(t, size, 1<<20, reached)
	h.u.deps.Endpoint = srv.URL
	m := h.u.mailbox
	opened := 0
	m.openURL = func(*url.URL) error { opened++; return nil }
	r := m.attachmentRow(mailAttachment{msgID: "m", attID: "a", name: "notes.pdf", size: size})
	test.Tap(r.open)
	<-reached
	srv.CloseClientConnections()
	h.until("failed", func() bool { return strings.HasPrefix(m.status.Text, "Could not open notes.pdf") })
	if opened != 0 {
		t.Fatal("a copy cut short was opened")
	}
	dir, err := m.files.folder()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("left behind: %v", files)
	}
}

// An attachment no program opens says where its copy is, not the
// system's words for the missing program.
func TestOpenAttachmentWithNoProgramSaysWhereTheCopyIs(t *testing.T) {
	h := newHarness(t)
	const size = 4 << 10
	srv := attachmentServer(t, size, 0, nil)
	h.u.deps.Endpoint = srv.URL
	m := h.u.mailbox
	m.openURL = func(*url.URL) error { return errors.New(`exec: "xdg-open": executable file not found in $PATH`) }
	r := m.attachmentRow(mailAttachment{msgID: "m", attID: "a", name: "notes.pdf", size: size})
	test.Tap(r.open)
	h.until("told", func() bool { return strings.HasPrefix(m.status.Text, "No program on this computer opened notes.pdf") })
	dir, err := m.files.folder()
	if err != nil {
		t.Fatal(err)
	}
	if text := m.status.Text; strings.Contains(text, "exec:") || !strings.Contains(text, dir) {
		t.Errorf("%q: the system's words, or no place of the copy (%s)", text, dir)
	}
}
