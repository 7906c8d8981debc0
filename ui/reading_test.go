package ui

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"carrier/sandbox"
)

// putMail files a raw message in the harness's sandbox as sent.
func (h *harness) putMail(raw string) {
	h.t.Helper()
	req, _ := http.NewRequest("POST", h.url+"/upload/gmail/v1/users/me/messages/send?uploadType=media", strings.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "message/rfc822")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		h.t.Fatalf("filing a message: %v %v", resp, err)
	}
	resp.Body.Close()
}

// openMail opens the Mailbox's item whose title is subject.
func (h *harness) openMail(subject string) *mailboxScreen {
	h.t.Helper()
	h.u.Select("Mailbox")
	m := h.u.mailbox
	h.until("the mailbox loaded", func() bool { return len(m.items) > 0 && !m.loading })
	for i, it := range m.items {
		if it.Title == subject {
			m.choose(i)
			h.until("the message opened", func() bool { return strings.Contains(labelsIn(m.detail.Box), "Subject: ") })
			return m
		}
	}
	h.t.Fatalf("no item %q", subject)
	return nil
}

func binary(n int) []byte {
	r := rand.New(rand.NewPCG(14, 14))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

// withAttachments is a message from and to named people, with a binary
// attachment and a program.
func withAttachments(plan []byte) string {
	enc := base64.StdEncoding.EncodeToString(plan)
	var lines []string
	for len(enc) > 76 {
		lines, enc = append(lines, enc[:76]), enc[76:]
	}
	lines = append(lines, enc)
	return "From: =?utf-8?q?Zo=C3=AB_Adams?= <zoe@example.com>\r\n" +
		"Subject: Plans\r\n" +
		"Date: Tue, 24 Nov 2026 23:30:00 +0000\r\n" +
		"Cc: Dan Brown <dan@example.com>\r\n" +
		"To: Bob Stone <bob@example.com>, carol@example.com\r\n" +
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nThe plans.\r\n" +
		"--b\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"plan.pdf\"\r\n\r\n" +
		strings.Join(lines, "\r\n") + "\r\n" +
		"--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"setup.exe\"\r\n\r\nMZ\r\n" +
		"--b--\r\n"
}

// The reading pane: From, To, Cc, Date, Subject in that order; names
// with their addresses in a line beneath; the date in the local zone.
func TestReadingPaneHeaders(t *testing.T) {
	h := newHarness(t)
	h.putMail(withAttachments([]byte("%PDF")))
	h.u.mailbox.zone = time.FixedZone("UTC+2", 2*3600)
	m := h.openMail("Plans")
	text := labelsIn(m.detail.Box)
	var at []int
	for _, want := range []string{
		"From: Zoë Adams\nzoe@example.com\n",
		"To: Bob Stone, carol@example.com\nbob@example.com, carol@example.com\n",
		"Cc: Dan Brown\ndan@example.com\n",
		"Date: Wednesday 25 November 2026, 01:30\n",
		"Subject: Plans\n",
	} {
		i := strings.Index(text, want)
		if i < 0 {
			t.Fatalf("no %q in the reading pane:\n%s", want, text)
		}
		at = append(at, i)
	}
	for i := 1; i < len(at); i++ {
		if at[i] < at[i-1] {
			t.Fatalf("headers out of order (From, To, Cc, Date, Subject):\n%s", text)
		}
	}
	if strings.Contains(text, "<zoe@example.com>") {
		t.Errorf("a raw address is shown:\n%s", text)
	}
	if !strings.Contains(text, "\n2 attachments\nplan.pdf\n4 bytes\nOpen\nSave…\n") {
		t.Errorf("attachments not listed by count, name and size:\n%s", text)
	}
}

// A message that names no sender (the window's own) is shown from the
// account, as Gmail sends it; a missing Date gives way to when it arrived.
func TestReadingPaneSenderOfOwnMessage(t *testing.T) {
	h := newHarness(t)
	h.putMail("To: zoe@example.com\r\nSubject: Mine\r\n\r\nHello\r\n")
	m := h.openMail("Mine")
	text := labelsIn(m.detail.Box)
	if !strings.HasPrefix(text, "Sent\nFrom: "+sandbox.DefaultAccount+"\nTo: zoe@example.com\nDate: ") || strings.Contains(text, "Date: (none)") {
		t.Fatalf("reading pane:\n%s", text)
	}
}

func buttonNamed(o fyne.CanvasObject, name string) *iconButton {
	var found *iconButton
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *iconButton:
			if w.name == name {
				found = w
			}
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return found
}

// Saving an attachment writes its exact bytes where the person chose.
func TestSaveAttachmentWritesItsBytes(t *testing.T) {
	h := newHarness(t)
	plan := binary(300 << 10)
	h.putMail(withAttachments(plan))
	m := h.openMail("Plans")
	dest := filepath.Join(t.TempDir(), "saved.pdf")
	var offered string
	m.chooseSave = func(name string, done func(fyne.URIWriteCloser, error)) {
		offered = name
		w, err := storage.Writer(storage.NewFileURI(dest))
		done(w, err)
	}
	save := buttonNamed(m.detail.Box, "Save plan.pdf…")
	if save == nil {
		t.Fatalf("no Save button for plan.pdf:\n%s", labelsIn(m.detail.Box))
	}
	test.Tap(save)
	h.until("saved", func() bool {
		return strings.HasPrefix(m.status.Text, "Saved ") || strings.HasPrefix(m.status.Text, "Could not")
	})
	if m.status.Text != "Saved plan.pdf to "+dest+"." {
		t.Fatalf("status %q", m.status.Text)
	}
	if offered != "plan.pdf" {
		t.Errorf("the dialog offered the name %q", offered)
	}
	got, err := os.ReadFile(dest)
	if err != nil || !bytes.Equal(got, plan) {
		t.Fatalf("saved %d bytes (%v), want the attachment's %d exactly", len(got), err, len(plan))
	}
}

// Open hands the system a private copy holding the attachment's bytes;
// a program is never opened with a click.
func TestOpenAttachmentHandsOverAPrivateCopy(t *testing.T) {
	h := newHarness(t)
	plan := binary(5000)
	h.putMail(withAttachments(plan))
	m := h.openMail("Plans")
	var opened []*url.URL
	m.openURL = func(u *url.URL) error { opened = append(opened, u); return nil }
	test.Tap(buttonNamed(m.detail.Box, "Open plan.pdf"))
	h.until("opened", func() bool { return len(opened) == 1 && strings.HasPrefix(m.status.Text, "Opened") })
	if opened[0].Scheme != "file" {
		t.Fatalf("opened %s", opened[0])
	}
	p := nativePath(opened[0].Path)
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, plan) || filepath.Base(p) != "plan.pdf" {
		t.Fatalf("the copy opened, %s, holds %d bytes (%v)", p, len(got), err)
	}
	if runtime.GOOS != "windows" {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("the copy's mode: %v %v", st.Mode(), err)
		}
		if st, err := os.Stat(filepath.Dir(filepath.Dir(p))); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("the copies' folder's mode: %v %v", st.Mode(), err)
		}
	}
	exe := buttonNamed(m.detail.Box, "Open setup.exe (a program: save it instead)")
	if exe == nil || !exe.Disabled() {
		t.Fatal("a program from a message can be opened with a click")
	}
	h.u.Close()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the copy outlived the window: %v", err)
	}
}

func TestSafeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"../../.bashrc": ".._.._.bashrc",
		`C:\x\y.txt`:    "C__x_y.txt",
		"..":            "attachment",
		"  ":            "attachment",
		"a\x00b\nc":     "a_b_c",
		"report.pdf.":   "report.pdf",
		"plan.pdf":      "plan.pdf",
	} {
		if got := safeFileName(in); got != want {
			t.Errorf("safeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}
