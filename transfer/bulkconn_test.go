package transfer

import (
	"bytes"
	"crypto/sha256"
	"hash/crc32"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// A range of the file handed to a bulkConn goes whole and exact, from the
// file by the kernel or, where the system cannot, through one buffer; the
// running sums take each byte once, a resent one not again; the body
// counts what went; and the transport, reading on for bytes past the
// length, finds none.
func TestBulkSendPaths(t *testing.T) {
	size := int64(bulkSend + 3*bulkCopy + 123) // more than one piece, pieces of more than one read
	path, data := writeFile(t, size)
	paths := map[string]func(*net.TCPConn, *os.File, int64, int, func(int) error) (int, error){
		"kernel": nil,
		"buffer": func(*net.TCPConn, *os.File, int64, int, func(int) error) (int, error) { return 0, errNoSendFile },
	}
	for name, kernel := range paths {
		for _, from := range []int64{0, bulkCopy + 7} { // from 0; a resend from an offset the sums passed
			for _, withSHA := range []bool{false, true} { // Cloud Storage's CRC32C alone; with the SHA-256
				t.Run(name, func(t *testing.T) {
					f, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					up := &upload{f: f, extra: newSumGroup([]string{SumCRC32C})}
					if withSHA {
						up.sha = newSumGroup([]string{SumSHA256})
					}
					// The sums already hold the first half: bytes sent before.
					up.feed(0, data[:size/2])
					tee := up.source(from, size-from).(*hashTee)
					tee.kernel = kernel
					body := &progressBody{r: tee}

					ln, err := net.Listen("tcp", "127.0.0.1:0")
					if err != nil {
						t.Fatal(err)
					}
					defer ln.Close()
					got := make(chan []byte, 1)
					go func() {
						c, err := ln.Accept()
						if err != nil {
							got <- nil
							return
						}
						b, _ := io.ReadAll(c)
						c.Close()
						got <- b
					}()
					c, err := net.Dial("tcp", ln.Addr().String())
					if err != nil {
						t.Fatal(err)
					}
					lr := &io.LimitedReader{R: body, N: size - from}
					n, err := bulkConn{c.(*net.TCPConn)}.ReadFrom(lr)
					if err != nil || n != size-from || lr.N != 0 {
						t.Fatalf("sent %d (left %d), %v; want %d", n, lr.N, err, size-from)
					}
					if m, err := body.Read(make([]byte, 10)); m != 0 || err != io.EOF {
						t.Errorf("after the range the body reads %d bytes, %v; want EOF", m, err)
					}
					c.Close()
					if b := <-got; !bytes.Equal(b, data[from:]) {
						t.Fatalf("the peer got %d bytes, not the file's %d from %d", len(b), size-from, from)
					}
					if body.count() != size-from {
						t.Errorf("the body counts %d bytes gone, want %d", body.count(), size-from)
					}
					wantSHA := sha256.Sum256(data)
					wantCRC := crc32.Checksum(data, castagnoli)
					if withSHA && (!bytes.Equal(up.sha.sum(SumSHA256), wantSHA[:]) || up.sha.at != size) {
						t.Error("the SHA-256 is not the file's")
					}
					if !bytes.Equal(up.extra.sum(SumCRC32C), be32(wantCRC)) {
						t.Error("the CRC32C is not the file's")
					}
				})
			}
		}
	}
}

// A piece sent by the kernel counts its bytes as they leave, not once the
// whole piece has gone: a peer that does not read holds the piece back,
// and the bytes already in its socket still show as progress (the stall
// watchdog and the minimum speed read it).
func TestBulkPieceCountsAsItLeaves(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel sends from a file on Linux only; elsewhere each bulkCopy write is counted")
	}
	size := int64(bulkSend)
	path, data := writeFile(t, size)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	up := &upload{f: f, extra: newSumGroup([]string{SumCRC32C})}
	moved := make(chan struct{})
	var once sync.Once
	body := &progressBody{r: up.source(0, size), onRead: func(int64) { once.Do(func() { close(moved) }) }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		<-moved // nothing is read until progress shows
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// A piece larger than what the sockets hold unread.
	c.(*net.TCPConn).SetWriteBuffer(64 << 10)
	sent := make(chan error, 1)
	go func() {
		_, err := bulkConn{c.(*net.TCPConn)}.ReadFrom(&io.LimitedReader{R: body, N: size})
		c.Close()
		sent <- err
	}()
	select {
	case <-moved:
	case <-time.After(20 * time.Second):
		once.Do(func() { close(moved) }) // let the peer read, so the sender ends
		t.Fatal("no progress while the piece waited for the peer")
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("the peer got %d bytes, not the file's %d", len(b), size)
	}
}

func be32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
