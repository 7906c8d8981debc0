package transfer

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeServer is a small, exact stand-in for a resumable upload endpoint,
// for protocol cases the sandbox cannot be made to produce on demand. Its
// session URIs carry upload_id=SECRET-..., so tests can look for leaks.
type fakeServer struct {
	t     *testing.T
	srv   *httptest.Server
	stop  chan struct{} // closed when the test ends
	token string        // required on start/media/multipart requests when set

	mu          sync.Mutex
	sessions    map[string]*fakeSession
	nextID      int
	completions int
	received    int64          // body bytes that arrived on upload requests
	counts      map[string]int // requests per kind: start, status, chunk, delete, media, multipart
	log         []string       // "kind Content-Range"
	discard     bool           // keep only counts and hashes (memory tests)
	resources   [][]byte       // bodies of completed uploads, in order
	// hook may take over a request; n counts requests of that kind, from 1.
	hook func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool
	// keep decides how many of the stored+arrived bytes a chunk keeps
	// (default: all).
	keep func(s *fakeSession, stored, arrived int64) int64
	// rangeForm formats a 308's Range (default "bytes=0-N").
	rangeForm func(last int64) string
	// override answers 308 as 200 + X-HTTP-Status-Code-Override.
	override bool
	// sums makes finished resources report crc32c and md5Hash (base64) of
	// what the server stores, as Cloud Storage does.
	sums bool
	// mangle changes the bytes of a finished upload as the server stores
	// them (a flipped byte), before they are hashed and reported.
	mangle func(stored []byte)
	// googHash holds the X-Goog-Hash of each request that carried one, as
	// "kind Content-Range: value".
	googHash []string
}

type fakeSession struct {
	id       string
	size     int64
	method   string
	stored   int64
	data     bytes.Buffer
	h        hash.Hash // discard mode: SHA-256 of what was kept, instead of data
	done     bool
	resource []byte
	gone     bool
}

func newFake(t *testing.T) *fakeServer {
	f := &fakeServer{t: t, sessions: map[string]*fakeSession{}, counts: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.stop = make(chan struct{})
	t.Cleanup(func() {
		close(f.stop)
		// A held request's body is drained when its handler returns; the
		// client may be a killed process whose socket Wine keeps open, so
		// the connections are cut rather than waited for.
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
	return f
}

// hold keeps a request unanswered until the client gives up or the test
// ends. A server notices a client leaving only once it has read the body,
// hence the second way out.
func (f *fakeServer) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.stop:
	}
}

func (f *fakeServer) url() string { return f.srv.URL + "/upload/storage/v1/b/bkt/o?name=obj" }

func (f *fakeServer) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[kind]
}

func (f *fakeServer) stats() (completions int, received int64, sessions int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.completions, f.received, len(f.sessions)
}

func (f *fakeServer) kindOf(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case q.Get("upload_id") != "":
		switch {
		case r.Method == http.MethodDelete:
			return "delete"
		case strings.HasPrefix(r.Header.Get("Content-Range"), "bytes */") && r.ContentLength == 0:
			return "status"
		}
		return "chunk"
	case q.Get("uploadType") == "resumable":
		return "start"
	case q.Get("uploadType") == "multipart":
		return "multipart"
	}
	return "media"
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	kind := f.kindOf(r)
	f.mu.Lock()
	f.counts[kind]++
	n := f.counts[kind]
	f.log = append(f.log, kind+" "+r.Header.Get("Content-Range"))
	if v := r.Header.Get("X-Goog-Hash"); v != "" {
		f.googHash = append(f.googHash, kind+" "+r.Header.Get("Content-Range")+": "+v)
	}
	s := f.sessions[r.URL.Query().Get("upload_id")]
	hook := f.hook
	f.mu.Unlock()
	if hook != nil && hook(kind, n, w, r, s) {
		return
	}
	if kind != "status" && kind != "chunk" && kind != "delete" && f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		googleError(w, 401, "UNAUTHENTICATED", "authError", "Request had invalid authentication credentials.")
		return
	}
	switch kind {
	case "start":
		size, err := strconv.ParseInt(r.Header.Get("X-Upload-Content-Length"), 10, 64)
		if err != nil || r.Header.Get("X-Upload-Content-Type") == "" {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "missing X-Upload headers")
			return
		}
		if r.ContentLength > 0 && r.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "metadata must be JSON")
			return
		}
		io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.nextID++
		id := fmt.Sprintf("SECRET-%d", f.nextID)
		sess := &fakeSession{id: id, size: size, method: r.Method}
		if f.discard {
			sess.h = sha256.New()
		}
		f.sessions[id] = sess
		f.mu.Unlock()
		w.Header().Set("Location", f.srv.URL+"/upload/storage/v1/b/bkt/o?uploadType=resumable&name=obj&upload_id="+id)
		w.WriteHeader(200)
	case "status", "chunk":
		f.session(w, r, s)
	case "delete":
		f.mu.Lock()
		if s == nil || s.gone {
			f.mu.Unlock()
			googleError(w, 404, "NOT_FOUND", "notFound", "No such upload")
			return
		}
		s.gone = true
		f.mu.Unlock()
		w.WriteHeader(499)
	case "media", "multipart":
		f.oneShot(w, r, kind)
	}
}

func (f *fakeServer) session(w http.ResponseWriter, r *http.Request, s *fakeSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s == nil || s.gone {
		googleError(w, 404, "NOT_FOUND", "notFound", "No such upload session")
		return
	}
	cr := strings.TrimPrefix(r.Header.Get("Content-Range"), "bytes ")
	span, total, _ := strings.Cut(cr, "/")
	if total != "*" && total != strconv.FormatInt(s.size, 10) {
		googleError(w, 400, "INVALID_ARGUMENT", "invalid", "total differs from X-Upload-Content-Length")
		return
	}
	if s.done {
		io.Copy(io.Discard, r.Body)
		f.answerDone(w, s)
		return
	}
	if span != "*" {
		a, b, _ := strings.Cut(span, "-")
		first, err1 := strconv.ParseInt(a, 10, 64)
		last, err2 := strconv.ParseInt(b, 10, 64)
		if err1 != nil || err2 != nil || last < first || last >= s.size {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "bad Content-Range")
			return
		}
		if first > s.stored {
			io.Copy(io.Discard, r.Body)
			googleError(w, 503, "UNAVAILABLE", "backendError", "chunk starts after the stored offset")
			return
		}
		f.mu.Unlock()
		body, err := io.ReadAll(r.Body)
		f.mu.Lock()
		f.received += int64(len(body))
		if err != nil || int64(len(body)) != last-first+1 {
			return // a broken request stores nothing here
		}
		fresh := body[s.stored-first:]
		keepTo := s.stored + int64(len(fresh))
		if f.keep != nil {
			keepTo = min(keepTo, f.keep(s, s.stored, int64(len(fresh))))
		}
		fresh = fresh[:keepTo-s.stored]
		if s.h != nil {
			s.h.Write(fresh)
		} else {
			s.data.Write(fresh)
		}
		s.stored = keepTo
		if s.stored == s.size {
			s.done = true
			f.completions++
			if f.mangle != nil {
				f.mangle(s.data.Bytes())
			}
			sum := sha256.Sum256(s.data.Bytes())
			if s.h != nil {
				sum = [32]byte(s.h.Sum(nil))
			}
			res := map[string]any{"id": s.id[len("SECRET-"):], "size": s.size, "sha256": hex.EncodeToString(sum[:])}
			f.report(res, s.data.Bytes())
			s.resource, _ = json.Marshal(res)
			f.resources = append(f.resources, s.data.Bytes())
			f.answerDone(w, s)
			return
		}
	} else if s.size == 0 && total == "0" {
		s.done = true
		f.completions++
		res := map[string]any{"id": "empty", "size": 0, "sha256": sha(nil)}
		f.report(res, nil)
		s.resource, _ = json.Marshal(res)
		f.resources = append(f.resources, nil)
		f.answerDone(w, s)
		return
	}
	if s.stored > 0 {
		rv := "bytes=0-" + strconv.FormatInt(s.stored-1, 10)
		if f.rangeForm != nil {
			rv = f.rangeForm(s.stored - 1)
		}
		w.Header().Set("Range", rv)
	}
	if f.override {
		w.Header().Set("X-HTTP-Status-Code-Override", "308")
		w.WriteHeader(200)
		return
	}
	w.WriteHeader(308)
}

func (f *fakeServer) answerDone(w http.ResponseWriter, s *fakeSession) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if s.method == http.MethodPut {
		w.WriteHeader(200)
	} else {
		w.WriteHeader(201)
	}
	w.Write(s.resource)
}

func (f *fakeServer) oneShot(w http.ResponseWriter, r *http.Request, kind string) {
	body, err := io.ReadAll(r.Body)
	f.mu.Lock()
	f.received += int64(len(body))
	f.mu.Unlock()
	if err != nil || int64(len(body)) != r.ContentLength {
		return
	}
	media := body
	if kind == "multipart" {
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/related" {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "not multipart/related")
			return
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		p1, err := mr.NextPart()
		if err != nil || p1.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "first part must be JSON metadata")
			return
		}
		meta, _ := io.ReadAll(p1)
		if !json.Valid(meta) {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "metadata is not JSON")
			return
		}
		p2, err := mr.NextPart()
		if err != nil {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "no media part")
			return
		}
		media, _ = io.ReadAll(p2)
		if _, err := mr.NextPart(); err != io.EOF {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "more than two parts")
			return
		}
	}
	f.mu.Lock()
	f.completions++
	if f.mangle != nil {
		f.mangle(media)
	}
	f.resources = append(f.resources, media)
	res := map[string]any{"id": "one", "size": len(media), "sha256": sha(media)}
	f.report(res, media)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}

// report adds the checksums a Storage-like server states, when asked to.
func (f *fakeServer) report(res map[string]any, stored []byte) {
	if !f.sums {
		return
	}
	c := crc32.Checksum(stored, crc32.MakeTable(crc32.Castagnoli))
	m := md5.Sum(stored)
	res["crc32c"] = base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, c))
	res["md5Hash"] = base64.StdEncoding.EncodeToString(m[:])
}

func googleError(w http.ResponseWriter, code int, status, reason, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "status": status,
		"errors": []any{map[string]any{"message": msg, "domain": "global", "reason": reason}},
	}})
}

// hangUp drops the connection without an answer, as a reset or a lost
// answer looks to the client.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("no hijacker")
	}
	c, _, err := hj.Hijack()
	if err == nil {
		c.Close()
	}
}
