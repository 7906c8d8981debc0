package transfer

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MinSpeed is the rule for trickles: a request whose body goes out at
// less than Rate bytes per second on average over the last Window is
// abandoned, and the session asked where it stands. The stall timeout
// catches a connection that moves nothing; this one catches a connection
// that moves just enough to keep the stall timer quiet (a dying Wi-Fi, a
// middlebox that lets a few bytes through). Time the bandwidth limit held
// the body back is not held against it. A negative Rate turns it off.
type MinSpeed struct {
	Rate   int64         // bytes per second
	Window time.Duration // over this long
}

// DefaultMinSpeed is 1 KiB/s over 60 s. Below 1 KiB/s a single 256 KiB
// piece takes over four minutes: no upload a person waits for gets done,
// while even a poor mobile link (EDGE, ~20 KiB/s) stays well above it.
// Sixty seconds is twice the stall timeout, so one slow patch of a
// working link (a handover, a burst of loss) does not trip it.
var DefaultMinSpeed = MinSpeed{Rate: 1 << 10, Window: 60 * time.Second}

func (m MinSpeed) withDefaults() MinSpeed {
	switch {
	case m.Rate < 0:
		return MinSpeed{Rate: -1}
	case m.Rate == 0 && m.Window == 0:
		return DefaultMinSpeed
	case m.Window == 0:
		m.Window = DefaultMinSpeed.Window
	case m.Rate == 0:
		m.Rate = DefaultMinSpeed.Rate
	}
	return m
}

func (m MinSpeed) check() error {
	if m.Window < 0 {
		return fmt.Errorf("minimum speed window %s is negative", m.Window)
	}
	return nil
}

func (m MinSpeed) off() bool { return m.Rate < 0 }

func (m MinSpeed) String() string {
	if m.off() {
		return "off"
	}
	return humanRate(m.Rate) + " for " + strconv.FormatFloat(m.Window.Seconds(), 'f', -1, 64) + " s"
}

// humanRate words a rate for people, in binary units as the limits are.
func humanRate(r int64) string {
	switch {
	case r >= 1<<20:
		return strconv.FormatFloat(float64(r)/(1<<20), 'f', -1, 64) + " MiB/s"
	case r >= 1<<10:
		return strconv.FormatFloat(float64(r)/(1<<10), 'f', -1, 64) + " KiB/s"
	}
	return strconv.FormatInt(r, 10) + " B/s"
}

// tooSlow is the cause given a request the rule abandons.
func tooSlow(m MinSpeed) error {
	return &abandonedError{"slower than " + m.String()}
}

// speedSample is how much of a body had gone at an instant.
type speedSample struct {
	at time.Duration
	n  int64
}

// speedRule follows one request's body for MinSpeed.
type speedRule struct {
	rule    MinSpeed
	body    *progressBody
	length  int64 // the body's length: once read whole, the rule rests
	samples []speedSample
}

// every is how often the rule samples the body: a quarter window, so a
// trickle is caught within a window and a quarter, with few wake-ups.
func (s *speedRule) every() time.Duration {
	return max(s.rule.Window/4, 10*time.Millisecond)
}

// broken reports, at now, whether the body went out too slowly over the
// whole last window.
func (s *speedRule) broken(now time.Duration) bool {
	if s == nil || s.body == nil || s.rule.off() {
		return false
	}
	n := s.body.count()
	s.samples = append(s.samples, speedSample{now, n})
	if n >= s.length {
		return false // all of it went: what remains is the answer, the stall timeout's
	}
	if t := time.Duration(s.body.throttled.Load() - 1); t >= 0 && now-t < s.rule.Window {
		return false // the limit held bytes back in the window: not the link's fault
	}
	// The newest sample at least a window old is the base.
	i := -1
	for j, sm := range s.samples {
		if now-sm.at >= s.rule.Window {
			i = j
		}
	}
	if i < 0 {
		return false // not a window old yet
	}
	s.samples = s.samples[i:]
	base := s.samples[0]
	return float64(n-base.n) < float64(s.rule.Rate)*(now-base.at).Seconds()
}

// ParseMinSpeed reads a minimum-speed rule: "RATE/WINDOW" ("10k/60s"),
// "RATE" (over DefaultMinSpeed's window), or "off". RATE is written as
// for ParseBandwidth (a bare number is KiB/s); WINDOW as a Go duration.
func ParseMinSpeed(s string) (MinSpeed, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return MinSpeed{Rate: -1}, nil
	}
	rate, window, hasWindow := strings.Cut(s, "/")
	r, err := parseRate(rate)
	if err != nil {
		return MinSpeed{}, fmt.Errorf("minimum speed %q: %w", s, err)
	}
	if r == 0 {
		return MinSpeed{}, fmt.Errorf("minimum speed %q: a rate of 0 would never trip; say \"off\" to turn the rule off", s)
	}
	m := MinSpeed{Rate: r, Window: DefaultMinSpeed.Window}
	if hasWindow {
		d, err := time.ParseDuration(window)
		if err != nil || d <= 0 {
			return MinSpeed{}, fmt.Errorf("minimum speed %q: %q is not a window of time such as 60s or 2m", s, window)
		}
		m.Window = d
	}
	return m, nil
}
