package sandbox

// Cloud Storage's checksums (PROTOCOL.md 7) and its 200 at the end of an
// upload (4.2), over real HTTP. Every expected hash is computed here, from
// the bytes the test sent, with the standard library.

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// wantHashes is what GCS says of data: md5Hash and crc32c as base64 of the
// big-endian bytes, and the X-Goog-Hash value.
type wantHashes struct{ md5, crc, header string }

func hashesOf(data []byte) wantHashes {
	sum := md5.Sum(data)
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	w := wantHashes{md5: base64.StdEncoding.EncodeToString(sum[:]), crc: base64.StdEncoding.EncodeToString(c[:])}
	w.header = "crc32c=" + w.crc + ",md5=" + w.md5
	return w
}

// checkHashes asserts that an answer carrying an object has its hashes,
// in the body and in X-Goog-Hash.
func checkHashes(t *testing.T, what string, r resp, data []byte) {
	t.Helper()
	want := hashesOf(data)
	obj := r.json(t)
	if obj["md5Hash"] != want.md5 || obj["crc32c"] != want.crc || obj["size"] != formatInt(int64(len(data))) {
		t.Fatalf("%s: md5Hash %v crc32c %v size %v, want %s %s %d", what, obj["md5Hash"], obj["crc32c"], obj["size"], want.md5, want.crc, len(data))
	}
	if got := r.h.Get("X-Goog-Hash"); got != want.header {
		t.Fatalf("%s: X-Goog-Hash %q, want %q", what, got, want.header)
	}
}

func multipartBody(meta string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("--B\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + meta + "\r\n")
	b.WriteString("--B\r\nContent-Type: application/octet-stream\r\n\r\n")
	b.Write(data)
	b.WriteString("\r\n--B--\r\n")
	return b.Bytes()
}

// TestUploadFinishCodes: Cloud Storage ends every upload with 200, a
// resumable one started with POST too; Gmail keeps 201 after POST. A status
// query after the end answers as the end did: code, body and X-Goog-Hash.
func TestUploadFinishCodes(t *testing.T) {
	e := newEnv(t)
	data := randomData(60, kib256+999)
	total := int64(len(data))
	mail := []byte("From: a@example.com\r\nTo: b@example.com\r\nSubject: codes\r\n\r\nbody\r\n")
	cases := []struct {
		name  string
		code  int
		data  []byte
		gcs   bool
		query string // session URI to ask afterwards; "" for one-request uploads
		do    func() (resp, string)
	}{
		{name: "storage media", code: 200, data: data, gcs: true, do: func() (resp, string) {
			return e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=codes-media", auth("Content-Type", "application/octet-stream"), data), ""
		}},
		{name: "storage multipart", code: 200, data: data, gcs: true, do: func() (resp, string) {
			return e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", auth("Content-Type", "multipart/related; boundary=B"),
				multipartBody(`{"name":"codes-multipart"}`, data)), ""
		}},
		{name: "storage resumable, one request", code: 200, data: data, gcs: true, do: func() (resp, string) {
			uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=codes-one", "application/octet-stream", total, "")
			return e.chunk(uri, data, 0, total), uri
		}},
		{name: "storage resumable, chunked", code: 200, data: data, gcs: true, do: func() (resp, string) {
			uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=codes-chunked", "application/octet-stream", total, "")
			if r := e.chunk(uri, data[:kib256], 0, total); r.code != 308 {
				t.Fatalf("first chunk: %d %s", r.code, r.body)
			}
			return e.chunk(uri, data[kib256:], kib256, total), uri
		}},
		{name: "storage resumable, ended by a status query", code: 200, data: data[:kib256], gcs: true, do: func() (resp, string) {
			uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=codes-query", "application/octet-stream", -1, "")
			if r := e.chunk(uri, data[:kib256], 0, -1); r.code != 308 {
				t.Fatalf("chunk: %d %s", r.code, r.body)
			}
			return e.query(uri, kib256), uri
		}},
		{name: "gmail media", code: 200, do: func() (resp, string) {
			return e.do("POST", "/upload/gmail/v1/users/me/messages?uploadType=media", auth("Content-Type", "message/rfc822"), mail), ""
		}},
		{name: "gmail resumable started with POST", code: 201, do: func() (resp, string) {
			uri := e.initiate("POST", "/upload/gmail/v1/users/me/messages", "message/rfc822", int64(len(mail)), "")
			return e.chunk(uri, mail, 0, int64(len(mail))), uri
		}},
		{name: "mirror resumable started with POST", code: 201, do: func() (resp, string) {
			png := pngBytes()
			uri := e.initiate("POST", "/upload/mirror/v1/timeline", "image/png", int64(len(png)), "")
			return e.chunk(uri, png, 0, int64(len(png))), uri
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, uri := c.do()
			if r.code != c.code {
				t.Fatalf("finished with %d, want %d: %s", r.code, c.code, r.body)
			}
			if c.gcs {
				checkHashes(t, "finishing answer", r, c.data)
			} else if r.h.Get("X-Goog-Hash") != "" {
				t.Fatalf("%s answered X-Goog-Hash %q: only Cloud Storage reports hashes", c.name, r.h.Get("X-Goog-Hash"))
			}
			if uri == "" {
				return
			}
			q := e.query(uri, -1)
			if q.code != r.code || !sameJSON(q.body, r.body) || q.h.Get("X-Goog-Hash") != r.h.Get("X-Goog-Hash") {
				t.Fatalf("status query after the end: %d X-Goog-Hash %q\n%s\nwant %d X-Goog-Hash %q\n%s",
					q.code, q.h.Get("X-Goog-Hash"), q.body, r.code, r.h.Get("X-Goog-Hash"), r.body)
			}
		})
	}
}

// TestStorageDownloadHashes: alt=media carries the whole object's hashes,
// its stored encoding and length, for a Range read as well (as GCS does: a
// client can check only a whole read against them).
func TestStorageDownloadHashes(t *testing.T) {
	e := newEnv(t)
	data := randomData(61, 3*kib256+17)
	want := hashesOf(data)
	if r := e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=dl", auth("Content-Type", "application/octet-stream"), data); r.code != 200 {
		t.Fatalf("upload: %d %s", r.code, r.body)
	}
	cases := []struct {
		name, path string
		hdr        map[string]string
		code       int
		body       []byte
	}{
		{"whole", "/storage/v1/b/bkt/o/dl?alt=media", auth(), 200, data},
		{"whole via the download path", "/download/storage/v1/b/bkt/o/dl?alt=media", auth(), 200, data},
		{"range", "/storage/v1/b/bkt/o/dl?alt=media", auth("Range", "bytes=100-199"), 206, data[100:200]},
		{"suffix range", "/download/storage/v1/b/bkt/o/dl?alt=media", auth("Range", "bytes=-5"), 206, data[len(data)-5:]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("GET", c.path, c.hdr, nil)
			if r.code != c.code || !bytes.Equal(r.body, c.body) {
				t.Fatalf("%d, %d bytes; want %d, %d bytes", r.code, len(r.body), c.code, len(c.body))
			}
			for k, v := range map[string]string{
				"X-Goog-Hash":                    want.header,
				"X-Goog-Stored-Content-Encoding": "identity",
				"X-Goog-Stored-Content-Length":   formatInt(int64(len(data))),
			} {
				if got := r.h.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestStorageChecksumsChecked: a checksum the client gives is compared with
// what arrived. A wrong one is refused with 400 and leaves the object as it
// was (absent, or the generation before); a right one is accepted; a
// malformed one is refused before anything is stored. Bodies that the
// server refuses unread are kept small here: it closes such a connection,
// and a client still writing a large body may meet the reset first.
func TestStorageChecksumsChecked(t *testing.T) {
	e := newEnv(t)
	type given struct{ meta, header string } // metadata JSON fields, X-Goog-Hash
	values := []struct {
		name    string
		field   string // "crc32c" or "md5"
		value   func(right, other wantHashes) string
		outcome string // "ok", "mismatch", "malformed"
	}{
		{"right crc32c", "crc32c", func(r, o wantHashes) string { return r.crc }, "ok"},
		{"right md5", "md5", func(r, o wantHashes) string { return r.md5 }, "ok"},
		{"wrong crc32c", "crc32c", func(r, o wantHashes) string { return o.crc }, "mismatch"},
		{"wrong md5", "md5", func(r, o wantHashes) string { return o.md5 }, "mismatch"},
		{"crc32c not base64", "crc32c", func(r, o wantHashes) string { return "%%%%" }, "malformed"},
		{"crc32c of 8 bytes", "crc32c", func(r, o wantHashes) string { return base64.StdEncoding.EncodeToString(make([]byte, 8)) }, "malformed"},
		{"md5 not base64", "md5", func(r, o wantHashes) string { return "not base64!" }, "malformed"},
		{"md5 of 4 bytes", "md5", func(r, o wantHashes) string { return r.crc }, "malformed"},
	}
	metaField := map[string]string{"crc32c": "crc32c", "md5": "md5Hash"}
	// A session's way returns its URI, where the session stands after its
	// last request was refused unread, and how to end it from there.
	type session struct {
		uri       string
		standsAt  int64
		finishing func() resp // nil: a status query ends it
	}
	lastChunk := func(uri string, data []byte, hdr map[string]string) func() resp {
		return func() resp {
			total := len(data)
			h := map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%d", kib256, total-1, total)}
			for k, v := range hdr {
				h[k] = v
			}
			return e.do("PUT", uri, h, data[kib256:])
		}
	}
	small := randomData(62, 8000)
	chunked := randomData(63, kib256+4000) // two chunks
	ways := []struct {
		name string
		data []byte
		// up uploads data as name, giving g, and returns the answer to the
		// request that would have finished the upload.
		up func(name string, data []byte, g given) (resp, *session)
	}{
		{"multipart metadata", small, func(name string, data []byte, g given) (resp, *session) {
			meta := fmt.Sprintf(`{"name":%q%s}`, name, g.meta)
			return e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", auth("Content-Type", "multipart/related; boundary=B"), multipartBody(meta, data)), nil
		}},
		{"media X-Goog-Hash", small, func(name string, data []byte, g given) (resp, *session) {
			return e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name="+name, auth("Content-Type", "application/octet-stream", "X-Goog-Hash", g.header), data), nil
		}},
		{"multipart X-Goog-Hash", small, func(name string, data []byte, g given) (resp, *session) {
			return e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", auth("Content-Type", "multipart/related; boundary=B", "X-Goog-Hash", g.header),
				multipartBody(fmt.Sprintf(`{"name":%q}`, name), data)), nil
		}},
		{"resumable start metadata", chunked, func(name string, data []byte, g given) (resp, *session) {
			r := e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name="+name,
				auth("X-Upload-Content-Type", "application/octet-stream", "Content-Type", "application/json; charset=UTF-8"), []byte(`{"contentLanguage":"en"`+g.meta+`}`))
			if r.code != 200 {
				return r, nil // refused at the start
			}
			uri := r.h.Get("Location")
			if r := e.chunk(uri, data[:kib256], 0, -1); r.code != 308 {
				t.Fatalf("first chunk: %d %s", r.code, r.body)
			}
			return lastChunk(uri, data, nil)(), &session{uri: uri}
		}},
		{"X-Goog-Hash on the last chunk", chunked, func(name string, data []byte, g given) (resp, *session) {
			uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name="+name, "application/octet-stream", int64(len(data)), "")
			if r := e.chunk(uri, data[:kib256], 0, int64(len(data))); r.code != 308 {
				t.Fatalf("first chunk: %d %s", r.code, r.body)
			}
			return lastChunk(uri, data, map[string]string{"X-Goog-Hash": g.header})(), &session{uri, kib256, lastChunk(uri, data, nil)}
		}},
		// The official Go client, when a file is a multiple of its chunk
		// size, learns the end only after the last chunk and ends with an
		// empty "bytes */N" carrying X-Goog-Hash.
		{"X-Goog-Hash on the status query that ends it", chunked[:kib256], func(name string, data []byte, g given) (resp, *session) {
			uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name="+name, "application/octet-stream", -1, "")
			if r := e.chunk(uri, data, 0, -1); r.code != 308 {
				t.Fatalf("the bytes: %d %s", r.code, r.body)
			}
			r := e.do("PUT", uri, map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", len(data)), "X-Goog-Hash": g.header}, nil)
			return r, &session{uri: uri}
		}},
	}
	prev := []byte("the generation before")
	n := 0
	for _, w := range ways {
		data, total := w.data, int64(len(w.data))
		right, other := hashesOf(data), hashesOf(append([]byte{1}, data...))
		for _, v := range values {
			n++
			name := fmt.Sprintf("sum-%d", n)
			value := v.value(right, other)
			var g given
			if strings.Contains(w.name, "metadata") {
				g.meta = fmt.Sprintf(`,%q:%q`, metaField[v.field], value)
			} else {
				g.header = v.field + "=" + value
			}
			overwrite := n%2 == 0 // half the names hold an object already
			t.Run(w.name+"/"+v.name, func(t *testing.T) {
				if overwrite {
					if r := e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name="+name, auth("Content-Type", "text/plain"), prev); r.code != 200 {
						t.Fatalf("the object before: %d %s", r.code, r.body)
					}
				}
				before := e.sb.Stats().Completions
				r, sess := w.up(name, data, g)
				switch v.outcome {
				case "ok":
					if r.code != 200 {
						t.Fatalf("a right checksum refused: %d %s", r.code, r.body)
					}
					checkHashes(t, "finishing answer", r, data)
					if got := e.object("bkt", name); !bytes.Equal(got, data) {
						t.Fatal("the stored object is not what was sent")
					}
					return
				case "mismatch":
					if r.code != 400 {
						t.Fatalf("a wrong checksum: %d, want 400: %s", r.code, r.body)
					}
					if m := r.errMessage(t); !strings.Contains(m, "doesn't match calculated") || !strings.Contains(m, value) {
						t.Fatalf("message %q: want Google's \"Provided ... doesn't match calculated ...\" naming %s", m, value)
					}
					if reason := errReason(t, r); reason != "invalid" {
						t.Fatalf("reason %q, want invalid", reason)
					}
				case "malformed":
					if r.code != 400 || !strings.Contains(r.errMessage(t), "Invalid") {
						t.Fatalf("a malformed checksum: %d, want 400 naming it invalid: %s", r.code, r.body)
					}
				}
				if got := e.sb.Stats().Completions; got != before {
					t.Fatalf("a refused upload counted %d completions", got-before)
				}
				got := e.do("GET", "/storage/v1/b/bkt/o/"+name+"?alt=media", auth(), nil)
				switch {
				case overwrite && (got.code != 200 || !bytes.Equal(got.body, prev)):
					t.Fatalf("the object was changed by a refused upload: %d %q", got.code, got.body)
				case !overwrite && got.code != 404:
					t.Fatalf("a refused upload left an object: %d", got.code)
				}
				if sess == nil {
					return
				}
				q := e.query(sess.uri, total)
				if v.outcome == "malformed" && sess.finishing == nil {
					// Refused unread: the session lives on, and all its bytes
					// are there, so the status query ends it.
					checkHashes(t, "the status query without the bad header", q, data)
					return
				}
				if v.outcome == "malformed" {
					// Refused before the bytes were read: the session lives on,
					// and ends when the last chunk comes again without it.
					if q.code != 308 || storedFrom(t, q) != sess.standsAt {
						t.Fatalf("after a malformed X-Goog-Hash the session should stand at %d: %d %q", sess.standsAt, q.code, q.h.Get("Range"))
					}
					if r := sess.finishing(); r.code != 200 {
						t.Fatalf("ending it without the header: %d %s", r.code, r.body)
					}
					checkHashes(t, "ending it without the header", e.query(sess.uri, total), data)
					return
				}
				// The session ended with the mismatch: it answers it again,
				// to a status query and to bytes alike, and keeps no bytes.
				if q.code != 400 || !sameJSON(q.body, r.body) {
					t.Fatalf("status query after a refused end: %d %s\nwant the same 400: %s", q.code, q.body, r.body)
				}
				if r := e.chunk(sess.uri, data[len(data)-1:], total-1, total); r.code != 400 {
					t.Fatalf("bytes after a refused end: %d", r.code)
				}
				id := sess.uri[strings.Index(sess.uri, "upload_id=")+len("upload_id="):]
				if _, err := os.Stat(e.sb.uploadPath(id)); !os.IsNotExist(err) {
					t.Fatalf("the refused session's bytes are kept (%v)", err)
				}
			})
		}
	}
}

// sameJSON: the same JSON value, however spaced.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func errReason(t *testing.T, r resp) string {
	t.Helper()
	var b errorBody
	if err := json.Unmarshal(r.body, &b); err != nil || len(b.Error.Errors) != 1 {
		t.Fatalf("not a Google JSON error: %s", r.body)
	}
	return b.Error.Errors[0].Reason
}

// TestStorageHashesAcrossBreaks: the running hashes follow a session through
// a connection cut mid-chunk (at an odd offset), a restart of the sandbox,
// and a server that keeps fewer bytes than it received; the end still
// reports the hashes of the whole file and accepts the client's right ones.
func TestStorageHashesAcrossBreaks(t *testing.T) {
	e := newEnv(t)
	data := randomData(63, 6*kib256+333)
	total := int64(len(data))
	want := hashesOf(data)
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=breaks", "application/octet-stream", total,
		fmt.Sprintf(`{"crc32c":%q,"md5Hash":%q}`, want.crc, want.md5))
	if r := e.chunk(uri, data[:kib256], 0, total); r.code != 308 {
		t.Fatalf("first chunk: %d %s", r.code, r.body)
	}
	// Cut the connection after kib256+12345 bytes of the second request.
	u, _ := url.Parse(uri)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nContent-Range: bytes %d-%d/%d\r\n\r\n",
		u.RequestURI(), u.Host, total-kib256, kib256, total-1, total)
	conn.Write(data[kib256 : 2*kib256+12345])
	conn.Close()
	var stored int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		stored = storedFrom(t, e.query(uri, total))
		if stored == 2*kib256+12345 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if stored != 2*kib256+12345 {
		t.Fatalf("after the cut %d bytes stored, want %d", stored, 2*kib256+12345)
	}
	e.restart()
	if got := storedFrom(t, e.query(uri, total)); got != stored {
		t.Fatalf("after the restart %d bytes stored, want %d", got, stored)
	}
	// A server that persists less than it received (down to a multiple of
	// 256 KiB) of a chunk that is not the last.
	faults := e.sb.Stats().FaultsInjected
	e.sb.SetFaults("seed=4,partial=1")
	r := e.chunk(uri, data[stored:stored+2*kib256], stored, total)
	e.sb.SetFaults("")
	if got := storedFrom(t, r); r.code != 308 || got <= stored || got >= stored+2*kib256 || e.sb.Stats().FaultsInjected == faults {
		t.Fatalf("partial=1: %d, %d stored of %d sent", r.code, got, stored+2*kib256)
	}
	stored = storedFrom(t, r)
	e.restart()
	r = e.do("PUT", uri, map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%d", stored, total-1, total), "X-Goog-Hash": want.header}, data[stored:])
	if r.code != 200 {
		t.Fatalf("the rest: %d %s", r.code, r.body)
	}
	checkHashes(t, "finishing answer", r, data)
	e.restart()
	checkHashes(t, "status query after a restart", e.query(uri, total), data)
	if !bytes.Equal(e.object("bkt", "breaks"), data) {
		t.Fatal("bytes differ")
	}
}
