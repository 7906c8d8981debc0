package transfer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Timetable is a bandwidth limit that may change with the time of day or
// the day of the week, in rclone's --bwlimit syntax. The zero Timetable
// limits nothing.
//
// Forms:
//
//	"2M"                          2 MiB/s all the time
//	"off"                         no limit
//	"08:00,1M 19:00,off"          1 MiB/s from 08:00 to 19:00 every day
//	"Mon-08:00,512k Sat-00:00,off" 512 KiB/s from Monday 08:00 to Saturday
//
// A rate is a number with a suffix B (bytes), K, M, G or T (binary, as
// rclone: "1M" is 1 MiB/s), or "off"; a bare number is KiB/s, as in
// rclone. "2MB", "2MiB" and "2MiB/s" are read as "2M", since people write
// them for the same thing (issue 13 itself says --bwlimit 2MB): there is
// no decimal megabyte here. An entry without a day applies every day. The
// table repeats every week, so before its first entry of the week the
// week's last entry stands. rclone's "upload:download" rate pairs keep
// the upload rate. Times are the clock's local time (the time.Time given).
type Timetable struct {
	slots []slot // sorted by minute of the week; nil: a constant rate
	rate  int64  // the constant rate when slots is nil
}

// slot is one change of rate, at minute of the week (Monday 00:00 = 0).
type slot struct {
	at   int
	rate int64
}

const minutesPerWeek = 7 * 24 * 60

var weekdays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// ParseBandwidth reads a limit or a timetable; see Timetable.
func ParseBandwidth(s string) (Timetable, error) {
	s = strings.TrimSpace(s)
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Timetable{}, fmt.Errorf("bandwidth limit is empty: give a rate such as 2M or 512k, \"off\", or a timetable such as \"08:00,1M 19:00,off\"")
	}
	if len(fields) == 1 && !strings.Contains(fields[0], ",") {
		r, err := parseRate(fields[0])
		if err != nil {
			return Timetable{}, fmt.Errorf("bandwidth limit %q: %w", s, err)
		}
		return Timetable{rate: r}, nil
	}
	var t Timetable
	seen := map[int]string{}
	for _, f := range fields {
		when, rate, ok := strings.Cut(f, ",")
		if !ok {
			return Timetable{}, fmt.Errorf("bandwidth timetable %q: entry %q is not TIME,RATE (e.g. 08:00,1M or Mon-08:00,512k)", s, f)
		}
		r, err := parseRate(rate)
		if err != nil {
			return Timetable{}, fmt.Errorf("bandwidth timetable %q: entry %q: %w", s, f, err)
		}
		days, minute, err := parseWhen(when)
		if err != nil {
			return Timetable{}, fmt.Errorf("bandwidth timetable %q: entry %q: %w", s, f, err)
		}
		for _, d := range days {
			at := d*24*60 + minute
			if prev, dup := seen[at]; dup {
				return Timetable{}, fmt.Errorf("bandwidth timetable %q: entries %q and %q give the same time", s, prev, f)
			}
			seen[at] = f
			t.slots = append(t.slots, slot{at: at, rate: r})
		}
	}
	sort.Slice(t.slots, func(i, j int) bool { return t.slots[i].at < t.slots[j].at })
	return t, nil
}

// parseWhen reads "HH:MM" (every day) or "Day-HH:MM".
func parseWhen(s string) (days []int, minute int, err error) {
	clock := s
	if day, rest, ok := strings.Cut(s, "-"); ok {
		d := -1
		for i, name := range weekdays {
			if l := strings.ToLower(day); l == name || l == fullWeekdays[i] {
				d = i
			}
		}
		if d < 0 {
			return nil, 0, fmt.Errorf("%q is not a day (Mon, Tue, Wed, Thu, Fri, Sat or Sun)", day)
		}
		days, clock = []int{d}, rest
	} else {
		days = []int{0, 1, 2, 3, 4, 5, 6}
	}
	hh, mm, ok := strings.Cut(clock, ":")
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if !ok || err1 != nil || err2 != nil || len(hh) < 1 || len(hh) > 2 || len(mm) != 2 || h < 0 || h > 23 || m < 0 || m > 59 {
		return nil, 0, fmt.Errorf("%q is not a time of day HH:MM (00:00 to 23:59)", clock)
	}
	return days, h*60 + m, nil
}

// fullWeekdays are accepted besides the three letters rclone documents.
var fullWeekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// parseRate reads one rate in bytes per second; 0 is "off".
func parseRate(s string) (int64, error) {
	if up, _, ok := strings.Cut(s, ":"); ok {
		s = up // rclone's upload:download pair
	}
	if strings.EqualFold(s, "off") {
		return 0, nil
	}
	num := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(s), "/s"), "ps")
	// "2MB" and "2MiB" say 2M; a lone "b" stays bytes.
	unitBefore := func(k int) bool { return len(num) > k && strings.ContainsAny(num[len(num)-k-1:len(num)-k], "kmgt") }
	if strings.HasSuffix(num, "ib") && unitBefore(2) {
		num = num[:len(num)-2]
	} else if strings.HasSuffix(num, "b") && unitBefore(1) {
		num = num[:len(num)-1]
	}
	mult := float64(1 << 10) // a bare number is KiB/s, as in rclone
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'b':
			mult, num = 1, num[:n-1]
		case 'k':
			mult, num = 1<<10, num[:n-1]
		case 'm':
			mult, num = 1<<20, num[:n-1]
		case 'g':
			mult, num = 1<<30, num[:n-1]
		case 't':
			mult, num = 1<<40, num[:n-1]
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || strings.ContainsAny(num, "eExXpP_") || v < 0 || v*mult >= 1<<62 || v != v {
		return 0, fmt.Errorf("%q is not a rate: give a number with B, K, M or G (bytes, KiB, MiB, GiB per second; a bare number is KiB), or \"off\"", s)
	}
	r := int64(v * mult)
	if v > 0 && r == 0 {
		return 0, fmt.Errorf("%q is less than one byte per second", s)
	}
	return r, nil
}

// minuteOfWeek counts from Monday 00:00 in now's location.
func minuteOfWeek(now time.Time) int {
	d := (int(now.Weekday()) + 6) % 7 // Monday = 0
	return d*24*60 + now.Hour()*60 + now.Minute()
}

// At is the limit in bytes per second at now; 0: unlimited.
func (t Timetable) At(now time.Time) int64 {
	if len(t.slots) == 0 {
		return t.rate
	}
	m := minuteOfWeek(now)
	i := sort.Search(len(t.slots), func(i int) bool { return t.slots[i].at > m })
	if i == 0 {
		return t.slots[len(t.slots)-1].rate // the week's last entry still stands
	}
	return t.slots[i-1].rate
}

// Next is when the limit may next change after now (the next entry of the
// table, whether or not its rate differs); the zero time when it never
// does.
func (t Timetable) Next(now time.Time) time.Time {
	if len(t.slots) == 0 {
		return time.Time{}
	}
	m := minuteOfWeek(now)
	i := sort.Search(len(t.slots), func(i int) bool { return t.slots[i].at > m })
	ahead := 0
	if i == len(t.slots) {
		ahead = minutesPerWeek - m + t.slots[0].at
	} else {
		ahead = t.slots[i].at - m
	}
	// Dates, not durations, so a change of daylight saving time keeps
	// the entries at their wall-clock times.
	y, mo, d := now.Date()
	return time.Date(y, mo, d, now.Hour(), now.Minute()+ahead, 0, 0, now.Location())
}

// Constant reports whether the limit never changes with the time.
func (t Timetable) Constant() bool { return len(t.slots) == 0 }

// String gives the timetable back in the syntax ParseBandwidth reads.
func (t Timetable) String() string {
	if len(t.slots) == 0 {
		return formatRate(t.rate)
	}
	parts := make([]string, len(t.slots))
	for i, s := range t.slots {
		d := s.at / (24 * 60)
		parts[i] = fmt.Sprintf("%s-%02d:%02d,%s", strings.ToUpper(weekdays[d][:1])+weekdays[d][1:], s.at/60%24, s.at%60, formatRate(s.rate))
	}
	return strings.Join(parts, " ")
}

func formatRate(r int64) string {
	switch {
	case r == 0:
		return "off"
	case r%(1<<30) == 0:
		return strconv.FormatInt(r>>30, 10) + "G"
	case r%(1<<20) == 0:
		return strconv.FormatInt(r>>20, 10) + "M"
	case r%(1<<10) == 0:
		return strconv.FormatInt(r>>10, 10) + "k"
	}
	return strconv.FormatInt(r, 10) + "B"
}
