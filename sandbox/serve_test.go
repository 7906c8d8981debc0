package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// serveEnv runs the sandbox through Serve, as `carrier sandbox` does, with
// short client timeouts.
func serveEnv(t *testing.T, opts ...func(*Options)) (*Sandbox, string) {
	t.Helper()
	o := Options{Dir: t.TempDir(), Token: testToken, HeaderTimeout: 300 * time.Millisecond, BodyIdle: 300 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	sb, err := Open(o)
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

// trickle sends a request whose body comes a byte every 100 ms, as the
// attacker of issue 11 did (a byte every 3 s), and reports whether the
// server cut the connection within limit.
func trickle(t *testing.T, host, head string, limit time.Duration) bool {
	t.Helper()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	return closedWithin(conn, limit)
}

func TestTrickledBodiesAreCutOff(t *testing.T) {
	_, base := serveEnv(t, func(o *Options) { o.BodyTimeout = 500 * time.Millisecond })
	u, _ := url.Parse(base)
	req, _ := http.NewRequest("POST", base+"/upload/storage/v1/b/bkt/o?uploadType=resumable&name=slow", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("initiate: %v %v", r, err)
	}
	r.Body.Close()
	session, _ := url.Parse(r.Header.Get("Location"))
	const big = "Content-Length: 100000000\r\n"
	auth := "Authorization: Bearer " + testToken + "\r\n"
	for name, head := range map[string]string{
		"resumable metadata": "POST /upload/storage/v1/b/bkt/o?uploadType=resumable&name=x HTTP/1.1\r\n" + auth + "Content-Type: application/json\r\n" + big,
		"multipart preamble": "POST /upload/storage/v1/b/bkt/o?uploadType=multipart HTTP/1.1\r\n" + auth + "Content-Type: multipart/related; boundary=b\r\n" + big,
		"gmail metadata URI": "POST /gmail/v1/users/me/messages/send HTTP/1.1\r\n" + auth + "Content-Type: application/json\r\n" + big + "\r\n{\"raw\":\"",
		"token":              "POST /token HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n",
		"revoke":             "POST /revoke HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n",
		"consent":            "POST /o/oauth2/v2/consent HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n",
		"faults":             "PUT /sandbox/v1/faults HTTP/1.1\r\n" + auth + "Content-Length: 4000\r\n",
		"session media":      "PUT " + session.RequestURI() + " HTTP/1.1\r\nContent-Range: bytes 0-99999999/100000000\r\n" + big,
		"simple media":       "POST /upload/storage/v1/b/bkt/o?uploadType=media&name=y HTTP/1.1\r\n" + auth + big,
	} {
		t.Run(name, func(t *testing.T) {
			if !trickle(t, u.Host, withHost(head, u.Host), 5*time.Second) {
				t.Fatal("a body trickled a byte every 100 ms still holds its connection after 5 s")
			}
		})
	}
}

// withHost adds the Host header after the request line and ends the
// header block unless the body has begun.
func withHost(head, host string) string {
	line, rest, _ := strings.Cut(head, "\r\n")
	if !strings.Contains(rest, "\r\n\r\n") {
		rest += "\r\n"
	}
	return line + "\r\nHost: " + host + "\r\n" + rest
}

func TestConnectionsAreCapped(t *testing.T) {
	_, base := serveEnv(t, func(o *Options) { o.MaxConns = 2; o.HeaderTimeout = time.Minute })
	u, _ := url.Parse(base)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /gmail/v1/users/me/profile HTTP/1.1\r\nHost: %s\r\n", u.Host) // never finished
		held = append(held, c)
	}
	get := func(timeout time.Duration) error {
		client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
		req, _ := http.NewRequest("GET", base+"/gmail/v1/users/me/profile", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		r, err := client.Do(req)
		if err == nil {
			r.Body.Close()
		}
		return err
	}
	if err := get(500 * time.Millisecond); err == nil {
		t.Fatal("a third connection was served while two were held")
	}
	held[0].Close()
	if err := get(10 * time.Second); err != nil {
		t.Fatalf("once one closed: %v", err)
	}
}
