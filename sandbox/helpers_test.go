package sandbox

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testToken = "test-token"

type testEnv struct {
	t   *testing.T
	sb  *Sandbox
	srv *httptest.Server
	dir string
	now *time.Time // nil: real time
}

func newEnv(t *testing.T, opts ...func(*Options)) *testEnv {
	t.Helper()
	e := &testEnv{t: t, dir: t.TempDir()}
	o := Options{Dir: e.dir, Token: testToken}
	for _, f := range opts {
		f(&o)
	}
	e.open(o)
	return e
}

func (e *testEnv) open(o Options) { e.openAt(o, "") }

// openAt serves on addr when given: a restarted sandbox keeps its address,
// so session URIs handed out before still lead to it.
func (e *testEnv) openAt(o Options, addr string) {
	e.t.Helper()
	sb, err := Open(o)
	if err != nil {
		e.t.Fatalf("Open: %v", err)
	}
	e.sb = sb
	e.srv = httptest.NewUnstartedServer(sb.Handler())
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			e.t.Fatalf("listening again on %s: %v", addr, err)
		}
		e.srv.Listener.Close()
		e.srv.Listener = ln
	}
	e.srv.Start()
	srv := e.srv
	e.t.Cleanup(srv.Close)
	e.t.Cleanup(func() { sb.Close() }) // first: ends injected stalls
}

// restart stops the sandbox and opens it again on the same folder.
func (e *testEnv) restart() {
	e.t.Helper()
	o := e.sb.opts
	addr := e.srv.Listener.Addr().String()
	e.sb.Close()
	e.srv.Close()
	e.openAt(o, addr)
}

type resp struct {
	code int
	h    http.Header
	body []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not JSON (%d): %v\n%s", r.code, err, r.body)
	}
	return m
}

// errMessage is error.message of a Google JSON error, checking its shape.
func (r resp) errMessage(t *testing.T) string {
	t.Helper()
	var b errorBody
	if err := json.Unmarshal(r.body, &b); err != nil || b.Error.Code != r.code || b.Error.Message == "" || len(b.Error.Errors) != 1 || b.Error.Status == "" {
		t.Fatalf("not a Google JSON error for %d: %s", r.code, r.body)
	}
	return b.Error.Message
}

func (e *testEnv) do(method, path string, hdr map[string]string, body []byte) resp {
	e.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = e.srv.URL + path
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body == nil {
		req.Body = http.NoBody
		req.ContentLength = 0
	}
	for k, v := range hdr {
		if k == "Content-Length" {
			continue
		}
		req.Header.Set(k, v)
	}
	r, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading answer: %v", method, path, err)
	}
	return resp{code: r.StatusCode, h: r.Header, body: b}
}

func auth(extra ...string) map[string]string {
	h := map[string]string{"Authorization": "Bearer " + testToken}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

// initiate starts a resumable session and returns its URI.
func (e *testEnv) initiate(method, path, mediaType string, size int64, meta string) string {
	e.t.Helper()
	h := auth("X-Upload-Content-Type", mediaType)
	if size >= 0 {
		h["X-Upload-Content-Length"] = formatInt(size)
	}
	var body []byte
	if meta != "" {
		h["Content-Type"] = "application/json; charset=UTF-8"
		body = []byte(meta)
	}
	r := e.do(method, path+sep(path)+"uploadType=resumable", h, body)
	if r.code != 200 {
		e.t.Fatalf("initiate %s: %d %s", path, r.code, r.body)
	}
	loc := r.h.Get("Location")
	if !strings.Contains(loc, "upload_id=") || r.h.Get("X-GUploader-UploadID") == "" || len(r.body) != 0 {
		e.t.Fatalf("initiate %s: Location %q, upload id %q, body %q", path, loc, r.h.Get("X-GUploader-UploadID"), r.body)
	}
	return loc
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

func (e *testEnv) chunk(uri string, data []byte, first, total int64) resp {
	e.t.Helper()
	tot := "*"
	if total >= 0 {
		tot = formatInt(total)
	}
	cr := "bytes " + formatInt(first) + "-" + formatInt(first+int64(len(data))-1) + "/" + tot
	return e.do(http.MethodPut, uri, map[string]string{"Content-Range": cr}, data)
}

func (e *testEnv) query(uri string, total int64) resp {
	e.t.Helper()
	tot := "*"
	if total >= 0 {
		tot = formatInt(total)
	}
	return e.do(http.MethodPut, uri, map[string]string{"Content-Range": "bytes */" + tot}, nil)
}

func randomData(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func (e *testEnv) object(bucket, name string) []byte {
	e.t.Helper()
	r := e.do("GET", "/storage/v1/b/"+bucket+"/o/"+name+"?alt=media", auth(), nil)
	if r.code != 200 {
		e.t.Fatalf("object %s/%s: %d %s", bucket, name, r.code, r.body)
	}
	return r.body
}

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
