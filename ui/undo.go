package ui

import (
	"context"
	"errors"
	"math"
	"time"

	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/delivery"
)

// Undo send: a message sent from Compose holds its last bytes for the
// person's chosen delay (app.UndoWindows; the engine's Spec.SendAt), and
// its row says "Sending in 10 s" with Undo, which cancels it (its Drive
// files asked about as after Cancel) and opens it again in Compose.

// prefUndoWindow keeps the Undo send setting: an index of app.UndoWindows.
const prefUndoWindow = "undo-window"

// undoChoices are the setting's answers, in the window's language.
func undoChoices() []string {
	out := []string{lang.X("undo.off", "Off")}
	for _, d := range app.UndoWindows[1:] {
		out = append(out, lang.X("undo.seconds", "{{.Seconds}} s", w{"Seconds": int(d.Seconds())}))
	}
	return out
}

// defaultUndoChoice is app.DefaultUndoWindow's index.
func defaultUndoChoice() int {
	for i, d := range app.UndoWindows {
		if d == app.DefaultUndoWindow {
			return i
		}
	}
	return 0
}

// undoWindow is the delay the person chose (app.DefaultUndoWindow until
// they choose one).
func (u *UI) undoWindow() time.Duration {
	i := u.app.Preferences().IntWithFallback(prefUndoWindow, defaultUndoChoice())
	if i < 0 || i >= len(app.UndoWindows) {
		i = defaultUndoChoice()
	}
	return app.UndoWindows[i]
}

// undoSetting is the Settings section's choice of the delay.
func (u *UI) undoSetting() *choices {
	c := newChoices(lang.X("undo.setting", "Undo send (a message waits this long before it leaves)"), undoChoices(), nil)
	c.set(defaultUndoChoice())
	keepChoice(u.app.Preferences(), prefUndoWindow, c)
	return c
}

// undoLeft is how long a delivery standing at st may still be undone
// (0: it may not).
func undoLeft(st delivery.Standing, now time.Time) time.Duration {
	if !st.Can(delivery.VerbUndo) {
		return 0
	}
	return max(st.SendAt.Sub(now), 0)
}

// countFrom is how close to its time a held message counts down in
// seconds; further off (Send later) its row says the time instead.
const countFrom = 2 * time.Minute

// undoWords are a row's words while its message waits for its time:
// seconds counted down near it, the time itself further off, and when its
// upload starts if that is still ahead (from: the time was more than
// transfer.ScheduleLead off).
func undoWords(left time.Duration, at, from time.Time) string {
	if left > countFrom && !from.IsZero() {
		return lang.X("later.row.from", "Scheduled: sending at {{.When}}. Its upload starts {{.From}}, since Google keeps an unfinished upload for a week.",
			w{"When": at.Local().Format("2006-01-02 15:04"), "From": from.Local().Format("2006-01-02 15:04")})
	}
	if left > countFrom {
		return lang.X("later.row", "Scheduled: sending at {{.When}}", w{"When": at.Local().Format("2006-01-02 15:04")})
	}
	secs := int(math.Ceil(left.Seconds()))
	return lang.X("undo.sending.in", "Sending in {{.Seconds}} s", w{"Seconds": secs})
}

// countDown draws row r again when the next second of its undo window
// begins (UI thread), while the window lasts: one timer a row at most.
// A message further off than countFrom is drawn again when its count
// begins.
func (s *transfersScreen) countDown(r *transferRow, left time.Duration) {
	if r.countdown || left <= 0 {
		return
	}
	r.countdown = true
	next := left % time.Second
	if next == 0 {
		next = time.Second
	}
	if left > countFrom {
		next = left - countFrom
	}
	time.AfterFunc(next, func() {
		s.u.do(func() {
			r.countdown = false
			s.draw(r.id)
		})
	})
}

// undo cancels delivery id's held message and opens it again in Compose;
// the files its links already put on Drive are asked about as after a
// Cancel. A message that already left is said to be sent.
func (s *transfersScreen) undo(id string) { s.undoThen(id, nil) }

// undoThen is undo, then (with the message back in Compose) then: Send
// now sends it, Change time asks for another time. A message sent later
// is dated its time in Gmail, so it is made again rather than released
// early.
func (s *transfersScreen) undoThen(id string, then func(*composeScreen)) {
	keeper := s.u.deps.Keeper
	rd := s.data(s.deliveryOf(id))
	if keeper == nil || rd == nil {
		return
	}
	head, _ := rd.head()
	did := rd.d.ID
	reopened := lang.X("undo.reopened", "Undone, not sent")
	if undoLeft(rd.st, s.now()) > countFrom {
		reopened = lang.X("later.reopened", "Unscheduled, not sent: change it, then send it now or later")
	}
	s.u.goBackground(func(ctx context.Context) {
		undone, err := keeper.Undo(ctx, head.Job)
		s.u.do(func() {
			switch {
			case errors.Is(err, app.ErrTooLateToUndo):
				s.u.showError(lang.X("undo.late.title", "Too late to undo"), lang.X("undo.late", "The message was already sent."))
				return
			case err != nil && undone.Composed == nil && len(undone.Files) == 0:
				s.u.showError(lang.X("parts.couldnot.title", "Could not do that"), windowText(err.Error()))
				return
			case err != nil:
				setLabel(s.status, windowText(err.Error()))
			}
			s.draw(did)
			if undone.Composed != nil {
				s.u.compose.reopenThen(undone.Composed, reopened, then)
			}
			if len(undone.Files) > 0 {
				s.askDrive(did, undone.Files)
			}
		})
	})
}

// undoButton is a row's Undo.
func (s *transfersScreen) undoButton(id string) *focusButton {
	b := newFocusButton(undoLabel(0), theme.ContentUndoIcon(), func() { s.undo(id) })
	b.Hide()
	return b
}

// laterButtons are a row's Send now and Change time…, for a message sent
// later that has no Drive links (whose files Undo asks about).
func (s *transfersScreen) laterButtons(id string) (now, retime *focusButton) {
	now = newFocusButton(lang.X("later.now", "Send now"), theme.MailSendIcon(), func() {
		s.undoThen(id, func(c *composeScreen) { c.submit(compose.Send) })
	})
	retime = newFocusButton(lang.X("later.retime", "Change time…"), theme.HistoryIcon(), func() {
		s.undoThen(id, (*composeScreen).askLater)
	})
	now.Hide()
	retime.Hide()
	return now, retime
}

// undoLabel names Undo for a message left long before its time: a message
// sent later is taken back to be changed (its time, or sent now).
func undoLabel(left time.Duration) string {
	if left > countFrom {
		return lang.X("later.edit", "Unschedule and edit")
	}
	return lang.X("undo.button", "Undo")
}
