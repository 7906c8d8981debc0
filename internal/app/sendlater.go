package app

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Send later is Undo send's hold with a time the person chose: every
// byte but the last goes now, the last at that time (LinkOptions.SendAt,
// transfer.Spec.SendAt). The window's Send later and `carrier send --at`
// both read and check the time here.

// MaxSendLater bounds how far ahead a message may be scheduled: a year,
// against a mistyped year. Google forgets a resumable session not
// finished within a week (docs/PROTOCOL.md 4.1), so a message for a time
// further ahead than transfer.ScheduleLead (6 days) starts its upload
// then, not now (Snapshot.UploadFrom).
const MaxSendLater = 366 * 24 * time.Hour

// ErrSendAtPast refuses a time that has come already.
var ErrSendAtPast = errors.New("that time has passed")

// ErrSendAtTooFar refuses a time further ahead than MaxSendLater.
var ErrSendAtTooFar = errors.New("at most a year ahead")

// CheckSendAt refuses a Send later time that has passed (or comes within
// the minute: that is Send, or Undo send's window) or lies further ahead
// than MaxSendLater.
func CheckSendAt(at, now time.Time) error {
	switch {
	case at.Before(now.Add(time.Minute)):
		return fmt.Errorf("%s: %w", at.Local().Format("2006-01-02 15:04"), ErrSendAtPast)
	case at.After(now.Add(MaxSendLater)):
		return fmt.Errorf("%s: %w", at.Local().Format("2006-01-02 15:04"), ErrSendAtTooFar)
	}
	return nil
}

// ParseSendAt reads a time a person gives for Send later, in the
// computer's time zone unless it names one: "2026-12-01T09:00",
// "2026-12-01 09:00", RFC 3339 ("2026-12-01T09:00:00+01:00"), or a time
// of day alone ("09:00", "9:00"), which is the next such time: today if
// it is still ahead, else tomorrow. The time is checked (CheckSendAt).
func ParseSendAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errors.New("no time given: a date and time such as 2026-12-01T09:00, or a time of day such as 09:00")
	}
	var at time.Time
	var err error
	if at, err = time.Parse(time.RFC3339, s); err != nil {
		at, err = parseLocal(s, now)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time Carrier reads: give a date and time such as 2026-12-01T09:00, or a time of day such as 09:00", s)
	}
	at = at.Round(0)
	return at, CheckSendAt(at, now)
}

func parseLocal(s string, now time.Time) (time.Time, error) {
	loc := now.Location()
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if at, err := time.ParseInLocation(layout, s, loc); err == nil {
			return at, nil
		}
	}
	for _, layout := range []string{"15:04", "15:04:05"} {
		t, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			continue
		}
		y, m, d := now.Date()
		at := time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, loc)
		if !at.After(now) {
			at = time.Date(y, m, d+1, t.Hour(), t.Minute(), t.Second(), 0, loc)
		}
		return at, nil
	}
	return time.Time{}, errors.New("not a time")
}

// SendLaterChoices are the times the window offers first: this morning
// at 8:00 (in the night before it), later today (the next full hour at
// least two hours ahead, from 9:00 until 20:00), tomorrow at 8:00 and
// 13:00, and the coming Monday at 8:00 (a week ahead when today is
// Monday, dropped then as too far). Nobody is offered 3:00.
func SendLaterChoices(now time.Time) []time.Time {
	loc := now.Location()
	y, m, d := now.Date()
	day := func(n, h int) time.Time { return time.Date(y, m, d+n, h, 0, 0, 0, loc) }
	var out []time.Time
	if morning := day(0, 8); !morning.Before(now.Add(time.Hour)) {
		out = append(out, morning)
	}
	if later := now.Add(2 * time.Hour).Truncate(time.Hour).Add(time.Hour); !later.Before(day(0, 9)) && !later.After(day(0, 20)) {
		out = append(out, later)
	}
	out = append(out, day(1, 8), day(1, 13))
	monday := int(time.Monday-now.Weekday()+7) % 7
	if monday == 0 {
		monday = 7
	}
	if monday > 1 { // tomorrow's 8:00 is offered already
		out = append(out, day(monday, 8))
	}
	keep := out[:0]
	for _, at := range out {
		if CheckSendAt(at, now) == nil {
			keep = append(keep, at)
		}
	}
	return keep
}

// Lateness is how much later than its time a scheduled message went,
// to the minute: 0 when within a minute of it (the last request's own
// time). A
// message is late when the computer slept through its time, or Carrier
// was not running then, or its bytes were still on their way.
func Lateness(at, sent time.Time) time.Duration {
	if at.IsZero() || sent.Sub(at) < time.Minute {
		return 0
	}
	return sent.Sub(at).Round(time.Minute)
}
