package transfer

import (
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// On loopback, what the peer acknowledged is never more than what was
// written, and reaches all of it once the peer has read it; the server
// reads late, so the kernel's buffers fill first.
func TestAckedNeverPassesWrittenAndReachesTheTotal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const total = 16 << 20
	read := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			read <- -1
			return
		}
		defer c.Close()
		time.Sleep(300 * time.Millisecond) // the client's writes fill the buffers meanwhile
		n, _ := io.Copy(io.Discard, c)
		read <- n
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p := newAckProbe(c)
	if p == nil {
		c.Close()
		t.Skip("this system tells nothing of what the peer acknowledged")
	}
	base, ok := p.acked()
	if !ok {
		t.Fatal("the probe could not read the socket")
	}
	buf := make([]byte, 64<<10)
	var written int64
	var seen []int64
	for written < total {
		n, err := c.Write(buf)
		if err != nil {
			t.Fatal(err)
		}
		written += int64(n)
		a, _ := p.acked()
		if a-base > written {
			t.Fatalf("the peer acknowledged %d bytes of %d written", a-base, written)
		}
		seen = append(seen, a-base)
	}
	deadline := time.Now().Add(20 * time.Second)
	var a int64
	for {
		a, _ = p.acked()
		if a-base == total || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
	if a-base != total {
		t.Fatalf("the peer acknowledged %d of %d bytes", a-base, total)
	}
	if n := <-read; n != total {
		t.Fatalf("the peer read %d", n)
	}
	t.Logf("acknowledged while writing (of %d MiB): first %d KiB, midway %d KiB; at the end %d MiB", total>>20, seen[0]>>10, seen[len(seen)/2]>>10, a>>20)
}

// ackSink records the offsets reported as acknowledged.
type ackSink struct {
	recSink
	mu    sync.Mutex
	acked []int64
}

func (s *ackSink) Acked(off int64) {
	s.mu.Lock()
	s.acked = append(s.acked, off)
	s.mu.Unlock()
}

// Through the Uploader, over HTTP/1 on loopback: each chunk's acknowledged
// offset reaches its end before the server's 308, and never passes the
// file's size.
func TestUploaderReportsAckedBytes(t *testing.T) {
	f := newFake(t)
	var mu sync.Mutex
	var ends []int64
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" {
			mu.Lock()
			ends = append(ends, s.stored+r.ContentLength)
			mu.Unlock()
		}
		return false
	}
	path, _ := writeFile(t, 6<<20)
	sink := &ackSink{}
	if _, err := NewUploader(Uploader{}).Upload(ctxT(t), Work{Record: uploadRecord(t, f.url(), path, 2<<20), Sink: sink}); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.acked) == 0 {
		if loopbackTellsAcks(t) {
			t.Fatal("no acknowledged offset reported, though this system tells what the peer acknowledged")
		}
		t.Skip("this system tells nothing of what the peer acknowledged")
	}
	set := map[int64]bool{}
	for _, a := range sink.acked {
		if a < 0 || a > 6<<20 {
			t.Fatalf("acknowledged offset %d for a %d-byte file", a, 6<<20)
		}
		set[a] = true
	}
	for _, e := range ends {
		if !set[e] {
			t.Fatalf("no acknowledged offset reached the chunk's end %d: %v", e, sink.acked)
		}
	}
	t.Logf("chunk ends %v; %d acknowledged offsets reported", ends, len(sink.acked))
}

// loopbackTellsAcks reports whether this system tells what the peer of a
// loopback TCP connection acknowledged (Linux: TCP_INFO).
func loopbackTellsAcks(t *testing.T) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return newAckProbe(c) != nil
}

// scriptedProbe answers each read of the acknowledged count from a
// script (the last answer repeats) and says when it was read.
type scriptedProbe struct {
	mu     sync.Mutex
	script []scriptedAck
	reads  chan struct{}
}

type scriptedAck struct {
	n  int64
	ok bool
}

func (p *scriptedProbe) acked() (int64, bool) {
	p.mu.Lock()
	a := p.script[0]
	if len(p.script) > 1 {
		p.script = p.script[1:]
	}
	p.mu.Unlock()
	p.reads <- struct{}{}
	return a.n, a.ok
}

// follow tells each new acknowledged offset once, from the chunk's
// offset: a count that did not move since the last poll is not told
// again, and a poll the system could not answer tells nothing. Polls are
// counted, not timed.
func TestFollowTellsEachNewOffsetOnce(t *testing.T) {
	p := &scriptedProbe{reads: make(chan struct{}, 64), script: []scriptedAck{
		{100, false},  // the system could not say
		{400, true},   // 300 of the body
		{400, true},   // not moved
		{400, true},   // not moved
		{1100, true},  // 1,000: all that was written
		{1100, false}, // could not say, again
	}}
	tr := &ackTracker{}
	tr.written.Store(1000)
	tr.probe, tr.base = p, 100 // as trace's GotConn found them
	var mu sync.Mutex
	var told []int64
	stop := tr.follow(5000, func(off int64) {
		mu.Lock()
		told = append(told, off)
		mu.Unlock()
	})
	for range 7 { // every answer of the script read, and the last again
		select {
		case <-p.reads:
		case <-time.After(30 * time.Second):
			t.Fatal("the tracker stopped polling")
		}
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	if want := []int64{5300, 6000}; !slices.Equal(told, want) {
		t.Fatalf("told %v, want %v: each new offset once, nothing for a poll the system could not answer", told, want)
	}
}
