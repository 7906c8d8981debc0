package ui

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"fyne.io/fyne/v2/lang"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/internal/platform"
)

// mailAttachment is a file a message carries, as the reading pane lists it.
type mailAttachment struct {
	msgID string // the message's id (a draft's message, not the draft)
	attID string // Gmail's attachmentId; empty when the body came inline
	data  string // the body as base64url, when the server sent it inline
	name  string // as the message names it (shown through app.Printable)
	size  int64  // decoded bytes, as the server counts them
}

// maxAttachment bounds what one attachment's answer may cost to read: a
// message is at most 35 MiB, and base64 makes it a third larger.
const maxAttachment = 64 << 20

// attachmentFiles are the private copies of attachments opened or saved
// from the Mailbox: one folder per run, readable by this person alone,
// removed when the window closes.
type attachmentFiles struct {
	mu     sync.Mutex
	dir    string
	copies map[string]string // msgID/attID/name → the copy's path
}

func (f *attachmentFiles) folder() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dir != "" {
		return f.dir, nil
	}
	dir, err := os.MkdirTemp("", "carrier-attachments-")
	if err != nil {
		return "", fmt.Errorf("cannot make a folder for attachments: %w", err)
	}
	if err := platform.Private(dir); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("cannot make the attachments' folder private: %w", err)
	}
	f.dir = dir
	return dir, nil
}

// remove deletes every copy (the window is closing).
func (f *attachmentFiles) remove() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dir != "" {
		os.RemoveAll(f.dir)
		f.dir, f.copies = "", nil
	}
}

// safeFileName is a name from a message made safe to create: no folders,
// no control characters, never empty, "." or "..".
func safeFileName(name string) string {
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == ':' || unicode.IsControl(r):
			return '_'
		case strings.ContainsRune(`<>"|?*`, r): // not allowed on Windows
			return '_'
		}
		return r
	}, name)
	name = strings.TrimRight(strings.TrimSpace(name), ". ") // Windows drops them
	if name == "" || strings.Trim(name, ".") == "" {
		return "attachment"
	}
	return name
}

// runsCode says whether a file's name asks the system to run it rather
// than show it: such a file from a message is saved, never opened with a
// click.
func runsCode(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".exe", ".com", ".bat", ".cmd", ".scr", ".pif", ".msi", ".msp", ".ps1", ".psm1", ".vbs", ".vbe",
		".js", ".jse", ".wsf", ".wsh", ".hta", ".cpl", ".lnk", ".url", ".jar", ".reg", ".inf",
		".desktop", ".sh", ".bash", ".run", ".appimage", ".app", ".command", ".pkg", ".dmg", ".deb", ".rpm":
		return true
	}
	return false
}

// copyOf fetches an attachment into the private folder (once: the same
// attachment opened twice is one copy) and returns the copy's path.
func (m *mailboxScreen) copyOf(ctx context.Context, a mailAttachment) (string, error) {
	key := a.msgID + "\x00" + a.attID + "\x00" + a.name
	m.files.mu.Lock()
	if p, ok := m.files.copies[key]; ok {
		m.files.mu.Unlock()
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	} else {
		m.files.mu.Unlock()
	}
	data, err := m.attachmentData(ctx, a)
	if err != nil {
		return "", err
	}
	dir, err := m.files.folder()
	if err != nil {
		return "", err
	}
	// A folder per copy keeps the file's own name (which the program
	// that opens it shows) while two attachments may share one.
	sub, err := os.MkdirTemp(dir, "a")
	if err != nil {
		return "", err
	}
	p := filepath.Join(sub, safeFileName(a.name))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("cannot keep a copy of %s: %w", a.name, err)
	}
	m.files.mu.Lock()
	if m.files.copies == nil {
		m.files.copies = map[string]string{}
	}
	m.files.copies[key] = p
	m.files.mu.Unlock()
	return p, nil
}

// attachmentData is an attachment's bytes: inline, or asked of the
// server by its attachmentId; a body whose size differs from what the
// message said is refused rather than passed on cut short.
func (m *mailboxScreen) attachmentData(ctx context.Context, a mailAttachment) ([]byte, error) {
	encoded := a.data
	if a.attID != "" {
		body, err := m.fetchLimited(ctx, "/gmail/v1/users/me/messages/"+url.PathEscape(a.msgID)+"/attachments/"+url.PathEscape(a.attID), maxAttachment)
		if err != nil {
			return nil, err
		}
		var res struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			return nil, fmt.Errorf("the server's answer for %s is not JSON: %w", a.name, err)
		}
		encoded = res.Data
	}
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(encoded, "="))
	if err != nil {
		return nil, fmt.Errorf("the server sent %s in a form Carrier cannot read: %w", a.name, err)
	}
	if int64(len(data)) != a.size {
		return nil, fmt.Errorf("%s arrived with %s, not the %s the message says", a.name, humanSize(int64(len(data))), humanSize(a.size))
	}
	return data, nil
}

// attachmentRows lists a message's attachments under a count, each with
// its name, its size, Open and Save….
func (m *mailboxScreen) attachmentRows(atts []mailAttachment) []fyne.CanvasObject {
	if len(atts) == 0 {
		return nil
	}
	rows := []fyne.CanvasObject{widget.NewSeparator(), widget.NewLabelWithStyle(display(attachmentCount(len(atts))), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})}
	for _, a := range atts {
		name := app.Printable(a.name)
		label := widget.NewLabel(name)
		label.Truncation = fyne.TextTruncateEllipsis
		open := newIconButton(lang.X("attach.open.name", "Open {{.Name}}", w{"Name": name}), theme.FileIcon(), func() { m.openAttachment(a) })
		open.Text = display(lang.X("attach.open", "Open"))
		if runsCode(a.name) {
			open.name = lang.X("attach.open.program", "Open {{.Name}} (a program: save it instead)", w{"Name": name})
			open.Disable()
		}
		save := newIconButton(lang.X("attach.save.name", "Save {{.Name}}…", w{"Name": name}), theme.DocumentSaveIcon(), func() { m.saveAttachment(a) })
		save.Text = display(lang.X("attach.save", "Save…"))
		rows = append(rows, container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()),
			container.NewHBox(widget.NewLabel(humanSize(a.size)), open, save), label))
	}
	return rows
}

// openAttachment opens a private copy of the attachment with the program
// the system chooses for its kind.
func (m *mailboxScreen) openAttachment(a mailAttachment) {
	if runsCode(a.name) {
		m.u.showError(lang.X("attach.notopened.title", "Not opened"), lang.X("attach.notopened", "{{.Name}} is a program or a script; Carrier does not run files from messages. Save it, and open it yourself if you trust it.", w{"Name": app.Printable(a.name)}))
		return
	}
	setLabel(m.status, lang.X("attach.opening", "Opening {{.Name}}…", w{"Name": app.Printable(a.name)}))
	m.u.goBackground(func(ctx context.Context) {
		p, err := m.copyOf(ctx, a)
		m.u.do(func() {
			if err != nil {
				setLabel(m.status, lang.X("attach.open.failed", "Could not open {{.Name}}: {{.Error}}", w{"Name": app.Printable(a.name), "Error": app.Printable(err.Error())}))
				return
			}
			if err := m.openURL(storageURL(p)); err != nil {
				setLabel(m.status, lang.X("attach.noprogram", "No program opened {{.Name}}: {{.Error}}", w{"Name": app.Printable(a.name), "Error": app.Printable(err.Error())}))
				return
			}
			setLabel(m.status, lang.X("attach.opened", "Opened {{.Name}}.", w{"Name": app.Printable(a.name)}))
		})
	})
}

// storageURL is the file:// URL of path p: file:///C:/... on Windows, where
// Fyne's file URI reads back with the drive as the URL's host.
func storageURL(p string) *url.URL {
	s := filepath.ToSlash(p)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return &url.URL{Scheme: "file", Path: s}
}

// saveAttachment fetches the attachment, then asks where to save it
// (the dialog asks before it replaces a file), and writes its bytes there.
func (m *mailboxScreen) saveAttachment(a mailAttachment) {
	setLabel(m.status, lang.X("attach.fetching", "Fetching {{.Name}}…", w{"Name": app.Printable(a.name)}))
	m.u.goBackground(func(ctx context.Context) {
		p, err := m.copyOf(ctx, a)
		m.u.do(func() {
			if err != nil {
				setLabel(m.status, lang.X("attach.save.failed", "Could not save {{.Name}}: {{.Error}}", w{"Name": app.Printable(a.name), "Error": app.Printable(err.Error())}))
				return
			}
			m.status.SetText("")
			m.chooseSave(safeFileName(a.name), func(dst fyne.URIWriteCloser, err error) {
				switch {
				case err != nil:
					setLabel(m.status, lang.X("attach.save.failed", "Could not save {{.Name}}: {{.Error}}", w{"Name": app.Printable(a.name), "Error": app.Printable(err.Error())}))
				case dst == nil: // the person cancelled
				default:
					where := dst.URI()
					if err := copyInto(dst, p); err != nil {
						setLabel(m.status, lang.X("attach.save.failed", "Could not save {{.Name}}: {{.Error}}", w{"Name": app.Printable(a.name), "Error": app.Printable(err.Error())}))
						return
					}
					setLabel(m.status, lang.X("attach.saved", "Saved {{.Name}} to {{.Where}}.", w{"Name": app.Printable(a.name), "Where": app.Printable(localPath(where))}))
				}
			})
		})
	})
}

// copyInto writes the file at p to w and closes w, reporting a failed
// close: that is where a full disk shows.
func copyInto(w io.WriteCloser, p string) error {
	f, err := os.Open(p)
	if err != nil {
		w.Close()
		return err
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// fileSaveDialog asks where to save, with Fyne's dialog, which asks
// again before it replaces a file.
func fileSaveDialog(win fyne.Window) func(name string, done func(fyne.URIWriteCloser, error)) {
	return func(name string, done func(fyne.URIWriteCloser, error)) {
		d := dialog.NewFileSave(done, win)
		d.SetFileName(name)
		if home, err := os.UserHomeDir(); err == nil {
			for _, dir := range []string{filepath.Join(home, "Downloads"), home} {
				if l, err := storage.ListerForURI(storage.NewFileURI(dir)); err == nil {
					d.SetLocation(l)
					break
				}
			}
		}
		d.Show()
	}
}
