package sandbox

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"carrier/internal/memtest"
)

// The daily quota: 429 RESOURCE_EXHAUSTED once spent, back after midnight
// Pacific time; a session already started goes on.
func TestPhotosRequestsPerDay(t *testing.T) {
	e, clk := newOAuthEnv(t) // 03:04 UTC: the evening before, in California
	r := e.do("PUT", "/sandbox/v1/photos", auth(), []byte(`{"requestsPerDay": 3, "resetCounts": true}`))
	if r.code != 200 || r.json(t)["requestsPerDay"] != 3.0 {
		t.Fatalf("setting the quota: %d %s", r.code, r.body)
	}
	data := jpegBytes(80, chunkGranularity+10)
	u := e.photosStart()                           // 1
	e.createAlbum("A")                             // 2
	e.do("GET", "/v1/albums", auth(), nil)         // 3
	r = e.do("GET", "/v1/mediaItems", auth(), nil) // over
	if st, reason := r.rpc(t); r.code != 429 || st != "RESOURCE_EXHAUSTED" || reason != "rateLimitExceeded" || !strings.Contains(r.errMessage(t), "midnight Pacific") {
		t.Fatalf("the fourth request: %d %s", r.code, r.body)
	}
	if r := e.photosRaw(data); r.code != 429 {
		t.Fatalf("an upload over the daily quota: %d", r.code)
	}
	if r := e.photosSend(u, "upload", 0, data[:chunkGranularity]); r.code != 200 {
		t.Fatalf("a chunk of a session started before: %d %s", r.code, r.body)
	}
	if r := e.photosSend(u, "upload, finalize", chunkGranularity, data[chunkGranularity:]); r.code != 200 {
		t.Fatalf("its last chunk: %d %s", r.code, r.body)
	}
	clk.Advance(4 * time.Hour) // 07:04 UTC is 23:04 in Los Angeles in January
	if r := e.do("GET", "/v1/albums", auth(), nil); r.code != 429 {
		t.Fatalf("before midnight Pacific: %d", r.code)
	}
	clk.Advance(time.Hour)
	if r := e.do("GET", "/v1/albums", auth(), nil); r.code != 200 {
		t.Fatalf("after midnight Pacific: %d %s", r.code, r.body)
	}
}

// Uploads per minute are answered 400 RESOURCE_EXHAUSTED, as Google does,
// and are allowed again a minute later.
func TestPhotosUploadsPerMinute(t *testing.T) {
	e, clk := newOAuthEnv(t)
	e.sb.SetPhotosQuota(PhotosQuota{UploadsPerMinute: 2})
	e.photosToken(jpegBytes(81, 1000))
	clk.Advance(30 * time.Second)
	e.photosStart()
	r := e.photosRaw(jpegBytes(82, 1000))
	if st, reason := r.rpc(t); r.code != 400 || st != "RESOURCE_EXHAUSTED" || reason != "rateLimitExceeded" {
		t.Fatalf("the third upload in a minute: %d %s", r.code, r.body)
	}
	if r := e.photosStartResp(); r.code != 400 {
		t.Fatalf("a start over the quota: %d", r.code)
	}
	if r := e.do("GET", "/v1/albums", auth(), nil); r.code != 200 {
		t.Fatalf("a read is no upload: %d", r.code)
	}
	clk.Advance(31 * time.Second) // the first upload is a minute old
	e.photosToken(jpegBytes(83, 1000))
	if r := e.photosRaw(jpegBytes(84, 1000)); r.code != 400 {
		t.Fatalf("again over: %d", r.code)
	}
	if r := e.do("PUT", "/sandbox/v1/photos", auth(), []byte(`{"uploadsPerMinute": 0}`)); r.code != 200 {
		t.Fatalf("lifting the quota: %d", r.code)
	}
	e.photosToken(jpegBytes(85, 1000))
	for _, bad := range []string{`{"uploadsPerMinute": -1}`, `{"perHour": 5}`, `nonsense`} {
		if r := e.do("PUT", "/sandbox/v1/photos", auth(), []byte(bad)); r.code != 400 {
			t.Errorf("%s: %d", bad, r.code)
		}
	}
}

// appendonly uploads and creates; readonly.appcreateddata reads; neither
// does the other's work, and the controls take the sandbox's token only.
func TestPhotosScopes(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	appendTok := e.signIn(ScopePhotosAppend)["access_token"].(string)
	readTok := e.signIn(ScopePhotosReadAppCreated)["access_token"].(string)
	driveTok := e.signIn(ScopeDriveFile)["access_token"].(string)
	with := func(tok string, extra ...string) map[string]string {
		h := bearer(tok)
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	raw := func(tok string) resp {
		return e.do("POST", photosUploads, with(tok, "X-Goog-Upload-Protocol", "raw"), jpegBytes(90, 1000))
	}
	r := raw(appendTok)
	if r.code != 200 {
		t.Fatalf("upload with appendonly: %d %s", r.code, r.body)
	}
	token := string(r.body)
	create := func(tok string) resp {
		return e.photosJSON("POST", "/v1/mediaItems:batchCreate", map[string]any{"newMediaItems": itemsOf(token)}, bearer(tok))
	}
	album := func(tok string) resp {
		return e.photosJSON("POST", "/v1/albums", map[string]any{"album": map[string]any{"title": "T"}}, bearer(tok))
	}
	cr := create(appendTok)
	if cr.code != 200 {
		t.Fatalf("batchCreate with appendonly: %d %s", cr.code, cr.body)
	}
	id := cr.results(t)[0].MediaItem["id"].(string)
	cases := []struct {
		name string
		r    resp
		code int
	}{
		{"albums.create with appendonly", album(appendTok), 200},
		{"upload with readonly", raw(readTok), 403},
		{"upload with drive.file", raw(driveTok), 403},
		{"batchCreate with readonly", create(readTok), 403},
		{"albums.create with readonly", album(readTok), 403},
		{"mediaItems.get with readonly", e.do("GET", "/v1/mediaItems/"+id, bearer(readTok), nil), 200},
		{"mediaItems.list with readonly", e.do("GET", "/v1/mediaItems", bearer(readTok), nil), 200},
		{"albums.list with readonly", e.do("GET", "/v1/albums", bearer(readTok), nil), 200},
		{"mediaItems.get with appendonly", e.do("GET", "/v1/mediaItems/"+id, bearer(appendTok), nil), 403},
		{"albums.list with appendonly", e.do("GET", "/v1/albums", bearer(appendTok), nil), 403},
		{"bytes with appendonly", e.do("GET", photosBytesPath+id+"=d", bearer(appendTok), nil), 403},
		{"bytes with readonly", e.do("GET", photosBytesPath+id+"=d", bearer(readTok), nil), 200},
		{"the controls with a signed-in token", e.do("GET", "/sandbox/v1/photos", bearer(appendTok), nil), 403},
	}
	for _, c := range cases {
		if c.r.code != c.code {
			t.Errorf("%s: %d %s, want %d", c.name, c.r.code, c.r.body, c.code)
		} else if c.code == 403 && !strings.Contains(c.name, "controls") && !strings.Contains(c.r.errMessage(t), "insufficient authentication scopes") {
			t.Errorf("%s: %s", c.name, c.r.body)
		}
	}
}

// A video's bytes go to disk as they arrive: a 320 MiB video, resumably in
// three requests and raw in one, never brings the heap near its size.
func TestPhotosLargeVideoStaysOnDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 640 MiB")
	}
	e := newEnv(t, func(o *Options) { o.NoSync = true })
	const size = 320 << 20
	head := mp4Bytes(95, 4096)
	runtime.GC()
	var tokens []string
	peak := memtest.PeakHeap(func() {
		u := e.photosStart("X-Goog-Upload-Raw-Size", formatInt(size))
		send := func(cmd string, from, n int64) resp {
			var rd interface{ Read([]byte) (int, error) } = &zeroReader{n: n}
			if from == 0 {
				rd = &prefixReader{head: head, rest: &zeroReader{n: n - int64(len(head))}}
			}
			req, _ := http.NewRequest("POST", u, rd)
			req.ContentLength = n
			req.Header.Set("X-Goog-Upload-Command", cmd)
			req.Header.Set("X-Goog-Upload-Offset", formatInt(from))
			res, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatalf("%s at %d: %v", cmd, from, err)
			}
			defer res.Body.Close()
			b := make([]byte, 512)
			k, _ := res.Body.Read(b)
			return resp{code: res.StatusCode, h: res.Header, body: b[:k]}
		}
		send("upload", 0, 128<<20)
		send("upload", 128<<20, 128<<20)
		r := send("upload, finalize", 256<<20, size-256<<20)
		if r.code != 200 {
			t.Fatalf("finalize: %d %s", r.code, r.body)
		}
		tokens = append(tokens, string(r.body))
		req, _ := http.NewRequest("POST", e.srv.URL+photosUploads, &prefixReader{head: mp4Bytes(96, 4096), rest: &zeroReader{n: size - 4096}})
		req.ContentLength = size
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("X-Goog-Upload-Protocol", "raw")
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatalf("raw: %v", err)
		}
		if res.StatusCode != 200 {
			body, _ := io.ReadAll(res.Body)
			t.Fatalf("raw: %s %s", res.Status, body)
		}
		res.Body.Close()
	})
	t.Logf("peak heap %.1f MiB for two 320 MiB videos", float64(peak)/(1<<20))
	if peak > 16<<20 {
		t.Fatalf("the heap reached %.1f MiB", float64(peak)/(1<<20))
	}
	if it := e.createOne(tokens[0], "", ""); it["mimeType"] != "video/mp4" {
		t.Fatalf("item: %v", it)
	}
}

type prefixReader struct {
	head []byte
	rest *zeroReader
}

func (p *prefixReader) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	return p.rest.Read(b)
}
