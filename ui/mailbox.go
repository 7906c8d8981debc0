package ui

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	netmail "net/mail"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
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
	list    *widget.List
	detail  *fyne.Container
	status  *widget.Label
	content fyne.CanvasObject
	loading bool
}

func newMailboxScreen(u *UI) *mailboxScreen {
	m := &mailboxScreen{u: u}
	m.status = widget.NewLabel("")
	m.detail = container.NewStack(container.NewCenter(widget.NewLabel("Choose a message or a timeline item")))
	m.list = widget.NewList(
		func() int { m.mu.Lock(); defer m.mu.Unlock(); return len(m.items) },
		func() fyne.CanvasObject {
			title := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			title.Truncation = fyne.TextTruncateEllipsis
			sub := widget.NewLabel("")
			sub.Truncation = fyne.TextTruncateEllipsis
			return container.NewVBox(title, sub)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			m.mu.Lock()
			if i >= len(m.items) {
				m.mu.Unlock()
				return
			}
			it := m.items[i]
			m.mu.Unlock()
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(it.Kind + " · " + app.Printable(it.Title))
			box.Objects[1].(*widget.Label).SetText(app.Printable(it.Detail) + " · " + it.When.Local().Format("Jan 2 15:04"))
		},
	)
	m.list.OnSelected = func(i widget.ListItemID) {
		m.mu.Lock()
		if i >= len(m.items) {
			m.mu.Unlock()
			return
		}
		it := m.items[i]
		m.mu.Unlock()
		m.open(it)
	}
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), m.refresh)
	split := container.NewHSplit(m.list, container.NewVScroll(container.NewPadded(m.detail)))
	split.Offset = 0.4
	m.content = container.NewBorder(container.NewBorder(nil, nil, widget.NewLabel("What the sandbox holds: sent messages, drafts and timeline items, newest first."), refresh), m.status, nil, nil, split)
	return m
}

// api reads a Google JSON resource, authorized like the uploads.
func (m *mailboxScreen) api(ctx context.Context, path string, v any) error {
	body, err := m.fetch(ctx, path)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// errElsewhere says a server named a URL on another origin: the mailbox
// reads only the sandbox, and its token goes nowhere else.
var errElsewhere = errors.New("the sandbox named an address on another server; Carrier reads only from the sandbox")

func (m *mailboxScreen) fetch(ctx context.Context, path string) ([]byte, error) {
	url := m.u.deps.Endpoint + path
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		// An absolute URL from a server's answer (a contentUrl): only on
		// the sandbox's own origin, else neither the token nor a request
		// goes out (a request alone would tell that server the item was
		// opened).
		url = path
		if o := app.Origin(path); o == "" || o != app.Origin(m.u.deps.Endpoint) {
			return nil, errElsewhere
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if req.URL.User != nil {
		return nil, errElsewhere
	}
	if m.u.deps.Auth != nil {
		if err := m.u.deps.Auth.Authorize(ctx, req); err != nil {
			return nil, err
		}
	}
	resp, err := m.u.deps.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach %s", req.URL.Host)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var ge struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(body, &ge)
		return nil, fmt.Errorf("%s answered %d: %s", req.URL.Host, resp.StatusCode, app.Printable(ge.Error.Message))
	}
	return body, nil
}

// refresh reloads the mailbox in the background.
func (m *mailboxScreen) refresh() {
	if m.loading {
		return
	}
	m.loading = true
	m.status.SetText("Loading…")
	m.u.goBackground(func(ctx context.Context) {
		items, err := m.load(ctx)
		m.u.do(func() {
			m.loading = false
			if err != nil {
				m.status.SetText("Could not read the mailbox: " + app.Printable(err.Error()))
				return
			}
			m.mu.Lock()
			m.items = items
			m.mu.Unlock()
			m.status.SetText(countText(len(items)))
			m.list.UnselectAll()
			m.list.Refresh()
		})
	})
}

type msgMeta struct {
	ID           string   `json:"id"`
	ThreadID     string   `json:"threadId"`
	LabelIDs     []string `json:"labelIds"`
	Snippet      string   `json:"snippet"`
	InternalDate string   `json:"internalDate"`
	SizeEstimate int64    `json:"sizeEstimate"`
	Payload      struct {
		Headers []struct{ Name, Value string } `json:"headers"`
	} `json:"payload"`
}

func (mm *msgMeta) header(name string) string {
	for _, h := range mm.Payload.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func millis(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.UnixMilli(n)
}

func (m *mailboxScreen) load(ctx context.Context) ([]mailItem, error) {
	var items []mailItem
	var list struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	if err := m.api(ctx, "/gmail/v1/users/me/messages?maxResults=100", &list); err != nil {
		return nil, err
	}
	for _, ref := range list.Messages {
		var mm msgMeta
		if err := m.api(ctx, "/gmail/v1/users/me/messages/"+ref.ID+"?format=metadata&metadataHeaders=Subject&metadataHeaders=To&metadataHeaders=From", &mm); err != nil {
			return nil, err
		}
		kind := "Inbox"
		switch {
		case contains(mm.LabelIDs, "DRAFT"):
			continue // listed with the drafts, under their draft id
		case contains(mm.LabelIDs, "SENT"):
			kind = "Sent"
		}
		items = append(items, mailItem{Kind: kind, ID: mm.ID, Title: orNone(mm.header("Subject")), Detail: "to " + people(mm.header("To")), When: millis(mm.InternalDate)})
	}
	var drafts struct {
		Drafts []struct {
			ID      string              `json:"id"`
			Message struct{ ID string } `json:"message"`
		} `json:"drafts"`
	}
	if err := m.api(ctx, "/gmail/v1/users/me/drafts", &drafts); err != nil {
		return nil, err
	}
	for _, d := range drafts.Drafts {
		var mm msgMeta
		if err := m.api(ctx, "/gmail/v1/users/me/messages/"+d.Message.ID+"?format=metadata&metadataHeaders=Subject&metadataHeaders=To", &mm); err != nil {
			return nil, err
		}
		items = append(items, mailItem{Kind: "Draft", ID: d.ID, MsgID: mm.ID, Title: orNone(mm.header("Subject")), Detail: "to " + people(mm.header("To")), When: millis(mm.InternalDate)})
	}
	var tl struct {
		Items []map[string]any `json:"items"`
	}
	if err := m.api(ctx, "/mirror/v1/timeline", &tl); err != nil {
		return nil, err
	}
	for _, it := range tl.Items {
		when, _ := time.Parse(time.RFC3339, fmt.Sprint(it["updated"]))
		text, _ := it["text"].(string)
		atts, _ := it["attachments"].([]any)
		items = append(items, mailItem{Kind: "Timeline", ID: fmt.Sprint(it["id"]), Title: orNone(text), Detail: fmt.Sprintf("%d attachment(s)", len(atts)), When: when, Item: it})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].When.After(items[j].When) })
	return items, nil
}

func countText(n int) string {
	switch n {
	case 0:
		return "Nothing yet: messages you send and pictures you post show up here."
	case 1:
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
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
		return "(none)"
	}
	return s
}

// open shows one item: headers, text and attachment names of a message;
// the caption and pictures of a timeline item.
func (m *mailboxScreen) open(it mailItem) {
	m.detail.Objects = []fyne.CanvasObject{widget.NewLabel("Loading…")}
	m.detail.Refresh()
	m.u.goBackground(func(ctx context.Context) {
		var view func() fyne.CanvasObject
		var err error
		if it.Kind == "Timeline" {
			view, err = m.timelineView(ctx, it)
		} else {
			view, err = m.messageView(ctx, it)
		}
		m.u.do(func() {
			if err != nil {
				m.detail.Objects = []fyne.CanvasObject{widget.NewLabel("Could not open it: " + err.Error())}
			} else {
				m.detail.Objects = []fyne.CanvasObject{view()}
			}
			m.detail.Refresh()
		})
	})
}

type part struct {
	MimeType string                         `json:"mimeType"`
	Filename string                         `json:"filename"`
	Headers  []struct{ Name, Value string } `json:"headers"`
	Body     struct {
		Size int64  `json:"size"`
		Data string `json:"data"`
	} `json:"body"`
	Parts []part `json:"parts"`
}

func (p *part) walk(fn func(*part)) {
	fn(p)
	for i := range p.Parts {
		p.Parts[i].walk(fn)
	}
}

func (m *mailboxScreen) messageView(ctx context.Context, it mailItem) (func() fyne.CanvasObject, error) {
	id := it.ID
	if it.Kind == "Draft" {
		id = it.MsgID
	}
	var full struct {
		Payload part `json:"payload"`
	}
	if err := m.api(ctx, "/gmail/v1/users/me/messages/"+id+"?format=full", &full); err != nil {
		return nil, err
	}
	var text string
	var attachments []string
	full.Payload.walk(func(p *part) {
		if p.Filename != "" {
			attachments = append(attachments, app.Printable(p.Filename)+" ("+humanSize(p.Body.Size)+")")
		} else if p.MimeType == "text/plain" && text == "" {
			b, _ := base64.URLEncoding.DecodeString(p.Body.Data)
			text = string(b)
		}
	})
	return func() fyne.CanvasObject {
		form := widget.NewForm()
		for _, h := range full.Payload.Headers {
			switch strings.ToLower(h.Name) {
			case "from", "to", "cc", "bcc", "subject", "date":
				l := widget.NewLabel(app.Printable(h.Value))
				l.Wrapping = fyne.TextWrapWord
				form.Append(h.Name, l)
			}
		}
		body := widget.NewLabel(app.PrintableLines(text))
		body.Wrapping = fyne.TextWrapWord
		box := container.NewVBox(widget.NewLabelWithStyle(it.Kind, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), form, widget.NewSeparator(), body)
		if len(attachments) > 0 {
			box.Add(widget.NewSeparator())
			box.Add(widget.NewLabelWithStyle("Attachments", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
			for _, a := range attachments {
				box.Add(container.NewHBox(widget.NewIcon(theme.FileIcon()), widget.NewLabel(a)))
			}
		}
		return box
	}, nil
}

func (m *mailboxScreen) timelineView(ctx context.Context, it mailItem) (func() fyne.CanvasObject, error) {
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
			data, err := m.fetch(ctx, url)
			if errors.Is(err, errElsewhere) {
				s.ctype += " (not shown: it is on another server)"
			} else if err != nil {
				return nil, err
			}
			s.data = data
		}
		media = append(media, s)
	}
	return func() fyne.CanvasObject {
		caption := widget.NewLabel(app.PrintableLines(orNone(fmt.Sprint(it.Item["text"]))))
		if _, ok := it.Item["text"]; !ok {
			caption.SetText("(no caption)")
		}
		caption.Wrapping = fyne.TextWrapWord
		box := container.NewVBox(widget.NewLabelWithStyle("Timeline item", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), caption)
		for _, s := range media {
			if s.data != nil {
				img := canvas.NewImageFromReader(bytes.NewReader(s.data), s.name)
				img.FillMode = canvas.ImageFillContain
				img.SetMinSize(fyne.NewSize(240, 180))
				box.Add(img)
			} else {
				box.Add(container.NewHBox(widget.NewIcon(theme.FileIcon()), widget.NewLabel(s.ctype)))
			}
		}
		return box
	}, nil
}
