package nettest_test

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"carrier/internal/nettest"
	"carrier/transfer"
)

// lateProxy is a proxy between the engine and the sandbox that holds back
// the first request carrying bytes, headers and body, and delivers it only
// after the engine gave it up (reset its connection) and the request that
// replaced it has begun at the server: the abandoned request arrives late,
// as through a middlebox that buffered it. Toxiproxy's toxics drop what
// they hold or deliver it in order, so this one is made by hand.
type lateProxy struct {
	ln  net.Listener
	srv *nettest.Server

	mu        sync.Mutex
	state     int // 0 waiting for the first chunk, 1 holding it, 2 given up by the engine, 3 delivered
	held      []byte
	heldUp    net.Conn
	delivered bool
}

func startLateProxy(t *testing.T, srv *nettest.Server) *lateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &lateProxy{ln: ln, srv: srv}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

// isChunk says whether a read starts a request that carries bytes.
func isChunk(b []byte) bool {
	return bytes.HasPrefix(b, []byte("PUT ")) && bytes.Contains(b, []byte("\r\nContent-Range: bytes ")) &&
		!bytes.Contains(b, []byte("\r\nContent-Range: bytes */"))
}

func (p *lateProxy) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.srv.Addr)
	if err != nil {
		return
	}
	defer up.Close()
	downDone := make(chan struct{})
	go func() {
		io.Copy(c, up)
		// The server closed or dropped the connection: so does the proxy.
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
		close(downDone)
	}()
	buf := make([]byte, 64<<10)
	holding, live := false, false
	var before int64
	for {
		n, err := c.Read(buf)
		if n > 0 {
			b := buf[:n]
			p.mu.Lock()
			switch {
			case p.state == 0 && isChunk(b):
				p.state, holding, p.heldUp = 1, true, up
			case p.state == 2 && isChunk(b):
				p.state, live = 3, true
				before = p.srv.SB.Stats().BytesReceived
			}
			if holding {
				p.held = append(p.held, b...)
				b = nil
			}
			p.mu.Unlock()
			if len(b) > 0 {
				if _, err := up.Write(b); err != nil {
					return
				}
			}
			if live && p.bodyBegun(before) {
				live = false
				p.deliver(downDone)
			}
		}
		if err != nil {
			if holding {
				// The engine gave the request up; the proxy keeps its bytes
				// and its connection to the server until it delivers them.
				p.mu.Lock()
				p.state = 2
				p.mu.Unlock()
				<-downDone
				return
			}
			up.(*net.TCPConn).CloseWrite()
			<-downDone
			return
		}
	}
}

// bodyBegun says, after a short wait, whether the server has read body
// bytes of the request that replaced the held one: then it holds the
// session.
func (p *lateProxy) bodyBegun(before int64) bool {
	for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if p.srv.SB.Stats().BytesReceived > before {
			return true
		}
	}
	return false
}

// deliver sends the held request to the server while the new one is in
// progress, and lets the new one go on only once the server has answered
// or dropped it, or after a while.
func (p *lateProxy) deliver(downDone <-chan struct{}) {
	p.mu.Lock()
	held, heldUp := p.held, p.heldUp
	p.delivered = true
	p.mu.Unlock()
	heldUp.Write(held)
	heldUp.(*net.TCPConn).CloseWrite()
	select {
	case <-downDone:
	case <-time.After(10 * time.Second):
	}
}

// Issue 33 through a proxy: the first chunk's request is held back by the
// proxy, the engine gives it up for a stall, asks where the session stands
// and sends the chunk again; the held request then reaches the server
// while the new one is in progress, and takes the session over. The
// upload must still complete with the file's bytes: the live request was
// once answered 400, which the engine rightly takes as permanent, and the
// upload failed.
func TestLateStaleRequestDoesNotFailTheUpload(t *testing.T) {
	e := newEnvWith(t, transfer.Config{StallTimeout: 500 * time.Millisecond, ChunkSize: 256 << 10}, "", false)
	p := startLateProxy(t, e.srv)
	data := make([]byte, 1<<20+7)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	u := "http://" + p.ln.Addr().String() + "/upload/storage/v1/b/nettest/o?name=" + url.QueryEscape("late")
	if _, err := e.q.Add(transfer.Spec{URL: u, ContentType: "application/octet-stream", Path: path}); err != nil {
		t.Fatal(err)
	}
	e.await(t, nil)
	p.mu.Lock()
	delivered := p.delivered
	p.mu.Unlock()
	if !delivered {
		t.Fatal("the upload ended before the held request was delivered late")
	}
	e.check(t, "late", data)
}
