package ui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2/lang"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// Nothing a person wrote is lost by a slip: cancelling an upload asks
// first, naming it, with keeping it the default; a cancelled or failed
// message opens again in Compose with its recipients, subject, text and
// attachments (the app keeps its fields beside the journal, so this works
// after a restart too); a draft opens in Compose from the Mailbox, and
// saving it again updates the same draft.

// isMessage reports whether a job in role r of its delivery uploads a
// Gmail message (sent, a draft, inserted or imported): for the words of a
// failure, which name a file only when it is the person's (a message's
// bytes are a spool), and the tray's Undo.
func isMessage(r delivery.Role) bool { return r == delivery.RoleMessage }

// reopenable reports whether a delivery, where it stands, is a message to
// reopen in Compose: it was cancelled, or waits on a member cancelled, or
// failed in a way only a new message mends (the message itself failed, or
// a part fails the same way on every Retry: its file changed).
func reopenable(d delivery.Delivery, st delivery.Standing) bool {
	if d.Kind != delivery.KindMessage && d.Kind != delivery.KindDraft {
		return false
	}
	switch st.Phase {
	case delivery.PhaseCancelled, delivery.PhaseBlocked:
		return true
	case delivery.PhaseFailed:
		return st.Member.Role == delivery.RoleMessage || !st.Can(delivery.VerbRetry)
	}
	return false
}

// canReopen reports whether a message's row offers Reopen in Compose: it
// is reopenable and the fields of its message job msg are still kept (not
// once a message reopened from it was queued, so it cannot be sent
// twice).
func (s *transfersScreen) canReopen(rd *rowData, msg string) bool {
	k := s.u.deps.Keeper
	return k != nil && reopenable(rd.d, rd.st) && k.Kept(msg)
}

// cancelAsk is the question asked before an upload is cancelled.
type cancelAsk struct {
	d          *carrierDialog
	text       *wrapLabel
	stop, keep *dialogButton
}

// cancelQuestion names what would be cancelled, in the person's words: a
// message by its stored label (its subject and recipients), anything
// else by its row's name.
func cancelQuestion(name string, message bool) string {
	if !message {
		return lang.X("cancel.upload", "Cancel '{{.Name}}'? Its upload stops.", w{"Name": app.Printable(name)})
	}
	subject, to, ok := strings.Cut(name, " · to ")
	if ok && strings.TrimSpace(to) != "" {
		return lang.X("cancel.message.to", "Cancel '{{.Subject}}' to {{.To}}? Its upload stops; you can reopen it in Compose.", w{"Subject": app.Printable(subject), "To": app.Printable(to)})
	}
	if !ok {
		subject = name
	}
	return lang.X("cancel.message", "Cancel '{{.Subject}}'? Its upload stops; you can reopen it in Compose.", w{"Subject": app.Printable(subject)})
}

// keepWords name the choice not to cancel, as what it keeps: an upload
// that moves keeps uploading; a failed one stays, for Retry or Reopen; a
// paused or parked one stays as it is. snaps are the row's jobs (the
// message first).
func keepWords(snaps []transfer.Snapshot) string {
	var moving, failed, paused, parked bool
	for _, j := range snaps {
		switch j.State {
		case transfer.StateQueued, transfer.StateRunning, transfer.StateRetrying, transfer.StateWaiting:
			moving = moving || !heldMetered(j)
			paused = paused || heldMetered(j)
		case transfer.StateFailed:
			failed = true
		case transfer.StatePaused:
			paused = true
		case transfer.StateSignIn, transfer.StateMissing:
			parked = true
		}
	}
	switch {
	case failed: // a message waiting on a failed file goes nowhere by itself
		return lang.X("cancel.keep.failed", "Keep it")
	case moving:
		return lang.X("quit.keep", "Keep uploading")
	case paused:
		return lang.X("cancel.keep.paused", "Keep it paused")
	case parked:
		return lang.X("cancel.keep.signin", "Keep it waiting")
	}
	return lang.X("quit.keep", "Keep uploading")
}

// askCancel asks before cancelling delivery id (all its jobs): Keep
// uploading is the default, the button that has the focus.
func (s *transfersScreen) askCancel(id string) {
	rd := s.data(s.deliveryOf(id))
	if rd == nil {
		return
	}
	name := rd.title()
	if _, head := rd.head(); rd.mail() {
		name = jobName(head)
	}
	var snaps []transfer.Snapshot
	for _, m := range rd.d.Members {
		snaps = append(snaps, rd.view(m.Job).snap)
	}
	a := &cancelAsk{text: newWrapLabel(cancelQuestion(name, rd.mail()))}
	done := func() {
		a.d.Hide()
		if s.cancelling == a {
			s.cancelling = nil
		}
	}
	a.keep = newDialogButton(display(keepWords(snaps)), theme.ConfirmIcon(), done)
	a.keep.Importance = widget.HighImportance
	a.stop = newDialogButton(display(lang.X("cancel.stop", "Cancel upload")), theme.CancelIcon(), func() {
		done()
		s.act(id, delivery.VerbCancel)
	})
	a.stop.Importance = widget.DangerImportance
	a.d = s.u.newDialog(display(lang.X("cancel.title", "Cancel this upload?")), container.NewVBox(a.text, container.NewHBox(layout.NewSpacer(), a.stop, a.keep)), a.keep)
	a.d.Resize(fyne.NewSize(520, 0))
	s.cancelling = a
	a.d.Show()
	s.u.win.Canvas().Focus(a.keep)
}

// reopen opens the message of delivery id in Compose as it was written.
func (s *transfersScreen) reopen(id string) {
	keeper := s.u.deps.Keeper
	rd := s.data(s.deliveryOf(id))
	if keeper == nil || rd == nil {
		return
	}
	head, _ := rd.head()
	id = head.Job
	s.u.goBackground(func(context.Context) {
		k, err := keeper.Composed(id)
		s.u.do(func() {
			if err != nil {
				why := app.Printable(err.Error())
				if errors.Is(err, app.ErrNotKept) {
					why = app.ErrNotKept.Error() + "."
				}
				s.u.showError(lang.X("reopen.cannot.title", "Cannot reopen this message"), why)
				return
			}
			s.u.compose.reopen(k, lang.X("reopen.reopened", "Reopened"))
		})
	})
}

// reopen puts a message back into the form (asking first when the form
// holds another one) and shows Compose. what says where it came from
// ("Reopened", "Editing the draft").
func (c *composeScreen) reopen(k *message.Composed, what string) { c.reopenThen(k, what, nil) }

// reopenThen is reopen, then then once the form holds k (not when the
// person keeps what Compose held).
func (c *composeScreen) reopenThen(k *message.Composed, what string, then func(*composeScreen)) {
	load := func() {
		c.load(k, what)
		if then != nil {
			then(c)
		}
	}
	if c.busy || c.held {
		c.u.showError(lang.X("reopen.busy.title", "Compose is busy"), lang.X("reopen.busy", "Compose is sending a message. Open this one once it has gone."))
		return
	}
	if c.blank() {
		load()
		return
	}
	c.u.showRiskyConfirm(lang.X("reopen.replace.title", "Replace the message in Compose?"),
		lang.X("reopen.replace", "Compose holds a message that has not been sent. Replace it with '{{.Subject}}'? What Compose holds now is lost.", w{"Subject": app.Printable(orNone(k.Subject))}),
		func(ok bool) {
			if ok {
				load()
			}
		})
}

// blank reports whether the form holds nothing a person wrote.
func (c *composeScreen) blank() bool {
	for _, e := range []*namedEntry{c.to, c.cc, c.bcc, c.subject, c.body} {
		if strings.TrimSpace(e.Text) != "" {
			return false
		}
	}
	return len(c.attachments) == 0
}

// load fills the form with k (fill), says so and shows Compose.
func (c *composeScreen) load(k *message.Composed, what string) {
	c.say(c.fill(k, what))
	c.u.tabs.Select(c.u.composeTab)
}

// fill fills the form with k: its fields, its attachments that are still
// on this computer, the person's choices of how each file goes, and the
// draft it belongs to, if any. It returns the words that say so, naming
// the attachments no longer there.
func (c *composeScreen) fill(k *message.Composed, what string) string {
	c.clear()
	c.to.SetText(strings.Join(k.To, ", "))
	c.cc.SetText(strings.Join(k.Cc, ", "))
	c.bcc.SetText(strings.Join(k.Bcc, ", "))
	c.subject.SetText(k.Subject)
	c.body.SetText(k.Text)
	missing := k.Missing()
	gone := map[string]bool{}
	for _, p := range missing {
		gone[p] = true
	}
	var present []string
	for _, p := range k.Attachments {
		if !gone[p] {
			present = append(present, p)
		}
	}
	c.attach(present...)
	// The message went with every file's way spelled out (linkOptions);
	// only a way that differs from the one Carrier picks by itself was
	// the person's, and is said to be ("your choice").
	auto, _ := c.plan()
	for p, link := range k.Choose {
		if c.has(p) && auto[p].link != link {
			c.choice[p] = link
		}
	}
	if k.Share == message.ShareAnyone {
		c.share.set(1)
	} else {
		c.share.set(0)
		for i, e := range expiryTimes {
			if e == k.Expiry {
				c.expiry.set(i)
			}
		}
	}
	c.draft = k.DraftID
	c.reopened = k.From
	words := lang.X("reopen.what", "{{.What}}: '{{.Subject}}'.", w{"What": what, "Subject": app.Printable(orNone(k.Subject))})
	if c.draft != "" {
		words += " " + lang.X("reopen.draft", "Save as draft updates the draft; Send sends it.")
	}
	if len(missing) > 0 {
		var names []string
		for _, p := range missing {
			names = append(names, lang.X("reopen.wasin", "{{.Name}} (was in {{.Dir}})", w{"Name": app.Printable(filepath.Base(p)), "Dir": app.Printable(filepath.Dir(p))}))
		}
		if len(missing) == 1 {
			words += " " + lang.X("reopen.missing.one", "Not attached: {{.Name}} is no longer there. Attach it again if you still have it.", w{"Name": names[0]})
		} else {
			words += " " + lang.XN("reopen.missing", "Not attached: {{.Count}} files are no longer where they were: {{.Names}}. Attach them again if you still have them.", len(missing), w{"Count": len(missing), "Names": strings.Join(names, "; ")})
		}
	}
	c.updateMeter()
	return words
}
