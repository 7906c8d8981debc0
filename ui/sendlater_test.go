package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"carrier/internal/delivery"
	"carrier/transfer"
)

// Send later: a time typed in the dialog queues the message held until
// then (every byte but the last sent), the row says when it goes and
// offers to unschedule it, the tray does not offer Undo for it, and
// unscheduling sends nothing and gives the message back to Compose.
func TestSendLaterHoldsTheMessageUntilItsTime(t *testing.T) {
	h := newHarness(t)
	undoAfter(0)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Tomorrow")
	test.Tap(c.laterBtn)
	if c.later == nil || len(c.later.choices) == 0 {
		t.Fatal("Send later offers no time")
	}
	at := time.Now().Add(3 * time.Hour).Truncate(time.Minute)
	c.later.other.SetText(at.Format("2006-01-02 15:04"))
	test.Tap(c.later.send)

	var row *transferRow
	var msg transfer.Snapshot
	h.until("the message waits for its time", func() bool {
		row = h.onlyRow()
		for _, s := range h.q.Jobs() {
			msg = s
		}
		return row != nil && msg.State == transfer.StateScheduled && row.undo.Visible() && strings.HasPrefix(row.state.Text, "Scheduled")
	})
	if !msg.SendAt.Equal(at) {
		t.Errorf("the message goes at %s, want %s", msg.SendAt, at)
	}
	if want := "Scheduled: sending at " + at.Format("2006-01-02 15:04"); !strings.Contains(row.state.Text, want) {
		t.Errorf("the row says %q, want %q", row.state.Text, want)
	}
	if row.undo.Text != "Unschedule and edit" {
		t.Errorf("the row's Undo says %q", row.undo.Text)
	}
	if n := len(undoable(h.u.transfers.snapshots(), time.Now())); n != 0 {
		t.Errorf("the tray offers to undo %d messages sent later", n)
	}
	if n := len(h.messages()); n != 0 {
		t.Fatalf("%d messages before the time, want none", n)
	}
	h.until("Compose is emptied by Send later", func() bool { return c.subject.Text == "" })
	test.Tap(row.undo)
	h.until("Compose holds the message again", func() bool { return c.subject.Text == "Tomorrow" })
	if !strings.Contains(c.status.Text, "Unscheduled") {
		t.Errorf("Compose says %q", c.status.Text)
	}
	h.until("the message is cancelled", func() bool { return h.stateOf(msg.ID) == transfer.StateCancelled })
	if n := len(h.messages()); n != 0 {
		t.Fatalf("%d messages after unscheduling, want none", n)
	}
}

// A time that passed, is too far, or cannot be read is refused in the
// dialog, in words, and nothing is queued.
func TestSendLaterRefusesABadTime(t *testing.T) {
	h := newHarness(t)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "When")
	test.Tap(c.laterBtn)
	for _, c2 := range []struct{ in, says string }{
		{time.Now().Add(-time.Hour).Format("2006-01-02 15:04"), "has passed"},
		{time.Now().Add(370 * 24 * time.Hour).Format("2006-01-02 15:04"), "At most a year"},
		{"soonish", "cannot read that time"},
	} {
		c.later.other.SetText(c2.in)
		test.Tap(c.later.send)
		if !c.later.problem.Visible() || !strings.Contains(c.later.problem.Text, c2.says) {
			t.Errorf("%q: the dialog says %q, want %q", c2.in, c.later.problem.Text, c2.says)
		}
	}
	h.nothingQueued("after refused times")
	if c.subject.Text != "When" {
		t.Error("a refused time emptied the form")
	}
}

// A message held for its time counts down only once every byte but the
// last is in Gmail: while its bytes still go, its row says so (Undo is
// offered all the same).
func TestHeldMessageCountsDownOnlyOnceScheduled(t *testing.T) {
	h := newHarness(t)
	now := time.Now()
	d := delivery.Delivery{ID: "d", Kind: delivery.KindMessage, Members: []delivery.Member{{Job: "m", Role: delivery.RoleMessage}}}
	for _, c := range []struct {
		state     transfer.State
		countdown bool
	}{
		{transfer.StateRunning, false},
		{transfer.StateScheduled, true},
	} {
		snap := transfer.Snapshot{ID: "m", State: c.state, SendAt: now.Add(10 * time.Second), Size: 1000, Confirmed: 200,
			URL: "http://127.0.0.1/upload/gmail/v1/users/me/messages/send?uploadType=resumable"}
		rd := newRowData(d, func(string) *jobView { return &jobView{snap: snap} })
		rd.stand()
		if !rd.st.Can(delivery.VerbUndo) {
			t.Fatalf("%s: a held message may not be undone (%+v)", c.state, rd.st)
		}
		words := h.u.transfers.phaseWords(rd)
		if got := strings.HasPrefix(words, "Sending in "); got != c.countdown {
			t.Errorf("%s: the row says %q; counting down: %v, want %v", c.state, words, got, c.countdown)
		}
	}
}

// A message that left later than its time says when, and why it may
// have; one that left on time says Sent.
func TestLateMessageSaysWhenItWent(t *testing.T) {
	h := newHarness(t)
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.Local)
	d := delivery.Delivery{ID: "d", Kind: delivery.KindMessage, Members: []delivery.Member{{Job: "m", Role: delivery.RoleMessage}}}
	for _, c := range []struct {
		sent time.Time
		want string
	}{
		{at.Add(3 * time.Second), "Sent"},
		{at.Add(14*time.Minute + 20*time.Second), "Sent at 09:14, 14 min after its time (09:00): the computer was asleep, offline or still uploading then"},
	} {
		snap := transfer.Snapshot{ID: "m", State: transfer.StateDone, SendAt: at, Updated: c.sent, Size: 1000, Confirmed: 1000,
			URL: "http://127.0.0.1/upload/gmail/v1/users/me/messages/send?uploadType=resumable"}
		rd := newRowData(d, func(string) *jobView { return &jobView{snap: snap} })
		rd.stand()
		if got := h.u.transfers.phaseWords(rd); got != c.want {
			t.Errorf("sent %s after its time: %q, want %q", c.sent.Sub(at), got, c.want)
		}
	}
}

// scheduleLater writes a message and sends it later at, through the
// dialog, and waits for its row to say so.
func (h *harness) scheduleLater(subject string, at time.Time) *transferRow {
	h.t.Helper()
	c := h.u.compose
	h.writeMessage("zoe@example.com", subject)
	test.Tap(c.laterBtn)
	c.later.other.SetText(at.Format("2006-01-02 15:04"))
	test.Tap(c.later.send)
	var row *transferRow
	h.until("the message waits for its time", func() bool {
		row = h.rowNamed(subject)
		return row != nil && strings.HasPrefix(row.state.Text, "Scheduled") && row.sendNow.Visible()
	})
	h.until("Compose is emptied", func() bool { return c.subject.Text == "" })
	return row
}

// Send now on a message sent later sends it once, now and dated now; the
// scheduled one is cancelled, never sent.
func TestSendNowSendsAScheduledMessageOnceDatedNow(t *testing.T) {
	h := newHarness(t)
	undoAfter(0)
	later := time.Now().Add(5 * time.Hour).Truncate(time.Minute)
	row := h.scheduleLater("Rather now", later)
	test.Tap(row.sendNow)
	h.until("one message is sent", func() bool { return len(h.messages()) == 1 })
	raw := h.messages()[0].raw
	if strings.Contains(raw, "Date: "+later.Format("Mon, 02 Jan 2006 15:04")) {
		t.Errorf("the message sent now is dated its old time:\n%.300s", raw)
	}
	h.until("Compose is emptied by Send", func() bool { return h.u.compose.subject.Text == "" })
	time.Sleep(300 * time.Millisecond)
	if n := len(h.messages()); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
}

// Change time gives the message a new time: the old one is cancelled and
// the new one waits for the time chosen.
func TestChangeTimeSchedulesTheMessageAgain(t *testing.T) {
	h := newHarness(t)
	undoAfter(0)
	first := time.Now().Add(5 * time.Hour).Truncate(time.Minute)
	row := h.scheduleLater("Move me", first)
	c := h.u.compose
	c.later = nil // the first dialog's
	test.Tap(row.retime)
	h.until("the time is asked again, the message back in Compose", func() bool { return c.later != nil && c.subject.Text == "Move me" })
	second := first.Add(24 * time.Hour)
	c.later.other.SetText(second.Format("2006-01-02 15:04"))
	test.Tap(c.later.send)
	h.until("the message waits for its new time", func() bool {
		n := 0
		for _, s := range h.q.Jobs() {
			if s.State == transfer.StateScheduled && s.SendAt.Equal(second) {
				n++
			}
		}
		return n == 1
	})
	for _, s := range h.q.Jobs() {
		if s.SendAt.Equal(first) && s.State != transfer.StateCancelled {
			t.Errorf("the message at its first time is %s, want cancelled", s.State)
		}
	}
	if n := len(h.messages()); n != 0 {
		t.Fatalf("%d messages sent, want none", n)
	}
}

// A time more than six days ahead: nothing goes yet, and the row says
// when the upload starts as well as when the message goes.
func TestSendLaterFarAheadSaysWhenItsUploadStarts(t *testing.T) {
	h := newHarness(t)
	undoAfter(0)
	c := h.u.compose
	h.writeMessage("zoe@example.com", "Next week")
	test.Tap(c.laterBtn)
	at := time.Now().Add(9 * 24 * time.Hour).Truncate(time.Minute)
	c.later.other.SetText(at.Format("2006-01-02 15:04"))
	test.Tap(c.later.send)

	var row *transferRow
	var msg transfer.Snapshot
	h.until("the message waits for its upload's start", func() bool {
		row = h.onlyRow()
		for _, s := range h.q.Jobs() {
			msg = s
		}
		return row != nil && msg.State == transfer.StateScheduled && strings.HasPrefix(row.state.Text, "Scheduled")
	})
	if msg.Confirmed != 0 || !msg.UploadFrom.Equal(at.Add(-transfer.ScheduleLead)) {
		t.Errorf("scheduled with %d bytes confirmed, upload from %s: want none yet, from %s", msg.Confirmed, msg.UploadFrom, at.Add(-transfer.ScheduleLead))
	}
	want := "Scheduled: sending at " + at.Format("2006-01-02 15:04") + ". Its upload starts " + at.Add(-transfer.ScheduleLead).Format("2006-01-02 15:04")
	if !strings.Contains(row.state.Text, want) {
		t.Errorf("the row says %q, want %q", row.state.Text, want)
	}
	test.Tap(row.undo)
	h.until("Compose holds the message again", func() bool { return c.subject.Text == "Next week" })
	h.until("the message is cancelled", func() bool { return h.stateOf(msg.ID) == transfer.StateCancelled })
	if n := len(h.messages()); n != 0 {
		t.Fatalf("%d messages, want none", n)
	}
}
