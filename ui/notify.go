package ui

import (
	"context"
	"encoding/json"
	"fyne.io/fyne/v2/lang"
	"strings"

	"fyne.io/fyne/v2"

	"carrier/internal/app"
	"carrier/transfer"
)

// NoticeAction is a button on a desktop notification; Do may run on any
// goroutine.
type NoticeAction struct {
	Key   string // "default": the notification itself clicked
	Label string
	Do    func()
}

// notifyJob tells the person, outside the window, that a job was sent or
// failed, with what they can do next as buttons: Retry and Show for a
// failure, Open in Mailbox for a message the Mailbox can show (else
// Show). Where the desktop's service cannot be reached (Deps.Notify fails
// or is nil) Fyne's notification says the same without buttons. Any
// goroutine: the service is called off the caller's.
func (u *UI) notifyJob(snap transfer.Snapshot) {
	title, body := lang.X("notify.sent", "Carrier: sent"), jobName(snap)
	if snap.State == transfer.StateFailed {
		title, body = lang.X("notify.failed", "Carrier: failed"), lang.X("notify.failed.body", "{{.Name}}: {{.Error}}", w{"Name": body, "Error": windowText(snap.Error)})
	}
	body = app.Printable(body)
	fallback := func() { u.fyneNotify(fyne.NewNotification(title, body)) }
	if u.deps.Notify == nil {
		fallback()
		return
	}
	show := NoticeAction{Key: "show", Label: lang.X("notify.show", "Show"), Do: func() { u.bringBack(u.transfersTab) }}
	var actions []NoticeAction
	if snap.State == transfer.StateFailed {
		id := snap.ID
		actions = append(actions, NoticeAction{Key: "retry", Label: lang.X("notify.retry", "Retry"), Do: func() {
			u.goBackground(func(ctx context.Context) { u.deps.Uploads.Retry(ctx, id) })
		}}, show)
	} else if u.inMailbox(snap) {
		id := gmailID(snap)
		actions = append(actions, NoticeAction{Key: "mailbox", Label: lang.X("notify.mailbox", "Open in Mailbox"), Do: func() {
			u.bringBack(u.mailboxTab)
			if id != "" {
				u.do(func() { u.mailbox.openMessage(id) })
			}
		}})
	} else {
		actions = append(actions, show)
	}
	actions = append(actions, NoticeAction{Key: "default", Label: lang.X("notify.show", "Show"), Do: show.Do})
	u.goBackground(func(context.Context) {
		if err := u.deps.Notify(title, body, actions); err != nil {
			fallback()
		}
	})
}

// inMailbox reports whether the Mailbox screen, which reads the sandbox's
// mail, shows the message a job sent.
func (u *UI) inMailbox(snap transfer.Snapshot) bool {
	return strings.Contains(snap.URL, "/gmail/") && strings.HasPrefix(snap.URL, u.deps.Endpoint+"/")
}

// gmailID is the id of the message a job sent, from Gmail's answer: a
// Message ({"id":…}) for messages.send, insert and import, a Draft
// ({"id":…,"message":{"id":…}}) for drafts, whose message the Mailbox
// lists under the draft. "" when the answer says none.
func gmailID(snap transfer.Snapshot) string {
	if snap.Response == nil {
		return ""
	}
	var r struct {
		ID      string `json:"id"`
		Message struct {
			ID string `json:"id"`
		} `json:"message"`
	}
	if json.Unmarshal(snap.Response.Body, &r) != nil {
		return ""
	}
	if r.Message.ID != "" {
		return r.Message.ID
	}
	return r.ID
}

// bringBack shows the window (hidden in the tray, or behind others) on
// tab t. Any goroutine.
func (u *UI) bringBack(t *tab) {
	u.do(func() {
		u.win.Show()
		u.win.RequestFocus()
		u.tabs.Select(t)
	})
}
