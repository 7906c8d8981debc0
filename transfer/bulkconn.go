package transfer

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
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
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			return bulkConn{tc}, nil
		}
		return c, err
	}
	return t
}
