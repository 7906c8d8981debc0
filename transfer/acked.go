package transfer

import (
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// What reached the server's host, as far as the system tells: on Linux the
// socket's TCP_INFO counts the bytes the peer's TCP acknowledged
// (tcpi_bytes_acked, tcpinfo_linux.go); elsewhere nothing is known and the
// figure stays the bytes written. An acknowledged byte is in the peer's
// kernel (or a middlebox's, which a proxy may be): less than a
// confirmation, more than a write into the local buffers.

// ackProbe reads how many bytes the peer acknowledged on one connection
// since it opened.
type ackProbe interface {
	acked() (int64, bool)
}

// AckSink is a Sink that is also told how far the file reached the peer:
// off is the file offset up to which the peer's TCP acknowledged the bytes
// of the request in flight. Only where the system tells (Linux, HTTP/1).
type AckSink interface {
	Sink
	Acked(off int64)
}

// ackPoll is how often the acknowledged count is read while a chunk is in
// flight: bytes drain from the kernel's buffers with no read of the file.
const ackPoll = 200 * time.Millisecond

// newAckProbe is the probe of a connection an HTTP request got, or nil
// when the system tells nothing or the connection carries several
// requests at once (HTTP/2).
func newAckProbe(c net.Conn) ackProbe {
	if tc, ok := c.(*tls.Conn); ok {
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			return nil
		}
		c = tc.NetConn()
	}
	return systemAckProbe(c)
}

// ackTracker follows one request's body to the peer: the count at the
// moment the request got its connection is the base, and what the peer
// acknowledged since, at most the body bytes written, is the body's part
// (the request's header, a few hundred bytes, counts as body: the figure
// runs that much ahead at most, never past what was written).
type ackTracker struct {
	written atomic.Int64 // body bytes the transport took

	mu    sync.Mutex
	probe ackProbe
	base  int64
	last  int64
}

func (t *ackTracker) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		p := newAckProbe(i.Conn)
		if p == nil {
			return
		}
		a, ok := p.acked()
		if !ok {
			return
		}
		t.mu.Lock()
		t.probe, t.base, t.last = p, a, 0
		t.mu.Unlock()
	}}
}

// body is how many of the body's bytes the peer acknowledged; never less
// than it said before, never more than were written.
func (t *ackTracker) body() (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.probe == nil {
		return 0, false
	}
	a, ok := t.probe.acked()
	if !ok {
		return 0, false
	}
	n := max(min(a-t.base, t.written.Load()), t.last, 0)
	t.last = n
	return n, true
}

// follow reports the body's acknowledged bytes to tell (from off) every
// ackPoll until the returned stop is called.
func (t *ackTracker) follow(off int64, tell func(int64)) (stop func()) {
	done, over := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(over)
		tk := time.NewTicker(ackPoll)
		defer tk.Stop()
		told := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-tk.C:
			}
			if n, ok := t.body(); ok && n != told {
				told = n
				tell(off + n)
			}
		}
	}()
	return func() {
		close(done)
		<-over
	}
}
