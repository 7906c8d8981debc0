package transfer

import (
	"net"
	"sync"
	"time"
)

// Half-open connections left on a server (RFC 793 section 3.4). A
// connection the engine abandons is reset (engineConn), but a reset is
// sent once: on a dead path it is lost, and the server's end of the
// connection stays open, reading a body that never comes, until a timeout
// of its own ends it (a keepalive probe the path carries back, a body
// timeout: seconds to minutes). A server that serialises a session's
// requests answers nothing on the session till then, a status query
// included. So the engine keeps the addresses of each connection it reset
// with bytes unacknowledged (an orphan), and once a new connection to that
// server is made (the path carries again) it knocks from each orphan's
// port: a SYN on the old connection's addresses reaches the server's open
// end, which answers with an acknowledgement of where it stands (RFC 5961's
// challenge ACK); this side's kernel, which has no connection there,
// answers that with a reset at exactly the sequence the server expects,
// and the server's end is gone at once. Where the server had heard the
// reset, the knock reaches its listener, connects, and is closed. A path
// that changed its address (another network) cannot carry a knock to the
// old connection: there the server's timeout stays the rule.

const (
	// knockWait bounds a knock: the server's answer to the SYN comes in a
	// round trip; a connect to its listener, after the reset, in the
	// kernel's first SYN retransmission (1 s).
	knockWait = 3 * time.Second
	// orphanAge: an orphan older than this is forgotten unknocked; every
	// server has ended its end by then.
	orphanAge = 10 * time.Minute
	// maxOrphans bounds the list (each is two addresses).
	maxOrphans = 64
)

type orphan struct {
	local, remote *net.TCPAddr
	at            time.Time
}

// orphanage holds one transport's orphans.
type orphanage struct {
	mu   sync.Mutex
	list []orphan
}

// add records the connection c, about to be reset, as an orphan.
func (o *orphanage) add(c *net.TCPConn) {
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if o == nil || !lok || !rok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.list {
		if x.local.String() == local.String() && x.remote.String() == remote.String() {
			return
		}
	}
	if len(o.list) >= maxOrphans {
		o.list = o.list[1:]
	}
	o.list = append(o.list, orphan{local: local, remote: remote, at: time.Now()})
}

// take removes and returns the orphans of remote, forgetting old ones.
func (o *orphanage) take(remote net.Addr) []orphan {
	r, ok := remote.(*net.TCPAddr)
	if o == nil || !ok {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var mine []orphan
	kept := o.list[:0]
	for _, x := range o.list {
		switch {
		case time.Since(x.at) > orphanAge:
		case x.remote.String() == r.String():
			mine = append(mine, x)
		default:
			kept = append(kept, x)
		}
	}
	clear(o.list[len(kept):])
	o.list = kept
	return mine
}

// knock knocks from each orphan of the server a new connection reached,
// in the background.
func (o *orphanage) knock(remote net.Addr) {
	for _, x := range o.take(remote) {
		go func() {
			d := net.Dialer{LocalAddr: x.local, Timeout: knockWait}
			if c, err := d.Dial("tcp", x.remote.String()); err == nil {
				c.Close()
			}
		}()
	}
}
