package transfer

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// Dead paths found from acknowledgements. A path that silently drops
// every packet (a Wi-Fi gone out of range, a router that lost its uplink,
// a middlebox that stops forwarding) gives the sender no error: the
// kernel retransmits on a doubling timer for many minutes, and the
// request would sit until the stall watchdog's 30 s. Where the system
// tells how far the peer acknowledged (Linux TCP_INFO, tcpinfo_linux.go),
// each request's connection is watched while the request is in flight:
// bytes written and not acknowledged, with the acknowledged count still
// for deadPath (or deadPathRTOs retransmission timeouts of the
// connection, if longer), is a dead path, and the request is abandoned as
// the watchdog would (the connection reset, engineConn; the upload asks
// the session where it stands, quickly, resumable.go's quickAsk); over
// HTTP/2 too, whose streams share the connection and its path, so the
// connection is reset for all of them. Bytes acknowledged however slowly
// are a slow link, never a dead one; nothing pending (the body sent, the
// answer awaited) is the server's time, which the stall watchdog judges.
// Elsewhere (Windows, macOS) the watchdog alone finds a dead path.

const (
	deadPath     = 1500 * time.Millisecond
	deadPathRTOs = 4
)

var errDeadPath error = &abandonedError{"the network path went dead (nothing sent was acknowledged)"}

// pathState is what a probe reads of a connection at one moment.
type pathState struct {
	acked   int64         // bytes the peer acknowledged since the connection opened
	pending bool          // bytes written that the peer has not acknowledged
	rto     time.Duration // the retransmission timeout, not backed off; 0: unknown
}

// pathProbe reads the state of one connection's path.
type pathProbe interface {
	path() (pathState, bool)
}

// pathClock times the watch: the kernel's acknowledgements move in real
// time, whatever clock the engine was given (a test's fake one moves by
// leaps, and would read a still path into a leap).
var pathClock = SystemClock()

// dialPathProbe is the seam where an engine connection gets its probe as
// it is dialed (systemPathProbe; a test's fake).
var dialPathProbe = systemPathProbe

// deadAfter is how long acknowledgements may stand still, with bytes
// pending, before the path counts as dead.
func deadAfter(rto time.Duration) time.Duration {
	return max(deadPath, deadPathRTOs*rto)
}

// watchPath reads p every ackPoll until done and abandons the request
// with errDeadPath if the path dies.
func watchPath(clock Clock, p pathProbe, done <-chan struct{}, abandon context.CancelCauseFunc) {
	var (
		last  int64         = -1
		still time.Duration // Clock.Elapsed since which nothing moved with bytes pending
	)
	for {
		t := clock.NewTimer(ackPoll)
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C():
		}
		s, ok := p.path()
		now := clock.Elapsed()
		switch {
		case !ok:
			return
		case !s.pending:
			// Bytes written from now on are timed from when they are
			// first seen pending.
			last = -1
		case s.acked != last:
			last, still = s.acked, now
		case now-still >= deadAfter(s.rto):
			abandon(errDeadPath)
			return
		}
	}
}

// pathOf is the engine's connection under the one a request got, if its
// path can be watched; HTTP/2's too: a dead path is dead for every stream
// on it.
func pathOf(c net.Conn) *engineConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if ec, ok := c.(*engineConn); ok && ec.probe != nil {
		return ec
	}
	return nil
}

// deadPathFound abandons the request and resets its connection: HTTP/1
// closes a connection whose request was abandoned mid-body anyway, but
// HTTP/2 would keep it for the next request, on the dead path.
func (c *engineConn) deadPathFound(abandon context.CancelCauseFunc) context.CancelCauseFunc {
	return func(err error) {
		abandon(err)
		_ = c.reset()
	}
}
