package sandbox

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-99/100", "bytes */100", "bytes */*", "bytes 0-262143/*", "bytes=0-1/2", "bytes 5-1/10", "bytes 0-9223372036854775807/*", "bytes -1-2/3", " bytes 1-1/2 ", "bytes 00-01/02"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cr, err := parseContentRange(s)
		if err != nil {
			return
		}
		if cr.Total > maxUploadSize || cr.First > maxUploadSize || cr.Last > maxUploadSize {
			t.Fatalf("%q: numbers past the bound: %+v", s, cr)
		}
		if !cr.Query {
			if cr.First < 0 || cr.Last < cr.First || cr.Total >= 0 && cr.Last >= cr.Total {
				t.Fatalf("%q parsed to an impossible range %+v", s, cr)
			}
		}
		// What parses once parses the same from its canonical form.
		tot := "*"
		if cr.Total >= 0 {
			tot = fmt.Sprint(cr.Total)
		}
		canon := "bytes */" + tot
		if !cr.Query {
			canon = fmt.Sprintf("bytes %d-%d/%s", cr.First, cr.Last, tot)
		}
		again, err := parseContentRange(canon)
		if err != nil || again != cr {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, cr, canon, again, err)
		}
	})
}

// FuzzMultipartUpload sends arbitrary bodies as a multipart upload: the
// sandbox answers 200 or a 4xx in Google's form, never a 5xx or a panic, and
// what it accepts it stores exactly.
func FuzzMultipartUpload(f *testing.F) {
	f.Add([]byte("--B\r\nContent-Type: application/json\r\n\r\n{\"name\":\"f\"}\r\n--B\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Type: application/json\r\n\r\n{\"name\":\"f\"}\r\n--B\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\naGVsbG8=\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--\r\n"))
	f.Add([]byte("--B--\r\n"))
	f.Add([]byte(""))
	sb, err := Open(Options{Dir: f.TempDir(), Token: testToken})
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	h := sb.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "http://127.0.0.1/upload/storage/v1/b/bkt/o?uploadType=multipart", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "multipart/related; boundary=B")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code != 200 && !strings.Contains(rec.Body.String(), `"errors"`) {
			t.Fatalf("answer %d: %s", rec.Code, rec.Body)
		}
	})
}

// FuzzSessionRequests feeds arbitrary Content-Range headers and bodies to
// one session: no 5xx but the documented 503, and the stored offset never
// passes the total.
func FuzzSessionRequests(f *testing.F) {
	f.Add("bytes 0-4/10", []byte("hello"))
	f.Add("bytes */10", []byte(""))
	f.Add("bytes 0-9/10", []byte("0123456789"))
	f.Add("bytes 3-12/*", []byte("0123456789"))
	sb, err := Open(Options{Dir: f.TempDir(), Token: testToken})
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	h := sb.Handler()
	f.Fuzz(func(t *testing.T, cr string, body []byte) {
		init := httptest.NewRequest("POST", "http://127.0.0.1/upload/storage/v1/b/bkt/o?uploadType=resumable&name=s", nil)
		init.Header.Set("Authorization", "Bearer "+testToken)
		init.Header.Set("X-Upload-Content-Length", "10")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, init)
		loc := rec.Header().Get("Location")
		if rec.Code != 200 || loc == "" {
			t.Fatalf("initiate: %d", rec.Code)
		}
		req := httptest.NewRequest("PUT", loc, bytes.NewReader(body))
		req.Header.Set("Content-Range", cr)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != 503 {
			t.Fatalf("%q: answer %d: %s", cr, rec.Code, rec.Body)
		}
		id := loc[strings.Index(loc, "upload_id=")+len("upload_id="):]
		if fi, err := os.Stat(sb.uploadPath(id)); err == nil && fi.Size() > 10 {
			t.Fatalf("%q: %d bytes stored for a 10-byte upload", cr, fi.Size())
		}
	})
}

func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(testMail))
	f.Add([]byte("Subject: x\r\n\r\nbody"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=a\r\n\r\n--a\r\nContent-Type: multipart/mixed; boundary=a\r\n\r\n--a--\r\n"))
	f.Add([]byte("Content-Transfer-Encoding: base64\r\n\r\n!!!notbase64"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, msg []byte) {
		p := filepath.Join(dir, "m")
		if err := os.WriteFile(p, msg, 0o600); err != nil {
			t.Fatal(err)
		}
		root, err := parseMessage(p, parseOptions{data: true})
		if err != nil {
			t.Fatal(err)
		}
		sn := snippet(root)
		if !utf8.ValidString(sn) {
			t.Fatalf("snippet is not UTF-8: %q", sn)
		}
	})
}

var _ = http.StatusOK
