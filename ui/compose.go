package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/compose"
	"carrier/internal/app"
)

// composeScreen is the Compose tab: the form and its attachments here; how
// each file goes and the size meter in composeplan.go, submitting and
// sending in composesend.go, the question asked before Drive in consent.go.
type composeScreen struct {
	u                    *UI
	from                 *fromSelector // the sender (accounts.go)
	to, cc, bcc, subject *namedEntry
	body                 *namedEntry
	form                 *fyne.Container
	attachments          []string
	attFiles             map[string]compose.Attachment // read once when attached (its type off the UI thread), not on every keystroke
	typesReading         int                           // reads of attached files' types not yet back (readTypes)
	choice               map[string]bool               // the person's choice per file: true a Drive link, false attached
	attPaged             *pagedList
	attList              *fyne.Container // the attachment rows (attPaged's Box)
	attRows              map[string]*attachmentRow
	linkOpts             *fyne.Container // who can open the links, and until when: shown while a file goes as a link
	share, expiry        *choices
	meter                *sizeMeter
	meterText            string
	meterNote            *wrapLabel
	sendBtn              *focusButton
	draftBtn, attachBtn  *focusButton
	laterBtn             *focusButton // Send later… (sendlater.go)
	later                *laterAsk    // its dialog, once asked
	discardBtn           *focusButton // empties the form and its copy (keep.go)
	attHeading           *widget.Label
	formProblem          bool // status shows what Check found: it goes once mended
	status               *wrapLabel
	busy                 bool
	consent              *driveConsent // the question about Drive, while it is open
	held                 bool          // the form waits for the browser (hold)
	draft                string        // the draft the form edits (reopen.go): Save updates it, Send sends it
	local                *localCopy    // writes what the form holds to this computer (keep.go); nil: not kept
	reopened             string        // the job the form was reopened from (reopen.go): a message queued from it replaces it
	completers           []*completer  // the address fields' lists of remembered recipients (complete.go)
	content              fyne.CanvasObject
	box                  *fyne.Container // laid out by composeLayout
}

// attachmentRow is one file of the message: how it goes, and the buttons
// that change that or remove it.
type attachmentRow struct {
	how            *widget.Label // "Attached", "Drive link · over 23.8 MiB"
	toggle, remove *iconButton
	object         fyne.CanvasObject
}

// Who can open the linked files, and when recipients' access ends.
var (
	expiryTimes = []time.Duration{0, 7 * 24 * time.Hour, 30 * 24 * time.Hour, app.MaxLinkExpiry}
)

func shareChoices() []string {
	return []string{lang.X("compose.share.recipients", "Recipients"), lang.X("compose.share.anyone", "Anyone with the link")}
}

func expiryChoices() []string {
	return []string{lang.X("compose.expiry.never", "Never"), lang.X("compose.expiry.week", "7 days"), lang.X("compose.expiry.month", "30 days"), lang.X("compose.expiry.year", "1 year")}
}

// addressValidator names the first bad address of a field's list
// (addressProblem).
func addressValidator(string) fyne.StringValidator { return addressProblem }

func newComposeScreen(u *UI) *composeScreen {
	c := &composeScreen{u: u, attFiles: map[string]compose.Attachment{}, choice: map[string]bool{}, attRows: map[string]*attachmentRow{}}
	to, cc, bcc, subject := newNamedEntry(lang.X("compose.to", "To"), false), newNamedEntry(lang.X("compose.cc", "Cc"), false), newNamedEntry(lang.X("compose.bcc", "Bcc"), false), newNamedEntry(lang.X("compose.subject", "Subject"), false)
	body := newNamedEntry(lang.X("compose.body", "Message"), true)
	c.to, c.cc, c.bcc, c.subject, c.body = to, cc, bcc, subject, body
	c.to.SetPlaceHolder("name@example.com, Name <other@example.com>")
	for _, e := range []*namedEntry{to, cc, bcc, subject, body} {
		e.onSubmit = c.sendFromKeyboard
		e.onPaste = func(clip fyne.Clipboard) bool { return u.pasteFiles(clip, true) }
		// The field's state follows every keystroke: Fyne otherwise keeps
		// the last state seen before the field took focus, and showed a
		// tick beside an address list made invalid since.
		e.AlwaysShowValidationError = true
	}
	for _, e := range []struct {
		entry *namedEntry
		field string
	}{{c.to, "To"}, {c.cc, "Cc"}, {c.bcc, "Bcc"}} {
		e.entry.Validator = addressValidator(e.field)
		e.entry.OnChanged = func(string) { c.updateMeter() } // the headers count in the size
	}
	c.subject.Validator = func(s string) error {
		if strings.ContainsAny(s, "\r\n") {
			return errors.New(lang.X("compose.subject.oneline", "the subject must be one line"))
		}
		return nil
	}
	c.subject.OnChanged = func(string) { c.updateMeter() }
	c.body.SetMinRowsVisible(4)
	c.body.OnChanged = func(string) { c.updateMeter() }
	var rows []fyne.CanvasObject
	c.from = newFromSelector(u)
	if u.deps.Accounts != nil {
		rows = append(rows, c.from.label, c.from.Object)
	}
	for _, f := range []struct {
		label string
		entry *namedEntry
		hint  string
	}{{lang.X("compose.to", "To"), to, ""}, {lang.X("compose.cc", "Cc"), cc, ""}, {lang.X("compose.bcc", "Bcc"), bcc, lang.X("compose.bcc.hint", "Hidden from the other recipients")}, {lang.X("compose.subject", "Subject"), subject, ""}} {
		hint := func() string { return f.hint }
		if f.entry == to {
			hint = c.toHint
		}
		if f.entry == subject || u.deps.Addresses == nil {
			rows = append(rows, formRow(f.label, f.entry, hint)...)
			continue
		}
		k := c.newCompleter(f.entry)
		c.completers = append(c.completers, k)
		rows = append(rows, formRow(f.label, f.entry, hint, k.box)...)
	}
	if windowRTL.Load() {
		// Its label hugs its field, on the field's right.
		c.from.label.Alignment = fyne.TextAlignLeading
	}
	// In a right-to-left window Compose is mirrored as the other screens
	// are: the labels on the right of their fields, the attachments'
	// heading on the right and Attach… on the left, each file's buttons
	// on its left, Send and Save as draft at the bottom left. The objects
	// keep their order, and so does Tab: from To on, in reading order.
	c.form = mirrorRTL(container.New(layout.NewFormLayout(), rows...))
	// Three rows show; more turn pages, so the window never grows.
	c.attPaged = newPagedList("attachment")
	c.attPaged.layout.rows = 3
	c.attPaged.compact = true
	c.attPaged.showPlace()
	c.attList = c.attPaged.Box
	c.attachBtn = newFocusButton(lang.X("compose.attach", "Attach…"), theme.ContentAddIcon(), c.pickFile)
	c.attHeading = widget.NewLabelWithStyle(lang.X("compose.attachments", "Attachments"), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.share = newChoices(lang.X("compose.share", "Who can open the links"), shareChoices(), func(int) { c.updateMeter() })
	c.expiry = newChoices(lang.X("compose.expiry", "Access ends"), expiryChoices(), func(int) { c.keepLocal() })
	keepChoice(u.app.Preferences(), prefLinkShare, c.share)
	keepChoice(u.app.Preferences(), prefLinkExpiry, c.expiry)
	c.linkOpts = mirrorRTL(container.NewHBox(c.share.Object, widget.NewSeparator(), c.expiry.Object))
	c.linkOpts.Hide()
	c.meter = newSizeMeter()
	c.meter.TextFormatter = func() string { return display(c.meterText) }
	c.meterNote = newWrapLabel("")
	c.meterNote.Hide()
	c.sendBtn = newFocusButton(lang.X("compose.send", "Send"), directional(theme.MailSendIcon()), func() { c.submit(compose.Send) })
	c.sendBtn.Importance = widget.HighImportance
	c.draftBtn = newFocusButton(lang.X("compose.draft", "Save as draft"), theme.DocumentSaveIcon(), func() { c.submit(compose.Draft) })
	c.discardBtn = newFocusButton(lang.X("compose.discard", "Discard"), theme.DeleteIcon(), c.askDiscard)
	c.laterBtn = newFocusButton(lang.X("compose.later", "Send later…"), theme.HistoryIcon(), c.askLater)
	c.status = newWrapLabel("")
	c.status.Hide()
	hint := newWrapLabel(lang.X("compose.hint", "Drop files anywhere on the window to attach them. Ctrl+Enter sends from any field; Tab moves between them."))
	hint.TextStyle = fyne.TextStyle{Italic: true}
	l := &composeLayout{
		top:  container.NewVBox(c.form),
		body: body,
		head: container.NewVBox(widget.NewSeparator(), mirrorRTL(container.NewBorder(nil, nil, c.attHeading, c.attachBtn))),
		list: c.attPaged.Object,
		rest: container.NewVBox(
			c.linkOpts,
			mirrorRTL(container.NewBorder(nil, nil, newLabel(lang.X("compose.size", "Size")), nil, c.meter)),
			c.meterNote,
			mirrorRTL(container.NewBorder(nil, nil, nil, mirrorRTL(container.NewHBox(c.discardBtn, c.draftBtn, c.laterBtn, c.sendBtn)), hint)),
			c.status,
		),
		listFloor: c.attachmentsFloor,
	}
	// In this order for Tab: the fields, the body, then the attachments'
	// buttons, Discard, Save as draft, Send later and Send.
	c.box = container.New(l, l.top, l.body, l.head, l.list, l.rest)
	c.content = container.NewPadded(c.box)
	c.refreshAttachments()
	return c
}

// toHint is the note under To: what it takes, and, while the messages go
// to the embedded sandbox, that they stay on this computer (issue 32:
// nothing on Compose said so). One line, in the note's place, so the
// form's fields keep where they are.
func (c *composeScreen) toHint() string {
	if c.u.deps.Account == nil || c.u.deps.Account().Sandbox {
		return lang.X("compose.to.hint.sandbox", "Recipients, separated by commas. The sandbox is in use: messages stay on this computer, in its Mailbox")
	}
	return lang.X("compose.to.hint", "Recipients, separated by commas")
}

// accountChanged shows the note under To again, for the account messages
// go as now (the sandbox, or Google).
func (c *composeScreen) accountChanged() {
	if c.to.refreshNote != nil {
		c.to.refreshNote()
	}
}

// formRow lays out a field as widget.Form would (label, entry, the hint
// below, replaced by the entry's problem while it has one), but in plain
// containers, which a screen reader walks.
func formRow(label string, e *namedEntry, hintOf func() string, under ...fyne.CanvasObject) []fyne.CanvasObject {
	note := newWrapLabel(hintOf())
	note.SizeName = theme.SizeNameCaptionText
	if hintOf() == "" {
		note.Hide()
	}
	// A problem shows once the person leaves the field (a half-typed
	// address is no mistake yet), then follows every keystroke, so it goes
	// the moment it is mended.
	showing := false
	show := func(err error) {
		switch {
		case err != nil && e.Text != "" && (showing || !e.focused):
			setLabel(note, err.Error())
			note.Importance = widget.DangerImportance
			note.Show()
			showing = true
		case hintOf() != "":
			setLabel(note, hintOf())
			note.Importance = widget.LowImportance
			note.Show()
			showing = false
		default:
			note.Hide()
			showing = false
		}
		note.Refresh()
	}
	e.SetOnValidationChanged(show)
	e.onFocus = func(bool) {
		if e.Validator != nil {
			show(e.Validator(e.Text))
		}
	}
	e.refreshNote = func() {
		var err error
		if e.Validator != nil {
			err = e.Validator(e.Text)
		}
		show(err)
	}
	// The label ends at its field: on the field's left, or, mirrored, on
	// its right.
	align := fyne.TextAlignTrailing
	if windowRTL.Load() {
		align = fyne.TextAlignLeading
	}
	return []fyne.CanvasObject{widget.NewLabelWithStyle(display(label), align, fyne.TextStyle{Bold: true}), container.NewVBox(append(append([]fyne.CanvasObject{e}, under...), note)...)}
}

// composeLayout places the address fields at the top; the attachments'
// heading, their list and the rest (meter, buttons, what Send said) at the
// bottom edge; and gives the body what is left. Its minimum size is a
// constant, not what the fields hold: a long error or many attachments
// must never grow the window past the screen (and a window grown never
// shrinks back by itself). When room is short, the body gives up its room
// down to a few lines, then the attachment list down to one row and its
// pager, then the body the rest; past that the bottom covers the top, so
// Send stays on screen.
type composeLayout struct {
	top, body, head, list, rest fyne.CanvasObject
	listFloor                   func() float32 // the list's height with one row
}

// composeMin fits the empty form, four lines of body and three
// attachments at the default theme's sizes, well inside 1024x700 with the
// tab bar.
var composeMin = fyne.NewSize(640, 560)

func (l *composeLayout) MinSize([]fyne.CanvasObject) fyne.Size { return composeMin }

func (l *composeLayout) Layout(_ []fyne.CanvasObject, size fyne.Size) {
	pad := theme.Padding()
	// Wrapping labels know their height only at a width: give it first.
	height := func(o fyne.CanvasObject) float32 {
		o.Resize(fyne.NewSize(size.Width, o.Size().Height))
		return o.MinSize().Height
	}
	th, hh, lmin, rh := height(l.top), height(l.head), height(l.list), height(l.rest)
	lfloor := min(l.listFloor(), lmin)
	bfloor := 3 * theme.TextSize() // two lines and the entry's inner padding
	avail := size.Height - th - hh - rh - 4*pad
	lh := max(min(avail-bfloor, lmin), lfloor)
	place := func(o fyne.CanvasObject, y, h float32) {
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, max(h, 0)))
	}
	place(l.top, 0, th)
	restY := size.Height - rh
	listY := restY - pad - lh
	headY := listY - pad - hh
	place(l.rest, restY, rh)
	place(l.list, listY, lh)
	place(l.head, headY, hh)
	place(l.body, th+pad, headY-pad-(th+pad))
}

// attachmentsFloor is the attachment list's height with one row shown:
// the row, the list's padding and, when it shows, the pager.
func (c *composeScreen) attachmentsFloor() float32 {
	h := 3 * theme.Padding() // the list's padding, and the gap above the pager
	if len(c.attList.Objects) > 0 {
		h += c.attList.Objects[0].MinSize().Height
	}
	if c.attPaged.pager.Visible() {
		h += c.attPaged.pager.MinSize().Height
	}
	return h
}

// sendFromKeyboard is Ctrl+Enter, from any field or button of Compose:
// Send, when Send could be pressed.
func (c *composeScreen) sendFromKeyboard() {
	if c.u.tabs.Selected() == c.u.composeTab && !c.sendBtn.Disabled() {
		c.submit(compose.Send)
	}
}

// addShortcuts puts Ctrl+Enter on the window (cv: its canvas) for when
// a button has focus; the entries take it themselves (onSubmit).
func (c *composeScreen) addShortcuts(cv interface {
	AddShortcut(fyne.Shortcut, func(fyne.Shortcut))
}) {
	send := func(fyne.Shortcut) { c.sendFromKeyboard() }
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
	if c.held {
		c.u.showError(lang.X("compose.notattached.title", "Not attached"), lang.X("compose.notattached", "The message is waiting for Google Drive to be allowed in the browser. Attach files once it has gone, or been stopped."))
		return
	}
	var refused, added []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			refused = append(refused, lang.X("compose.refused.unreadable", "{{.Name}}: cannot be read", w{"Name": filepath.Base(p)}))
		case fi.IsDir():
			refused = append(refused, lang.X("compose.refused.folder", "{{.Name}}: is a folder (attach the files in it, or a zip of it)", w{"Name": filepath.Base(p)}))
		case c.has(p):
		default:
			c.attachments = append(c.attachments, p)
			c.attFiles[p] = compose.Attachment{Path: p, Size: fi.Size()}
			added = append(added, p)
		}
	}
	c.refreshAttachments()
	c.readTypes(added)
	if len(refused) > 0 {
		c.say(lang.X("compose.refused", "Not attached: {{.Files}}", w{"Files": strings.Join(refused, "; ")}))
	}
}

// readTypes reads the media type of each file just attached, off the UI
// thread, once: the part's header names it, and the meter counts the
// message to the byte with it. A file that cannot be read keeps its type
// unknown (counted as application/octet-stream); Send names the problem.
func (c *composeScreen) readTypes(paths []string) {
	if len(paths) == 0 {
		return
	}
	c.typesReading++
	c.u.goBackground(func(context.Context) {
		read := map[string]string{}
		for _, p := range paths {
			if a, err := compose.ReadAttachment(p); err == nil {
				read[p] = a.Type
			}
		}
		c.u.do(func() {
			c.typesReading--
			for p, t := range read {
				// Only a file still attached: one removed since is
				// not looked at again.
				if a, ok := c.attFiles[p]; ok && a.Type == "" {
					a.Type = t
					c.attFiles[p] = a
				}
			}
			c.updateMeter()
		})
	})
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
	delete(c.attFiles, p)
	delete(c.choice, p)
	c.refreshAttachments()
}

func (c *composeScreen) refreshAttachments() {
	heading := lang.X("compose.attachments", "Attachments")
	if n := len(c.attachments); n > 0 {
		heading = attachmentCount(n)
	}
	setLabel(c.attHeading, heading)
	c.attList.RemoveAll()
	c.attRows = map[string]*attachmentRow{}
	if len(c.attachments) == 0 {
		c.attList.Add(italic(lang.X("compose.noattachments", "No attachments")))
	}
	for _, p := range c.attachments {
		r := &attachmentRow{how: widget.NewLabel("")}
		name := newLabel(compose.AttachmentName(p))
		name.Truncation = fyne.TextTruncateEllipsis
		r.toggle = newIconButton("", nil, func() { c.flip(p) })
		r.remove = newIconButton(lang.X("compose.remove", "Remove {{.Name}}", w{"Name": filepath.Base(p)}), theme.DeleteIcon(), func() { c.remove(p) })
		r.object = mirrorRTL(container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()), mirrorRTL(container.NewHBox(newLabel(humanSize(c.attFiles[p].Size)), r.how, r.toggle, r.remove)), name))
		c.attRows[p] = r
		c.attList.Add(r.object)
	}
	c.attPaged.ShowFirst()
	c.attPaged.showPlace()
	c.attList.Refresh()
	c.updateMeter()
}

// relayout lays the screen out again after its parts changed height (rows
// added or removed, a note or a line shown or hidden). Fyne's driver lays
// out again only one container whose child changed its minimum size per
// pass, so when two parts change at once (the attachment list and the
// meter), the list kept the room it had for no rows.
func (c *composeScreen) relayout() {
	if c.box == nil || c.box.Size().IsZero() {
		return
	}
	c.box.Layout.Layout(c.box.Objects, c.box.Size())
	if cv := fyne.CurrentApp().Driver().CanvasForObject(c.box); cv != nil {
		cv.Refresh(c.box)
	}
}

func (c *composeScreen) updateButtons() {
	ok := !c.busy && c.estimate() <= compose.LimitSend
	for _, e := range []*namedEntry{c.to, c.cc, c.bcc, c.subject} {
		if e.Validate() != nil {
			ok = false
		}
	}
	for _, b := range []fyne.Disableable{c.sendBtn, c.draftBtn, c.laterBtn} {
		if ok {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	if c.draft != "" {
		c.laterBtn.Disable() // a draft opened to edit goes with drafts.send: now, or saved
	}
	if c.busy || c.held || c.blank() {
		c.discardBtn.Disable()
	} else {
		c.discardBtn.Enable()
	}
	if c.formProblem {
		// What Send found wrong stays only while it is still wrong.
		if err := c.message().Check(); err == nil {
			c.say("")
		} else if text := problemText(err); text != c.status.Text {
			c.say(text)
			c.formProblem = true
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
	c.u.showFileDialog(d)
}

// say shows text under the buttons; the line takes no room while empty.
func (c *composeScreen) say(text string) {
	c.formProblem = false
	setLabel(c.status, text)
	if text == "" {
		c.status.Hide()
	} else {
		c.status.Show()
	}
	c.relayout()
}

func (c *composeScreen) clear() {
	for _, e := range []*namedEntry{c.to, c.cc, c.bcc, c.subject, c.body} {
		e.SetText("")
	}
	c.draft = ""
	c.reopened = ""
	c.attachments = nil
	c.attFiles = map[string]compose.Attachment{}
	c.choice = map[string]bool{}
	c.refreshAttachments()
}

// attachmentCount is "1 attachment", "3 attachments" in the window's
// language.
func attachmentCount(n int) string {
	return lang.XN("count.attachments", "{{.Count}} attachments", n, w{"Count": n})
}
