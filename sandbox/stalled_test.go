package sandbox

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stalledPut sends a chunk's headers and the first half of its body on a
// raw connection and holds it there, as a client whose path went silent
// mid-body; it returns once the sandbox has read that half.
func stalledPut(t *testing.T, e *testEnv, uri string, data []byte, first, total int64) net.Conn {
	t.Helper()
	before := e.sb.Stats().BytesReceived
	c, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	path := strings.TrimPrefix(uri, e.srv.URL)
	tot := "*"
	if total >= 0 {
		tot = formatInt(total)
	}
	fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nContent-Range: bytes %d-%d/%s\r\n\r\n",
		path, e.srv.Listener.Addr(), len(data), first, first+int64(len(data))-1, tot)
	half := len(data) / 2
	if _, err := c.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); e.sb.Stats().BytesReceived < before+int64(half); {
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox read %d of the stalled body's %d bytes", e.sb.Stats().BytesReceived-before, half)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c
}

// goQuery sends a status query and hands its answer over when it comes.
func goQuery(e *testEnv, uri string, total int64) <-chan resp {
	ch := make(chan resp, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, uri, http.NoBody)
		req.Header.Set("Content-Range", fmt.Sprintf("bytes */%d", total))
		r, err := e.srv.Client().Do(req)
		if err != nil {
			ch <- resp{code: -1, body: []byte(err.Error())}
			return
		}
		defer r.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		ch <- resp{code: r.StatusCode, h: r.Header, body: b.Bytes()}
	}()
	return ch
}

func md5Of(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Issue 33: a status query is answered at once, with the persisted offset,
// while another request on the session is stalled mid-body (its connection
// silently dead); a chunk from that offset takes the session over and
// completes the upload with the right bytes, the stalled request's
// connection dropped. Every request used to wait on the session's one lock behind it.
func TestStatusQueryWhileARequestStallsMidBody(t *testing.T) {
	e := newEnv(t)
	data := randomData(33, 4*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=stalled.bin", "application/octet-stream", total, "")
	if r := e.chunk(uri, data[:kib256], 0, total); r.code != 308 {
		t.Fatalf("first chunk: %d %s", r.code, r.body)
	}
	stalled := stalledPut(t, e, uri, data[kib256:3*kib256], kib256, total)

	select {
	case r := <-goQuery(e, uri, total):
		if r.code != 308 || r.h.Get("Range") != "bytes=0-262143" {
			t.Fatalf("status query: %d Range %q %s", r.code, r.h.Get("Range"), r.body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the status query waited behind the stalled request")
	}

	done := make(chan resp, 1)
	go func() {
		done <- e.do(http.MethodPut, uri, map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%d", kib256, total-1, total)}, data[kib256:])
	}()
	var r resp
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the chunk from the persisted offset waited behind the stalled request")
	}
	if r.code != 200 || r.json(t)["md5Hash"] != md5Of(data) {
		t.Fatalf("last chunk: %d %s", r.code, r.body)
	}
	if got := e.object("bkt", "stalled.bin"); !bytes.Equal(got, data) {
		t.Fatalf("stored object differs (%d vs %d bytes)", len(got), len(data))
	}

	// The stalled request got no answer (its connection was dropped), and
	// its bytes sent now change nothing.
	supersededUnanswered(t, stalled, bytes.Repeat([]byte{0xff}, kib256))
	if q := e.query(uri, total); q.code != 200 || q.json(t)["md5Hash"] != md5Of(data) {
		t.Fatalf("query after completion: %d %s", q.code, q.body)
	}
	if got := e.object("bkt", "stalled.bin"); !bytes.Equal(got, data) {
		t.Fatal("the stalled request's late bytes changed the object")
	}
}

// A cancel is not held up by a stalled request either.
func TestCancelWhileARequestStallsMidBody(t *testing.T) {
	e := newEnv(t)
	data := randomData(34, 2*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=cancelled.bin", "application/octet-stream", total, "")
	stalledPut(t, e, uri, data, 0, total)
	done := make(chan resp, 1)
	go func() { done <- e.do(http.MethodDelete, uri, nil, nil) }()
	select {
	case r := <-done:
		if r.code != 499 {
			t.Fatalf("cancel: %d %s", r.code, r.body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel waited behind the stalled request")
	}
	if r := e.query(uri, total); r.code != 404 {
		t.Fatalf("query after the cancel: %d %s", r.code, r.body)
	}
}

// With SerializeSessions, the behaviour before issue 33: the status query
// waits until the stalled request ends (its connection closes), then
// counts the bytes it brought.
// The switch is an Option and a control at run time.
func TestSerializeSessionsQueryWaitsForTheStalledRequest(t *testing.T) {
	t.Run("option", func(t *testing.T) {
		serializedQueryWaits(t, newEnv(t, func(o *Options) { o.SerializeSessions = true }))
	})
	t.Run("control", func(t *testing.T) {
		e := newEnv(t)
		if r := e.do(http.MethodPut, "/sandbox/v1/sessions", auth(), []byte(`{"serialize": true}`)); r.code != 200 || !strings.Contains(string(r.body), `"serialize": true`) {
			t.Fatalf("control: %d %s", r.code, r.body)
		}
		serializedQueryWaits(t, e)
	})
}

func serializedQueryWaits(t *testing.T, e *testEnv) {
	data := randomData(35, 4*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=serial.bin", "application/octet-stream", total, "")
	if r := e.chunk(uri, data[:kib256], 0, total); r.code != 308 {
		t.Fatalf("first chunk: %d %s", r.code, r.body)
	}
	stalled := stalledPut(t, e, uri, data[kib256:3*kib256], kib256, total)
	answer := goQuery(e, uri, total)
	select {
	case r := <-answer:
		t.Fatalf("the status query was answered while the stalled request held the session: %d %s", r.code, r.h.Get("Range"))
	case <-time.After(500 * time.Millisecond):
	}
	stalled.Close()
	select {
	case r := <-answer:
		if r.code != 308 || r.h.Get("Range") != "bytes=0-524287" {
			t.Fatalf("status query: %d Range %q %s", r.code, r.h.Get("Range"), r.body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the status query was not answered after the stalled connection closed")
	}
	if r := e.chunk(uri, data[2*kib256:], 2*kib256, total); r.code != 200 || r.json(t)["md5Hash"] != md5Of(data) {
		t.Fatalf("last chunk: %d %s", r.code, r.body)
	}
}

// A session of unknown size: the query names the total, which the session
// does not know yet, and is still answered at once.
func TestStatusQueryWithATotalWhileARequestStalls(t *testing.T) {
	e := newEnv(t)
	data := randomData(36, 4*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=unsized.bin", "application/octet-stream", -1, "")
	if r := e.chunk(uri, data[:kib256], 0, -1); r.code != 308 {
		t.Fatalf("first chunk: %d %s", r.code, r.body)
	}
	stalledPut(t, e, uri, data[kib256:3*kib256], kib256, -1)
	select {
	case r := <-goQuery(e, uri, total):
		if r.code != 308 || r.h.Get("Range") != "bytes=0-262143" {
			t.Fatalf("status query: %d Range %q %s", r.code, r.h.Get("Range"), r.body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the status query waited behind the stalled request")
	}
	if r := e.chunk(uri, data[kib256:], kib256, total); r.code != 200 || r.json(t)["md5Hash"] != md5Of(data) {
		t.Fatalf("last chunk: %d %s", r.code, r.body)
	}
}

// supersededUnanswered sends the rest of a superseded request's body and
// checks that it gets no answer: its connection is dropped.
func supersededUnanswered(t *testing.T, c net.Conn, rest []byte) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(rest)
	if r, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
		r.Body.Close()
		t.Fatalf("the superseded request was answered %d, want its connection dropped", r.StatusCode)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the superseded request's connection stayed open: %v", err)
	}
}

// Issue 33 through a proxy: the engine gave up a chunk whose path went
// silent, asked where the session stood and sent the chunk again; the
// proxy delivered the abandoned request late, after the live one had
// begun. The stale request takes the session over (starting where the live
// one did, the sandbox cannot tell which is live), but the live request is
// never answered 400, which the engine reads as permanent and fails the
// upload on: its connection is dropped, so its client asks again and
// finishes, with the file's exact bytes.
func TestStaleRequestDoesNotFailTheLiveOne(t *testing.T) {
	e := newEnv(t)
	data := randomData(37, 4*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=stale.bin", "application/octet-stream", total, "")
	if r := e.chunk(uri, data[:kib256], 0, total); r.code != 308 {
		t.Fatalf("first chunk: %d %s", r.code, r.body)
	}
	// The live chunk, half its body read.
	live := stalledPut(t, e, uri, data[kib256:3*kib256], kib256, total)
	// The stale one, for the same bytes, whole.
	if r := e.chunk(uri, data[kib256:3*kib256], kib256, total); r.code != 308 {
		t.Fatalf("the stale request: %d %s", r.code, r.body)
	}
	supersededUnanswered(t, live, data[2*kib256:3*kib256])

	// The live request's client asks and goes on from the offset given.
	q := e.query(uri, total)
	if q.code != 308 {
		t.Fatalf("status query: %d %s", q.code, q.body)
	}
	var next int64
	fmt.Sscanf(q.h.Get("Range"), "bytes=0-%d", &next)
	next++
	if next != 3*kib256 {
		t.Fatalf("the session stands at %d bytes, want the %d both requests brought", next, 3*kib256)
	}
	if r := e.chunk(uri, data[next:], next, total); r.code != 200 || r.json(t)["md5Hash"] != md5Of(data) {
		t.Fatalf("last chunk from %d: %d %s", next, r.code, r.body)
	}
	if got := e.object("bkt", "stale.bin"); !bytes.Equal(got, data) {
		t.Fatalf("stored object differs (%d vs %d bytes)", len(got), len(data))
	}
}

// A stale request for an earlier range (an abandoned chunk before the one
// in progress, delivered late) does not take the session over at all: it
// is answered 503 with its body unread, and the live request goes on
// undisturbed to its own answer.
func TestStaleRequestForAnEarlierRangeDoesNotTakeOver(t *testing.T) {
	e := newEnv(t)
	data := randomData(38, 4*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=earlier.bin", "application/octet-stream", total, "")
	if r := e.chunk(uri, data[:kib256], 0, total); r.code != 308 {
		t.Fatalf("first chunk: %d %s", r.code, r.body)
	}
	live := stalledPut(t, e, uri, data[kib256:3*kib256], kib256, total)
	// The stale request's headers and the start of its body (its answer
	// comes before the rest would be read).
	stale, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	stale.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(stale, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nContent-Range: bytes 0-%d/%d\r\n\r\n",
		strings.TrimPrefix(uri, e.srv.URL), e.srv.Listener.Addr(), 2*kib256, 2*kib256-1, total)
	stale.Write(data[:4096])
	sr, err := http.ReadResponse(bufio.NewReader(stale), nil)
	if err != nil {
		t.Fatalf("the stale request's answer: %v", err)
	}
	sr.Body.Close()
	if sr.StatusCode != 503 || sr.Header.Get("Range") != "bytes=0-262143" {
		t.Fatalf("the stale request: %d Range %q", sr.StatusCode, sr.Header.Get("Range"))
	}
	live.SetDeadline(time.Now().Add(5 * time.Second))
	live.Write(data[2*kib256 : 3*kib256])
	lr, err := http.ReadResponse(bufio.NewReader(live), nil)
	if err != nil {
		t.Fatalf("the live request got no answer: %v", err)
	}
	lr.Body.Close()
	if lr.StatusCode != 308 || lr.Header.Get("Range") != "bytes=0-786431" {
		t.Fatalf("the live request: %d Range %q", lr.StatusCode, lr.Header.Get("Range"))
	}
	if r := e.chunk(uri, data[3*kib256:], 3*kib256, total); r.code != 200 || r.json(t)["md5Hash"] != md5Of(data) {
		t.Fatalf("last chunk: %d %s", r.code, r.body)
	}
	if got := e.object("bkt", "earlier.bin"); !bytes.Equal(got, data) {
		t.Fatalf("stored object differs (%d vs %d bytes)", len(got), len(data))
	}
}
