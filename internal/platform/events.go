package platform

import (
	"context"
	"errors"
)

// Signal is something the system says that matters to uploads in flight.
type Signal int

const (
	Sleeping       Signal = iota + 1 // the machine is about to sleep
	Woke                             // the machine woke: connections may be dead
	NetworkUp                        // a network connection came (back)
	NetworkDown                      // the last network connection went
	Metered                          // the connection is metered (a phone's hotspot, a capped plan): large uploads may wait
	NotMetered                       // the connection is not (or no longer) metered
	PrimaryChanged                   // traffic goes another way now (a Wi-Fi switch, a VPN up or down): connections on the old way are dead
)

func (s Signal) String() string {
	switch s {
	case Sleeping:
		return "sleeping"
	case Woke:
		return "woke"
	case NetworkUp:
		return "network up"
	case NetworkDown:
		return "network down"
	case Metered:
		return "metered"
	case NotMetered:
		return "not metered"
	case PrimaryChanged:
		return "primary connection changed"
	}
	return "signal?"
}

// ErrNoSignals says the system cannot tell this process of sleep or the
// network (no system bus, no power service): the engine's own clock
// comparison still notices a wake, within a second or two.
var ErrNoSignals = errors.New("the system does not report sleep and network changes here")

// Watch sends the system's power and network signals to fn until ctx
// ends. It returns once it is listening (or cannot listen); fn runs on a
// goroutine of Watch's, one signal at a time. What it listens to is the
// system's: logind and NetworkManager on Linux, power notifications on
// Windows. Metered and PrimaryChanged come only where a network manager
// says so (NetworkManager); elsewhere any change of interfaces while
// online is told as NetworkUp, which has the same effect on uploads.
func Watch(ctx context.Context, fn func(Signal)) error { return watch(ctx, fn) }
