package ui

import (
	"fmt"
	"fyne.io/fyne/v2/lang"
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
