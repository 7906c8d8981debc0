package sandbox

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const kib256 = 256 << 10

func TestResumableProtocol(t *testing.T) {
	e := newEnv(t)
	data := randomData(1, 3*kib256+100)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=proto.bin", "application/octet-stream", total, "")
	if !strings.HasPrefix(uri, e.srv.URL+"/upload/storage/v1/b/bkt/o?") || !strings.Contains(uri, "name=proto.bin") {
		t.Fatalf("session URI %q does not keep the media URI and its query", uri)
	}
	steps := []struct {
		name      string
		do        func() resp
		code      int
		rangeHdr  string // "-" for absent
		overrides string
	}{
		{"fresh session has no Range", func() resp { return e.query(uri, total) }, 308, "-", ""},
		{"first chunk", func() resp { return e.chunk(uri, data[:kib256], 0, total) }, 308, "bytes=0-262143", ""},
		{"status between chunks", func() resp { return e.query(uri, total) }, 308, "bytes=0-262143", ""},
		{"chunk past the stored offset refused", func() resp { return e.chunk(uri, data[2*kib256:3*kib256], 2*kib256, total) }, 503, "bytes=0-262143", ""},
		{"nothing changed by the refused chunk", func() resp { return e.query(uri, total) }, 308, "bytes=0-262143", ""},
		{"overlapping chunk: re-sent bytes ignored", func() resp { return e.chunk(uri, data[0:2*kib256], 0, total) }, 308, "bytes=0-524287", ""},
		{"total contradicting X-Upload-Content-Length", func() resp { return e.chunk(uri, data[2*kib256:3*kib256], 2*kib256, total+1) }, 400, "-", ""},
		{"non-final chunk not a multiple of 256 KiB", func() resp { return e.chunk(uri, data[2*kib256:2*kib256+1000], 2*kib256, total) }, 400, "-", ""},
		{"POST with X-GUploader-No-308", func() resp {
			return e.do("POST", uri, map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/*", 2*kib256, 3*kib256-1), "X-GUploader-No-308": "yes"}, data[2*kib256:3*kib256])
		}, 200, "bytes=0-786431", "308"},
		{"final chunk completes with 200 (Cloud Storage, though started with POST)", func() resp { return e.chunk(uri, data[3*kib256:], 3*kib256, total) }, 200, "-", ""},
		{"status query after completion returns the resource", func() resp { return e.query(uri, total) }, 200, "-", ""},
	}
	for _, s := range steps {
		r := s.do()
		if r.code != s.code {
			t.Fatalf("%s: status %d, want %d: %s", s.name, r.code, s.code, r.body)
		}
		got := r.h.Get("Range")
		if s.rangeHdr == "-" && got != "" && r.code == 308 || s.rangeHdr != "-" && got != s.rangeHdr {
			t.Fatalf("%s: Range %q, want %q", s.name, got, s.rangeHdr)
		}
		if r.h.Get("X-HTTP-Status-Code-Override") != s.overrides {
			t.Fatalf("%s: X-HTTP-Status-Code-Override %q, want %q", s.name, r.h.Get("X-HTTP-Status-Code-Override"), s.overrides)
		}
		if r.code >= 400 {
			r.errMessage(t)
		}
		if r.code == 200 && r.h.Get("X-HTTP-Status-Code-Override") == "" {
			obj := r.json(t)
			if obj["size"] != formatInt(total) || obj["name"] != "proto.bin" || obj["kind"] != "storage#object" {
				t.Fatalf("%s: object %v", s.name, obj)
			}
		}
	}
	if got := e.object("bkt", "proto.bin"); !bytes.Equal(got, data) {
		t.Fatalf("stored object differs from the source (%d vs %d bytes)", len(got), len(data))
	}
	if st := e.sb.Stats(); st.Completions != 1 || st.SessionsCompleted != 1 {
		t.Fatalf("stats %+v: want exactly one completion", st)
	}
}

func TestSessionStatusForms(t *testing.T) {
	e := newEnv(t)
	data := randomData(2, kib256+5)
	t.Run("PUT-started session ends with 200", func(t *testing.T) {
		item := e.do("POST", "/upload/mirror/v1/timeline?uploadType=media", auth("Content-Type", "image/png"), pngBytes()).json(t)
		uri := e.initiate("PUT", "/upload/mirror/v1/timeline/"+item["id"].(string), "image/png", int64(len(data)), `{"text":"updated"}`)
		if r := e.chunk(uri, data, 0, int64(len(data))); r.code != 200 || r.json(t)["text"] != "updated" {
			t.Fatalf("update: %d %s", r.code, r.body)
		}
	})
	t.Run("unknown total until the last chunk, official client's bytes */N finish", func(t *testing.T) {
		uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=unknown", "application/octet-stream", -1, "")
		if r := e.chunk(uri, data[:kib256], 0, -1); r.code != 308 || r.h.Get("Range") != "bytes=0-262143" {
			t.Fatalf("chunk: %d %q", r.code, r.h.Get("Range"))
		}
		if r := e.query(uri, -1); r.code != 308 {
			t.Fatalf("bytes */*: %d", r.code)
		}
		if r := e.query(uri, kib256); r.code != 200 || r.json(t)["size"] != formatInt(kib256) {
			t.Fatalf("bytes */%d should finish the upload: %d %s", kib256, r.code, r.body)
		}
	})
	t.Run("whole file in one PUT without Content-Range", func(t *testing.T) {
		uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=whole", "application/octet-stream", int64(len(data)), "")
		if r := e.do("PUT", uri, nil, data); r.code != 200 {
			t.Fatalf("whole PUT: %d %s", r.code, r.body)
		}
		if !bytes.Equal(e.object("bkt", "whole"), data) {
			t.Fatal("bytes differ")
		}
	})
	t.Run("empty upload", func(t *testing.T) {
		uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=empty", "application/octet-stream", 0, "")
		if r := e.query(uri, 0); r.code != 200 || r.json(t)["size"] != "0" {
			t.Fatalf("empty: %d %s", r.code, r.body)
		}
	})
	t.Run("cancel answers 499, then the session is gone", func(t *testing.T) {
		uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=cancelled", "application/octet-stream", int64(len(data)), "")
		e.chunk(uri, data[:kib256], 0, int64(len(data)))
		if r := e.do("DELETE", uri, nil, nil); r.code != 499 {
			t.Fatalf("DELETE: %d", r.code)
		}
		if r := e.query(uri, int64(len(data))); r.code != 404 {
			t.Fatalf("after DELETE: %d", r.code)
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		r := e.query(e.srv.URL+"/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=nosuchsession", 10)
		if r.code != 404 || !strings.Contains(r.errMessage(t), "Start a new upload") {
			t.Fatalf("unknown session: %d %s", r.code, r.body)
		}
	})
	t.Run("bad Content-Range", func(t *testing.T) {
		uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=bad", "application/octet-stream", 10, "")
		for _, cr := range []string{"bytes 5-1/10", "bytes 0-10/10", "bits 0-1/10", "bytes 0-1", "bytes -1-3/10", "bytes 0-x/10"} {
			r := e.do("PUT", uri, map[string]string{"Content-Range": cr}, []byte("xx"))
			if r.code != 400 || !strings.Contains(r.errMessage(t), "Content-") {
				t.Errorf("Content-Range %q: %d %s", cr, r.code, r.body)
			}
		}
		if r := e.do("PUT", uri, map[string]string{"Content-Range": "bytes 0-4/10"}, []byte("abc")); r.code != 400 {
			t.Errorf("Content-Length shorter than the range: %d", r.code)
		}
	})
}

func TestSessionExpires(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEnv(t, func(o *Options) { o.Now = func() time.Time { return now } })
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=old", "application/octet-stream", 10, "")
	now = now.Add(7*24*time.Hour - time.Minute)
	if r := e.query(uri, 10); r.code != 308 {
		t.Fatalf("a session six days and 23:59 old should live: %d", r.code)
	}
	now = now.Add(2 * time.Minute)
	if r := e.query(uri, 10); r.code != 404 {
		t.Fatalf("a session past its week should be gone: %d", r.code)
	}
}

// The seeds' example: a connection that breaks after 43 bytes leaves
// "Range: 0-42" behind; every byte that arrived is kept.
func TestInterruptedChunkKeepsArrivedBytes(t *testing.T) {
	e := newEnv(t)
	data := randomData(3, 1000)
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=cut", "application/octet-stream", 1000, "")
	u, _ := url.Parse(uri)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\nContent-Range: bytes 0-999/1000\r\n\r\n", u.RequestURI(), u.Host)
	conn.Write(data[:43])
	conn.Close()
	var r resp
	deadline := time.Now().Add(10 * time.Second)
	for {
		r = e.query(uri, 1000)
		if r.h.Get("Range") == "bytes=0-42" || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // the server notices the closed connection on its own time
	}
	if r.code != 308 || r.h.Get("Range") != "bytes=0-42" {
		t.Fatalf("after 43 bytes: %d Range %q", r.code, r.h.Get("Range"))
	}
	if r := e.chunk(uri, data[43:], 43, 1000); r.code != 200 {
		t.Fatalf("rest: %d %s", r.code, r.body)
	}
	if !bytes.Equal(e.object("bkt", "cut"), data) {
		t.Fatal("bytes differ")
	}
}

func TestSessionURINeedsNoAuthButAPIDoes(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/gmail/v1/users/me/messages", "/gmail/v1/users/me/profile", "/mirror/v1/timeline", "/storage/v1/b/bkt/o/x"} {
		for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic " + testToken}} {
			r := e.do("GET", path, hdr, nil)
			if r.code != 401 || r.h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s with %v: %d", path, hdr, r.code)
			}
			r.errMessage(t)
		}
	}
	r := e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=x", nil, nil)
	if r.code != 401 {
		t.Fatalf("initiation without a token: %d", r.code)
	}
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=x", "text/plain", 3, "")
	if r := e.chunk(uri, []byte("abc"), 0, 3); r.code != 200 {
		t.Fatalf("session URI without Authorization: %d %s", r.code, r.body)
	}
}

func TestUploadRefusals(t *testing.T) {
	e := newEnv(t)
	msg := []byte("Subject: hi\r\n\r\nbody\r\n")
	cases := []struct {
		name    string
		method  string
		path    string
		hdr     map[string]string
		body    []byte
		code    int
		message string
	}{
		{"no uploadType", "POST", "/upload/gmail/v1/users/me/messages/send", auth("Content-Type", "message/rfc822"), msg, 400, "uploadType"},
		{"unknown uploadType", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=chunky", auth("Content-Type", "message/rfc822"), msg, 400, "chunky"},
		{"mail sniffed as text/plain", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=media", auth("Content-Type", "text/plain; charset=utf-8"), msg, 400, "Valid media types: [message/*]"},
		{"picture to Gmail at initiation", "POST", "/upload/gmail/v1/users/me/drafts?uploadType=resumable", auth("X-Upload-Content-Type", "image/png"), nil, 400, "image/png"},
		{"text to the timeline", "POST", "/upload/mirror/v1/timeline?uploadType=media", auth("Content-Type", "text/plain"), []byte("x"), 400, "image/*, audio/*, video/*"},
		{"send over 35 MiB declared", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=resumable", auth("X-Upload-Content-Type", "message/rfc822", "X-Upload-Content-Length", "36700161"), nil, 413, "by 1 bytes"},
		{"insert at 150 MiB is fine", "POST", "/upload/gmail/v1/users/me/messages?uploadType=resumable", auth("X-Upload-Content-Type", "message/rfc822", "X-Upload-Content-Length", "157286400"), nil, 200, ""},
		{"import over 150 MiB", "POST", "/upload/gmail/v1/users/me/messages/import?uploadType=resumable", auth("X-Upload-Content-Type", "message/rfc822", "X-Upload-Content-Length", "157286401"), nil, 413, "150 MiB"},
		{"timeline over 10 MiB", "POST", "/upload/mirror/v1/timeline?uploadType=resumable", auth("X-Upload-Content-Type", "video/mp4", "X-Upload-Content-Length", "10485761"), nil, 413, "10 MiB"},
		{"bad X-Upload-Content-Length", "POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=a", auth("X-Upload-Content-Length", "-5"), nil, 400, "X-Upload-Content-Length"},
		{"metadata not JSON", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=resumable", auth("X-Upload-Content-Type", "message/rfc822", "Content-Type", "application/json"), []byte("{not json"), 400, "not a JSON object"},
		{"unknown thread", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=resumable", auth("X-Upload-Content-Type", "message/rfc822", "Content-Type", "application/json"), []byte(`{"threadId":"nope"}`), 404, "nope"},
		{"other user's mailbox", "POST", "/upload/gmail/v1/users/someone@else.example/messages/send?uploadType=media", auth("Content-Type", "message/rfc822"), msg, 403, "Delegation denied"},
		{"update of a missing draft", "PUT", "/upload/gmail/v1/users/me/drafts/r123?uploadType=media", auth("Content-Type", "message/rfc822"), msg, 404, "r123"},
		{"drafts.send without id", "POST", "/upload/gmail/v1/users/me/drafts/send?uploadType=media", auth("Content-Type", "message/rfc822"), msg, 400, "id"},
		{"attachment to a missing item", "POST", "/upload/mirror/v1/timeline/nope/attachments?uploadType=media", auth("Content-Type", "image/png"), pngBytes(), 404, "nope"},
		{"bad notification level", "POST", "/upload/mirror/v1/timeline?uploadType=resumable", auth("X-Upload-Content-Type", "image/png", "Content-Type", "application/json"), []byte(`{"notification":{"level":"LOUD"}}`), 400, "LOUD"},
		{"storage without a name", "POST", "/upload/storage/v1/b/bkt/o?uploadType=media", auth("Content-Type", "text/plain"), []byte("x"), 400, "name"},
		{"wrong method on a media URI", "GET", "/upload/gmail/v1/users/me/messages/send", auth(), nil, 405, "GET"},
		{"no such endpoint", "GET", "/gmail/v1/users/me/nothing", auth(), nil, 404, "nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.hdr, c.body)
			if r.code != c.code {
				t.Fatalf("status %d, want %d: %s", r.code, c.code, r.body)
			}
			if c.code >= 400 {
				if m := r.errMessage(t); !strings.Contains(m, c.message) {
					t.Fatalf("message %q does not mention %q", m, c.message)
				}
			}
		})
	}
	if st := e.sb.Stats(); st.Completions != 0 {
		t.Fatalf("refused uploads created %d resources", st.Completions)
	}
}

func TestLimitEnforcedWhileBytesArrive(t *testing.T) {
	e := newEnv(t)
	big := make([]byte, limitMirror+1)
	t.Run("media without Content-Length", func(t *testing.T) {
		req, _ := http.NewRequest("POST", e.srv.URL+"/upload/mirror/v1/timeline?uploadType=media", bytes.NewReader(big))
		req.ContentLength = -1 // chunked: the size shows only as bytes arrive
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "video/mp4")
		r, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 413 {
			t.Fatalf("status %d, want 413", r.StatusCode)
		}
	})
	t.Run("resumable without X-Upload-Content-Length", func(t *testing.T) {
		uri := e.initiate("POST", "/upload/mirror/v1/timeline", "video/mp4", -1, "")
		if r := e.chunk(uri, big[:limitMirror], 0, -1); r.code != 308 {
			t.Fatalf("up to the limit: %d %s", r.code, r.body)
		}
		if r := e.chunk(uri, big[:kib256], limitMirror, -1); r.code != 413 {
			t.Fatalf("past the limit: %d %s", r.code, r.body)
		}
		if r := e.chunk(uri, big[:1], limitMirror, limitMirror+1); r.code != 413 {
			t.Fatalf("total past the limit: %d %s", r.code, r.body)
		}
	})
}

func TestMultipartUpload(t *testing.T) {
	e := newEnv(t)
	body := func(parts ...string) []byte {
		return []byte(strings.Join(parts, ""))
	}
	meta := "--B\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"mp.txt\"}\r\n"
	media := "--B\r\nContent-Type: text/plain\r\n\r\nhello multipart\r\n"
	end := "--B--\r\n"
	hdr := auth("Content-Type", "multipart/related; boundary=B")
	cases := []struct {
		name string
		body []byte
		hdr  map[string]string
		code int
		msg  string
	}{
		{"metadata then media", body(meta, media, end), hdr, 200, ""},
		{"media first", body(media, meta, end), hdr, 400, "metadata (application/json) then media"},
		{"metadata only", body(meta, end), hdr, 400, "media part is missing"},
		{"three parts", body(meta, media, media, end), hdr, 400, "exactly two parts"},
		{"metadata not JSON", body("--B\r\nContent-Type: application/json\r\n\r\n{oops\r\n", media, end), hdr, 400, "not a JSON object"},
		{"no boundary", body(meta, media, end), auth("Content-Type", "multipart/related"), 400, "boundary"},
		{"not multipart", body(meta, media, end), auth("Content-Type", "application/json"), 400, "multipart/related"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", c.hdr, c.body)
			if r.code != c.code {
				t.Fatalf("status %d, want %d: %s", r.code, c.code, r.body)
			}
			if c.code >= 400 && !strings.Contains(r.errMessage(t), c.msg) {
				t.Fatalf("message %q does not mention %q", r.errMessage(t), c.msg)
			}
		})
	}
	if got := string(e.object("bkt", "mp.txt")); got != "hello multipart" {
		t.Fatalf("stored %q", got)
	}
}

func TestStorageObjectResource(t *testing.T) {
	e := newEnv(t)
	data := randomData(4, 5000)
	r := e.do("POST", "/upload/storage/v1/b/my-bucket/o?uploadType=media&name="+url.QueryEscape("dir/ü file.bin"), auth("Content-Type", "application/x-test"), data)
	if r.code != 200 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	obj := r.json(t)
	sum := md5.Sum(data)
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	want := map[string]string{
		"kind": "storage#object", "bucket": "my-bucket", "name": "dir/ü file.bin", "size": "5000",
		"contentType": "application/x-test", "md5Hash": base64.StdEncoding.EncodeToString(sum[:]),
		"crc32c": base64.StdEncoding.EncodeToString(crc[:]),
	}
	for k, v := range want {
		if obj[k] != v {
			t.Errorf("%s = %v, want %v", k, obj[k], v)
		}
	}
	got := e.do("GET", "/storage/v1/b/my-bucket/o/"+url.PathEscape("dir/ü file.bin"), auth(), nil).json(t)
	if got["md5Hash"] != want["md5Hash"] || got["generation"] != obj["generation"] {
		t.Errorf("objects.get: %v", got)
	}
	if !bytes.Equal(e.object("my-bucket", url.PathEscape("dir/ü file.bin")), data) {
		t.Error("alt=media bytes differ")
	}
	// Chunked, across hash state saved between requests and a restart.
	uri := e.initiate("POST", "/upload/storage/v1/b/my-bucket/o?name=chunked", "application/octet-stream", 5000+kib256, "")
	big := append(randomData(5, kib256), data...)
	e.chunk(uri, big[:kib256], 0, int64(len(big)))
	e.restart()
	r = e.chunk(uri, big[kib256:], kib256, int64(len(big)))
	sum = md5.Sum(big)
	if r.code != 200 || r.json(t)["md5Hash"] != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatalf("chunked md5 after restart: %d %s", r.code, r.body)
	}
}

func TestRestartKeepsSessionsAndBytes(t *testing.T) {
	e := newEnv(t)
	data := randomData(6, 4*kib256+77)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/gmail/v1/users/me/messages?uploadType=resumable&internalDateSource=receivedTime", "message/rfc822", total, `{"labelIds":["INBOX"]}`)
	if r := e.chunk(uri, data[:2*kib256], 0, total); r.code != 308 {
		t.Fatalf("first half: %d", r.code)
	}
	e.restart()
	r := e.query(uri, total)
	if r.code != 308 || r.h.Get("Range") != "bytes=0-524287" {
		t.Fatalf("after restart: %d Range %q", r.code, r.h.Get("Range"))
	}
	r = e.chunk(uri, data[2*kib256:], 2*kib256, total)
	if r.code != 201 {
		t.Fatalf("rest: %d %s", r.code, r.body)
	}
	id := r.json(t)["id"].(string)
	e.restart()
	raw := e.do("GET", "/gmail/v1/users/me/messages/"+id+"?format=raw", auth(), nil).json(t)["raw"].(string)
	got, err := base64.URLEncoding.DecodeString(raw)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("raw after restart differs (%v)", err)
	}
}

func TestOneSandboxPerFolder(t *testing.T) {
	e := newEnv(t)
	e.sb.announce("http://127.0.0.1:9999")
	_, err := Open(Options{Dir: e.dir, Token: "x"})
	var running *ErrAlreadyRunning
	if !errors.As(err, &running) || !strings.Contains(err.Error(), "127.0.0.1:9999") || !strings.Contains(err.Error(), e.dir) {
		t.Fatalf("second Open: %v", err)
	}
}

func TestLogsNeverShowSessionURIs(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, func(o *Options) { o.Logger = newTestLogger(&logs) })
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=secret", "text/plain", 3, "")
	e.chunk(uri, []byte("abc"), 0, 3)
	id := uri[strings.Index(uri, "upload_id=")+len("upload_id="):]
	if strings.Contains(logs.String(), id) || strings.Contains(logs.String(), testToken) {
		t.Fatalf("log holds a credential:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "/upload/storage/v1/b/bkt/o") {
		t.Fatalf("log is missing the requests:\n%s", logs.String())
	}
}

// pngBytes is a 1x1 PNG.
func pngBytes() []byte {
	b, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	return b
}

var _ = bufio.NewReader
