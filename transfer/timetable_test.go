package transfer

import (
	"strings"
	"testing"
	"time"
)

func TestParseBandwidth(t *testing.T) {
	const K, M, G = 1 << 10, 1 << 20, 1 << 30
	mon := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday
	at := func(day int, hh, mm int) time.Time {
		return mon.AddDate(0, 0, day).Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
	}
	cases := []struct {
		in   string
		when time.Time
		want int64
	}{
		{"2M", mon, 2 * M},
		{"512k", mon, 512 * K},
		{"512K", mon, 512 * K},
		{"100", mon, 100 * K}, // a bare number is KiB/s, as rclone reads it
		{"100B", mon, 100},
		{"1.5M", mon, M * 3 / 2},
		{"1G", mon, G},
		{"2MB", mon, 2 * M}, // as the issue writes it
		{"2MiB", mon, 2 * M},
		{"2MiB/s", mon, 2 * M},
		{"10kb", mon, 10 * K},
		{"off", mon, 0},
		{"OFF", mon, 0},
		{"0", mon, 0},
		{"1M:off", mon, M}, // rclone's upload:download pair
		{"08:00,1M 19:00,off", at(0, 7, 59), 0},
		{"08:00,1M 19:00,off", at(0, 8, 0), M},
		{"08:00,1M 19:00,off", at(3, 18, 59), M},
		{"08:00,1M 19:00,off", at(3, 19, 0), 0},
		{"Mon-08:00,512k Sat-00:00,off", at(0, 7, 0), 0}, // the week's last entry stands before its first
		{"Mon-08:00,512k Sat-00:00,off", at(2, 12, 0), 512 * K},
		{"Mon-08:00,512k Sat-00:00,off", at(5, 0, 0), 0},
		{"Mon-08:00,512k Sat-00:00,off", at(6, 23, 59), 0},
		{"monday-8:00,1M", at(4, 0, 0), M},
		{"  06:30,256k  ", at(1, 6, 29), 256 * K},
	}
	for _, c := range cases {
		tt, err := ParseBandwidth(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := tt.At(c.when); got != c.want {
			t.Errorf("%q at %s: %d, want %d", c.in, c.when.Format("Mon 15:04"), got, c.want)
		}
	}
}

func TestParseBandwidthErrors(t *testing.T) {
	cases := []struct{ in, names string }{
		{"", "empty"},
		{"fast", `"fast" is not a rate`},
		{"-1M", `"-1M" is not a rate`},
		{"1X", `"1X" is not a rate`},
		{"1e9", `"1e9" is not a rate`},
		{"NaN", `"NaN" is not a rate`},
		{"0.0001B", "less than one byte"},
		{"08:00", `"08:00" is not a rate`},
		{"08:00,1M 19:00", `entry "19:00" is not TIME,RATE`},
		{"25:00,1M", `"25:00" is not a time of day`},
		{"8:0,1M", `"8:0" is not a time of day`},
		{"Fri-08:00,1M Funday-09:00,off", `"Funday" is not a day`},
		{"08:00,1M 08:00,2M", "give the same time"},
		{"Mon-08:00,1M 08:00,2M", "give the same time"},
		{"08:00,1Q", `entry "08:00,1Q": "1Q" is not a rate`},
	}
	for _, c := range cases {
		_, err := ParseBandwidth(c.in)
		if err == nil || !strings.Contains(err.Error(), c.names) {
			t.Errorf("%q: error %v, want one naming %s", c.in, err, c.names)
		}
	}
}

func TestTimetableNext(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	mon := time.Date(2026, 1, 5, 0, 0, 0, 0, loc)
	tt, _ := ParseBandwidth("08:00,1M 19:00,off")
	for _, c := range []struct{ now, want time.Time }{
		{mon.Add(7*time.Hour + 59*time.Minute + 30*time.Second), mon.Add(8 * time.Hour)},
		{mon.Add(8 * time.Hour), mon.Add(19 * time.Hour)},
		{mon.Add(20 * time.Hour), mon.Add(32 * time.Hour)},
		{mon.AddDate(0, 0, 6).Add(23 * time.Hour), mon.AddDate(0, 0, 7).Add(8 * time.Hour)}, // Sunday night to Monday
	} {
		if got := tt.Next(c.now); !got.Equal(c.want) {
			t.Errorf("Next(%s) = %s, want %s", c.now, got, c.want)
		}
	}
	week, _ := ParseBandwidth("Sat-00:00,off Mon-08:00,512k")
	if got, want := week.Next(mon.AddDate(0, 0, 1)), mon.Add(5*24*time.Hour); !got.Equal(want) {
		t.Errorf("weekly Next = %s, want %s", got, want)
	}
	if one, _ := ParseBandwidth("2M"); !one.Next(mon).IsZero() {
		t.Errorf("a constant rate has a next change")
	}
}

// A timetable read back from its String is the same timetable.
func FuzzParseBandwidth(f *testing.F) {
	for _, s := range []string{"2M", "off", "08:00,1M 19:00,off", "Mon-08:00,512k Sat-00:00,off", "1.5G", "100", "2MB", "x", "25:61,1M", "Sun-23:59,1B"} {
		f.Add(s)
	}
	mon := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		tt, err := ParseBandwidth(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		back, err := ParseBandwidth(tt.String())
		if err != nil {
			t.Fatalf("%q gave %q, which does not parse: %v", s, tt.String(), err)
		}
		for m := time.Duration(0); m < 7*24*time.Hour; m += 97 * time.Minute {
			now := mon.Add(m)
			if a, b := tt.At(now), back.At(now); a != b || a < 0 {
				t.Fatalf("%q and %q differ at %s: %d, %d", s, tt.String(), now, a, b)
			}
			if nx := tt.Next(now); !tt.Constant() && !nx.After(now) {
				t.Fatalf("%q: Next(%s) = %s is not ahead", s, now, nx)
			}
		}
	})
}
