package transfer

import (
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"carrier/sandbox"
)

// cutProxy forwards loopback TCP to a server and resets every connection
// a fixed time after it opened, as a flaky link does; it counts the bytes
// that went towards the server.
type cutProxy struct {
	ln     net.Listener
	target string
	every  time.Duration
	up     atomic.Int64
}

func newCutProxy(tb testing.TB, target string, every time.Duration) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, every: every}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
	return p
}

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

func (p *cutProxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			c.(*net.TCPConn).SetLinger(0) // a reset, not a clean close
			c.Close()
			s.Close()
		})
	}
	if p.every > 0 {
		t := time.AfterFunc(p.every, kill)
		defer t.Stop()
	}
	go func() { io.Copy(c, s); kill() }()
	io.Copy(countWriter{s, &p.up}, c)
	kill()
}

// BenchmarkFlakyLink uploads 24 MiB at 4 MiB/s (the client's limit) to the
// sandbox through a proxy that resets every connection 2 s after it
// opened, and reports the time against the same upload undisturbed
// ("x-time", goal at most 1.25) and the bytes sent against the file
// ("x-bytes", goal at most 1.05).
//
//	go test -run XXX -bench FlakyLink -benchtime 1x ./transfer/
func BenchmarkFlakyLink(b *testing.B) {
	const size, rate = 24 << 20, 4 << 20
	sb, err := sandbox.Open(sandbox.Options{Dir: b.TempDir(), Token: sbToken, PublicHosts: []string{"127.0.0.1"}}) // reached through the proxy's port
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	defer sb.Close()
	path := sparseFile(b, size)
	run := func(every time.Duration, name string) (time.Duration, int64) {
		p := newCutProxy(b, srv.Listener.Addr().String(), every)
		q, err := New(Config{StateDir: b.TempDir(), Auth: StaticToken(sbToken), Bandwidth: rate, RetryBase: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		start := time.Now()
		id, err := q.Add(Spec{URL: "http://" + p.ln.Addr().String() + "/upload/storage/v1/b/carrier-test/o?name=" + url.QueryEscape(name), ContentType: "application/octet-stream", Path: path})
		if err != nil {
			b.Fatal(err)
		}
		if rec, err := q.Wait(b.Context(), id); err != nil || rec.State != StateDone {
			b.Fatalf("%s %v %s", rec.State, err, rec.Error)
		}
		return time.Since(start), p.up.Load()
	}
	for i := 0; b.Loop(); i++ {
		calm, _ := run(0, "calm"+string(rune('a'+i)))
		cut, sent := run(2*time.Second, "cut"+string(rune('a'+i)))
		b.ReportMetric(calm.Seconds(), "s-undisturbed")
		b.ReportMetric(cut.Seconds(), "s-reset-every-2s")
		b.ReportMetric(cut.Seconds()/calm.Seconds(), "x-time")
		b.ReportMetric(float64(sent)/size, "x-bytes")
	}
}
