package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// serveEnv runs the sandbox through Serve, as `carrier sandbox` does, with
// short client timeouts.
func serveEnv(t *testing.T) (*Sandbox, string) {
	t.Helper()
	sb, err := Open(Options{Dir: t.TempDir(), Token: testToken, HeaderTimeout: 300 * time.Millisecond, BodyIdle: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		sb.Close()
	})
	return sb, URL(ln)
}

// closedWithin reports whether the server closes conn by itself in time.
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

func TestSlowClientsAreCutOff(t *testing.T) {
	_, base := serveEnv(t)
	u, _ := url.Parse(base)
	t.Run("headers never finish", func(t *testing.T) {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "PUT /upload/storage/v1/b/bkt/o HTTP/1.1\r\nHost: %s\r\n", u.Host)
		if !closedWithin(conn, 10*time.Second) {
			t.Fatal("a client that never finishes its headers keeps its connection")
		}
	})
	t.Run("body stops arriving", func(t *testing.T) {
		req, _ := http.NewRequest("POST", base+"/upload/storage/v1/b/bkt/o?uploadType=resumable&name=slow", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("initiate: %v %v", r, err)
		}
		r.Body.Close()
		loc, _ := url.Parse(r.Header.Get("Location"))
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\nContent-Range: bytes 0-999/1000\r\n\r\n0123456789", loc.RequestURI(), u.Host)
		if !closedWithin(conn, 10*time.Second) {
			t.Fatal("a body that stops arriving keeps its connection")
		}
		q, _ := http.NewRequest("PUT", loc.String(), nil)
		q.Header.Set("Content-Range", "bytes */1000")
		r, err = http.DefaultClient.Do(q)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 308 || r.Header.Get("Range") != "bytes=0-9" {
			t.Fatalf("the 10 bytes that arrived: %d %q", r.StatusCode, r.Header.Get("Range"))
		}
	})
}

func TestSweepDropsExpiredSessions(t *testing.T) {
	now := time.Now()
	e := newEnv(t, func(o *Options) { o.Now = func() time.Time { return now } })
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=old", "application/octet-stream", 2*kib256, "")
	e.chunk(uri, randomData(1, kib256), 0, 2*kib256)
	id := uri[len(uri)-22:]
	now = now.Add(8 * 24 * time.Hour)
	e.restart()
	var n int
	e.sb.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bSessions).Stats().KeyN; return nil })
	if _, err := os.Stat(e.sb.uploadPath(id)); n != 0 || err == nil {
		t.Fatalf("expired session kept: %d records, part file: %v", n, err)
	}
}
