package app

import (
	"errors"
	"testing"
	"time"
)

func TestParseSendAt(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	now := time.Date(2026, 11, 27, 10, 30, 0, 0, loc) // a Friday
	for _, c := range []struct {
		in   string
		want time.Time
		err  error
	}{
		{"2026-11-28T09:00", time.Date(2026, 11, 28, 9, 0, 0, 0, loc), nil},
		{"2026-11-28 09:00", time.Date(2026, 11, 28, 9, 0, 0, 0, loc), nil},
		{" 2026-11-28 09:00:30 ", time.Date(2026, 11, 28, 9, 0, 30, 0, loc), nil},
		{"2026-11-28T09:00:00Z", time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC), nil},
		{"12:00", time.Date(2026, 11, 27, 12, 0, 0, 0, loc), nil},  // still ahead today
		{"9:00", time.Date(2026, 11, 28, 9, 0, 0, 0, loc), nil},    // passed today: tomorrow
		{"10:30", time.Date(2026, 11, 28, 10, 30, 0, 0, loc), nil}, // now: tomorrow's
		{"10:30:30", time.Time{}, ErrSendAtPast},                   // 30 s ahead: within the minute
		{"2026-11-27T10:00", time.Time{}, ErrSendAtPast},
		{"2026-12-03T11:00", time.Date(2026, 12, 3, 11, 0, 0, 0, loc), nil},  // beyond 6 days: its upload starts later
		{"2027-11-28T10:00", time.Date(2027, 11, 28, 10, 0, 0, 0, loc), nil}, // 366 days less 30 min
		{"2027-11-28T11:00", time.Time{}, ErrSendAtTooFar},
	} {
		got, err := ParseSendAt(c.in, now)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%q: %v, want %v", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%q: %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "tomorrow", "25:00", "2026-13-01T09:00", "09:00 PM"} {
		if _, err := ParseSendAt(in, now); err == nil || errors.Is(err, ErrSendAtPast) || errors.Is(err, ErrSendAtTooFar) {
			t.Errorf("%q read as a time (%v)", in, err)
		}
	}
}

func TestSendLaterChoices(t *testing.T) {
	loc := time.FixedZone("X", 0)
	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, loc) }
	for _, c := range []struct {
		now  time.Time
		want []time.Time
	}{
		// Friday morning: this afternoon, tomorrow 8 and 13, Monday 8.
		{time.Date(2026, 11, 27, 10, 30, 0, 0, loc), []time.Time{day(27, 13), day(28, 8), day(28, 13), day(30, 8)}},
		// Friday evening: no more today.
		{time.Date(2026, 11, 27, 18, 30, 0, 0, loc), []time.Time{day(28, 8), day(28, 13), day(30, 8)}},
		// Sunday: Monday 8:00 is tomorrow's, offered once.
		{time.Date(2026, 11, 29, 9, 0, 0, 0, loc), []time.Time{day(29, 12), day(30, 8), day(30, 13)}},
		// In the night: this morning at 8, not 3:00.
		{time.Date(2026, 11, 28, 0, 47, 0, 0, loc), []time.Time{day(28, 8), day(29, 8), day(29, 13), day(30, 8)}},
		// Early morning, less than an hour before 8: later today at 10.
		{time.Date(2026, 11, 27, 7, 10, 0, 0, loc), []time.Time{day(27, 10), day(28, 8), day(28, 13), day(30, 8)}},
		// Monday evening: the next Monday is a week ahead, offered too (its
		// upload starts six days before it).
		{time.Date(2026, 11, 30, 21, 0, 0, 0, loc), []time.Time{time.Date(2026, 12, 1, 8, 0, 0, 0, loc), time.Date(2026, 12, 1, 13, 0, 0, 0, loc), time.Date(2026, 12, 7, 8, 0, 0, 0, loc)}},
	} {
		got := SendLaterChoices(c.now)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.now, got, c.want)
			continue
		}
		for i := range got {
			if !got[i].Equal(c.want[i]) {
				t.Errorf("%s: %v, want %v", c.now, got, c.want)
				break
			}
		}
	}
}

func TestLateness(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		sent time.Time
		want time.Duration
	}{
		{at.Add(2 * time.Second), 0},
		{at.Add(59 * time.Second), 0},
		{at.Add(14*time.Minute + 10*time.Second), 14 * time.Minute},
	} {
		if got := Lateness(at, c.sent); got != c.want {
			t.Errorf("sent %s after: %s, want %s", c.sent.Sub(at), got, c.want)
		}
	}
	if Lateness(time.Time{}, at) != 0 {
		t.Error("a message with no time is late")
	}
}
