package ui

import (
	"errors"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"carrier/compose"
	"carrier/internal/app"
)

// Send later: Compose's "Send later…" asks for a time (the next sensible
// ones, or one typed), then queues the message as Send does, held until
// then (app.SendLaterChoices, app.ParseSendAt; the engine's Spec.SendAt):
// every byte but the last goes now, the last at the time, and the
// message is dated then. The Transfers row says when it goes and offers
// to unschedule it (undo.go).

// laterChoiceWords name a time the dialog offers: "Today at 15:00",
// "Tomorrow at 08:00", "Monday at 08:00".
func laterChoiceWords(at, now time.Time) string {
	at = at.In(now.Location())
	clock := at.Format("15:04")
	y, m, d := now.Date()
	switch ay, am, ad := at.Date(); {
	case ay == y && am == m && ad == d:
		return lang.X("later.today", "Today at {{.Time}}", w{"Time": clock})
	case time.Date(y, m, d+1, 0, 0, 0, 0, now.Location()).Equal(time.Date(ay, am, ad, 0, 0, 0, 0, now.Location())):
		return lang.X("later.tomorrow", "Tomorrow at {{.Time}}", w{"Time": clock})
	case at.Weekday() == time.Monday:
		return lang.X("later.monday", "Monday at {{.Time}}", w{"Time": clock})
	}
	return at.Format("2006-01-02 15:04")
}

// laterProblem words why a typed time was refused.
func laterProblem(err error) string {
	switch {
	case errors.Is(err, app.ErrSendAtPast):
		return lang.X("later.past", "That time has passed (or is less than a minute away): choose a later one, or press Send.")
	case errors.Is(err, app.ErrSendAtTooFar):
		return lang.X("later.toofar", "At most a year ahead.")
	}
	return lang.X("later.unreadable", "Carrier cannot read that time: type a date and time such as 2026-12-01 09:00, or a time of day such as 09:00.")
}

// laterAsk is the Send later dialog while it is open.
type laterAsk struct {
	choices []*dialogButton // the times offered, in order
	other   *namedEntry     // another time, typed
	send    *dialogButton   // sends at the time typed
	problem *wrapLabel      // why the time typed was refused
}

// askLater asks when to send the message in the form, and sends it then.
func (c *composeScreen) askLater() {
	if c.busy {
		return
	}
	u := c.u
	now := time.Now()
	var d *carrierDialog
	schedule := func(at time.Time) {
		d.Hide()
		c.submitAt(compose.Send, at)
	}
	a := &laterAsk{}
	var objs []fyne.CanvasObject
	objs = append(objs, newWrapLabel(lang.X("later.explain", "Everything but the last bytes goes now; the message leaves at the time you choose, and is dated then. Carrier must be running at that time (it sends at once when it starts later).")))
	for _, at := range app.SendLaterChoices(now) {
		b := newDialogButton(display(laterChoiceWords(at, now)), theme.HistoryIcon(), func() { schedule(at) })
		a.choices = append(a.choices, b)
		objs = append(objs, b)
	}
	other := newNamedEntry(lang.X("later.other", "Another time"), false)
	other.SetPlaceHolder(now.Add(24*time.Hour).Format("2006-01-02") + " 09:00")
	problem := newWrapLabel("")
	problem.Importance = widget.DangerImportance
	problem.Hide()
	pick := func() {
		at, err := app.ParseSendAt(other.Text, time.Now())
		if err != nil {
			setLabel(problem, laterProblem(err))
			problem.Show()
			return
		}
		schedule(at)
	}
	other.OnSubmitted = func(string) { pick() }
	otherBtn := newDialogButton(display(lang.X("later.other.send", "Send then")), theme.MailSendIcon(), pick)
	a.other, a.send, a.problem = other, otherBtn, problem
	c.later = a
	objs = append(objs, newLabel(lang.X("later.other", "Another time")+":"), mirrorRTL(container.NewBorder(nil, nil, nil, otherBtn, other)), problem)
	cancel := newDialogButton(display(lang.X("row.cancel", "Cancel")), theme.CancelIcon(), func() { d.Hide() })
	d = u.newDialog(display(lang.X("later.title", "Send later")), container.NewVBox(objs...), cancel, cancel)
	d.Show()
	// Laid out at its width, the words above wrap into fewer lines than
	// before it had one: sized again once they are, the dialog fits them.
	d.Resize(fyne.NewSize(460, 1))
	d.Resize(fyne.NewSize(460, 1))
}
