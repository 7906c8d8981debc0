package ui

import (
	"fmt"
	"fyne.io/fyne/v2/lang"
	"strings"
	"time"

	"carrier/compose"
	"carrier/internal/app"
)

// w holds a translated string's fields: lang.X("key", "{{.Name}} …", w{"Name": n}).
type w = map[string]any

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// humanSize is a size as the window says it: "2.4 MiB", or "512 bytes" in
// the window's language.
func humanSize(n int64) string {
	if n < 1<<10 {
		return lang.XN("size.bytes", "{{.N}} bytes", int(n), w{"N": n})
	}
	return compose.HumanSize(n)
}

// groupCount writes a count with its thousands grouped by the
// language's separator (1,214); the digits stay
// the ones the rest of the window shows.
func groupCount(n int) string {
	return strings.ReplaceAll(app.Thousands(n), ",", lang.X("number.group", ","))
}

// humanDuration is a time left as people say it: "12 s", "3 min", "2 h 5 min".
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return lang.X("time.undersecond", "under a second")
	case d < time.Minute:
		return lang.X("time.seconds", "{{.S}} s", w{"S": int(d.Seconds() + 0.5)})
	case d < time.Hour:
		return lang.X("time.minutes", "{{.M}} min", w{"M": int(d.Minutes() + 0.5)})
	}
	h := int(d.Hours())
	return lang.X("time.hours", "{{.H}} h {{.M}} min", w{"H": h, "M": int(d.Minutes()) - 60*h})
}

// humanRate is a rate: "502.8 KiB/s".
func humanRate(bps float64) string {
	if bps <= 0 {
		return ""
	}
	return compose.HumanSize(int64(bps)) + "/s"
}

// windowText is a failure's text as the window shows it: on one line,
// safe, and with the command lines meant for a terminal's user replaced by
// what to do in the window.
func windowText(s string) string { return app.Printable(app.WindowWords(s)) }

// Dates are written in the window's language: the names of months and
// weekdays come from the catalogue, the order of the parts from its
// templates, the digits stay Latin (as every number in the window).

// monthName is a month's name; short gives its abbreviation where the
// language has one ("Jan").
func monthName(m time.Month, short bool) string {
	if short {
		switch m {
		case time.January:
			return lang.X("month.short.jan", "Jan")
		case time.February:
			return lang.X("month.short.feb", "Feb")
		case time.March:
			return lang.X("month.short.mar", "Mar")
		case time.April:
			return lang.X("month.short.apr", "Apr")
		case time.May:
			return lang.X("month.short.may", "May")
		case time.June:
			return lang.X("month.short.jun", "Jun")
		case time.July:
			return lang.X("month.short.jul", "Jul")
		case time.August:
			return lang.X("month.short.aug", "Aug")
		case time.September:
			return lang.X("month.short.sep", "Sep")
		case time.October:
			return lang.X("month.short.oct", "Oct")
		case time.November:
			return lang.X("month.short.nov", "Nov")
		case time.December:
			return lang.X("month.short.dec", "Dec")
		}
	}
	switch m {
	case time.January:
		return lang.X("month.jan", "January")
	case time.February:
		return lang.X("month.feb", "February")
	case time.March:
		return lang.X("month.mar", "March")
	case time.April:
		return lang.X("month.apr", "April")
	case time.May:
		return lang.X("month.may", "May")
	case time.June:
		return lang.X("month.jun", "June")
	case time.July:
		return lang.X("month.jul", "July")
	case time.August:
		return lang.X("month.aug", "August")
	case time.September:
		return lang.X("month.sep", "September")
	case time.October:
		return lang.X("month.oct", "October")
	case time.November:
		return lang.X("month.nov", "November")
	case time.December:
		return lang.X("month.dec", "December")
	}
	return m.String()
}

// dayName is a weekday's name; short gives its abbreviation ("Mon").
func dayName(d time.Weekday, short bool) string {
	if short {
		switch d {
		case time.Sunday:
			return lang.X("day.short.sun", "Sun")
		case time.Monday:
			return lang.X("day.short.mon", "Mon")
		case time.Tuesday:
			return lang.X("day.short.tue", "Tue")
		case time.Wednesday:
			return lang.X("day.short.wed", "Wed")
		case time.Thursday:
			return lang.X("day.short.thu", "Thu")
		case time.Friday:
			return lang.X("day.short.fri", "Fri")
		case time.Saturday:
			return lang.X("day.short.sat", "Sat")
		}
	}
	switch d {
	case time.Sunday:
		return lang.X("day.sun", "Sunday")
	case time.Monday:
		return lang.X("day.mon", "Monday")
	case time.Tuesday:
		return lang.X("day.tue", "Tuesday")
	case time.Wednesday:
		return lang.X("day.wed", "Wednesday")
	case time.Thursday:
		return lang.X("day.thu", "Thursday")
	case time.Friday:
		return lang.X("day.fri", "Friday")
	case time.Saturday:
		return lang.X("day.sat", "Saturday")
	}
	return d.String()
}

// shortDate is a moment in a list: "Jan 2 15:04".
func shortDate(t time.Time) string {
	return lang.X("date.short", "{{.Month}} {{.Day}} {{.Time}}", w{"Month": monthName(t.Month(), true), "Day": t.Day(), "Time": t.Format("15:04")})
}

// longDate is a moment in full, as the reading pane dates a message:
// "Monday 2 January 2006, 15:04".
func longDate(t time.Time) string {
	return lang.X("date.long", "{{.Weekday}} {{.Day}} {{.Month}} {{.Year}}, {{.Time}}", w{"Weekday": dayName(t.Weekday(), false), "Day": t.Day(), "Month": monthName(t.Month(), false), "Year": t.Year(), "Time": t.Format("15:04")})
}

// soonDate is a moment within the week ahead: "15:04 Mon 2 Jan".
func soonDate(t time.Time) string {
	return lang.X("date.soon", "{{.Time}} {{.Weekday}} {{.Day}} {{.Month}}", w{"Time": t.Format("15:04"), "Weekday": dayName(t.Weekday(), true), "Day": t.Day(), "Month": monthName(t.Month(), true)})
}
