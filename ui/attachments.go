package ui

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"fyne.io/fyne/v2/lang"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/internal/app/mailbox"
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

// progressFrom is the size from which fetching an attachment shows a
// progress bar and Cancel under its row: smaller ones arrive before a bar
// would mean anything.
const progressFrom = 1 << 20

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
func (m *mailboxScreen) copyOf(ctx context.Context, a mailAttachment, progress func(int64)) (string, error) {
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
	if err := m.fetchToFile(ctx, a, p, progress); err != nil {
		os.Remove(sub)
		return "", err
	}
	m.files.mu.Lock()
	if m.files.copies == nil {
		m.files.copies = map[string]string{}
	}
	m.files.copies[key] = p
	m.files.mu.Unlock()
	return p, nil
}

// fetchToFile writes the attachment into a new private file beside final
// and renames it to final once every byte is there and on disk
// (platform.WriteStream): a fetch cut short, cancelled or refused leaves
// nothing under final's name.
func (m *mailboxScreen) fetchToFile(ctx context.Context, a mailAttachment, final string, progress func(int64)) error {
	return platform.WriteStream(final, func(w io.Writer) error { return m.fetchAttachment(ctx, a, w, progress) })
}

// fetchAttachment writes an attachment's bytes to out as they arrive
// (mailbox.Mailbox.Attachment: inline, or asked of the server and decoded as
// it is read), telling progress the count written now and then. A body
// whose size differs from what the message said is refused rather than
// passed on cut short.
func (m *mailboxScreen) fetchAttachment(ctx context.Context, a mailAttachment, out io.Writer, progress func(int64)) error {
	dec, err := m.mailbox().Attachment(ctx, mailbox.MailAttachment{MsgID: a.msgID, AttID: a.attID, Data: a.data, Name: a.name, Size: a.size})
	if err != nil {
		return err
	}
	defer dec.Close()
	w := &progressWriter{w: out, report: progress, every: max(a.size/200, 64<<10)}
	n, err := io.Copy(w, io.LimitReader(dec, a.size+1))
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, mailbox.ErrNotBase64) || errors.As(err, new(base64.CorruptInputError)):
		return fmt.Errorf("the server sent %s in a form Carrier cannot read: %w", a.name, err)
	case err != nil:
		return err
	case n != a.size:
		if n > a.size {
			return fmt.Errorf("%s arrived with more than the %s the message says", a.name, humanSize(a.size))
		}
		return fmt.Errorf("%s arrived with %s, not the %s the message says", a.name, humanSize(n), humanSize(a.size))
	}
	if progress != nil {
		progress(n)
	}
	return nil
}

// progressWriter counts what passes and tells report each time another
// every bytes have.
type progressWriter struct {
	w       io.Writer
	report  func(int64)
	n, last int64
	every   int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if p.report != nil && p.n-p.last >= p.every {
		p.last = p.n
		p.report(p.n)
	}
	return n, err
}

// mailAttachmentRow is one attachment in the reading pane: Open and Save…,
// and while it is being fetched a progress bar and Cancel under them.
type mailAttachmentRow struct {
	open, save *iconButton
	bar        *widget.ProgressBar
	stop       *iconButton
	busy       *fyne.Container // bar and stop, shown only while a large one is fetched
	cancel     context.CancelFunc
	Object     fyne.CanvasObject
}

// attachmentRows lists a message's attachments under a count, each with
// its name, its size, Open and Save….
func (m *mailboxScreen) attachmentRows(atts []mailAttachment) []fyne.CanvasObject {
	if len(atts) == 0 {
		return nil
	}
	rows := []fyne.CanvasObject{widget.NewSeparator(), boldLabel(attachmentCount(len(atts)))}
	for _, a := range atts {
		rows = append(rows, m.attachmentRow(a).Object)
	}
	return rows
}

func (m *mailboxScreen) attachmentRow(a mailAttachment) *mailAttachmentRow {
	r := &mailAttachmentRow{}
	name := app.Printable(a.name)
	label := newLabel(name)
	label.Truncation = fyne.TextTruncateEllipsis
	r.open = newIconButton(lang.X("attach.open.name", "Open {{.Name}}", w{"Name": name}), theme.FileIcon(), func() { m.openAttachment(a, r) })
	r.open.Text = display(lang.X("attach.open", "Open"))
	if runsCode(a.name) {
		r.open.name = lang.X("attach.open.program", "Open {{.Name}} (a program: save it instead)", w{"Name": name})
		r.open.Disable()
	}
	r.save = newIconButton(lang.X("attach.save.name", "Save {{.Name}}…", w{"Name": name}), theme.DocumentSaveIcon(), func() { m.saveAttachment(a, r) })
	r.save.Text = display(lang.X("attach.save", "Save…"))
	r.bar = widget.NewProgressBar()
	r.stop = newIconButton(lang.X("attach.stop.name", "Stop fetching {{.Name}}", w{"Name": name}), theme.CancelIcon(), func() {
		if r.cancel != nil {
			r.cancel()
		}
	})
	r.stop.Text = display(lang.X("row.cancel", "Cancel"))
	r.busy = mirrorRTL(container.NewBorder(nil, nil, nil, r.stop, r.bar))
	r.busy.Hide()
	r.Object = container.NewVBox(mirrorRTL(container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()),
		mirrorRTL(container.NewHBox(widget.NewLabel(humanSize(a.size)), r.open, r.save)), label)), r.busy)
	return r
}

// begin starts fetching the row's attachment: Open and Save… wait, and a
// large one shows its progress and Cancel. progress may be called from
// any goroutine; end (on the UI thread) puts the row back.
func (m *mailboxScreen) begin(r *mailAttachmentRow, a mailAttachment) (ctx context.Context, progress func(int64), end func()) {
	ctx, cancel := context.WithCancel(m.u.ctx)
	r.cancel = cancel
	r.open.Disable()
	r.save.Disable()
	if a.size >= progressFrom {
		r.bar.SetValue(0)
		r.stop.Enable()
		r.busy.Show()
		progress = func(n int64) {
			m.u.do(func() { r.bar.SetValue(float64(n) / float64(a.size)) })
		}
	}
	return ctx, progress, func() {
		cancel()
		r.cancel = nil
		r.busy.Hide()
		if !runsCode(a.name) {
			r.open.Enable()
		}
		r.save.Enable()
	}
}

// openAttachment opens a private copy of the attachment with the program
// the system chooses for its kind.
func (m *mailboxScreen) openAttachment(a mailAttachment, r *mailAttachmentRow) {
	if runsCode(a.name) {
		m.u.showError(lang.X("attach.notopened.title", "Not opened"), lang.X("attach.notopened", "{{.Name}} is a program or a script; Carrier does not run files from messages. Save it, and open it yourself if you trust it.", w{"Name": app.Printable(a.name)}))
		return
	}
	setLabel(m.status, lang.X("attach.opening", "Opening {{.Name}}…", w{"Name": app.Printable(a.name)}))
	ctx, progress, end := m.begin(r, a)
	m.u.goBackground(func(context.Context) {
		p, err := m.copyOf(ctx, a, progress)
		m.u.do(func() {
			end()
			switch {
			case errors.Is(err, context.Canceled):
				setLabel(m.status, lang.X("attach.stopped", "Stopped fetching {{.Name}}; nothing was kept.", w{"Name": app.Printable(a.name)}))
			case err != nil:
				setLabel(m.status, lang.X("attach.open.failed", "Could not open {{.Name}}: {{.Error}}", w{"Name": app.Printable(a.name), "Error": app.Printable(err.Error())}))
			default:
				if err := m.openURL(storageURL(p)); err != nil {
					// The system's words ("exec: xdg-open: executable file
					// not found") tell a person nothing: say where the copy
					// is, so it can be opened from there.
					setLabel(m.status, lang.X("attach.noprogram", "No program on this computer opened {{.Name}}. Its copy is at {{.Path}}: open it from there, or Save it where you want it.", w{"Name": app.Printable(a.name), "Path": app.Printable(p)}))
					return
				}
				setLabel(m.status, lang.X("attach.opened", "Opened {{.Name}}.", w{"Name": app.Printable(a.name)}))
			}
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

// saveAttachment asks where to save the attachment (the dialog asks
// before it replaces a file), then streams its bytes there.
func (m *mailboxScreen) saveAttachment(a mailAttachment, r *mailAttachmentRow) {
	failed := func(err error) {
		setLabel(m.status, lang.X("attach.save.failed", "Could not save {{.Name}}: {{.Error}}", w{"Name": app.Printable(a.name), "Error": app.Printable(err.Error())}))
	}
	m.chooseSave(safeFileName(a.name), func(dst fyne.URIWriteCloser, err error) {
		switch {
		case err != nil:
			failed(err)
			return
		case dst == nil: // the person cancelled
			return
		}
		where := dst.URI()
		setLabel(m.status, lang.X("attach.fetching", "Fetching {{.Name}}…", w{"Name": app.Printable(a.name)}))
		ctx, progress, end := m.begin(r, a)
		m.u.goBackground(func(context.Context) {
			err := m.saveTo(ctx, a, dst, progress)
			m.u.do(func() {
				end()
				switch {
				case errors.Is(err, context.Canceled):
					setLabel(m.status, lang.X("attach.stopped", "Stopped fetching {{.Name}}; nothing was kept.", w{"Name": app.Printable(a.name)}))
				case err != nil:
					failed(err)
				default:
					setLabel(m.status, lang.X("attach.saved", "Saved {{.Name}} to {{.Where}}.", w{"Name": app.Printable(a.name), "Where": app.Printable(localPath(where))}))
				}
			})
		})
	})
}

// saveTo streams the attachment to where the person chose. The save
// dialog has already made the file (empty) by opening it; a local file is
// filled under another name and renamed over it at the end, so a fetch
// that fails or is cancelled leaves neither a partial file nor that empty
// one behind.
func (m *mailboxScreen) saveTo(ctx context.Context, a mailAttachment, dst fyne.URIWriteCloser, progress func(int64)) error {
	uri := dst.URI()
	if uri.Scheme() != "file" {
		err := m.fetchAttachment(ctx, a, dst, progress)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			storage.Delete(uri)
		}
		return err
	}
	dst.Close()
	p := localPath(uri)
	err := m.fetchToFile(ctx, a, p, progress)
	if err != nil {
		if st, serr := os.Stat(p); serr == nil && st.Mode().IsRegular() && st.Size() == 0 {
			os.Remove(p)
		}
	}
	return err
}

// fileSaveDialog asks where to save, with Fyne's dialog, which asks
// again before it replaces a file.
func fileSaveDialog(u *UI) func(name string, done func(fyne.URIWriteCloser, error)) {
	return func(name string, done func(fyne.URIWriteCloser, error)) {
		d := dialog.NewFileSave(done, u.win)
		d.SetFileName(name)
		if home, err := os.UserHomeDir(); err == nil {
			for _, dir := range []string{filepath.Join(home, "Downloads"), home} {
				if l, err := storage.ListerForURI(storage.NewFileURI(dir)); err == nil {
					d.SetLocation(l)
					break
				}
			}
		}
		u.showFileDialog(d)
	}
}
