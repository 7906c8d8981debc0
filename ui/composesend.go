package ui

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"fyne.io/fyne/v2/lang"

	"carrier/compose"
	"carrier/internal/app"
)

// submit checks the form, then queues the message off the UI thread
// (app.Queue.Submit). A message with Drive links that the account does
// not allow Carrier to put in Drive is refused with nothing queued, and
// the person is asked (askDrive).
func (c *composeScreen) submit(method compose.Method) { c.submitAt(method, time.Time{}) }

// submitAt is submit, a message sent later (Send later) when later is
// not zero: held until then, and dated then.
func (c *composeScreen) submitAt(method compose.Method, later time.Time) {
	msg := c.message()
	if !later.IsZero() {
		msg.Date = later
	}
	// A draft being edited is updated (drafts.update) or sent with the
	// message as it stands now (drafts.send), as one draft.
	gmail := app.EditDraft(c.draft, method)
	method, err := app.Prepare(msg, method, gmail)
	if err != nil {
		c.say(problemText(err))
		c.formProblem = true
		return
	}
	c.busy = true
	c.updateButtons()
	c.say(lang.X("compose.preparing", "Preparing the message…"))
	opts := c.linkOptions()
	switch {
	case method == compose.Send && !later.IsZero():
		opts.SendAt = later // Send later
	case method == compose.Send:
		// Held for the undo window from the press of Send (Undo send).
		opts.SendAt = app.SendAfter(time.Now(), c.u.undoWindow())
	}
	opts.May = c.u.deps.May
	c.u.goBackground(func(ctx context.Context) { c.send(ctx, method, gmail, msg, opts) })
}

// send queues the message as submit read it, with its links as opts says,
// and empties the form once it is queued, not before: the job and the
// message's fields (for reopening it) are then on disk. It runs off the
// UI thread.
func (c *composeScreen) send(ctx context.Context, method compose.Method, gmail app.GmailOptions, msg *compose.Message, opts app.LinkOptions) {
	bind, driveAuth := c.from.bind(c.u.deps.Auth)
	drive := app.Drive{Root: c.u.deps.Target(), Auth: driveAuth, Client: c.u.deps.Client}
	// A draft sent has the links saved in it earlier, files shared with
	// nobody yet, shared now with its recipients as they stand.
	up, ids, err := c.u.deps.Outbox.Submit(ctx, drive, msg, method, gmail, opts, bind)
	var refused *app.LinksNotAllowed
	var na *app.NotAllowedError
	if errors.As(err, &refused) && errors.As(err, &na) {
		// Nothing was queued: the person may allow Drive, or attach the
		// files instead.
		c.u.do(func() { c.askDrive(method, gmail, msg, opts, refused.Linked, na) })
		return
	}
	if book := c.u.deps.Addresses; err == nil && book != nil && up.Sends() {
		// Whom it went to, for the address fields to offer next time;
		// a store that cannot be written costs the message nothing.
		var signedIn string
		if c.u.deps.Account != nil {
			signedIn = c.u.deps.Account().Address
		}
		fields := append(append(append([]string(nil), msg.To...), msg.Cc...), msg.Bcc...)
		_ = book.Remember(cmp.Or(c.from.sender(), signedIn), fields...)
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
		cleared := c.shows(msg)
		if cleared {
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
		if method == compose.Draft && gmail.SendDraft == "" {
			// A draft saved: the person stays where they write, told
			// where it went; Send goes to Transfers to watch it go.
			c.u.transfers.ensureRow(ids[last])
			if cleared {
				c.say(lang.X("compose.draft.saved", "Saved as a draft: Transfers shows it going to Gmail, and the Mailbox lists it with your drafts."))
			}
			return
		}
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
