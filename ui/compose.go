package ui

import (
	"context"
	"errors"
	"fyne.io/fyne/v2/lang"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
)

type composeScreen struct {
	u                    *UI
	from                 *fromSelector // the sender (accounts.go)
	to, cc, bcc, subject *namedEntry
	body                 *namedEntry
	form                 *fyne.Container
	attachments          []string
	attSizes             map[string]int64 // read once when attached, not on every keystroke
	choice               map[string]bool  // the person's choice per file: true a Drive link, false attached
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
	content              fyne.CanvasObject
	box                  *fyne.Container // laid out by composeLayout
}

// attachmentRow is one file of the message: how it goes, and the buttons
// that change that or remove it.
type attachmentRow struct {
	how            *widget.Label // "Attached", "Drive link · over 25 MB"
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
	c := &composeScreen{u: u, attSizes: map[string]int64{}, choice: map[string]bool{}, attRows: map[string]*attachmentRow{}}
	to, cc, bcc, subject := newNamedEntry(lang.X("compose.to", "To"), false), newNamedEntry(lang.X("compose.cc", "Cc"), false), newNamedEntry(lang.X("compose.bcc", "Bcc"), false), newNamedEntry(lang.X("compose.subject", "Subject"), false)
	body := newNamedEntry(lang.X("compose.body", "Message"), true)
	c.to, c.cc, c.bcc, c.subject, c.body = to, cc, bcc, subject, body
	c.to.SetPlaceHolder("name@example.com, Name <other@example.com>")
	for _, e := range []*namedEntry{to, cc, bcc, subject, body} {
		e.onSubmit = c.sendFromKeyboard
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
	}{{lang.X("compose.to", "To"), to, lang.X("compose.to.hint", "Recipients, separated by commas")}, {lang.X("compose.cc", "Cc"), cc, ""}, {lang.X("compose.bcc", "Bcc"), bcc, lang.X("compose.bcc.hint", "Hidden from the other recipients")}, {lang.X("compose.subject", "Subject"), subject, ""}} {
		rows = append(rows, formRow(f.label, f.entry, f.hint)...)
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
			mirrorRTL(container.NewBorder(nil, nil, nil, mirrorRTL(container.NewHBox(c.discardBtn, c.draftBtn, c.sendBtn)), hint)),
			c.status,
		),
		listFloor: c.attachmentsFloor,
	}
	// In this order for Tab: the fields, the body, then the attachments'
	// buttons, Discard, Save as draft and Send.
	c.box = container.New(l, l.top, l.body, l.head, l.list, l.rest)
	c.content = container.NewPadded(c.box)
	c.refreshAttachments()
	return c
}

// formRow lays out a field as widget.Form would (label, entry, the hint
// below, replaced by the entry's problem while it has one), but in plain
// containers, which a screen reader walks.
func formRow(label string, e *namedEntry, hint string) []fyne.CanvasObject {
	note := newWrapLabel(hint)
	note.SizeName = theme.SizeNameCaptionText
	if hint == "" {
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
		case hint != "":
			setLabel(note, hint)
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
	// The label ends at its field: on the field's left, or, mirrored, on
	// its right.
	align := fyne.TextAlignTrailing
	if windowRTL.Load() {
		align = fyne.TextAlignLeading
	}
	return []fyne.CanvasObject{widget.NewLabelWithStyle(display(label), align, fyne.TextStyle{Bold: true}), container.NewVBox(e, note)}
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
	var refused []string
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
			c.attSizes[p] = fi.Size()
		}
	}
	c.refreshAttachments()
	if len(refused) > 0 {
		c.say(lang.X("compose.refused", "Not attached: {{.Files}}", w{"Files": strings.Join(refused, "; ")}))
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
		r.object = mirrorRTL(container.NewBorder(nil, nil, widget.NewIcon(theme.FileIcon()), mirrorRTL(container.NewHBox(newLabel(humanSize(c.attSizes[p])), r.how, r.toggle, r.remove)), name))
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

// fileWay is how one file goes, and why when Carrier chose.
type fileWay struct {
	link   bool
	reason string // "over 25 MB", "to fit Gmail's 35 MB", "your choice"; "" for a file that fits
}

// plan is compose.PlanFiles's decision, from the sizes read when the
// files were attached (typing must not touch the disk), with the person's
// choices first. size is the message's encoded estimate as it would go.
func (c *composeScreen) plan() (ways map[string]fileWay, size int64) {
	return c.planChoosing(c.choice)
}

// planChoosing is plan with choice in place of the person's choices.
func (c *composeScreen) planChoosing(choice map[string]bool) (ways map[string]fileWay, size int64) {
	files := make([]compose.File, len(c.attachments))
	for i, p := range c.attachments {
		files[i] = compose.File{Path: p, Size: c.attSizes[p]}
		if link, chosen := choice[p]; chosen {
			files[i].Choice = &link
		}
	}
	planned, size := compose.PlanFiles(c.message().TextSize(), files, compose.Send, compose.LinksAuto, compose.DefaultLinkThreshold)
	ways = map[string]fileWay{}
	for i, p := range c.attachments {
		ways[p] = fileWay{planned[i].Link, whyText(planned[i].Why)}
	}
	return ways, size
}

// linked are the files that go as Drive links, in the message's order.
func (c *composeScreen) linked() []string {
	ways, _ := c.plan()
	var out []string
	for _, p := range c.attachments {
		if ways[p].link {
			out = append(out, p)
		}
	}
	return out
}

// whyText says why a file goes the way it does; "" for a file that fits.
func whyText(why compose.Why) string {
	switch why {
	case compose.WhyChosen:
		return lang.X("compose.why.chosen", "your choice")
	case compose.WhyOver:
		return lang.X("compose.why.over", "over 25 MB")
	case compose.WhyToFit:
		return lang.X("compose.why.fit", "to fit Gmail's 35 MB")
	}
	return ""
}

// flip makes a file go the other way than it does now, by the person's
// choice.
func (c *composeScreen) flip(p string) {
	ways, _ := c.plan()
	c.choice[p] = !ways[p].link
	c.updateMeter()
}

// estimate is the message's encoded size as it would go.
func (c *composeScreen) estimate() int64 {
	_, size := c.plan()
	return size
}

// updateMeter shows how each file goes and the message's encoded size
// against the send limit: the files that go as links do not count.
func (c *composeScreen) updateMeter() {
	ways, est := c.plan()
	var links int
	var linked int64
	for _, p := range c.attachments {
		w, r := ways[p], c.attRows[p]
		if w.link {
			links++
			linked += c.attSizes[p]
		}
		if r == nil {
			continue
		}
		name := compose.AttachmentName(p)
		how, importance := lang.X("compose.how.attached", "Attached"), widget.MediumImportance
		r.toggle.Text, r.toggle.Icon, r.toggle.name = display(lang.X("compose.aslink", "Send as link")), theme.UploadIcon(), lang.X("compose.aslink.name", "Send {{.Name}} as a Google Drive link", map[string]any{"Name": name})
		if w.link {
			how, importance = lang.X("compose.how.link", "Drive link"), widget.HighImportance
			r.toggle.Text, r.toggle.Icon, r.toggle.name = display(lang.X("compose.attachinstead", "Attach instead")), theme.MailAttachmentIcon(), lang.X("compose.attachinstead.name", "Attach {{.Name}} to the message instead", map[string]any{"Name": name})
		}
		if w.reason != "" {
			how += " · " + w.reason
		}
		if v, _ := visualText(how); r.how.Text != v || r.how.Importance != importance {
			r.how.Importance = importance
			setLabel(r.how, how)
		}
		r.toggle.Refresh()
	}
	c.meter.SetValue(min(float64(est)/compose.LimitSend, 1))
	c.meterText = meterWords(est, compose.LimitSend)
	c.meter.setOver(est > compose.LimitSend)
	if links > 0 {
		c.meterText = lang.XN("compose.meter.links", "{{.Count}} files go as Drive links, {{.Linked}}; the message itself {{.Size}}", links, w{"Count": links, "Linked": humanSize(linked), "Size": c.meterText})
	}
	c.meter.Refresh()
	if links > 0 {
		c.linkOpts.Show()
	} else {
		c.linkOpts.Hide()
	}
	if c.share.chosen == 0 {
		c.expiry.Object.Show()
	} else {
		c.expiry.Object.Hide()
	}
	if est > compose.LimitSend {
		over := est - compose.LimitSend
		setLabel(c.meterNote, lang.X("compose.toolarge", "Too large to send: {{.Over}} over the 35 MiB limit once encoded. Remove about {{.Remove}} of attachments, or send some as Drive links.", w{"Over": humanSize(over), "Remove": humanSize(over * 3 / 4)}))
		c.meterNote.Importance = widget.DangerImportance
		c.meterNote.Show()
	} else {
		c.meterNote.SetText("")
		c.meterNote.Importance = widget.MediumImportance
		c.meterNote.Hide()
	}
	c.meterNote.Refresh()
	c.updateButtons()
	c.relayout()
	c.keepLocal()
}

// linkOptions are the message's link settings as chosen on the screen.
func (c *composeScreen) linkOptions() app.LinkOptions {
	ways, _ := c.plan()
	o := app.LinkOptions{Policy: compose.LinksAuto, Choose: map[string]bool{}}
	for p, w := range ways {
		o.Choose[p] = w.link
	}
	o.Replaces = c.reopened
	if c.share.chosen == 1 {
		o.Share = app.ShareAnyone
	} else {
		o.Expiry = expiryTimes[c.expiry.chosen]
	}
	return o
}

func (c *composeScreen) updateButtons() {
	ok := !c.busy && c.estimate() <= compose.LimitSend
	for _, e := range []*namedEntry{c.to, c.cc, c.bcc, c.subject} {
		if e.Validate() != nil {
			ok = false
		}
	}
	for _, b := range []fyne.Disableable{c.sendBtn, c.draftBtn} {
		if ok {
			b.Enable()
		} else {
			b.Disable()
		}
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

// meterWords says the message's size against its limit: "12.0 KiB of
// 35.0 MiB", or by how much it is over.
func meterWords(size, limit int64) string {
	if size > limit {
		return lang.X("compose.meter.over", "{{.Size}}, over the {{.Limit}} limit by {{.Over}}", w{"Size": humanSize(size), "Limit": humanSize(limit), "Over": humanSize(size - limit)})
	}
	return lang.X("row.amount", "{{.Done}} of {{.Size}}", w{"Done": humanSize(size), "Size": humanSize(limit)})
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

// submit builds the message off the UI thread, then queues its upload.
// A message with Drive links first makes sure the account allows Carrier
// to create files in Drive, and asks the person (askDrive) before anything
// is queued when it does not.
func (c *composeScreen) submit(method compose.Method) {
	msg := c.message()
	if err := msg.Check(); err != nil {
		c.say(problemText(err))
		c.formProblem = true
		return
	}
	c.busy = true
	c.updateButtons()
	c.say(lang.X("compose.preparing", "Preparing the message…"))
	opts := c.linkOptions()
	linked := c.linked()
	may := c.u.deps.May
	// A draft being edited is updated (drafts.update) or sent with the
	// message as it stands now (drafts.send), as one draft.
	var gmail app.GmailOptions
	if c.draft != "" {
		if method == compose.Send {
			gmail.SendDraft = c.draft
		} else {
			gmail.DraftID = c.draft
		}
		method = compose.Draft
	}
	c.u.goBackground(func(ctx context.Context) {
		if len(linked) > 0 && may != nil {
			var na *app.NotAllowedError
			if err := may(ctx, auth.Links); errors.As(err, &na) {
				c.u.do(func() { c.askDrive(method, gmail, msg, opts, linked, na) })
				return
			} else if err != nil {
				c.u.do(func() { c.notSent(problemText(err)) })
				return
			}
		}
		c.send(ctx, method, gmail, msg, opts)
	})
}

// send queues the message as submit read it, with its links as opts says,
// and empties the form once it is queued, not before: the job and the
// message's fields (for reopening it) are then on disk. It runs off the
// UI thread.
func (c *composeScreen) send(ctx context.Context, method compose.Method, gmail app.GmailOptions, msg *compose.Message, opts app.LinkOptions) {
	bind, driveAuth := c.from.bind(c.u.deps.Auth)
	drive := app.Drive{Root: c.u.deps.Target(), Auth: driveAuth, Client: c.u.deps.Client}
	var ids []string
	up, err := app.Message(msg, method, gmail)
	if err == nil && gmail.SendDraft != "" {
		// Links saved in the draft earlier name files shared with
		// nobody yet: shared now, with its recipients as they stand.
		_, err = drive.ShareLinkedIn(ctx, msg, opts.Share, opts.Expiry)
	}
	if err == nil {
		ids, err = c.u.deps.Outbox.SendWithLinks(ctx, drive, msg, method, up, opts, bind)
	}
	if err == nil && c.local != nil {
		// Queued, and kept in the journal's folder from now on: the copy
		// of the form goes now if it holds just this message, not when
		// the UI thread empties the form, which a quit may come before.
		c.local.queued(msg)
	}
	c.u.do(func() {
		if err != nil {
			c.notSent(problemText(err))
			return
		}
		c.hold(false)
		c.busy = false
		c.say("")
		if c.shows(msg) {
			c.clear()
		} else {
			if gmail.SendDraft != "" {
				c.draft = "" // sent, the draft is gone: what the form keeps is a new message
				c.keepLocal()
			}
			c.reopened = "" // replaced by the one queued
			c.say(lang.X("compose.queued.asitwas", "Queued as it was when you pressed the button. The form keeps what you changed since."))
			c.updateButtons()
		}
		if opts.Replaces != "" {
			c.u.transfers.draw(opts.Replaces) // it no longer offers to reopen it
		}
		last := len(ids) - 1
		c.u.transfers.claim(ids[last], ids[:last])
		c.u.queued(ids[last])
	})
}

// notSent says why nothing was queued; the form stays as it is.
func (c *composeScreen) notSent(why string) {
	c.hold(false)
	c.busy = false
	c.say(why)
	c.updateButtons()
}

// driveConsent is the question asked when a message needs Drive and the
// account has not allowed it: allow (in the browser), attach the files
// instead (nil when the message would not fit), or cancel.
type driveConsent struct {
	d                     *carrierDialog
	text                  *wrapLabel
	allow, attach, cancel *dialogButton
}

// askDrive says why Drive is needed and what allowing it gives Carrier,
// before anything is queued. The form keeps the message whatever the
// answer; Send stays disabled while the question is open.
func (c *composeScreen) askDrive(method compose.Method, gmail app.GmailOptions, msg *compose.Message, opts app.LinkOptions, linked []string, na *app.NotAllowedError) {
	ways, _ := c.plan()
	bySize := true
	for _, p := range linked {
		if r := ways[p].reason; r != whyText(compose.WhyOver) && r != whyText(compose.WhyToFit) {
			bySize = false
		}
	}
	var text string
	switch {
	case len(linked) == 1 && bySize:
		text = lang.X("consent.one.big", "{{.Name}} is too large for Gmail and goes through your Google Drive as a link.", w{"Name": compose.AttachmentName(linked[0])})
	case len(linked) == 1:
		text = lang.X("consent.one", "{{.Name}} goes through your Google Drive as a link.", w{"Name": compose.AttachmentName(linked[0])})
	case bySize:
		text = lang.XN("consent.many.big", "{{.Count}} files are too large for Gmail and go through your Google Drive as links.", len(linked), w{"Count": len(linked)})
	default:
		text = lang.XN("consent.many", "{{.Count}} files go through your Google Drive as links.", len(linked), w{"Count": len(linked)})
	}
	text += " " + lang.X("consent.permission", "Carrier needs your permission (as {{.Address}}) to create files in your Drive; it can reach only the files it makes.", w{"Address": na.Address})
	attached := map[string]bool{}
	for _, p := range c.attachments {
		attached[p] = false
	}
	_, whole := c.planChoosing(attached)
	fits := whole <= method.Limit()
	if fits {
		text += " " + lang.X("consent.fits", "Allow it in your browser, or attach the files to the message instead.")
	} else {
		text += " " + lang.X("consent.nofit", "Attached, the files would not fit: the message would be {{.Size}}, over Gmail's {{.Limit}}. Allow it in your browser, or cancel and send smaller files.", w{"Size": humanSize(whole), "Limit": humanSize(method.Limit())})
	}
	a := &driveConsent{text: newWrapLabel(app.Printable(text))}
	done := func() {
		a.d.Hide()
		if c.consent == a {
			c.consent = nil
		}
	}
	a.allow = newDialogButton(display(lang.X("consent.allow", "Allow…")), theme.LoginIcon(), func() {
		done()
		c.hold(true)
		c.say(lang.X("consent.inbrowser", "Allow Carrier to create files in your Google Drive in the browser window that opened; the message goes once you have."))
		allow := c.u.deps.Allow
		c.u.goBackground(func(ctx context.Context) {
			err := allow(ctx, auth.Links)
			// The grant changed, and the browser may have signed in
			// another account: the Account screen says so.
			c.u.do(c.u.account.show)
			if err != nil {
				c.u.do(func() { c.notSent(allowProblem(err)) })
				return
			}
			c.send(ctx, method, gmail, msg, opts)
		})
	})
	a.allow.Importance = widget.HighImportance
	a.cancel = newDialogButton(display(lang.X("row.cancel", "Cancel")), theme.CancelIcon(), func() {
		done()
		c.notSent(lang.X("compose.notsent", "Not sent. The message is as you left it."))
	})
	buttons := container.NewHBox(layout.NewSpacer(), a.cancel)
	if fits {
		a.attach = newDialogButton(display(lang.X("compose.attachinstead", "Attach instead")), theme.MailAttachmentIcon(), func() {
			done()
			for _, p := range linked {
				c.choice[p] = false
			}
			c.busy = false
			c.updateMeter()
			again := method
			if gmail.SendDraft != "" {
				again = compose.Send // submit makes it the draft's send again
			}
			c.submit(again)
		})
		buttons.Add(a.attach)
	}
	if c.u.deps.Allow != nil {
		buttons.Add(a.allow)
	}
	c.say("")
	a.d = c.u.newDialog(display(lang.X("consent.title", "Send large files through Google Drive?")), container.NewVBox(a.text, buttons), a.cancel)
	a.d.Resize(fyne.NewSize(560, 0))
	c.consent = a
	a.d.Show()
}

// hold keeps the form from changing while the browser asks for Drive
// (Allow…): what goes once Drive is allowed is the message the person
// pressed Send on, so edits made meanwhile would be lost when the form
// empties.
func (c *composeScreen) hold(on bool) {
	c.held = on
	for _, e := range []*namedEntry{c.to, c.cc, c.bcc, c.subject, c.body} {
		if on {
			e.Disable()
		} else {
			e.Enable()
		}
	}
	buttons := []fyne.Disableable{c.attachBtn, c.discardBtn}
	for _, r := range c.attRows {
		buttons = append(buttons, r.toggle, r.remove)
	}
	for _, b := range append(c.share.buttons, c.expiry.buttons...) {
		buttons = append(buttons, b)
	}
	for _, b := range buttons {
		if on {
			b.Disable()
		} else {
			b.Enable()
		}
	}
}

// allowProblem says, after Allow… failed, that nothing was sent and why.
func allowProblem(err error) string {
	if errors.Is(err, auth.ErrDenied) || errors.Is(err, app.ErrNotGranted) {
		return lang.X("consent.denied", "Not sent: Carrier was not allowed to create files in your Google Drive. The message is as you left it: press Send to be asked again, or send the files another way.")
	}
	return lang.X("consent.failed", "Not sent: Google Drive could not be allowed ({{.Error}}). The message is as you left it.", w{"Error": windowText(err.Error())})
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
	c.attSizes = map[string]int64{}
	c.choice = map[string]bool{}
	c.refreshAttachments()
}

// shows reports whether the form still holds msg as it was queued: what
// the person changed while it was being prepared is theirs to keep.
func (c *composeScreen) shows(msg *compose.Message) bool {
	now := c.message()
	return strings.Join(now.To, ",") == strings.Join(msg.To, ",") && strings.Join(now.Cc, ",") == strings.Join(msg.Cc, ",") &&
		strings.Join(now.Bcc, ",") == strings.Join(msg.Bcc, ",") && now.Subject == msg.Subject && now.Text == msg.Text &&
		strings.Join(now.Attachments, "\x00") == strings.Join(msg.Attachments, "\x00")
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
	return windowText(err.Error())
}

// attachmentCount is "1 attachment", "3 attachments" in the window's
// language.
func attachmentCount(n int) string {
	return lang.XN("count.attachments", "{{.Count}} attachments", n, w{"Count": n})
}
