package platform

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

func TestOnlineReadsTheInterfaces(t *testing.T) {
	ip := net.ParseIP
	lo := iface{up: true, loopback: true, addrs: []net.IP{ip("127.0.0.1"), ip("::1")}}
	cases := []struct {
		name string
		ifs  []iface
		want bool
	}{
		{"nothing", nil, false},
		{"loopback only", []iface{lo}, false},
		{"wi-fi with a private address", []iface{lo, {up: true, addrs: []net.IP{ip("192.168.1.20")}}}, true},
		{"a public address", []iface{{up: true, addrs: []net.IP{ip("203.0.113.9")}}}, true},
		{"a global IPv6 address", []iface{{up: true, addrs: []net.IP{ip("2001:db8::5")}}}, true},
		{"a unique local IPv6 address", []iface{{up: true, addrs: []net.IP{ip("fd00::5")}}}, true},
		{"no DHCP answer: a self-assigned address", []iface{{up: true, addrs: []net.IP{ip("169.254.7.1")}}}, false},
		{"IPv6 link-local only", []iface{{up: true, addrs: []net.IP{ip("fe80::1")}}}, false},
		{"cable out: interface down with its address", []iface{{up: false, addrs: []net.IP{ip("10.0.0.2")}}}, false},
		{"a loopback given a private address", []iface{{up: true, loopback: true, addrs: []net.IP{ip("10.0.0.2")}}}, false},
	}
	for _, c := range cases {
		if got := online(c.ifs); got != c.want {
			t.Errorf("%s: online %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLinkStateSaysWhatChanged(t *testing.T) {
	wifi := []iface{{up: true, addrs: []net.IP{net.ParseIP("192.168.1.20")}}}
	var now []iface
	var fail error
	l := &linkState{read: func() ([]iface, error) { return now, fail }}
	step := func(ifs []iface, want Signal, tells bool) {
		t.Helper()
		now = ifs
		got, ok := l.changed()
		if ok != tells || (ok && got != want) {
			t.Fatalf("got %v %v, want %v %v", got, ok, want, tells)
		}
	}
	step(nil, NetworkDown, true) // first change read with no baseline (unreadable at the start): offline is news
	step(nil, 0, false)          // still offline: nothing
	step(wifi, NetworkUp, true)  // back
	step(wifi, NetworkUp, true)  // another change while online: a new network, maybe
	step(nil, NetworkDown, true) // gone
	fail = errors.New("cannot read")
	step(wifi, 0, false) // unreadable: say nothing rather than guess
}

// The baseline taken when a watch starts tells nothing while online (no
// upload's first request is abandoned), says offline so the caller holds
// the queue, and the first real change after it is told.
func TestLinkStateBaselineTellsNothing(t *testing.T) {
	wifi := []iface{{up: true, addrs: []net.IP{net.ParseIP("192.168.1.20")}}}
	var now []iface
	l := &linkState{read: func() ([]iface, error) { return now, nil }}
	step := func(ifs []iface, want Signal, tells bool) {
		t.Helper()
		now = ifs
		got, ok := l.changed()
		if ok != tells || (ok && got != want) {
			t.Fatalf("got %v %v, want %v %v", got, ok, want, tells)
		}
	}
	now = wifi
	l.baseline()
	if l.offline() {
		t.Fatal("online at the start, offline says true")
	}
	step(wifi, NetworkUp, true) // a Wi-Fi switch after the start: told
	step(nil, NetworkDown, true)

	l = &linkState{read: func() ([]iface, error) { return now, nil }}
	now = nil
	l.baseline()
	if !l.offline() {
		t.Fatal("offline at the start, offline says false")
	}
	step(nil, 0, false) // still offline: the caller held the queue already
	step(wifi, NetworkUp, true)
}

// What Windows and macOS run: started online, nothing is told however
// long one waits; a change the system reports right after the start (in
// the settle's wait) is told, not taken for the baseline.
func TestLinkWatchStartsQuietAndTellsTheFirstChange(t *testing.T) {
	wifi := []iface{{up: true, addrs: []net.IP{net.ParseIP("192.168.1.20")}}}
	other := []iface{{up: true, addrs: []net.IP{net.ParseIP("10.0.0.7")}}}
	var mu sync.Mutex
	var now []iface
	set := func(ifs []iface) {
		mu.Lock()
		now = ifs
		mu.Unlock()
	}
	told := make(chan Signal, 10)
	watch := func(ifs []iface) *linkWatch {
		set(ifs)
		return newLinkWatch(func() ([]iface, error) {
			mu.Lock()
			defer mu.Unlock()
			return now, nil
		}, 20*time.Millisecond, func(s Signal) { told <- s })
	}
	expect := func(want Signal) {
		t.Helper()
		select {
		case s := <-told:
			if s != want {
				t.Fatalf("told %v, want %v", s, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("nothing told, want %v", want)
		}
	}
	quiet := func() {
		t.Helper()
		select {
		case s := <-told:
			t.Fatalf("told %v, want nothing", s)
		case <-time.After(200 * time.Millisecond): // ten settle waits
		}
	}

	// Online at the start and nothing changes: nothing is told.
	if w := watch(wifi); w.start() {
		t.Fatal("online at the start, start says offline")
	}
	quiet()

	// Another Wi-Fi at once: the system reports it before a settle could
	// run, and it is told, once; then going offline is told.
	w := watch(wifi)
	w.start()
	set(other)
	w.poke()
	w.poke()
	expect(NetworkUp)
	quiet()
	set(nil)
	w.poke()
	expect(NetworkDown)

	// Offline at the start: start says so (the caller tells NetworkDown);
	// the network coming is told.
	if w = watch(nil); !w.start() {
		t.Fatal("offline at the start, start says online")
	}
	quiet()
	set(wifi)
	w.poke()
	expect(NetworkUp)
}
