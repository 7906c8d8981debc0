package transfer

import (
	"context"
	"net"
	"testing"
	"time"
)

// stillPath is a probe that always reads the same state.
type stillPath struct{ s pathState }

func (p stillPath) path() (pathState, bool) { return p.s, true }

// A connection reset with bytes its peer has not acknowledged is kept as
// an orphan (its reset may be lost on a dead path); one whose bytes were
// all acknowledged is not (the path carried the reset too).
func TestResetKeepsOrphansWithBytesPending(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, pending := range []bool{true, false} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		o := &orphanage{}
		ec := &engineConn{bulkConn: bulkConn{c.(*net.TCPConn)}, probe: stillPath{pathState{pending: pending}}, orphans: o}
		ec.reset()
		if got := len(o.take(ln.Addr())); got != map[bool]int{true: 1, false: 0}[pending] {
			t.Errorf("bytes pending %t: %d orphans kept", pending, got)
		}
	}
}

// The orphans of one server are taken once, another's stay, and old ones
// are forgotten.
func TestOrphansTakenByServer(t *testing.T) {
	a := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1000}
	b := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2000}
	l1 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40001}
	l2 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40002}
	l3 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40003}
	o := &orphanage{list: []orphan{
		{local: l1, remote: a, at: time.Now()},
		{local: l2, remote: b, at: time.Now()},
		{local: l3, remote: a, at: time.Now().Add(-orphanAge - time.Minute)},
	}}
	if got := o.take(a); len(got) != 1 || got[0].local != l1 {
		t.Fatalf("took %v for %v, want the one from %v", got, a, l1)
	}
	if got := o.take(a); len(got) != 0 {
		t.Fatalf("took %v for %v again", got, a)
	}
	if got := o.take(b); len(got) != 1 || got[0].local != l2 {
		t.Fatalf("took %v for %v, want the one from %v", got, b, l2)
	}
}

// A new connection the engine dials to a server knocks from the port of
// each connection it reset to that server with bytes pending: the knock
// arrives from that port (here the reset reached the server, so the knock
// finds the listener).
func TestDialKnocksFromTheOrphansPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := bulkTransport().DialContext
	first, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ec := first.(*engineConn)
	ec.probe = stillPath{pathState{pending: true}}
	orphanPort := ec.LocalAddr().(*net.TCPAddr).Port
	(<-accepted).Close()
	ec.reset()
	second, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	deadline := time.After(time.Minute) // bounds a hang only
	for {
		select {
		case c := <-accepted:
			port := c.RemoteAddr().(*net.TCPAddr).Port
			c.Close()
			if port == orphanPort {
				return
			}
		case <-deadline:
			t.Fatalf("no knock came from port %d", orphanPort)
		}
	}
}
