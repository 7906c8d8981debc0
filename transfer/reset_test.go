package transfer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// rawSession is a resumable server on a bare listener, to see how the
// client's connections end: it starts sessions, answers status queries
// with nothing stored, and reads a chunk's first 64 KiB, says so on
// midBody, then reads on (or, with whole, reads it all and finishes the
// upload) and sends how the connection's read ended on ended.
type rawSession struct {
	ln      net.Listener
	whole   bool
	midBody chan struct{}
	ended   chan error
}

func newRawSession(t *testing.T, whole bool) *rawSession {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawSession{ln: ln, whole: whole, midBody: make(chan struct{}, 8), ended: make(chan error, 8)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *rawSession) url() string { return "http://" + s.ln.Addr().String() + "/upload" }

func (s *rawSession) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for served := false; ; served = true {
		req, err := http.ReadRequest(br)
		if err != nil {
			if served || br.Buffered() > 0 {
				s.ended <- err
			}
			// Else a connection that carried no request: the engine's
			// knock from a connection it reset (knock.go), not one whose
			// end the test watches.
			return
		}
		switch {
		case req.Header.Get("X-Upload-Content-Length") != "":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nLocation: http://%s/session\r\nContent-Length: 0\r\n\r\n", s.ln.Addr())
		case req.ContentLength == 0:
			io.WriteString(c, "HTTP/1.1 308 Permanent Redirect\r\nContent-Length: 0\r\n\r\n")
		case s.whole:
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"id\":\"x\"}\n")
		default:
			if _, err := io.CopyN(io.Discard, req.Body, 64<<10); err != nil {
				s.ended <- err
				return
			}
			s.midBody <- struct{}{}
			_, err := io.Copy(io.Discard, br)
			if err == nil {
				err = io.EOF // the client closed politely
			}
			s.ended <- err
			return
		}
	}
}

func (s *rawSession) waitEnded(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.ended:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the server's connection never ended")
		return nil
	}
}

// A request the engine abandons mid-body has its connection reset, not
// closed politely: on a dead path a polite close never reaches the server,
// which then holds the session's request (Google's and the sandbox's
// lock) till its own timeout; a reset frees it as soon as a path is back.
func TestAbandonedConnectionIsReset(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the reset reads as another error there")
	}
	for _, how := range []string{"cancel", "wake"} {
		t.Run(how, func(t *testing.T) {
			s := newRawSession(t, false)
			var mu sync.Mutex
			wake := make(chan struct{})
			u := NewUploader(Uploader{Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}, Retry: RetryPolicy{Base: time.Hour},
				Interrupt: func() <-chan struct{} { mu.Lock(); defer mu.Unlock(); return wake }})
			path, _ := writeFile(t, 64*ChunkQuantum)
			ctx, cancel := context.WithCancel(ctxT(t))
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := u.Upload(ctx, Work{Record: uploadRecord(t, s.url(), path, 64*ChunkQuantum)})
				done <- err
			}()
			select {
			case <-s.midBody:
			case err := <-done:
				t.Fatalf("the upload ended before its body went: %v", err)
			}
			if how == "cancel" {
				cancel()
			} else {
				mu.Lock()
				close(wake)
				wake = make(chan struct{})
				mu.Unlock()
			}
			if err := s.waitEnded(t); !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("the server read %v, want a reset", err)
			}
			cancel()
			<-done
		})
	}
}

// A connection whose answer was read is not reset when it closes later
// (idle, reused and done): only an abandoned request's is.
func TestFinishedConnectionClosesPolitely(t *testing.T) {
	s := newRawSession(t, true)
	tr := bulkTransport()
	u := NewUploader(Uploader{Client: &http.Client{Transport: tr}, Stall: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
	path, _ := writeFile(t, ChunkQuantum)
	if _, err := u.Upload(ctxT(t), Work{Record: uploadRecord(t, s.url(), path, ChunkQuantum)}); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	if err := s.waitEnded(t); err != io.EOF {
		t.Errorf("the server read %v, want the end of a polite close", err)
	}
}
