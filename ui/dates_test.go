package ui

import (
	"strings"
	"testing"
	"time"
)

// Dates are written in the window's language: in English as before
// ("Monday 2 January 2006, 15:04", "Jan 2 15:04"); in Persian with
// Persian month and weekday names, never the English ones.
func TestDatesInTheWindowsLanguage(t *testing.T) {
	at := time.Date(2026, time.March, 4, 9, 5, 0, 0, time.UTC)
	if got, want := longDate(at), "Wednesday 4 March 2026, 09:05"; got != want {
		t.Errorf("long: %q, want %q", got, want)
	}
	if got, want := longDate(at), at.Format("Monday 2 January 2006, 15:04"); got != want {
		t.Errorf("long: %q, the reading pane's layout before gives %q", got, want)
	}
	if got, want := shortDate(at), "Mar 4 09:05"; got != want {
		t.Errorf("short: %q, want %q", got, want)
	}
	if got, want := soonDate(at), "09:05 Wed 4 Mar"; got != want {
		t.Errorf("soon: %q, want %q", got, want)
	}
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	useLanguage("fa")
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
	fa := readCatalogue(t, "fa")
	for _, d := range []string{longDate(at), shortDate(at), soonDate(at)} {
		if !strings.Contains(d, fa["month.mar"].(string)) || strings.Contains(d, "Mar") {
			t.Errorf("%q: not the Persian month (%s)", d, fa["month.mar"])
		}
	}
	if d := longDate(at); !strings.Contains(d, fa["day.wed"].(string)) || !strings.Contains(d, "2026") {
		t.Errorf("%q: not the Persian weekday with the year", d)
	}
}
