package ui

import (
	"context"
	"errors"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
)

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
