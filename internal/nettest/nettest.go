// Package nettest puts network faults from a component Carrier did not
// write between the engine and the sandbox: Shopify's toxiproxy, run in
// this process, for latency, bandwidth, resets and blackholes. The tests
// of this package, `make bench` (bench/netbench) and `make soak` (soak's
// toxiproxy phase) use it.
//
// A Link is one toxiproxy proxy in front of an upstream address. A Server
// is the sandbox served on a listener that counts the bytes that reached
// it and can reset every connection it holds at once: toxiproxy's own
// toxics act per connection from the moment a toxic is added, so "every
// connection reset every 4 s" is done from the server's side, which the
// proxy then passes on to Carrier as a dropped connection.
//
// Everything listens on 127.0.0.1 only.
package nettest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"carrier/sandbox"
)

func init() {
	// Toxiproxy logs every connection and every interrupted toxic through
	// zerolog's global logger as well as its own: a benchmark's output
	// would drown in it.
	zerolog.SetGlobalLevel(zerolog.ErrorLevel)
}

// Link is a toxiproxy proxy running in this process.
type Link struct {
	proxy *toxiproxy.Proxy
	// Addr is where the proxy listens (127.0.0.1:port).
	Addr string
	// URL is http://Addr.
	URL string
}

var linkSeq atomic.Int64

// NewLink starts a proxy on a free loopback port in front of upstream
// (host:port).
func NewLink(upstream string) (*Link, error) {
	if _, _, err := net.SplitHostPort(upstream); err != nil {
		return nil, fmt.Errorf("nettest: upstream %q is not host:port: %w", upstream, err)
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, fmt.Sprintf("carrier-%d", linkSeq.Add(1)), "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("nettest: start proxy: %w", err)
	}
	return &Link{proxy: p, Addr: p.Listen, URL: "http://" + p.Listen}, nil
}

// Toxic is one of toxiproxy's toxics, as its API takes it.
type Toxic struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`     // latency, bandwidth, reset_peer, timeout, limit_data, slicer, slow_close
	Stream   string  `json:"stream"`   // upstream (Carrier to the server) or downstream
	Toxicity float32 `json:"toxicity"` // the share of connections it acts on; 0 means 1
	// Attributes are the toxic's own settings, e.g. {"latency": 40} or
	// {"rate": 1500} (KB/s).
	Attributes map[string]any `json:"attributes"`
}

// Add puts a toxic at the end of the chain of its stream, on the
// connections open now and on every later one.
func (l *Link) Add(t Toxic) error {
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	if t.Name == "" {
		t.Name = t.Type + "_" + t.Stream
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if _, err := l.proxy.Toxics.AddToxicJson(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("nettest: toxic %s: %w", t.Name, err)
	}
	return nil
}

// Remove takes a toxic off every connection.
func (l *Link) Remove(name string) error {
	if err := l.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
		return fmt.Errorf("nettest: remove toxic %s: %w", name, err)
	}
	return nil
}

// Close stops the proxy and closes its connections.
func (l *Link) Close() { l.proxy.Stop() }

// Slow is the link of issue 13's progress figures, and the options of
// SlowLink.
type Slow struct {
	RateKBs   int64 // toxiproxy's bandwidth toxic on the upstream, in KB/s (1000 bytes)
	LatencyMs int64 // each way
	JitterMs  int64
	// BufferPieces of PieceBytes is the middlebox's queue in front of the
	// bandwidth limit: toxiproxy's slicer cuts what it reads from Carrier
	// into pieces, and its latency toxic holds up to 1024 of them (its
	// channel's size) while the bandwidth toxic drains them. 0: no slicer,
	// so the queue holds 1024 reads of up to 32 KiB.
	PieceBytes int
}

// SlowLink adds Slow's toxics: upstream slicer, latency (its queue is the
// buffer) then bandwidth; downstream latency.
func (l *Link) SlowLink(s Slow) error {
	if s.PieceBytes > 0 {
		if err := l.Add(Toxic{Type: "slicer", Stream: "upstream", Attributes: map[string]any{"average_size": s.PieceBytes, "size_variation": 0, "delay": 0}}); err != nil {
			return err
		}
	}
	lat := map[string]any{"latency": s.LatencyMs, "jitter": s.JitterMs}
	if err := l.Add(Toxic{Type: "latency", Stream: "upstream", Attributes: lat}); err != nil {
		return err
	}
	if s.RateKBs > 0 {
		if err := l.Add(Toxic{Type: "bandwidth", Stream: "upstream", Attributes: map[string]any{"rate": s.RateKBs}}); err != nil {
			return err
		}
	}
	return l.Add(Toxic{Type: "latency", Stream: "downstream", Attributes: lat})
}

// Server is a sandbox served on a loopback listener that counts what
// arrives and can reset its connections.
type Server struct {
	SB    *sandbox.Sandbox
	Addr  string // host:port
	URL   string
	Token string
	ln    *trackListener
	stop  context.CancelFunc
	done  chan error
}

// StartSandbox opens a sandbox in o.Dir (o.Token is its static token) and
// serves it. Requests reach it addressed to a proxy's port, which its
// Host check refuses unless told: 127.0.0.1 on any port is added to
// o.PublicHosts.
func StartSandbox(o sandbox.Options) (*Server, error) {
	inner, err := sandbox.Listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return StartSandboxOn(o, inner)
}

// StartSandboxOn is StartSandbox serving on inner (a listener of the
// test's, e.g. with TCP keepalives off), which it closes.
func StartSandboxOn(o sandbox.Options, inner net.Listener) (*Server, error) {
	if o.Dir == "" || o.Token == "" {
		inner.Close()
		return nil, errors.New("nettest: the sandbox needs a folder and a token")
	}
	o.PublicHosts = append(o.PublicHosts, "127.0.0.1")
	sb, err := sandbox.Open(o)
	if err != nil {
		inner.Close()
		return nil, err
	}
	ln := &trackListener{Listener: inner, conns: map[*trackConn]struct{}{}}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{SB: sb, Addr: inner.Addr().String(), URL: sandbox.URL(inner), Token: o.Token, ln: ln, stop: stop, done: make(chan error, 1)}
	go func() { s.done <- sb.Serve(ctx, ln) }()
	return s, nil
}

// WireBytes is every byte read from the server's connections so far:
// what the proxy forwarded upstream and the server took, headers included.
func (s *Server) WireBytes() int64 { return s.ln.read.Load() }

// Reached returns a channel closed once the server has read n bytes from
// its connections in all (WireBytes), so a test can act at a point of an
// upload without polling.
func (s *Server) Reached(n int64) <-chan struct{} {
	ch := make(chan struct{})
	l := s.ln
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.read.Load() >= n {
		close(ch)
		return ch
	}
	l.waits = append(l.waits, wait{n, ch})
	return ch
}

// ResetAll resets every connection the server holds now (RST, with what
// is in flight lost), and returns how many it reset.
func (s *Server) ResetAll() int { return s.ln.resetAll() }

// ResetEvery resets every connection each period until ctx ends, and
// returns a function that waits for it to stop and tells how many
// resets it made (of connections, summed).
func (s *Server) ResetEvery(ctx context.Context, period time.Duration) (wait func() int) {
	var n int
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				n += s.ResetAll()
			}
		}
	}()
	return func() int { <-done; return n }
}

// Conn is one connection the server holds: its peer's address (the
// client's port tells connections apart) and the bytes read from it.
type Conn struct {
	Remote string
	Read   int64
}

// Conns lists the connections the server holds now.
func (s *Server) Conns() []Conn {
	l := s.ln
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Conn, 0, len(l.conns))
	for c := range l.conns {
		out = append(out, Conn{Remote: c.RemoteAddr().String(), Read: c.read.Load()})
	}
	return out
}

// Close stops serving and closes the store.
func (s *Server) Close() {
	// The sandbox first lets go of requests it holds, then the server
	// shuts down without waiting for them.
	s.SB.SetFaults("")
	s.stop()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
	s.SB.Close()
}

type trackListener struct {
	net.Listener
	read  atomic.Int64
	mu    sync.Mutex
	conns map[*trackConn]struct{}
	waits []wait
}

type wait struct {
	n  int64
	ch chan struct{}
}

func (l *trackListener) add(n int) {
	total := l.read.Add(int64(n))
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.waits[:0]
	for _, w := range l.waits {
		if total >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	l.waits = kept
}

func (l *trackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

func (l *trackListener) resetAll() int {
	l.mu.Lock()
	cs := make([]*trackConn, 0, len(l.conns))
	for c := range l.conns {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		if tcp, ok := c.Conn.(*net.TCPConn); ok {
			// Linger 0: the close sends RST and drops what is unsent, as a
			// middlebox that forgets a connection does.
			tcp.SetLinger(0)
		}
		c.Close()
	}
	return len(cs)
}

type trackConn struct {
	net.Conn
	l    *trackListener
	read atomic.Int64
	once sync.Once
}

func (c *trackConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.read.Add(int64(n))
		c.l.add(n)
	}
	return n, err
}

func (c *trackConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
