package ui

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2/lang"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/internal/app/mailbox"
)

// mailItem is one entry of the mailbox: a sent message, a draft or a
// timeline item.
type mailItem struct {
	Kind    string // Sent, Draft, Inbox, Timeline
	ID      string // message id, draft id or timeline item id
	MsgID   string // the draft's message id
	Title   string
	Detail  string
	When    time.Time
	Item    map[string]any // timeline item as read
	Headers map[string]string
}

type mailboxScreen struct {
	u       *UI
	mu      sync.Mutex
	items   []mailItem
	list    *pagedList // one row per item, newest first
	detail  *pagedList // the opened item, a line or a paragraph a row
	opened  int        // the index of the opened item, -1 for none
	shown   *mailItem  // the item the reading pane shows (or loads), nil for none
	gen     int        // counts what the reading pane was told to show, so a late read is dropped
	status  *wrapLabel
	content fyne.CanvasObject
	loading bool
	want    string                   // a Gmail message or draft id to open once the list is read (openMessage)
	drafts  map[string]*draftActions // each draft's Edit and Send, by draft id (drafts.go)

	refreshBtn *focusButton
	files      attachmentFiles      // private copies of attachments opened or saved
	openURL    func(*url.URL) error // the system's handler for a file (fyne.App.OpenURL)
	chooseSave func(name string, done func(fyne.URIWriteCloser, error))
	zone       *time.Location // dates are shown in it; nil: this computer's
}

// The list and the opened item are paged lists, not a widget.List in a
// Split: a screen reader reaches every row and every line (see paged.go).
func newMailboxScreen(u *UI) *mailboxScreen {
	m := &mailboxScreen{u: u, opened: -1}
	m.openURL = func(l *url.URL) error { return u.app.OpenURL(l) }
	m.chooseSave = fileSaveDialog(u)
	m.status = newWrapLabel("")
	m.list = newPagedList("item")
	m.detail = newPagedList("line")
	m.refreshBtn = newFocusButton(lang.X("mailbox.refresh", "Refresh"), theme.ViewRefreshIcon(), m.refresh)
	// In a right-to-left window the list is on the right and the item
	// opens on its left, where the rows' arrows point.
	panes := mirrorRTL(container.NewGridWithColumns(2, m.list.Object, m.detail.Object))
	top := mirrorRTL(container.NewBorder(nil, nil, newLabel(lang.X("mailbox.intro", "What the sandbox holds: sent messages, drafts and timeline items, newest first.")), m.refreshBtn))
	m.content = container.NewBorder(top, m.status, nil, nil, panes)
	return m
}

// row is one item of the list: what it is, who it is for, when, and a
// button that opens it (named after the item, so a screen reader says
// which).
func (m *mailboxScreen) row(i int, it mailItem) fyne.CanvasObject {
	title := newLabel(kindName(it.Kind) + " · " + app.Readable(it.Title))
	title.TextStyle = fyne.TextStyle{Bold: i == m.opened}
	title.Truncation = fyne.TextTruncateEllipsis
	sub := newLabel(app.Readable(it.Detail) + " · " + shortDate(it.When.Local()))
	sub.Truncation = fyne.TextTruncateEllipsis
	open := newIconButton(lang.X("mailbox.open", "Open {{.Kind}} {{.Title}}", w{"Kind": kindName(it.Kind), "Title": app.Readable(it.Title)}), directional(theme.NavigateNextIcon()), func() { m.choose(i) })
	// The whole row opens the item on a click; the button is there for
	// the keyboard and the screen reader.
	return container.NewStack(newTapArea(func() { m.choose(i) }), mirrorRTL(container.NewBorder(nil, nil, nil, m.draftButtons(it, open), container.NewVBox(title, sub))))
}

// tapArea lies under a row's text and opens it on a click. It has no
// name and no children, so the screen reader passes over it; the row's
// button does the same for the keyboard.
type tapArea struct {
	widget.BaseWidget
	tapped func()
}

func newTapArea(tapped func()) *tapArea {
	a := &tapArea{tapped: tapped}
	a.ExtendBaseWidget(a)
	return a
}

func (a *tapArea) Tapped(*fyne.PointEvent) { a.tapped() }

func (a *tapArea) Cursor() desktop.Cursor { return desktop.PointerCursor }

func (a *tapArea) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewWithoutLayout())
}

// choose opens the i-th item of the list.
func (m *mailboxScreen) choose(i int) {
	m.mu.Lock()
	if i < 0 || i >= len(m.items) {
		m.mu.Unlock()
		return
	}
	it := m.items[i]
	m.opened = i
	m.mu.Unlock()
	m.drawList()
	m.open(it)
}

// drawList makes the list's rows again from the items. An empty list
// says so where the items would be, and what the Mailbox never lists.
func (m *mailboxScreen) drawList() {
	m.mu.Lock()
	items := append([]mailItem(nil), m.items...)
	m.mu.Unlock()
	rows := make([]fyne.CanvasObject, len(items))
	for i, it := range items {
		rows[i] = m.row(i, it)
	}
	if len(items) == 0 {
		rows = []fyne.CanvasObject{wrapped(emptyText())}
	}
	m.list.Box.Objects = rows
	m.list.Box.Refresh()
}

// follow keeps the reading pane true to a list just read: the item it
// showed is shown again as the list has it now (a draft saved again holds
// other words), or, gone from the list (a draft sent, a message deleted),
// leaves the pane. UI thread.
func (m *mailboxScreen) follow() {
	prev := m.shown
	if prev == nil {
		m.empty()
		return
	}
	m.mu.Lock()
	i := slices.IndexFunc(m.items, func(it mailItem) bool { return it.Kind == prev.Kind && it.ID == prev.ID })
	var now mailItem
	if i >= 0 {
		now = m.items[i]
	}
	m.mu.Unlock()
	if i < 0 {
		m.empty()
		return
	}
	m.opened = i
	if now.MsgID != prev.MsgID || !now.When.Equal(prev.When) || now.Title != prev.Title || now.Detail != prev.Detail {
		m.open(now)
	}
}

// empty shows no item: a word to choose one when there are some, nothing
// when the list itself says it is empty. UI thread.
func (m *mailboxScreen) empty() {
	m.gen++ // a read still under way shows nothing
	m.shown, m.opened = nil, -1
	m.mu.Lock()
	n := len(m.items)
	m.mu.Unlock()
	if n == 0 {
		m.show()
		return
	}
	m.show(newLabel(lang.X("mailbox.choose", "Choose a message or a timeline item")))
}

// show puts rows in the detail pane, from its first page.
func (m *mailboxScreen) show(rows ...fyne.CanvasObject) {
	m.detail.Box.Objects = rows
	m.detail.ShowFirst()
	m.detail.Box.Refresh()
}

// mailbox reads the sandbox's mail and timeline, authorized like the
// uploads; the token goes to the sandbox's origin only.
func (m *mailboxScreen) mailbox() mailbox.Mailbox {
	return mailbox.Mailbox{Root: m.u.deps.Endpoint, Auth: m.u.deps.Auth, Client: m.u.deps.Client}
}

// refresh reloads the mailbox in the background.
func (m *mailboxScreen) refresh() {
	if m.loading {
		return
	}
	m.loading = true
	setLabel(m.status, lang.X("mailbox.loading", "Loading…"))
	m.u.goBackground(func(ctx context.Context) {
		items, err := m.load(ctx)
		m.u.do(func() {
			m.loading = false
			if err != nil {
				setLabel(m.status, lang.X("mailbox.failed", "Could not read the mailbox: {{.Error}}", w{"Error": windowText(err.Error())}))
				return
			}
			m.mu.Lock()
			m.items = items
			m.mu.Unlock()
			setLabel(m.status, countText(len(items)))
			m.opened = -1
			m.follow()
			m.list.ShowFirst()
			m.drawList()
			m.openWanted()
		})
	})
}

// openMessage reads the list again and opens the message (or draft) of
// Gmail id id in it: a notification's Open in Mailbox. UI thread.
func (m *mailboxScreen) openMessage(id string) {
	m.want = id
	m.refresh() // a read under way opens it when it ends
}

// openWanted opens what openMessage asked for: its row when the list
// has it, else the message alone, read by its id (a list read before it
// was sent). UI thread.
func (m *mailboxScreen) openWanted() {
	id := m.want
	m.want = ""
	if id == "" {
		return
	}
	m.mu.Lock()
	i := slices.IndexFunc(m.items, func(it mailItem) bool { return it.ID == id || it.MsgID == id })
	m.mu.Unlock()
	if i >= 0 {
		m.choose(i)
		return
	}
	m.open(mailItem{Kind: "Sent", ID: id})
}

func millis(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.UnixMilli(n)
}

func (m *mailboxScreen) load(ctx context.Context) ([]mailItem, error) {
	var items []mailItem
	mb := m.mailbox()
	ids, err := mb.Messages(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		mm, err := mb.Metadata(ctx, id, "Subject", "To", "From")
		if err != nil {
			return nil, err
		}
		kind := "Inbox"
		switch {
		case contains(mm.LabelIDs, "DRAFT"):
			continue // listed with the drafts, under their draft id
		case contains(mm.LabelIDs, "SENT"):
			kind = "Sent"
		}
		items = append(items, mailItem{Kind: kind, ID: mm.ID, Title: orNone(mm.Header("Subject")), Detail: lang.X("mailbox.to", "to {{.People}}", w{"People": people(mm.Header("To"))}), When: millis(mm.InternalDate)})
	}
	drafts, err := mb.Drafts(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range drafts {
		mm, err := mb.Metadata(ctx, d.Message.ID, "Subject", "To")
		if err != nil {
			return nil, err
		}
		items = append(items, mailItem{Kind: "Draft", ID: d.ID, MsgID: mm.ID, Title: orNone(mm.Header("Subject")), Detail: lang.X("mailbox.to", "to {{.People}}", w{"People": people(mm.Header("To"))}), When: millis(mm.InternalDate)})
	}
	timeline, err := mb.Timeline(ctx)
	if err != nil {
		return nil, err
	}
	for _, it := range timeline {
		when, _ := time.Parse(time.RFC3339, fmt.Sprint(it["updated"]))
		text, _ := it["text"].(string)
		atts, _ := it["attachments"].([]any)
		items = append(items, mailItem{Kind: "Timeline", ID: fmt.Sprint(it["id"]), Title: orNone(text), Detail: attachmentCount(len(atts)), When: when, Item: it})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].When.After(items[j].When) })
	return items, nil
}

// countText is the status line under a list read: how many items, and
// nothing when there are none (the list says so itself).
func countText(n int) string {
	if n == 0 {
		return ""
	}
	return lang.XN("mailbox.count", "{{.Count}} items", n, w{"Count": groupCount(n)})
}

// emptyText is what an empty list says: what will show up in it, and
// where pictures and videos go instead, since Google Photos posts are
// not listed here.
func emptyText() string {
	return lang.X("mailbox.empty", "Nothing yet: messages you send and drafts you save show up here. Pictures and videos go to Google Photos, not here; the Media screen says how each post went.")
}

// people shows an address header the way people read it: names where
// there are names, bare addresses otherwise.
func people(h string) string {
	list, err := netmail.ParseAddressList(h)
	if err != nil || len(list) == 0 {
		return orNone(h)
	}
	var out []string
	for _, a := range list {
		if a.Name != "" {
			out = append(out, a.Name)
		} else {
			out = append(out, a.Address)
		}
	}
	return strings.Join(out, ", ")
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return lang.X("mailbox.none", "(none)")
	}
	return s
}

// open shows one item: headers, text and attachment names of a message;
// the caption and pictures of a timeline item.
func (m *mailboxScreen) open(it mailItem) {
	m.gen++
	gen := m.gen
	m.shown = &it
	m.show(newLabel(lang.X("mailbox.loading", "Loading…")))
	m.u.goBackground(func(ctx context.Context) {
		var view func() []fyne.CanvasObject
		var err error
		if it.Kind == "Timeline" {
			view, err = m.timelineView(ctx, it)
		} else {
			view, err = m.messageView(ctx, it)
		}
		m.u.do(func() {
			if gen != m.gen {
				return // another item was chosen, or the list no longer has this one
			}
			if err != nil {
				l := newWrapLabel(lang.X("mailbox.open.failed", "Could not open it: {{.Error}}", w{"Error": windowText(err.Error())}))
				m.show(l)
			} else {
				m.show(view()...)
			}
		})
	})
}

func (m *mailboxScreen) messageView(ctx context.Context, it mailItem) (func() []fyne.CanvasObject, error) {
	id := it.ID
	if it.Kind == "Draft" {
		id = it.MsgID
	}
	full, err := m.mailbox().Message(ctx, id)
	if err != nil {
		return nil, err
	}
	var text string
	var attachments []mailAttachment
	full.Payload.Walk(func(p *mailbox.MailPart) {
		if p.Filename != "" {
			attachments = append(attachments, mailAttachment{msgID: id, attID: p.Body.AttachmentID, data: p.Body.Data, name: p.Filename, size: p.Body.Size})
		} else if p.MimeType == "text/plain" && text == "" {
			b, _ := base64.URLEncoding.DecodeString(p.Body.Data)
			text = string(b)
		}
	})
	hs := make([]headerField, len(full.Payload.Headers))
	for i, h := range full.Payload.Headers {
		hs[i] = headerField{h.Name, h.Value}
	}
	// A message without a From goes from the account, as Gmail sends it.
	var me string
	if !slices.ContainsFunc(hs, func(h headerField) bool { return strings.EqualFold(h.Name, "From") && strings.TrimSpace(h.Value) != "" }) {
		if address, err := m.mailbox().Address(ctx); err == nil && address != "" {
			me = address
		}
	}
	received := millis(full.InternalDate)
	return func() []fyne.CanvasObject {
		rows := []fyne.CanvasObject{boldLabel(kindName(it.Kind))}
		rows = append(rows, readingHeaders(hs, me, received, m.zone)...)
		rows = append(rows, widget.NewSeparator())
		rows = append(rows, m.textRows(app.ReadableLines(text))...)
		return append(rows, m.attachmentRows(attachments)...)
	}, nil
}

// wrapped is a label that wraps at the pane's width.
func wrapped(text string) *wrapLabel { return newWrapLabel(text) }

// paragraphs cuts a text into rows a page can hold: at blank lines, and
// every few lines within a long paragraph.
func paragraphs(text string) []string {
	const linesPerRow, charsPerRow = 6, 600
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		lines := strings.Split(strings.Trim(para, "\n"), "\n")
		var cur []string
		size := 0
		flush := func() {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
				cur, size = nil, 0
			}
		}
		for _, l := range lines {
			for len(l) > charsPerRow {
				cut := strings.LastIndex(l[:charsPerRow], " ")
				if cut <= 0 {
					cut = charsPerRow
				}
				flush()
				out = append(out, l[:cut])
				l = strings.TrimLeft(l[cut:], " ")
			}
			if len(cur) == linesPerRow || size+len(l) > charsPerRow {
				flush()
			}
			cur = append(cur, l)
			size += len(l)
		}
		flush()
	}
	if len(out) == 0 {
		out = []string{lang.X("mailbox.notext", "(no text)")}
	}
	return out
}

func (m *mailboxScreen) timelineView(ctx context.Context, it mailItem) (func() []fyne.CanvasObject, error) {
	type shown struct {
		name, ctype string
		data        []byte
	}
	var media []shown
	atts, _ := it.Item["attachments"].([]any)
	for _, a := range atts {
		am, _ := a.(map[string]any)
		ctype, _ := am["contentType"].(string)
		url, _ := am["contentUrl"].(string)
		s := shown{name: fmt.Sprint(am["id"]), ctype: ctype}
		if strings.HasPrefix(ctype, "image/") && url != "" {
			data, err := m.mailbox().Content(ctx, url)
			if errors.Is(err, mailbox.ErrElsewhere) {
				s.ctype = lang.X("mailbox.elsewhere", "{{.Type}} (not shown: it is on another server)", w{"Type": s.ctype})
			} else if err != nil {
				return nil, err
			}
			s.data = data
		}
		media = append(media, s)
	}
	return func() []fyne.CanvasObject {
		rows := []fyne.CanvasObject{boldLabel(lang.X("mailbox.timelineitem", "Timeline item"))}
		if text, ok := it.Item["text"]; ok {
			rows = append(rows, m.textRows(app.ReadableLines(orNone(fmt.Sprint(text))))...)
		} else {
			rows = append(rows, wrapped(lang.X("mailbox.nocaption", "(no caption)")))
		}
		for _, s := range media {
			if s.data != nil {
				img := canvas.NewImageFromReader(bytes.NewReader(s.data), s.name)
				img.FillMode = canvas.ImageFillContain
				img.SetMinSize(fyne.NewSize(240, 180))
				rows = append(rows, img, newLabel(lang.X("mailbox.picture", "Picture: {{.Name}} ({{.Type}})", w{"Name": app.Readable(s.name), "Type": s.ctype})))
			} else {
				rows = append(rows, container.NewHBox(widget.NewIcon(theme.FileIcon()), newLabel(s.ctype)))
			}
		}
		return rows
	}, nil
}

// kindName is an item's kind ("Sent", "Draft", "Timeline", "Inbox") in
// the window's language.
func kindName(kind string) string {
	switch kind {
	case "Inbox":
		return lang.X("kind.inbox", "Inbox")
	case "Sent":
		return lang.X("kind.sent", "Sent")
	case "Draft":
		return lang.X("kind.draft", "Draft")
	case "Timeline":
		return lang.X("kind.timeline", "Timeline")
	}
	return kind
}
