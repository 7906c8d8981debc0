package sandbox

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const photosUploads = "/v1/uploads"

// jpegBytes and mp4Bytes are n bytes that begin as a JPEG or an MP4 does.
func jpegBytes(seed uint64, n int) []byte {
	b := randomData(seed, n)
	copy(b, "\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	return b
}

func mp4Bytes(seed uint64, n int) []byte {
	b := randomData(seed, n)
	copy(b, "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00")
	return b
}

// photosStart starts a resumable Photos upload and returns its session URL.
func (e *testEnv) photosStart(hdr ...string) string {
	e.t.Helper()
	r := e.photosStartResp(hdr...)
	if r.code != 200 {
		e.t.Fatalf("start: %d %s", r.code, r.body)
	}
	u := r.h.Get("X-Goog-Upload-URL")
	if !strings.HasPrefix(u, e.srv.URL+photosUploads+"?upload_id=") || r.h.Get("X-Goog-Upload-Chunk-Granularity") != "262144" ||
		r.h.Get("X-Goog-Upload-Status") != "active" || len(r.body) != 0 {
		e.t.Fatalf("start: URL %q, granularity %q, status %q, body %q", u, r.h.Get("X-Goog-Upload-Chunk-Granularity"), r.h.Get("X-Goog-Upload-Status"), r.body)
	}
	return u
}

func (e *testEnv) photosStartResp(hdr ...string) resp {
	e.t.Helper()
	h := auth("X-Goog-Upload-Protocol", "resumable", "X-Goog-Upload-Command", "start",
		"X-Goog-Upload-Content-Type", "application/octet-stream", "X-Goog-Upload-File-Name", "IMG_0001.JPG")
	for i := 0; i+1 < len(hdr); i += 2 {
		h[hdr[i]] = hdr[i+1]
	}
	return e.do("POST", photosUploads, h, nil)
}

// photosSend posts a command to a session URL, with no Authorization: the
// URL is the capability. offset < 0 sends no X-Goog-Upload-Offset.
func (e *testEnv) photosSend(url, cmd string, offset int64, body []byte) resp {
	e.t.Helper()
	h := map[string]string{"X-Goog-Upload-Command": cmd}
	if offset >= 0 {
		h["X-Goog-Upload-Offset"] = formatInt(offset)
	}
	return e.do("POST", url, h, body)
}

func (r resp) received(t *testing.T) int64 {
	t.Helper()
	n, err := strconv.ParseInt(r.h.Get("X-Goog-Upload-Size-Received"), 10, 64)
	if err != nil {
		t.Fatalf("X-Goog-Upload-Size-Received %q (%d %s)", r.h.Get("X-Goog-Upload-Size-Received"), r.code, r.body)
	}
	return n
}

// rpc is error.status and errors[0].reason of a Google JSON error.
func (r resp) rpc(t *testing.T) (status, reason string) {
	t.Helper()
	r.errMessage(t)
	var b errorBody
	json.Unmarshal(r.body, &b)
	return b.Error.Status, b.Error.Errors[0].Reason
}

func (e *testEnv) photosRaw(data []byte, hdr ...string) resp {
	e.t.Helper()
	h := auth("X-Goog-Upload-Protocol", "raw", "X-Goog-Upload-Content-Type", "application/octet-stream", "Content-Type", "application/octet-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		h[hdr[i]] = hdr[i+1]
	}
	return e.do("POST", photosUploads, h, data)
}

func (e *testEnv) photosToken(data []byte) string {
	e.t.Helper()
	r := e.photosRaw(data)
	if r.code != 200 || len(r.body) < 20 || !strings.HasPrefix(r.h.Get("Content-Type"), "text/plain") {
		e.t.Fatalf("raw upload: %d %q %s", r.code, r.h.Get("Content-Type"), r.body)
	}
	return string(r.body)
}

// The whole dialect once: start, a chunk on the granularity, a query, the
// finalizing chunk of any length, the token, and the item made of it whose
// bytes are the file's.
func TestPhotosResumableUpload(t *testing.T) {
	e := newEnv(t)
	data := mp4Bytes(1, 3*chunkGranularity+12345)
	u := e.photosStart("X-Goog-Upload-Raw-Size", formatInt(int64(len(data))))
	r := e.photosSend(u, "upload", 0, data[:2*chunkGranularity])
	if r.code != 200 || r.h.Get("X-Goog-Upload-Status") != "active" || r.received(t) != 2*chunkGranularity {
		t.Fatalf("chunk: %d %v %s", r.code, r.h, r.body)
	}
	q := e.photosSend(u, "query", -1, nil)
	if q.code != 200 || q.h.Get("X-Goog-Upload-Status") != "active" || q.received(t) != 2*chunkGranularity {
		t.Fatalf("query: %d %v", q.code, q.h)
	}
	r = e.photosSend(u, "upload, finalize", 2*chunkGranularity, data[2*chunkGranularity:])
	if r.code != 200 || r.h.Get("X-Goog-Upload-Status") != "final" || len(r.body) < 20 {
		t.Fatalf("finalize: %d %v %s", r.code, r.h, r.body)
	}
	token := string(r.body)
	q = e.photosSend(u, "query", -1, nil)
	if q.code != 200 || q.h.Get("X-Goog-Upload-Status") != "final" || q.received(t) != int64(len(data)) || string(q.body) != token {
		t.Fatalf("query after final: %d %v %q", q.code, q.h, q.body)
	}
	item := e.createOne(token, "holiday.mp4", "")
	if item["mimeType"] != "video/mp4" || item["filename"] != "holiday.mp4" {
		t.Fatalf("item: %v", item)
	}
	if got := e.photosBytes(item); !bytes.Equal(got, data) {
		t.Fatalf("the item's bytes differ from the file's (%d bytes, want %d)", len(got), len(data))
	}
	if _, err := os.Stat(e.sb.photosPartPath(strings.Split(strings.Split(u, "upload_id=")[1], "&")[0])); !os.IsNotExist(err) {
		t.Fatalf("the session's part file is left behind: %v", err)
	}
}

// A chunk off the granularity, or of no stated length, is refused unless
// it finalizes, and changes nothing.
func TestPhotosChunkGranularity(t *testing.T) {
	e := newEnv(t)
	data := jpegBytes(2, chunkGranularity+100)
	u := e.photosStart()
	r := e.photosSend(u, "upload", 0, data[:100000])
	if r.code != 400 || !strings.Contains(r.errMessage(t), "multiple of 262144") || r.received(t) != 0 || r.h.Get("X-Goog-Upload-Status") != "active" {
		t.Fatalf("chunk of 100000 bytes: %d %v %s", r.code, r.h, r.body)
	}
	req, _ := http.NewRequest("POST", u, struct{ *bytes.Reader }{bytes.NewReader(data[:chunkGranularity])}) // no length known
	req.Header.Set("X-Goog-Upload-Command", "upload")
	req.Header.Set("X-Goog-Upload-Offset", "0")
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(msg), "needs a Content-Length") {
		t.Fatalf("a chunk of unknown length: %d %s", res.StatusCode, msg)
	}
	if q := e.photosSend(u, "query", -1, nil); q.received(t) != 0 {
		t.Fatalf("refused chunks were stored: %d", q.received(t))
	}
	// The finalizing chunk may be of any length, even sent without one.
	if r := e.photosSend(u, "upload", 0, data[:chunkGranularity]); r.code != 200 {
		t.Fatalf("chunk: %d %s", r.code, r.body)
	}
	req, _ = http.NewRequest("POST", u, struct{ *bytes.Reader }{bytes.NewReader(data[chunkGranularity:])})
	req.Header.Set("X-Goog-Upload-Command", "upload, finalize")
	req.Header.Set("X-Goog-Upload-Offset", formatInt(chunkGranularity))
	res, err = e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-Goog-Upload-Status") != "final" {
		t.Fatalf("finalizing chunk of unknown length: %d", res.StatusCode)
	}
}

// An offset other than what was received is refused with where the upload
// stands; nothing is stored.
func TestPhotosWrongOffset(t *testing.T) {
	e := newEnv(t)
	data := jpegBytes(3, 3*chunkGranularity)
	u := e.photosStart()
	if r := e.photosSend(u, "upload", 0, data[:chunkGranularity]); r.code != 200 {
		t.Fatalf("chunk: %d %s", r.code, r.body)
	}
	for _, off := range []int64{0, 2 * chunkGranularity} {
		r := e.photosSend(u, "upload", off, data[off:off+chunkGranularity])
		if r.code != 400 || r.h.Get("X-Goog-Upload-Status") != "active" || r.received(t) != chunkGranularity ||
			!strings.Contains(r.errMessage(t), "send from byte 262144") {
			t.Fatalf("offset %d: %d %v %s", off, r.code, r.h, r.body)
		}
	}
	if r := e.photosSend(u, "upload", -1, data[chunkGranularity:2*chunkGranularity]); r.code != 400 {
		t.Fatalf("bytes with no offset: %d %s", r.code, r.body)
	}
	r := e.photosSend(u, "upload, finalize", chunkGranularity, data[chunkGranularity:])
	if r.code != 200 {
		t.Fatalf("finalize: %d %s", r.code, r.body)
	}
	if got := e.photosBytes(e.createOne(string(r.body), "", "")); !bytes.Equal(got, data) {
		t.Fatal("the refused chunks changed the bytes")
	}
}

// A chunk cut off mid-body keeps what arrived; a query says how much, the
// upload goes on from there, also after the sandbox restarted, and the
// item's bytes are the file's.
func TestPhotosInterruptedAndResumedByQuery(t *testing.T) {
	e := newEnv(t)
	data := mp4Bytes(4, 4*chunkGranularity+777)
	u := e.photosStart("X-Goog-Upload-Raw-Size", formatInt(int64(len(data))))
	if err := e.sb.SetFaults("seed=5,reset=1"); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", u, bytes.NewReader(data[:4*chunkGranularity]))
	req.Header.Set("X-Goog-Upload-Command", "upload")
	req.Header.Set("X-Goog-Upload-Offset", "0")
	if res, err := e.srv.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("the injected reset answered %d", res.StatusCode)
	}
	e.sb.SetFaults("")
	e.restart()
	q := e.photosSend(u, "query", -1, nil)
	got := q.received(t)
	// The seed cuts the body past its first 512 bytes: what arrived is kept.
	if q.code != 200 || q.h.Get("X-Goog-Upload-Status") != "active" || got <= sniffLen || got >= 4*chunkGranularity {
		t.Fatalf("query after the cut: %d %v", q.code, q.h)
	}
	t.Logf("the cut chunk left %d bytes", got)
	r := e.photosSend(u, "upload, finalize", got, data[got:])
	if r.code != 200 {
		t.Fatalf("resume from %d: %d %s", got, r.code, r.body)
	}
	if b := e.photosBytes(e.createOne(string(r.body), "", "")); !bytes.Equal(b, data) {
		t.Fatal("the resumed upload's bytes differ from the file's")
	}
}

// When the answer to the finalizing chunk is lost, a query (or the same
// chunk again) gives the token, and one media item comes of it.
func TestPhotosFinalAfterLostAnswer(t *testing.T) {
	e := newEnv(t)
	data := jpegBytes(6, 5000)
	u := e.photosStart()
	e.sb.SetFaults("seed=1,dropfinal=1")
	req, _ := http.NewRequest("POST", u, bytes.NewReader(data))
	req.Header.Set("X-Goog-Upload-Command", "upload, finalize")
	req.Header.Set("X-Goog-Upload-Offset", "0")
	if res, err := e.srv.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("the dropped answer arrived: %d", res.StatusCode)
	}
	e.sb.SetFaults("")
	q := e.photosSend(u, "query", -1, nil)
	if q.code != 200 || q.h.Get("X-Goog-Upload-Status") != "final" || len(q.body) < 20 {
		t.Fatalf("query: %d %v %q", q.code, q.h, q.body)
	}
	again := e.photosSend(u, "upload, finalize", 0, data)
	if again.code != 200 || string(again.body) != string(q.body) || again.h.Get("X-Goog-Upload-Status") != "final" {
		t.Fatalf("finalize again: %d %q, want the token %q", again.code, again.body, q.body)
	}
	a := e.createOne(string(q.body), "", "")
	b := e.createOne(string(again.body), "", "")
	if a["id"] != b["id"] {
		t.Fatalf("two items from one upload: %v and %v", a["id"], b["id"])
	}
	if n := len(e.listItems("")); n != 1 {
		t.Fatalf("%d items, want 1", n)
	}
}

// Cancel ends the session: its bytes go, a query says canceled, and
// nothing more is taken.
func TestPhotosCancel(t *testing.T) {
	e := newEnv(t)
	data := jpegBytes(7, 2*chunkGranularity)
	u := e.photosStart()
	if r := e.photosSend(u, "upload", 0, data[:chunkGranularity]); r.code != 200 {
		t.Fatalf("chunk: %d", r.code)
	}
	id := strings.Split(strings.Split(u, "upload_id=")[1], "&")[0]
	if _, err := os.Stat(e.sb.photosPartPath(id)); err != nil {
		t.Fatalf("no part file: %v", err)
	}
	r := e.photosSend(u, "cancel", -1, nil)
	if r.code != 200 || r.h.Get("X-Goog-Upload-Status") != "canceled" {
		t.Fatalf("cancel: %d %v %s", r.code, r.h, r.body)
	}
	if _, err := os.Stat(e.sb.photosPartPath(id)); !os.IsNotExist(err) {
		t.Fatalf("the cancelled session's bytes are kept: %v", err)
	}
	if q := e.photosSend(u, "query", -1, nil); q.code != 200 || q.h.Get("X-Goog-Upload-Status") != "canceled" {
		t.Fatalf("query: %d %v", q.code, q.h)
	}
	if r := e.photosSend(u, "upload, finalize", chunkGranularity, data[chunkGranularity:]); r.code != 400 || r.h.Get("X-Goog-Upload-Status") != "canceled" {
		t.Fatalf("upload after cancel: %d %v %s", r.code, r.h, r.body)
	}
}

// Sessions end after SessionTTL: 404, and their bytes go.
func TestPhotosSessionExpires(t *testing.T) {
	e, clk := newOAuthEnv(t)
	data := jpegBytes(8, 2*chunkGranularity)
	u := e.photosStart()
	e.photosSend(u, "upload", 0, data[:chunkGranularity])
	clk.Advance(7*24*time.Hour - time.Minute)
	if q := e.photosSend(u, "query", -1, nil); q.code != 200 || q.received(t) != chunkGranularity {
		t.Fatalf("a session a minute short of a week: %d", q.code)
	}
	clk.Advance(2 * time.Minute)
	r := e.photosSend(u, "upload, finalize", chunkGranularity, data[chunkGranularity:])
	if r.code != 404 || !strings.Contains(r.errMessage(t), "expired") {
		t.Fatalf("expired session: %d %s", r.code, r.body)
	}
	id := strings.Split(strings.Split(u, "upload_id=")[1], "&")[0]
	if _, err := os.Stat(e.sb.photosPartPath(id)); !os.IsNotExist(err) {
		t.Fatalf("the expired session's bytes are kept: %v", err)
	}
}

// The dialect's refusals: commands that go elsewhere or together, methods
// other than POST, an unknown session, a protocol not named.
func TestPhotosCommandRefusals(t *testing.T) {
	e := newEnv(t)
	u := e.photosStart()
	cases := []struct {
		method, url, cmd string
		hdr              map[string]string
		code             int
	}{
		{"POST", u, "start", nil, 400},
		{"POST", u, "query, upload", nil, 400},
		{"POST", u, "resume", nil, 400},
		{"POST", u, "", nil, 400},
		{"PUT", u, "query", nil, 405},
		{"POST", e.srv.URL + photosUploads + "?upload_id=nosuchsession", "query", nil, 404},
		{"POST", e.srv.URL + photosUploads, "", auth("X-Goog-Upload-Command", "query", "X-Goog-Upload-Protocol", "resumable"), 400},
		{"POST", e.srv.URL + photosUploads, "", auth(), 400},
		{"POST", e.srv.URL + photosUploads, "", auth("X-Goog-Upload-Protocol", "multipart"), 400},
		{"POST", e.srv.URL + photosUploads, "", map[string]string{"X-Goog-Upload-Protocol": "raw"}, 401},
	}
	for _, c := range cases {
		h := c.hdr
		if h == nil {
			h = map[string]string{"X-Goog-Upload-Command": c.cmd}
		}
		if r := e.do(c.method, c.url, h, nil); r.code != c.code {
			t.Errorf("%s %q %v: %d %s, want %d", c.method, c.cmd, h["X-Goog-Upload-Protocol"], r.code, r.body, c.code)
		} else {
			r.errMessage(t)
		}
	}
	// A session URL names the sandbox's own host only.
	req, _ := http.NewRequest("POST", u, nil)
	req.Host = "evil.example:80"
	req.Header.Set("X-Goog-Upload-Command", "query")
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("another Host: %d", res.StatusCode)
	}
}

// A server error changes nothing: the query after it says where the
// upload stood.
func TestPhotosServerErrorChangesNothing(t *testing.T) {
	e := newEnv(t)
	data := jpegBytes(9, 2*chunkGranularity)
	u := e.photosStart()
	e.photosSend(u, "upload", 0, data[:chunkGranularity])
	e.sb.SetFaults("seed=3,err5xx=1")
	if r := e.photosSend(u, "upload, finalize", chunkGranularity, data[chunkGranularity:]); r.code < 500 {
		t.Fatalf("the injected error: %d", r.code)
	}
	e.sb.SetFaults("")
	if q := e.photosSend(u, "query", -1, nil); q.h.Get("X-Goog-Upload-Status") != "active" || q.received(t) != chunkGranularity {
		t.Fatalf("after a 5xx: %v", q.h)
	}
}

// Opening the store drops expired tokens and the bytes nothing else
// names; an item's bytes stay.
func TestPhotosSweepOnOpen(t *testing.T) {
	e, clk := newOAuthEnv(t)
	keptData, goneData := jpegBytes(12, 3000), jpegBytes(13, 3000)
	item := e.createOne(e.photosToken(keptData), "", "")
	e.photosToken(keptData) // a second token of an item's bytes
	gone := e.photosToken(goneData)
	sharedData := jpegBytes(14, 3000)
	e.photosToken(sharedData) // expires, but the same bytes come again
	clk.Advance(25 * time.Hour)
	live := e.photosToken(sharedData)
	e.restart()
	var names []string
	entries, _ := os.ReadDir(e.sb.blobPath(""))
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "ph-") {
			names = append(names, en.Name())
		}
	}
	if len(names) != 2 || !slices.Contains(names, photosBlob(hexSHA256(keptData))) || !slices.Contains(names, photosBlob(hexSHA256(sharedData))) {
		t.Fatalf("blobs after the sweep: %v", names)
	}
	if !bytes.Equal(e.photosBytes(e.createOne(live, "", "")), sharedData) {
		t.Fatal("the live token's bytes changed")
	}
	if !bytes.Equal(e.photosBytes(item), keptData) {
		t.Fatal("the item's bytes changed")
	}
	r := e.batchCreate("", itemsOf(gone))
	if res := r.results(t); r.code != 207 || !strings.Contains(res[0].Status["message"].(string), "Unknown upload token") {
		t.Fatalf("a swept token: %d %s", r.code, r.body)
	}
}
