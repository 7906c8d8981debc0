package platform

import (
	"net"
	"sync"
	"time"
)

// Where the system has no network manager to ask (Windows, macOS), a
// change of interfaces is only a hint: whether the machine is online is
// read from the interfaces themselves after each change. Online means an
// interface that is up, not a loopback, and holds an address another
// machine could answer: an IPv4 address outside 169.254/16 (the address a
// machine gives itself when no DHCP server answers) or a global IPv6
// address. A link-local IPv6 address alone is not a network.

// iface is what the decision reads of an interface.
type iface struct {
	up, loopback bool
	addrs        []net.IP
}

// online reports whether any of the interfaces reaches a network.
func online(ifs []iface) bool {
	for _, i := range ifs {
		if !i.up || i.loopback {
			continue
		}
		for _, ip := range i.addrs {
			if ip.IsGlobalUnicast() || ip.IsPrivate() {
				if ip4 := ip.To4(); ip4 != nil && ip4[0] == 169 && ip4[1] == 254 {
					continue
				}
				return true
			}
		}
	}
	return false
}

// systemInterfaces reads the machine's interfaces for online.
func systemInterfaces() ([]iface, error) {
	nifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]iface, 0, len(nifs))
	for _, n := range nifs {
		i := iface{up: n.Flags&net.FlagUp != 0 && n.Flags&net.FlagRunning != 0, loopback: n.Flags&net.FlagLoopback != 0}
		addrs, _ := n.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				i.addrs = append(i.addrs, ipn.IP)
			}
		}
		out = append(out, i)
	}
	return out, nil
}

// linkState turns interface changes into NetworkUp and NetworkDown: a
// signal when being online changes, and NetworkUp on any change while
// online (a new network under the same flag: a Wi-Fi switch), since a
// connection made on the old one may be dead.
type linkState struct {
	mu    sync.Mutex
	known bool
	up    bool
	read  func() ([]iface, error)
}

// baseline reads the interfaces once, when the watch starts, and keeps
// what it finds as the state later changes are compared with, telling
// nothing: connections made before it were made on this network, so an
// online machine has nothing to abandon (telling NetworkUp here abandoned
// every upload's first request half a second after the start). Unreadable,
// the state stays unknown and the first change tells what it finds.
func (l *linkState) baseline() {
	ifs, err := l.read()
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.up, l.known = online(ifs), true
}

// offline says whether the last reading found no network.
func (l *linkState) offline() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.known && !l.up
}

// changed reads the interfaces again after the system reported a change
// and says what to tell, if anything.
func (l *linkState) changed() (Signal, bool) {
	ifs, err := l.read()
	if err != nil {
		return 0, false
	}
	now := online(ifs)
	l.mu.Lock()
	defer l.mu.Unlock()
	was, known := l.up, l.known
	l.up, l.known = now, true
	switch {
	case now:
		return NetworkUp, true
	case !known || was:
		return NetworkDown, true
	}
	return 0, false // offline, still
}

// linkWatch is how Windows and macOS follow the network: a baseline when
// the watch starts, then a reading after each burst of the system's
// change reports settles, told if it is news.
type linkWatch struct {
	linkState
	settle settle
}

func newLinkWatch(read func() ([]iface, error), wait time.Duration, tell func(Signal)) *linkWatch {
	w := &linkWatch{linkState: linkState{read: read}}
	w.settle = settle{wait: wait, check: func() {
		if s, ok := w.changed(); ok {
			tell(s)
		}
	}}
	return w
}

// start takes the baseline, at once rather than after a first change
// report (whose reading would then be swallowed as the baseline), and says
// whether the machine is offline. The caller tells NetworkDown then, as
// the Linux watch does: the queue starts as if online, and held at once
// it burns no retry and says it waits for a network (a first reading that
// is online tells nothing). It is taken after the system's reports are
// asked for, so a change between the two is read, not missed.
func (w *linkWatch) start() (offline bool) {
	w.baseline()
	return w.offline()
}

// poke is a change the system reported.
func (w *linkWatch) poke() { w.settle.poke() }

// settle runs check once, a short while after the last of a burst of
// calls: a network coming up changes several interfaces and addresses
// in a row, and only the end state matters.
type settle struct {
	mu    sync.Mutex
	timer *time.Timer
	wait  time.Duration
	check func()
}

func (s *settle) poke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timer = time.AfterFunc(s.wait, s.check)
}
