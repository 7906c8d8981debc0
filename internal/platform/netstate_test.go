package platform

import (
	"errors"
	"net"
	"testing"
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
	step(nil, NetworkDown, true) // first reading: offline is news
	step(nil, 0, false)          // still offline: nothing
	step(wifi, NetworkUp, true)  // back
	step(wifi, NetworkUp, true)  // another change while online: a new network, maybe
	step(nil, NetworkDown, true) // gone
	fail = errors.New("cannot read")
	step(wifi, 0, false) // unreadable: say nothing rather than guess
}
