package transfer

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// How a request's body reaches the socket. net/http copies a body to the
// connection through io.Copy's 32 KiB buffer: a GiB costs 32,768 reads of
// the file and as many writes, each through the running sums. A connection
// the engine dials (bulkConn) takes the copy over: a range of the file
// (hashTee) goes in bulkSend pieces, each read once for the sums that need
// it, bulkCopy bytes at a time, then sent from the file by the kernel in
// one call where it can (sendFile, Linux); elsewhere, and any other body,
// in bulkCopy pieces through one buffer. The CPU this saves per GiB is in
// docs/PERFORMANCE.md.
//
// Why a sendfile(2) of 4 MiB and not of 256 KiB: a piece the peer has
// taken before the next one comes leaves it waiting, and each piece then
// wakes it, on the sender's time where the peer is on the same machine
// (the loopback delivers a segment in the sending call). Against a server
// that reads faster than the sums go, 256 KiB pieces cost the client up to
// a third more system time than against a slower one (Photos against
// Cloud Storage in docs/PERFORMANCE.md); 4 MiB ones keep the socket's
// buffer full, as a slower server does.

const (
	bulkCopy = 256 << 10
	bulkSend = 4 << 20
)

var bulkBufs = sync.Pool{New: func() any { b := make([]byte, bulkCopy); return &b }}

// errNoSendFile: this system, or this file, cannot be sent from by the
// kernel; the bytes go through the process.
var errNoSendFile = errors.New("sending from a file is not supported here")

// bulkConn is a TCP connection whose ReadFrom (what the transport's
// buffered writer hands a body to) sends in bulk. Everything else is the
// TCP connection's own, SyscallConn included (TCP_INFO, acked.go).
type bulkConn struct{ *net.TCPConn }

func (c bulkConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if b, ok := lr.R.(*progressBody); ok {
			n, handled, err := b.sendTo(c.TCPConn, lr.N)
			lr.N -= n
			if handled {
				return n, err
			}
		}
	}
	bp := bulkBufs.Get().(*[]byte)
	defer bulkBufs.Put(bp)
	// Neither side may pass the copy back to the other's ReadFrom or
	// WriteTo: that would be the 32 KiB copy again.
	return io.CopyBuffer(struct{ io.Writer }{c.TCPConn}, struct{ io.Reader }{r}, *bp)
}

// bulkTransport is Go's default transport whose connections are bulkConns.
func bulkTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	orphans := &orphanage{}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			// The path to the server carries: the ends of connections
			// reset into a dead one are reset on it (knock.go).
			orphans.knock(tc.RemoteAddr())
			return &engineConn{bulkConn: bulkConn{tc}, probe: dialPathProbe(tc), orphans: orphans}, nil
		}
		return c, err
	}
	return t
}

// engineConn is a connection the engine dialed, which knows the request
// it carries (exchange, while it is in flight). Closed while that
// request's context is done, which is the engine abandoning it (a stall,
// a wake or a network change, a hold, a pause or cancel), it is reset
// (SO_LINGER 0: an RST, not a FIN behind the unsent bytes): a polite close
// waits behind the unsent bytes, which on a dead path reach the server
// only when the kernel gives up, and the server keeps the session's
// request, and whatever it holds, till then. A reset is sent at once, but
// only once: on a dead path it is lost, so a connection reset with bytes
// unacknowledged is kept as an orphan, knocked on once a new connection
// reaches the server (knock.go). A connection closed for any other reason
// (its answer read, idle, the server's close) closes politely.
type engineConn struct {
	bulkConn
	carrying atomic.Pointer[context.Context]
	probe    pathProbe  // how the path fares (deadpath.go); nil: the system does not tell
	orphans  *orphanage // its transport's (knock.go)
}

// carry ties the connection to a request's context until release.
func (c *engineConn) carry(ctx context.Context) (release func()) {
	p := &ctx
	c.carrying.Store(p)
	return func() { c.carrying.CompareAndSwap(p, nil) }
}

func (c *engineConn) Close() error {
	if p := c.carrying.Load(); p != nil && (*p).Err() != nil {
		return c.reset()
	}
	return c.TCPConn.Close()
}

// reset closes the connection with an RST, keeping it as an orphan unless
// the peer acknowledged everything written (a path that carried every byte
// is taken to carry the reset too).
func (c *engineConn) reset() error {
	if c.probe == nil {
		c.orphans.add(c.TCPConn)
	} else if s, ok := c.probe.path(); !ok || s.pending {
		c.orphans.add(c.TCPConn)
	}
	_ = c.TCPConn.SetLinger(0)
	return c.TCPConn.Close()
}

// engineConnOf is the connection the engine dialed under a request's, or nil
// (another transport's, or HTTP/2's, which carries several requests).
func engineConnOf(c net.Conn) *engineConn {
	if tc, ok := c.(*tls.Conn); ok {
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			return nil
		}
		c = tc.NetConn()
	}
	ec, _ := c.(*engineConn)
	return ec
}
