package transfer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// googFake is a small, exact stand-in for an endpoint of the second
// resumable dialect (PROTOCOL.md section 8), for cases the sandbox cannot
// be made to produce on demand. Its session URIs carry upload_id=SECRET-g...
// and its tokens start TOKEN-, so tests can look for leaks.
type googFake struct {
	t    testing.TB
	srv  *httptest.Server
	stop chan struct{}
	gran int64 // the granularity it states and holds chunks to
	// granHeader, when set, is stated as the granularity instead.
	granHeader string

	mu       sync.Mutex
	sessions map[string]*googSession
	nextID   int
	counts   map[string]int // requests per command: start, upload, finalize, query, cancel
	log      []string       // "command offset length" of each request to a session
	received int64          // body bytes that arrived on upload commands
	dropped  int64          // of those, bytes the server did not keep
	refused  []string       // why requests were refused (a client that broke the rules)
	finished int            // sessions finalized
	// discard keeps only a SHA-256 of each session's bytes (benchmarks).
	discard bool
	// forget makes a finalized session's query answer final without the
	// token, as a server that cannot give it again would.
	forget bool
	// hook may take over a request; n counts requests of that command,
	// from 1; s is nil for a start or an unknown session.
	hook func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool
}

type googSession struct {
	id       string
	size     int64
	stored   int64
	data     bytes.Buffer
	h        hash.Hash // in discard mode, instead of data
	final    bool
	canceled bool
	token    string
}

func newGoogFake(t testing.TB) *googFake {
	f := &googFake{t: t, gran: ChunkQuantum, sessions: map[string]*googSession{}, counts: map[string]int{}, stop: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.stop)
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
	return f
}

func (f *googFake) url() string { return f.srv.URL + "/v1/uploads" }

func (f *googFake) count(cmd string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[cmd]
}

func (f *googFake) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.stop:
	}
}

// commandOf names a request by its command; "upload, finalize" is
// "finalize".
func commandOf(r *http.Request) string {
	c := strings.ToLower(strings.ReplaceAll(r.Header.Get("X-Goog-Upload-Command"), " ", ""))
	if c == "upload,finalize" {
		return "finalize"
	}
	return c
}

func (f *googFake) serve(w http.ResponseWriter, r *http.Request) {
	cmd := commandOf(r)
	f.mu.Lock()
	f.counts[cmd]++
	n := f.counts[cmd]
	s := f.sessions[r.URL.Query().Get("upload_id")]
	if cmd != "start" {
		f.log = append(f.log, fmt.Sprintf("%s %s %d", cmd, r.Header.Get("X-Goog-Upload-Offset"), r.ContentLength))
	}
	hook := f.hook
	f.mu.Unlock()
	if hook != nil && hook(cmd, n, w, r, s) {
		return
	}
	if r.Method != http.MethodPost {
		f.refuse(w, nil, "method "+r.Method)
		return
	}
	if cmd == "start" {
		f.start(w, r)
		return
	}
	if s == nil {
		googleError(w, 404, "NOT_FOUND", "notFound", "No such upload session")
		return
	}
	switch cmd {
	case "upload", "finalize":
		f.upload(w, r, s, cmd == "finalize")
	case "query":
		f.mu.Lock()
		defer f.mu.Unlock()
		f.state(w, s)
		w.WriteHeader(200)
		if s.final && !f.forget {
			io.WriteString(w, s.token)
		}
	case "cancel":
		f.mu.Lock()
		if !s.final {
			s.canceled = true
		}
		f.state(w, s)
		f.mu.Unlock()
		w.WriteHeader(200)
	default:
		f.refuse(w, s, "command "+cmd)
	}
}

func (f *googFake) start(w http.ResponseWriter, r *http.Request) {
	size, err := strconv.ParseInt(r.Header.Get("X-Goog-Upload-Raw-Size"), 10, 64)
	if err != nil || r.Header.Get("X-Goog-Upload-Protocol") != "resumable" || r.Header.Get("X-Goog-Upload-Content-Type") == "" || r.ContentLength != 0 {
		f.refuse(w, nil, "a start without its headers, or with a body")
		return
	}
	f.mu.Lock()
	f.nextID++
	id := fmt.Sprintf("SECRET-g%d", f.nextID)
	sess := &googSession{id: id, size: size}
	if f.discard {
		sess.h = sha256.New()
	}
	f.sessions[id] = sess
	f.mu.Unlock()
	w.Header().Set("X-Goog-Upload-Status", "active")
	w.Header().Set("X-Goog-Upload-URL", f.srv.URL+"/v1/uploads?upload_id="+id+"&upload_protocol=resumable")
	w.Header().Set("X-Goog-Upload-Chunk-Granularity", strconv.FormatInt(f.gran, 10))
	if f.granHeader != "" {
		w.Header().Set("X-Goog-Upload-Chunk-Granularity", f.granHeader)
	}
	w.WriteHeader(200)
}

// state states the session's state in the answer's headers.
func (f *googFake) state(w http.ResponseWriter, s *googSession) {
	st := "active"
	switch {
	case s.canceled:
		st = "canceled"
	case s.final:
		st = "final"
	}
	w.Header().Set("X-Goog-Upload-Status", st)
	w.Header().Set("X-Goog-Upload-Size-Received", strconv.FormatInt(s.stored, 10))
}

// refuse answers 400 and notes why: the client broke a rule.
func (f *googFake) refuse(w http.ResponseWriter, s *googSession, why string) {
	f.mu.Lock()
	f.refused = append(f.refused, why)
	if s != nil {
		f.state(w, s)
	}
	f.mu.Unlock()
	googleError(w, 400, "INVALID_ARGUMENT", "invalid", why)
}

// upload stores a chunk. Of a chunk cut short it keeps the whole
// granules that arrived, as a server that writes in granules would.
func (f *googFake) upload(w http.ResponseWriter, r *http.Request, s *googSession, finalize bool) {
	off, err := strconv.ParseInt(r.Header.Get("X-Goog-Upload-Offset"), 10, 64)
	f.mu.Lock()
	switch {
	case s.canceled || s.final:
		f.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.state(w, s)
		f.mu.Unlock()
		googleError(w, 400, "FAILED_PRECONDITION", "failedPrecondition", "the upload session is over")
		return
	case err != nil || off != s.stored:
		f.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		f.refuse(w, s, fmt.Sprintf("offset %s, stored %d", r.Header.Get("X-Goog-Upload-Offset"), s.stored))
		return
	case !finalize && r.ContentLength%f.gran != 0:
		f.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		f.refuse(w, s, fmt.Sprintf("a chunk of %d bytes is not a multiple of %d", r.ContentLength, f.gran))
		return
	case off+r.ContentLength > s.size || finalize && off+r.ContentLength != s.size:
		f.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		f.refuse(w, s, fmt.Sprintf("%d bytes at %d do not fit or end a %d-byte upload", r.ContentLength, off, s.size))
		return
	}
	f.mu.Unlock()
	body, rerr := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.received += int64(len(body))
	if rerr != nil || int64(len(body)) != r.ContentLength {
		keep := int64(len(body)) / f.gran * f.gran
		s.write(body[:keep])
		s.stored += keep
		f.dropped += int64(len(body)) - keep
		return
	}
	s.write(body)
	s.stored += int64(len(body))
	f.finish(s, finalize)
	f.state(w, s)
	w.WriteHeader(200)
	if s.final {
		io.WriteString(w, s.token)
	}
}

func (s *googSession) write(b []byte) {
	if s.h != nil {
		s.h.Write(b)
		return
	}
	s.data.Write(b)
}

// finish finalizes a session that holds all its bytes.
func (f *googFake) finish(s *googSession, finalize bool) {
	if finalize && !s.final {
		s.final = true
		f.finished++
		s.token = "TOKEN-" + sha(s.data.Bytes())
		if s.h != nil {
			s.token = "TOKEN-" + hex.EncodeToString(s.h.Sum(nil))
		}
	}
}

// storeAndLose stores a chunk (whole) and loses the answer: the
// connection drops before the client reads it.
func (f *googFake) storeAndLose(w http.ResponseWriter, r *http.Request, s *googSession) {
	f.upload(discardWriter{}, r, s, commandOf(r) == "finalize")
	hangUp(w)
}

// cutAfter stores the whole granules of the first n bytes of a chunk and
// drops the connection, as a link that breaks mid-chunk does.
func (f *googFake) cutAfter(w http.ResponseWriter, r *http.Request, s *googSession, n int64) {
	buf := make([]byte, n)
	got, _ := io.ReadFull(r.Body, buf)
	f.mu.Lock()
	keep := int64(got) / f.gran * f.gran
	s.write(buf[:keep])
	s.stored += keep
	f.received += int64(got)
	f.dropped += int64(got) - keep
	f.mu.Unlock()
	hangUp(w)
}

// stored is what the session holds, for the test to compare with the file.
func (f *googFake) stored(id string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.sessions[id].data.Bytes())
}

func (f *googFake) stats() (finished int, received, dropped int64, sessions int, refused []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.finished, f.received, f.dropped, len(f.sessions), append([]string(nil), f.refused...)
}
