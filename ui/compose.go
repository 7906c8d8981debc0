package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/compose"
)

type composeScreen struct {
	u                            *UI
	to, cc, bcc, subject         *namedEntry
	body                         *namedEntry
	form                         *fyne.Container
	attachments                  []string
	attSizes                     map[string]int64 // read once when attached, not on every keystroke
	attList                      *fyne.Container
	meter                        *widget.ProgressBar
	meterNote                    *widget.Label
	sendBtn, draftBtn, attachBtn *widget.Button
	status                       *widget.Label
	busy                         bool
	content                      fyne.CanvasObject
}

func addressValidator(field string) fyne.StringValidator {
	return func(s string) error {
		_, problems := compose.ParseAddresses(field, []string{s})
		if len(problems) > 0 {
			return errors.New(problems[0].Message)
		}
		return nil
	}
}

func newComposeScreen(u *UI) *composeScreen {
	c := &composeScreen{u: u, attSizes: map[string]int64{}}
	to, cc, bcc, subject := newNamedEntry("To", false), newNamedEntry("Cc", false), newNamedEntry("Bcc", false), newNamedEntry("Subject", false)
	body := newNamedEntry("Message", true)
	c.to, c.cc, c.bcc, c.subject, c.body = to, cc, bcc, subject, body
	c.to.SetPlaceHolder("name@example.com, Name <other@example.com>")
	for _, e := range []struct {
		entry *namedEntry
		field string
	}{{c.to, "To"}, {c.cc, "Cc"}, {c.bcc, "Bcc"}} {
		e.entry.Validator = addressValidator(e.field)
		e.entry.OnChanged = func(string) { c.updateButtons() }
	}
	c.subject.Validator = func(s string) error {
		if strings.ContainsAny(s, "\r\n") {
			return errors.New("the subject must be one line")
		}
		return nil
	}
	c.subject.OnChanged = func(string) { c.updateButtons() }
	c.body.SetMinRowsVisible(8)
	c.body.OnChanged = func(string) { c.updateMeter() }
	var rows []fyne.CanvasObject
	for _, f := range []struct {
		label string
		entry *namedEntry
		hint  string
	}{{"To", to, "Recipients, separated by commas"}, {"Cc", cc, ""}, {"Bcc", bcc, "Hidden from the other recipients"}, {"Subject", subject, ""}} {
		rows = append(rows, formRow(f.label, f.entry, f.hint)...)
	}
	c.form = container.New(layout.NewFormLayout(), rows...)
	c.attList = container.NewVBox()
	c.attachBtn = widget.NewButtonWithIcon("Attach…", theme.ContentAddIcon(), c.pickFile)
	c.meter = widget.NewProgressBar()
	c.meter.TextFormatter = func() string {
		return humanSize(int64(c.meter.Value*compose.LimitSend)) + " of " + humanSize(compose.LimitSend)
	}
	c.meterNote = widget.NewLabel("")
	c.meterNote.Wrapping = fyne.TextWrapWord
	c.sendBtn = widget.NewButtonWithIcon("Send", theme.MailSendIcon(), func() { c.submit(compose.Send) })
	c.sendBtn.Importance = widget.HighImportance
	c.draftBtn = widget.NewButtonWithIcon("Save as draft", theme.DocumentSaveIcon(), func() { c.submit(compose.Draft) })
	c.status = widget.NewLabel("")
	c.status.Wrapping = fyne.TextWrapWord
	hint := widget.NewLabelWithStyle("Drop files anywhere on the window to attach them. Ctrl+Enter sends.", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	top := container.NewVBox(c.form)
	bottom := container.NewVBox(
		widget.NewSeparator(),
		container.NewBorder(nil, nil, widget.NewLabelWithStyle("Attachments", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), c.attachBtn),
		c.attList,
		container.NewBorder(nil, nil, widget.NewLabel("Size"), nil, c.meter),
		c.meterNote,
		container.NewHBox(hint, layout.NewSpacer(), c.draftBtn, c.sendBtn),
		c.status,
	)
	c.content = container.NewPadded(container.NewBorder(top, bottom, nil, nil, body))
	c.refreshAttachments()
	return c
}

// formRow lays out a field as widget.Form would (label, entry, the hint
// below, replaced by the entry's problem while it has one), but in plain
// containers, which a screen reader walks.
func formRow(label string, e *namedEntry, hint string) []fyne.CanvasObject {
	note := widget.NewLabel(hint)
	note.Wrapping = fyne.TextWrapWord
	note.SizeName = theme.SizeNameCaptionText
	if hint == "" {
		note.Hide()
	}
	e.SetOnValidationChanged(func(err error) {
		switch {
		case err != nil && e.Text != "":
			note.SetText(err.Error())
			note.Importance = widget.DangerImportance
			note.Show()
		case hint != "":
			note.SetText(hint)
			note.Importance = widget.LowImportance
			note.Show()
		default:
			note.Hide()
		}
		note.Refresh()
	})
	return []fyne.CanvasObject{widget.NewLabelWithStyle(label, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}), container.NewVBox(e, note)}
}

func (c *composeScreen) addShortcuts(cv fyne.Canvas) {
	send := func(fyne.Shortcut) {
		if c.u.tabs.Selected() == c.u.composeTab && !c.sendBtn.Disabled() {
			c.submit(compose.Send)
		}
	}
	cv.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierControl}, send)
	cv.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyEnter, Modifier: fyne.KeyModifierControl}, send)
}

func (c *composeScreen) message() *compose.Message {
	return &compose.Message{
		To: []string{c.to.Text}, Cc: []string{c.cc.Text}, Bcc: []string{c.bcc.Text},
		Subject: c.subject.Text, Text: c.body.Text, Attachments: append([]string(nil), c.attachments...),
	}
}

// attach adds files, refusing folders and unreadable files with a message.
func (c *composeScreen) attach(paths ...string) {
	var refused []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			refused = append(refused, filepath.Base(p)+": cannot be read")
		case fi.IsDir():
			refused = append(refused, filepath.Base(p)+": is a folder (attach the files in it, or a zip of it)")
		case c.has(p):
		default:
			c.attachments = append(c.attachments, p)
			c.attSizes[p] = fi.Size()
		}
	}
	c.refreshAttachments()
	if len(refused) > 0 {
		c.status.SetText("Not attached: " + strings.Join(refused, "; "))
	}
}

func (c *composeScreen) has(p string) bool {
	for _, a := range c.attachments {
		if a == p {
			return true
		}
	}
	return false
}

func (c *composeScreen) remove(p string) {
	for i, a := range c.attachments {
		if a == p {
			c.attachments = append(c.attachments[:i], c.attachments[i+1:]...)
			break
		}
	}
	delete(c.attSizes, p)
	c.refreshAttachments()
}

func (c *composeScreen) refreshAttachments() {
	c.attList.RemoveAll()
	if len(c.attachments) == 0 {
		c.attList.Add(widget.NewLabelWithStyle("No attachments", fyne.TextAlignLeading, fyne.TextStyle{Italic: true}))
	}
	for _, p := range c.attachments {
		size := humanSize(c.attSizes[p])
		name := widget.NewLabel(compose.AttachmentName(p))
		name.Truncation = fyne.TextTruncateEllipsis
		remove := newIconButton("Remove "+filepath.Base(p), theme.DeleteIcon(), func() { c.remove(p) })
		c.attList.Add(container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()), container.NewHBox(widget.NewLabel(size), remove), name))
	}
	c.attList.Refresh()
	c.updateMeter()
}

// estimate is the encoded size, from sizes read when the files were
// attached: typing must not touch the disk.
func (c *composeScreen) estimate() int64 {
	n := c.message().EstimateText()
	for _, p := range c.attachments {
		n += compose.EstimateAttachment(p, c.attSizes[p])
	}
	return n
}

// updateMeter shows the encoded size against the send limit.
func (c *composeScreen) updateMeter() {
	est := c.estimate()
	c.meter.SetValue(min(float64(est)/compose.LimitSend, 1))
	if est > compose.LimitSend {
		over := est - compose.LimitSend
		c.meterNote.SetText("Too large to send: " + humanSize(over) + " over the 35 MiB limit once encoded. Remove about " + humanSize(over*3/4) + " of attachments.")
		c.meterNote.Importance = widget.DangerImportance
	} else {
		c.meterNote.SetText("")
		c.meterNote.Importance = widget.MediumImportance
	}
	c.meterNote.Refresh()
	c.updateButtons()
}

func (c *composeScreen) updateButtons() {
	ok := !c.busy && c.estimate() <= compose.LimitSend
	for _, e := range []*namedEntry{c.to, c.cc, c.bcc, c.subject} {
		if e.Validate() != nil {
			ok = false
		}
	}
	for _, b := range []*widget.Button{c.sendBtn, c.draftBtn} {
		if ok {
			b.Enable()
		} else {
			b.Disable()
		}
	}
}

func (c *composeScreen) pickFile() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		r.Close()
		c.attach(localPath(r.URI()))
	}, c.u.win)
	d.Show()
}

// submit builds the message off the UI thread, then queues its upload.
func (c *composeScreen) submit(method compose.Method) {
	msg := c.message()
	if err := msg.Check(); err != nil {
		c.status.SetText(problemText(err))
		return
	}
	c.busy = true
	c.updateButtons()
	c.status.SetText("Preparing the message…")
	target := c.u.deps.Target()
	c.u.goBackground(func(ctx context.Context) {
		id, err := c.u.deps.Outbox.SendMessage(ctx, target, msg, method)
		c.u.do(func() {
			c.busy = false
			if err != nil {
				c.status.SetText(problemText(err))
				c.updateButtons()
				return
			}
			c.status.SetText("")
			c.clear()
			c.u.queued(id)
		})
	})
}

func (c *composeScreen) clear() {
	for _, e := range []*namedEntry{c.to, c.cc, c.bcc, c.subject, c.body} {
		e.SetText("")
	}
	c.attachments = nil
	c.attSizes = map[string]int64{}
	c.refreshAttachments()
}

func problemText(err error) string {
	var ie *compose.InputError
	if errors.As(err, &ie) {
		var lines []string
		for _, p := range ie.Problems {
			lines = append(lines, p.Field+": "+p.Message)
		}
		return strings.Join(lines, "\n")
	}
	return err.Error()
}
