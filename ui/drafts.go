package ui

import (
	"context"
	"errors"

	"fyne.io/fyne/v2/lang"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"

	"carrier/internal/app"
	"carrier/internal/app/message"
)

// A draft in the Mailbox is not a dead end: Edit opens it in Compose
// (its fields, and its attachments decoded from its raw message into
// files), where Save as draft updates the same draft (drafts.update) and
// Send sends it (drafts.send); Send sends it as it stands, its Drive
// links shared first, as `carrier send --send-draft ID` does.

// draftActions are a draft's buttons in the Mailbox's list.
type draftActions struct {
	edit, send *focusButton
}

// draftButtons adds Edit and Send to a draft's row; other items and a
// window that cannot open drafts get nothing.
func (m *mailboxScreen) draftButtons(it mailItem, open fyne.CanvasObject) fyne.CanvasObject {
	if it.Kind != "Draft" || m.u.deps.Keeper == nil {
		return open
	}
	a := &draftActions{}
	a.edit = newFocusButton(lang.X("draft.edit", "Edit"), theme.DocumentCreateIcon(), func() { m.editDraft(it) })
	a.send = newFocusButton(lang.X("draft.send", "Send"), theme.MailSendIcon(), func() { m.sendDraft(it, a) })
	if m.drafts == nil {
		m.drafts = map[string]*draftActions{}
	}
	m.drafts[it.ID] = a
	return container.NewHBox(a.edit, a.send, open)
}

// draftsHere is the API the Mailbox's drafts are on: the sandbox's, which
// the Mailbox reads.
func (m *mailboxScreen) draftsHere() app.Drive {
	return app.Drive{Root: m.u.deps.Endpoint, Auth: m.u.deps.Auth, Client: m.u.deps.Client}
}

// editDraft opens a draft in Compose, where saving updates it.
func (m *mailboxScreen) editDraft(it mailItem) {
	if m.u.deps.Target() != m.u.deps.Endpoint {
		// Compose saves where uploads go now (Google's Gmail); this
		// draft is the sandbox's, unknown there.
		setLabel(m.status, lang.X("draft.elsewhere", "This draft is in the sandbox, and Compose now saves to your Google account: send it with Send here, or copy what you need into a new message."))
		return
	}
	keeper, d := m.u.deps.Keeper, m.draftsHere()
	setLabel(m.status, lang.X("draft.opening", "Opening the draft…"))
	m.u.goBackground(func(ctx context.Context) {
		raw, err := d.ReadDraft(ctx, it.ID)
		var k *message.Composed
		if err == nil {
			k, err = keeper.OpenDraft(it.ID, raw)
		}
		m.u.do(func() {
			if err != nil {
				setLabel(m.status, lang.X("draft.open.failed", "Could not open the draft: {{.Error}}", w{"Error": app.Printable(err.Error())}))
				return
			}
			m.status.SetText("")
			m.u.compose.reopen(k, lang.X("draft.editing", "Editing the draft"))
		})
	})
}

// sendDraft sends a draft as it stands, then reads the Mailbox again.
func (m *mailboxScreen) sendDraft(it mailItem, a *draftActions) {
	d, may := m.draftsHere(), m.u.deps.May
	a.send.Disable()
	a.edit.Disable()
	setLabel(m.status, lang.X("draft.sending", "Sending the draft '{{.Title}}'…", w{"Title": app.Printable(it.Title)}))
	m.u.goBackground(func(ctx context.Context) {
		var err error
		if may != nil {
			// Its links are shared as it goes: Drive must be allowed.
			if raw, rerr := d.ReadDraft(ctx, it.ID); rerr != nil {
				err = rerr
			} else if ids, lerr := message.LinkedFiles(raw); lerr != nil {
				err = lerr
			} else {
				var na *app.NotAllowedError
				if err = app.MayDrive(ctx, len(ids), may); errors.As(err, &na) {
					err = errors.New("its Google Drive links must be shared as it goes, and Carrier may not reach your Drive yet: open it with Edit and press Send there to allow it")
				}
			}
		}
		if err == nil {
			_, err = d.SendDraft(ctx, it.ID, message.ShareRecipients, 0)
		}
		m.u.do(func() {
			a.send.Enable()
			a.edit.Enable()
			if err != nil {
				setLabel(m.status, lang.X("draft.send.failed", "Could not send the draft: {{.Error}}", w{"Error": app.Printable(err.Error())}))
				return
			}
			m.refresh()
		})
	})
}
