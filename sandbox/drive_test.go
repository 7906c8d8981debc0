package sandbox

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

const driveFiles = "/upload/drive/v3/files"

// driveReason is errors[0].reason of a Google JSON error.
func (r resp) driveReason(t *testing.T) string {
	t.Helper()
	r.errMessage(t)
	var b errorBody
	json.Unmarshal(r.body, &b)
	return b.Error.Errors[0].Reason
}

func (e *testEnv) driveMedia(data []byte, ctype, query string) map[string]any {
	e.t.Helper()
	r := e.do("POST", driveFiles+"?uploadType=media"+query, auth("Content-Type", ctype), data)
	if r.code != 200 {
		e.t.Fatalf("media upload: %d %s", r.code, r.body)
	}
	return r.json(e.t)
}

func driveMultipartBody(meta string, ctype string, data []byte) (string, []byte) {
	var b bytes.Buffer
	b.WriteString("--B\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + meta + "\r\n")
	b.WriteString("--B\r\nContent-Type: " + ctype + "\r\n\r\n")
	b.Write(data)
	b.WriteString("\r\n--B--\r\n")
	return "multipart/related; boundary=B", b.Bytes()
}

func (e *testEnv) driveMultipart(meta, ctype string, data []byte, query string) resp {
	e.t.Helper()
	ct, body := driveMultipartBody(meta, ctype, data)
	return e.do("POST", driveFiles+"?uploadType=multipart"+query, auth("Content-Type", ct), body)
}

// doExpect sends with Expect: 100-continue, as a careful client does: a
// refusal that comes before the body is read then reaches the client
// instead of a connection reset while it still writes.
func (e *testEnv) doExpect(method, path string, hdr map[string]string, body []byte) resp {
	e.t.Helper()
	tr := e.srv.Client().Transport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = 10 * time.Second
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(method, path, bytes.NewReader(body))
	if !strings.HasPrefix(path, "http") {
		req, _ = http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Expect", "100-continue")
	r, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{code: r.StatusCode, h: r.Header, body: b}
}

func (e *testEnv) driveGet(id, query string) resp {
	e.t.Helper()
	return e.do("GET", "/drive/v3/files/"+id+query, auth(), nil)
}

func (e *testEnv) driveJSON(method, path, body string) resp {
	e.t.Helper()
	var b []byte
	h := auth()
	if body != "" {
		b, h["Content-Type"] = []byte(body), "application/json"
	}
	return e.do(method, path, h, b)
}

func hexMD5(b []byte) string    { s := md5.Sum(b); return hex.EncodeToString(s[:]) }
func hexSHA256(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

var driveIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{33,}$`)

// checkDriveFile reads a file back: its sums, size and bytes, whole and
// by Range, must be those of data.
func (e *testEnv) checkDriveFile(id, name, mimeType string, data []byte) {
	e.t.Helper()
	m := e.driveGet(id, "?fields=id,name,mimeType,size,md5Checksum,sha256Checksum").json(e.t)
	want := map[string]any{"id": id, "name": name, "mimeType": mimeType, "size": fmt.Sprint(len(data)),
		"md5Checksum": hexMD5(data), "sha256Checksum": hexSHA256(data)}
	if !mapsEqual(m, want) {
		e.t.Fatalf("files.get: %v\nwant %v", m, want)
	}
	r := e.driveGet(id, "?alt=media")
	if r.code != 200 || !bytes.Equal(r.body, data) {
		e.t.Fatalf("alt=media: %d, %d bytes, want %d bytes", r.code, len(r.body), len(data))
	}
	if ct := r.h.Get("Content-Type"); ct != mimeType {
		e.t.Fatalf("alt=media Content-Type %q, want %q", ct, mimeType)
	}
	if len(data) > 10 {
		r = e.do("GET", "/drive/v3/files/"+id+"?alt=media", auth("Range", "bytes=3-9"), nil)
		if r.code != http.StatusPartialContent || !bytes.Equal(r.body, data[3:10]) {
			e.t.Fatalf("alt=media with Range: %d %q", r.code, r.body)
		}
	}
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if fmt.Sprint(b[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestDriveUploadTypes creates a file by each upload type; the answer is
// Drive's default (kind, id, name, mimeType) and the file reads back
// byte-identical with hex MD5 and SHA-256.
func TestDriveUploadTypes(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, fileName, mimeType string
		size                     int
		up                       func(e *testEnv, data []byte) resp
		code                     int
	}{
		{"media", "Untitled", "application/pdf", 5000, func(e *testEnv, data []byte) resp {
			return e.do("POST", driveFiles+"?uploadType=media", auth("Content-Type", "application/pdf"), data)
		}, 200},
		{"media without a type", "Untitled", "application/octet-stream", 100, func(e *testEnv, data []byte) resp {
			return e.do("POST", driveFiles+"?uploadType=media", auth(), data)
		}, 200},
		{"multipart", "report.pdf", "application/pdf", 70 << 10, func(e *testEnv, data []byte) resp {
			return e.driveMultipart(`{"name":"report.pdf","description":"d"}`, "application/pdf", data, "")
		}, 200},
		{"multipart, the metadata's type wins", "clip", "video/mp4", 3000, func(e *testEnv, data []byte) resp {
			return e.driveMultipart(`{"name":"clip","mimeType":"video/mp4"}`, "application/octet-stream", data, "")
		}, 200},
		{"multipart empty", "empty.txt", "text/plain", 0, func(e *testEnv, data []byte) resp {
			return e.driveMultipart(`{"name":"empty.txt"}`, "text/plain", data, "")
		}, 200},
		{"resumable in one request", "one.bin", "application/zip", 3*kib256 + 17, func(e *testEnv, data []byte) resp {
			uri := e.initiate("POST", driveFiles, "application/zip", int64(len(data)), `{"name":"one.bin"}`)
			return e.do("PUT", uri, nil, data)
		}, 201},
		{"resumable in chunks, size unknown at first", "chunks.bin", "image/png", 2*kib256 + 5, func(e *testEnv, data []byte) resp {
			uri := e.initiate("POST", driveFiles, "image/png", -1, `{"name":"chunks.bin"}`)
			if r := e.chunk(uri, data[:kib256], 0, -1); r.code != 308 {
				return r
			}
			if r := e.chunk(uri, data[kib256:2*kib256], kib256, -1); r.code != 308 || r.h.Get("Range") != "bytes=0-524287" {
				return r
			}
			return e.chunk(uri, data[2*kib256:], 2*kib256, int64(len(data)))
		}, 201},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := randomData(uint64(100+i), c.size)
			r := c.up(e, data)
			if r.code != c.code {
				t.Fatalf("%d %s, want %d", r.code, r.body, c.code)
			}
			m := r.json(t)
			if got := keys(m); !slices.Equal(got, []string{"id", "kind", "mimeType", "name"}) {
				t.Fatalf("default answer has %v, want Drive's kind,id,name,mimeType: %v", got, m)
			}
			if m["kind"] != "drive#file" || m["name"] != c.fileName || m["mimeType"] != c.mimeType || !driveIDRE.MatchString(m["id"].(string)) {
				t.Fatalf("answer %v", m)
			}
			e.checkDriveFile(m["id"].(string), c.fileName, c.mimeType, data)
		})
	}
}

// TestDriveFieldsSelection asks for fields on the create's answer and on
// files.get: size is a string, checksums hex, links on the sandbox's origin.
func TestDriveFieldsSelection(t *testing.T) {
	e := newEnv(t)
	data := randomData(7, 1234)
	all := "id,name,size,mimeType,md5Checksum,sha256Checksum,webViewLink,webContentLink,kind"
	r := e.driveMultipart(`{"name":"a.tar.gz"}`, "application/gzip", data, "&fields="+url.QueryEscape(all))
	if r.code != 200 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(r.body, &raw)
	if string(raw["size"]) != `"1234"` {
		t.Fatalf("size %s, want the string \"1234\"", raw["size"])
	}
	m := r.json(t)
	id := m["id"].(string)
	want := map[string]any{"kind": "drive#file", "id": id, "name": "a.tar.gz", "size": "1234", "mimeType": "application/gzip",
		"md5Checksum": hexMD5(data), "sha256Checksum": hexSHA256(data),
		"webViewLink": e.srv.URL + "/file/d/" + id + "/view?usp=drivesdk", "webContentLink": e.srv.URL + "/uc?id=" + id + "&export=download"}
	if !mapsEqual(m, want) {
		t.Fatalf("create with fields:\n got %v\nwant %v", m, want)
	}
	cases := []struct {
		fields string
		keys   []string // "" code: 400
	}{
		{"id", []string{"id"}},
		{"id, size ,name", []string{"id", "name", "size"}},
		{"owners(emailAddress),permissionIds", []string{"owners", "permissionIds"}},
		{"owners/emailAddress", []string{"owners"}},
		{"fullFileExtension,fileExtension,originalFilename", []string{"fileExtension", "fullFileExtension", "originalFilename"}},
		{"description,sha1Checksum", nil}, // valid, never filled here: an empty object
		{"*", nil},
		{"nosuchfield", nil},
		{"id,(name)", nil},
		{"owners(emailAddress", nil},
		{"id)", nil},
	}
	for _, c := range cases {
		r := e.driveGet(id, "?fields="+url.QueryEscape(c.fields))
		switch c.fields {
		case "nosuchfield", "id,(name)", "owners(emailAddress", "id)":
			if r.code != 400 || r.driveReason(t) != "invalidParameter" || !strings.Contains(r.errMessage(t), "Invalid field selection") {
				t.Errorf("fields=%s: %d %s, want 400 invalidParameter", c.fields, r.code, r.body)
			}
			continue
		}
		got := r.json(t)
		switch {
		case c.fields == "*":
			if len(got) < 20 || got["sha256Checksum"] != hexSHA256(data) {
				t.Errorf("fields=*: %v", keys(got))
			}
		case !slices.Equal(keys(got), c.keys) && !(c.keys == nil && len(got) == 0):
			t.Errorf("fields=%s: %v, want %v", c.fields, keys(got), c.keys)
		}
		if c.fields == "owners(emailAddress)" {
			o := got["owners"].([]any)[0].(map[string]any)
			if !mapsEqual(o, map[string]any{"emailAddress": DefaultAccount}) {
				t.Errorf("owners(emailAddress): %v", o)
			}
		}
		if c.fields == "fullFileExtension,fileExtension,originalFilename" &&
			!mapsEqual(got, map[string]any{"fullFileExtension": "tar.gz", "fileExtension": "gz", "originalFilename": "a.tar.gz"}) {
			t.Errorf("extensions: %v", got)
		}
	}
	// A bad selection is refused before any byte is kept.
	if r := e.driveMultipart(`{"name":"b"}`, "text/plain", []byte("x"), "&fields=nope"); r.code != 400 {
		t.Fatalf("upload with fields=nope: %d %s", r.code, r.body)
	}
	if st := e.sb.Stats(); st.Completions != 1 {
		t.Fatalf("%d completions, want 1", st.Completions)
	}
}

// TestDriveResumableAcrossFaults uploads through a reset, a partial
// store, a 5xx and a restart of the sandbox: the SHA-256 is carried with
// the session like the other sums, so the file's sums stay right.
func TestDriveResumableAcrossFaults(t *testing.T) {
	e := newEnv(t)
	data := randomData(21, 6*kib256+999)
	total := int64(len(data))
	uri := e.initiate("POST", driveFiles+"?fields=id,size,sha256Checksum,md5Checksum", "application/octet-stream", total, `{"name":"faults.bin"}`)

	e.sb.SetFaults("seed=5,reset=1")
	req, _ := http.NewRequest("PUT", uri, bytes.NewReader(data))
	if r, err := e.srv.Client().Do(req); err == nil {
		r.Body.Close()
		t.Fatalf("reset=1 answered %d", r.StatusCode)
	}
	e.sb.SetFaults("seed=9,partial=1")
	stored := storedFrom(t, e.query(uri, total))
	r := e.chunk(uri, data[stored:], stored, total)
	stored2 := storedFrom(t, r)
	if r.code != 308 || stored2 >= total {
		t.Fatalf("partial=1: %d, %d of %d stored", r.code, stored2, total)
	}
	e.sb.SetFaults("err5xx=1")
	// The 5xx comes before the body is read: the client may see the
	// connection close while it still writes, instead of the answer.
	req, _ = http.NewRequest("PUT", uri, bytes.NewReader(data[stored2:]))
	req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", stored2, total-1, total))
	if r, err := e.srv.Client().Do(req); err == nil {
		r.Body.Close()
		if r.StatusCode < 500 {
			t.Fatalf("err5xx=1: %d", r.StatusCode)
		}
	}
	e.sb.SetFaults("")
	e.restart()
	stored = storedFrom(t, e.query(uri, total))
	if stored != stored2 {
		t.Fatalf("after restart %d stored, before %d", stored, stored2)
	}
	r = e.chunk(uri, data[stored:], stored, total)
	if r.code != 201 {
		t.Fatalf("last chunk: %d %s", r.code, r.body)
	}
	m := r.json(t)
	if m["sha256Checksum"] != hexSHA256(data) || m["md5Checksum"] != hexMD5(data) || m["size"] != fmt.Sprint(total) {
		t.Fatalf("sums after faults: %v", m)
	}
	if q := e.query(uri, total); q.code != 201 || !mapsEqual(q.json(t), m) {
		t.Fatalf("status query after completion: %d %s\nfirst answer: %s", q.code, q.body, r.body)
	}
	e.checkDriveFile(m["id"].(string), "faults.bin", "application/octet-stream", data)
}

func (e *testEnv) generateIDs(query string) []string {
	e.t.Helper()
	r := e.do("GET", "/drive/v3/files/generateIds"+query, auth(), nil)
	if r.code != 200 {
		e.t.Fatalf("generateIds%s: %d %s", query, r.code, r.body)
	}
	var g struct {
		Kind, Space string
		IDs         []string
	}
	json.Unmarshal(r.body, &g)
	if g.Kind != "drive#generatedIds" || g.Space != "drive" {
		e.t.Fatalf("generateIds: %s", r.body)
	}
	return g.IDs
}

// TestDriveGeneratedIDs: ids are Drive-shaped and unique; a create with
// one succeeds once, then 409 (at a session's start already); an id the
// sandbox did not hand out is refused.
func TestDriveGeneratedIDs(t *testing.T) {
	e := newEnv(t)
	if ids := e.generateIDs(""); len(ids) != 10 {
		t.Fatalf("default count: %d ids", len(ids))
	}
	ids := e.generateIDs("?count=1000")
	seen := map[string]bool{}
	for _, id := range ids {
		if !driveIDRE.MatchString(id) || seen[id] {
			t.Fatalf("id %q: not Drive-shaped or repeated", id)
		}
		seen[id] = true
	}
	if len(ids) != 1000 {
		t.Fatalf("count=1000: %d ids", len(ids))
	}
	for _, q := range []string{"?count=0", "?count=1001", "?count=x", "?space=appDataFolder", "?type=shortcuts"} {
		if r := e.do("GET", "/drive/v3/files/generateIds"+q, auth(), nil); r.code != 400 {
			t.Errorf("generateIds%s: %d, want 400", q, r.code)
		}
	}

	meta := func(id string) string { return `{"id":"` + id + `","name":"n"}` }
	id := ids[0]
	if r := e.driveMultipart(meta(id), "text/plain", []byte("first"), ""); r.code != 200 || r.json(t)["id"] != id {
		t.Fatalf("create with a generated id: %d %s", r.code, r.body)
	}
	dup := []struct {
		name string
		do   func() resp
	}{
		{"multipart", func() resp { return e.driveMultipart(meta(id), "text/plain", []byte("second"), "") }},
		{"resumable start", func() resp {
			return e.do("POST", driveFiles+"?uploadType=resumable", auth("Content-Type", "application/json", "X-Upload-Content-Type", "text/plain"), []byte(meta(id)))
		}},
		{"metadata only", func() resp { return e.driveJSON("POST", "/drive/v3/files", meta(id)) }},
	}
	for _, d := range dup {
		r := d.do()
		if r.code != http.StatusConflict || r.driveReason(t) != "duplicate" || !strings.Contains(r.errMessage(t), "already exists with the provided ID") {
			t.Errorf("%s with a used id: %d %s, want 409 duplicate", d.name, r.code, r.body)
		}
	}
	// A client that writes its whole body before it reads (as the official
	// Go client does) must see the 409, not a reset: the refused body is
	// read to its end first.
	for range 3 {
		if r := e.driveMultipart(meta(id), "application/octet-stream", randomData(1, 4<<20), ""); r.code != http.StatusConflict {
			t.Fatalf("a 4 MiB retry with a used id: %d %s", r.code, r.body)
		}
	}
	if got := e.driveGet(id, "?alt=media"); string(got.body) != "first" {
		t.Fatalf("the first file changed: %q", got.body)
	}

	// Two sessions with one id: the first to finish makes the file, the
	// other's session answers 409 from then on.
	id2 := ids[1]
	a := e.initiate("POST", driveFiles, "text/plain", 1, meta(id2))
	b := e.initiate("POST", driveFiles, "text/plain", 1, meta(id2))
	if r := e.chunk(a, []byte("a"), 0, 1); r.code != 201 {
		t.Fatalf("first session: %d %s", r.code, r.body)
	}
	if r := e.chunk(b, []byte("b"), 0, 1); r.code != 409 || r.driveReason(t) != "duplicate" {
		t.Fatalf("second session: %d %s", r.code, r.body)
	}
	if r := e.query(b, 1); r.code != 409 {
		t.Fatalf("second session asked again: %d %s", r.code, r.body)
	}

	for _, bad := range []string{"1madeUpByTheClientaaaaaaaaaaaaaaaa", "x"} {
		r := e.driveMultipart(meta(bad), "text/plain", []byte("x"), "")
		if r.code != 400 || r.driveReason(t) != "fileIdNotUsable" {
			t.Errorf("made-up id %q: %d %s, want 400 fileIdNotUsable", bad, r.code, r.body)
		}
	}
	// A spent id stays spent after its file is deleted.
	if r := e.do("DELETE", "/drive/v3/files/"+id, auth(), nil); r.code != 204 {
		t.Fatalf("delete: %d %s", r.code, r.body)
	}
	if r := e.driveMultipart(meta(id), "text/plain", []byte("x"), ""); r.code != 400 {
		t.Fatalf("id of a deleted file: %d %s", r.code, r.body)
	}
}

// TestDriveGeneratedIDsExpire: an id unused for 30 days is forgotten.
func TestDriveGeneratedIDsExpire(t *testing.T) {
	e, clk := newOAuthEnv(t)
	id := e.generateIDs("?count=1")[0]
	clk.Advance(generatedIDTTL + time.Hour)
	e.generateIDs("?count=1") // prunes
	if r := e.driveMultipart(`{"id":"`+id+`"}`, "text/plain", []byte("x"), ""); r.code != 400 {
		t.Fatalf("an id 30 days old: %d %s", r.code, r.body)
	}
}

func TestDrivePermissions(t *testing.T) {
	e, clk := newOAuthEnv(t)
	f := e.driveMedia([]byte("share me"), "text/plain", "")
	id := f["id"].(string)
	perms := "/drive/v3/files/" + id + "/permissions"
	now := clk.Now()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	cases := []struct {
		name, query, body string
		code              int
		reason            string
		want              map[string]any // fields of the answer, with fields=*
	}{
		{"user reader", "", `{"type":"user","role":"reader","emailAddress":"zoe@example.com"}`, 200, "",
			map[string]any{"type": "user", "role": "reader", "emailAddress": "zoe@example.com"}},
		{"anyone with the link", "", `{"type":"anyone","role":"reader"}`, 200, "",
			map[string]any{"id": "anyoneWithLink", "type": "anyone", "role": "reader", "allowFileDiscovery": false}},
		{"user writer expiring in a month", "?sendNotificationEmail=false", `{"type":"user","role":"writer","emailAddress":"max@example.com","expirationTime":"` + at(30*24*time.Hour) + `"}`, 200, "",
			map[string]any{"role": "writer", "expirationTime": driveTime(now.Add(30 * 24 * time.Hour))}},
		{"group commenter", "", `{"type":"group","role":"commenter","emailAddress":"team@example.com"}`, 200, "", map[string]any{"type": "group"}},
		{"anyone, no mail (false is accepted)", "?sendNotificationEmail=false", `{"type":"anyone","role":"reader"}`, 200, "", nil},
		{"expiry in the past", "", `{"type":"user","role":"reader","emailAddress":"a@example.com","expirationTime":"` + at(-time.Minute) + `"}`, 400, "expirationDatesMustBeInTheFuture", nil},
		{"expiry more than a year ahead", "", `{"type":"user","role":"reader","emailAddress":"a@example.com","expirationTime":"` + at(366*24*time.Hour) + `"}`, 400, "invalid", nil},
		{"expiry on anyone", "", `{"type":"anyone","role":"reader","expirationTime":"` + at(time.Hour) + `"}`, 400, "cannotSetExpirationOnAnyoneOrDomain", nil},
		{"expiry not a date", "", `{"type":"user","role":"reader","emailAddress":"a@example.com","expirationTime":"tomorrow"}`, 400, "invalid", nil},
		{"user without an address", "", `{"type":"user","role":"reader"}`, 400, "required", nil},
		{"user with a bad address", "", `{"type":"user","role":"reader","emailAddress":"not an address"}`, 400, "invalid", nil},
		{"no type", "", `{"role":"reader"}`, 400, "required", nil},
		{"unknown type", "", `{"type":"everyone","role":"reader"}`, 400, "invalid", nil},
		{"owner role", "", `{"type":"user","role":"owner","emailAddress":"a@example.com"}`, 400, "invalid", nil},
		{"notification on anyone", "?sendNotificationEmail=true", `{"type":"anyone","role":"reader"}`, 400, "invalid", nil},
		{"not JSON", "", `{"type":`, 400, "parseError", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.query
			if q == "" {
				q = "?fields=*"
			} else {
				q += "&fields=*"
			}
			r := e.driveJSON("POST", perms+q, c.body)
			if r.code != c.code {
				t.Fatalf("%d %s, want %d", r.code, r.body, c.code)
			}
			if c.code != 200 {
				if got := r.driveReason(t); got != c.reason {
					t.Fatalf("reason %q, want %q: %s", got, c.reason, r.body)
				}
				return
			}
			m := r.json(t)
			if m["kind"] != "drive#permission" || m["id"] == "" {
				t.Fatalf("answer %v", m)
			}
			for k, v := range c.want {
				if fmt.Sprint(m[k]) != fmt.Sprint(v) {
					t.Fatalf("%s = %v, want %v (%v)", k, m[k], v, m)
				}
			}
		})
	}
	// Default answer: kind, id, type, role.
	r := e.driveJSON("POST", perms, `{"type":"user","role":"writer","emailAddress":"zoe@example.com"}`)
	if got := keys(r.json(t)); !slices.Equal(got, []string{"id", "kind", "role", "type"}) {
		t.Fatalf("default permission answer: %v", got)
	}
	list := func() map[string]string {
		t.Helper()
		r := e.do("GET", perms+"?fields=permissions(id,type,role,emailAddress)", auth(), nil)
		if r.code != 200 {
			t.Fatalf("permissions.list: %d %s", r.code, r.body)
		}
		var l struct{ Permissions []map[string]string }
		json.Unmarshal(r.body, &l)
		out := map[string]string{}
		for _, p := range l.Permissions {
			out[p["type"]+":"+p["emailAddress"]] = p["role"]
		}
		return out
	}
	want := map[string]string{"user:" + DefaultAccount: "owner", "user:zoe@example.com": "writer", "anyone:": "reader",
		"user:max@example.com": "writer", "group:team@example.com": "commenter"}
	if got := list(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("permissions.list:\n got %v\nwant %v (zoe's second grant replaces her first)", got, want)
	}
	if got := e.driveGet(id, "?fields=shared").json(t); got["shared"] != true {
		t.Fatalf("shared: %v", got)
	}
	// Max's grant expires; it is gone from every answer.
	clk.Advance(31 * 24 * time.Hour)
	delete(want, "user:max@example.com")
	if got := list(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after expiry:\n got %v\nwant %v", got, want)
	}
	// permissions.get and delete.
	if r := e.do("GET", perms+"/anyoneWithLink", auth(), nil); r.code != 200 || r.json(t)["type"] != "anyone" {
		t.Fatalf("permissions.get: %d %s", r.code, r.body)
	}
	if r := e.do("DELETE", perms+"/anyoneWithLink", auth(), nil); r.code != 204 {
		t.Fatalf("permissions.delete: %d %s", r.code, r.body)
	}
	if r := e.do("GET", perms+"/anyoneWithLink", auth(), nil); r.code != 404 {
		t.Fatalf("deleted permission: %d", r.code)
	}
	if r := e.do("DELETE", perms+"/"+grantID("user", DefaultAccount), auth(), nil); r.code != 403 {
		t.Fatalf("deleting the owner: %d", r.code)
	}
	// Unknown files.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/drive/v3/files/nope/permissions", `{"type":"anyone","role":"reader"}`},
		{"GET", "/drive/v3/files/nope/permissions", ""},
		{"GET", "/drive/v3/files/nope", ""},
		{"GET", "/drive/v3/files/nope?alt=media", ""},
		{"DELETE", "/drive/v3/files/nope", ""},
	} {
		r := e.driveJSON(c.method, c.path, c.body)
		if r.code != 404 || r.driveReason(t) != "notFound" || !strings.Contains(r.errMessage(t), "File not found: nope") {
			t.Errorf("%s %s: %d %s, want 404 notFound", c.method, c.path, r.code, r.body)
		}
	}
	// Permissions are stored: a restart keeps them.
	e.restart()
	if got := list(); fmt.Sprint(got) != fmt.Sprint(map[string]string{"user:" + DefaultAccount: "owner", "user:zoe@example.com": "writer", "group:team@example.com": "commenter"}) {
		t.Fatalf("after restart: %v", got)
	}
}

func (e *testEnv) setQuota(body string) map[string]any {
	e.t.Helper()
	r := e.do("PUT", "/sandbox/v1/drive", auth("Content-Type", "application/json"), []byte(body))
	if r.code != 200 {
		e.t.Fatalf("PUT /sandbox/v1/drive %s: %d %s", body, r.code, r.body)
	}
	return r.json(e.t)
}

func (e *testEnv) about() map[string]any {
	e.t.Helper()
	r := e.do("GET", "/drive/v3/about?fields=storageQuota,maxUploadSize", auth(), nil)
	if r.code != 200 {
		e.t.Fatalf("about: %d %s", r.code, r.body)
	}
	return r.json(e.t)
}

func TestDriveQuota(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.DriveQuota = 4 * kib256 })
	a := e.about()
	want := `map[maxUploadSize:5497558138880 storageQuota:map[limit:1048576 usage:0 usageInDrive:0 usageInDriveTrash:0]]`
	if fmt.Sprint(a) != want {
		t.Fatalf("about: %v\nwant %s", a, want)
	}
	if r := e.do("GET", "/drive/v3/about", auth(), nil); r.code != 400 || r.driveReason(t) != "required" {
		t.Fatalf("about without fields: %d %s", r.code, r.body)
	}
	if r := e.do("GET", "/drive/v3/about?fields=storageQuota/limit,user(emailAddress)", auth(), nil); fmt.Sprint(r.json(t)) != "map[storageQuota:map[limit:1048576] user:map[emailAddress:"+DefaultAccount+"]]" {
		t.Fatalf("about with nested fields: %s", r.body)
	}
	full := func(r resp) bool {
		return r.code == 403 && r.driveReason(t) == "storageQuotaExceeded"
	}
	data := randomData(3, 3*kib256)
	f := e.driveMedia(data, "application/octet-stream", "")
	if got := e.about()["storageQuota"].(map[string]any); got["usage"] != fmt.Sprint(3*kib256) || got["usageInDrive"] != fmt.Sprint(3*kib256) {
		t.Fatalf("usage after 768 KiB: %v", got)
	}
	// kib256 bytes are left.
	start := func(size int64) resp {
		h := auth("X-Upload-Content-Type", "application/octet-stream")
		if size >= 0 {
			h["X-Upload-Content-Length"] = fmt.Sprint(size)
		}
		return e.do("POST", driveFiles+"?uploadType=resumable", h, nil)
	}
	if r := start(kib256 + 1); !full(r) {
		t.Fatalf("a declared size past the quota: %d %s", r.code, r.body)
	}
	if r := e.doExpect("POST", driveFiles+"?uploadType=media", auth(), randomData(4, kib256+1)); !full(r) {
		t.Fatalf("media upload past the quota: %d %s", r.code, r.body)
	}
	ct, body := driveMultipartBody(`{"name":"big"}`, "text/plain", randomData(4, kib256+1))
	if r := e.doExpect("POST", driveFiles+"?uploadType=multipart", auth("Content-Type", ct), body); !full(r) {
		t.Fatalf("multipart upload past the quota: %d %s", r.code, r.body)
	}
	// Size not declared: the bytes pass the room left mid-way.
	r := start(-1)
	uri := r.h.Get("Location")
	if r.code != 200 {
		t.Fatalf("resumable start without a size: %d %s", r.code, r.body)
	}
	big := randomData(5, 2*kib256)
	if r := e.chunk(uri, big[:kib256], 0, -1); r.code != 308 {
		t.Fatalf("first chunk within the quota: %d %s", r.code, r.body)
	}
	if r := e.doExpect("PUT", uri, map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/*", kib256, 2*kib256-1)}, big[kib256:]); !full(r) {
		t.Fatalf("chunk past the quota: %d %s", r.code, r.body)
	}
	if r := e.chunk(uri, randomData(8, 8*kib256), kib256, -1); !full(r) {
		t.Fatalf("a 2 MiB chunk past the quota, sent whole before reading: %d %s", r.code, r.body)
	}
	if r := e.query(uri, -1); r.code != 308 || r.h.Get("Range") != "bytes=0-262143" {
		t.Fatalf("the refused chunk changed the session: %d %q", r.code, r.h.Get("Range"))
	}
	// Exactly the room left fits.
	if r := e.driveMultipart(`{"name":"fits"}`, "text/plain", randomData(6, kib256), ""); r.code != 200 {
		t.Fatalf("an upload of exactly the room left: %d %s", r.code, r.body)
	}
	// A session that started while there was room, finished when there is none.
	e.setQuota(`{"limit":"2000000"}`)
	late := e.initiate("POST", driveFiles, "text/plain", 100, "")
	e.setQuota(`{"otherUsage":2000000}`)
	if r := e.doExpect("PUT", late, map[string]string{"Content-Range": "bytes 0-99/100"}, randomData(7, 100)); !full(r) {
		t.Fatalf("finishing with no room: %d %s", r.code, r.body)
	}
	if got := e.about()["storageQuota"].(map[string]any); got["usage"] != fmt.Sprint(2000000+4*kib256) {
		t.Fatalf("usage counts otherUsage: %v", got)
	}
	// Deleting frees the room; no limit means none is reported.
	if r := e.do("DELETE", "/drive/v3/files/"+f["id"].(string), auth(), nil); r.code != 204 {
		t.Fatalf("delete: %d", r.code)
	}
	q := e.setQuota(`{"limit":-1,"otherUsage":0}`)
	if q["limit"] != "-1" || q["usageInDrive"] != fmt.Sprint(kib256) {
		t.Fatalf("control answer: %v", q)
	}
	if got := e.about()["storageQuota"].(map[string]any); got["limit"] != nil || got["usageInDrive"] != fmt.Sprint(kib256) {
		t.Fatalf("unlimited: %v", got)
	}
	if r := start(limitDrive + 1); r.code != http.StatusRequestEntityTooLarge {
		t.Fatalf("past 5,120 GiB: %d %s", r.code, r.body)
	}
	for _, bad := range []string{`{"limit":"x"}`, `{"nope":1}`, `{"otherUsage":-1}`, `[]`} {
		if r := e.do("PUT", "/sandbox/v1/drive", auth(), []byte(bad)); r.code != 400 {
			t.Errorf("PUT /sandbox/v1/drive %s: %d", bad, r.code)
		}
	}
}

func TestDriveFoldersListAndDelete(t *testing.T) {
	e := newEnv(t)
	folder := e.driveJSON("POST", "/drive/v3/files?fields=id,mimeType,parents", `{"name":"Carrier","mimeType":"application/vnd.google-apps.folder"}`)
	if folder.code != 200 {
		t.Fatalf("folder: %d %s", folder.code, folder.body)
	}
	fid := folder.json(t)["id"].(string)
	root := e.driveGet("root", "?fields=id,name").json(t)
	if root["name"] != "My Drive" || fmt.Sprint(folder.json(t)["parents"]) != "["+root["id"].(string)+"]" {
		t.Fatalf("root %v, folder %s", root, folder.body)
	}
	var inFolder []string
	for i, name := range []string{"b.txt", "a.txt", "c.bin"} {
		ct := "text/plain"
		if strings.HasSuffix(name, ".bin") {
			ct = "application/octet-stream"
		}
		r := e.driveMultipart(`{"name":"`+name+`","parents":["`+fid+`"]}`, ct, randomData(uint64(i), 10+i), "")
		if r.code != 200 {
			t.Fatalf("upload into the folder: %d %s", r.code, r.body)
		}
		inFolder = append(inFolder, r.json(t)["id"].(string))
	}
	other := e.driveMedia([]byte("elsewhere"), "text/plain", "")["id"].(string)
	for _, c := range []struct {
		meta   string
		code   int
		reason string
	}{
		{`{"parents":["nope"]}`, 404, "notFound"},
		{`{"parents":["` + fid + `","root"]}`, 403, "cannotAddParent"},
		{`{"parents":["` + other + `"]}`, 400, "badRequest"},
		{`{"size":"5"}`, 403, "fieldNotWritable"},
		{`{"name":5}`, 400, "parseError"},
		{`{"mimeType":"application/vnd.google-apps.folder"}`, 400, "badRequest"},
	} {
		if r := e.driveMultipart(c.meta, "text/plain", []byte("x"), ""); r.code != c.code || r.driveReason(t) != c.reason {
			t.Errorf("metadata %s: %d %s, want %d %s", c.meta, r.code, r.body, c.code, c.reason)
		}
	}
	names := func(query string) []string {
		t.Helper()
		r := e.do("GET", "/drive/v3/files?"+query, auth(), nil)
		if r.code != 200 {
			t.Fatalf("files.list %s: %d %s", query, r.code, r.body)
		}
		var l struct {
			Kind          string
			NextPageToken string
			Files         []map[string]any
		}
		json.Unmarshal(r.body, &l)
		var out []string
		for _, f := range l.Files {
			out = append(out, f["name"].(string))
		}
		if l.NextPageToken != "" {
			out = append(out, "next="+l.NextPageToken)
		}
		return out
	}
	q := func(s string) string { return "q=" + url.QueryEscape(s) }
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{"Untitled", "c.bin", "a.txt", "b.txt", "Carrier"}}, // newest first
		{"orderBy=name", []string{"Carrier", "Untitled", "a.txt", "b.txt", "c.bin"}},
		{"orderBy=" + url.QueryEscape("folder,name desc"), []string{"Carrier", "c.bin", "b.txt", "a.txt", "Untitled"}},
		{q("'"+fid+"' in parents and trashed = false") + "&orderBy=name", []string{"a.txt", "b.txt", "c.bin"}},
		{q("name = 'a.txt'"), []string{"a.txt"}},
		{q(`name contains 'TXT' and mimeType != 'application/octet-stream'`) + "&orderBy=name", []string{"a.txt", "b.txt"}},
		{q("mimeType = 'application/vnd.google-apps.folder'"), []string{"Carrier"}},
		{q("trashed = true"), nil},
		{q(`name = 'it\'s'`), nil},
		{"pageSize=2&orderBy=name", []string{"Carrier", "Untitled", "next=p2"}},
		{"pageSize=2&orderBy=name&pageToken=p2", []string{"a.txt", "b.txt", "next=p4"}},
		{"pageSize=2&orderBy=name&pageToken=p4", []string{"c.bin"}},
	}
	for _, c := range cases {
		if got := names(c.query); !slices.Equal(got, c.want) {
			t.Errorf("files.list %s: %q, want %q", c.query, got, c.want)
		}
	}
	for _, bad := range []string{q("name = 'a' or name = 'b'"), q("not trashed"), q("modifiedTime > '2020-01-01'"), q("name = 'open"),
		q("fullText contains 'x'"), "orderBy=viewedByMeTime", "pageSize=0", "pageSize=1001", "pageToken=zz", "fields=files(nope)", "corpora=allDrives"} {
		r := e.do("GET", "/drive/v3/files?"+bad, auth(), nil)
		if r.code != 400 {
			t.Errorf("files.list %s: %d, want 400", bad, r.code)
		} else if strings.HasPrefix(bad, "q=") && !strings.Contains(r.errMessage(t), "understands terms") {
			t.Errorf("files.list %s: %s", bad, r.body)
		}
	}
	if got := keys(e.do("GET", "/drive/v3/files?pageSize=1", auth(), nil).json(t)); !slices.Equal(got, []string{"files", "incompleteSearch", "kind", "nextPageToken"}) {
		t.Errorf("default list answer: %v", got)
	}
	// Deleting the folder deletes what it holds, bytes and all.
	blobs, _ := os.ReadDir(e.sb.blobPath(""))
	if r := e.do("DELETE", "/drive/v3/files/"+fid, auth(), nil); r.code != 204 || len(r.body) != 0 {
		t.Fatalf("delete folder: %d %s", r.code, r.body)
	}
	for _, id := range append(inFolder, fid) {
		if r := e.driveGet(id, ""); r.code != 404 {
			t.Errorf("%s after its folder was deleted: %d", id, r.code)
		}
	}
	if after, _ := os.ReadDir(e.sb.blobPath("")); len(after) != len(blobs)-3 {
		t.Errorf("%d blobs before, %d after deleting three files", len(blobs), len(after))
	}
	if got := names(""); !slices.Equal(got, []string{"Untitled"}) {
		t.Errorf("after delete: %q", got)
	}
	if r := e.do("DELETE", "/drive/v3/files/root", auth(), nil); r.code != 403 {
		t.Errorf("delete My Drive: %d", r.code)
	}
	if r := e.driveGet("root", "?alt=media"); r.code != 403 || r.driveReason(t) != "fileNotDownloadable" {
		t.Errorf("download a folder: %d %s", r.code, r.body)
	}
	// A metadata-only file is empty, with the sums of nothing.
	empty := e.driveJSON("POST", "/drive/v3/files?fields=id,size,md5Checksum", `{"name":"note.txt","mimeType":"text/plain"}`).json(t)
	if empty["size"] != "0" || empty["md5Checksum"] != hexMD5(nil) {
		t.Errorf("metadata-only file: %v", empty)
	}
	e.checkDriveFile(empty["id"].(string), "note.txt", "text/plain", nil)
}

// TestDriveLinks: webViewLink and webContentLink open in a browser (no
// token) once the file is shared with anyone; before, only with a token.
func TestDriveLinks(t *testing.T) {
	e := newEnv(t)
	data := []byte("<script>alert(1)</script> bytes of a file")
	f := e.driveMultipart(`{"name":"report <1>.html"}`, "text/html", data, "&fields=id,webViewLink,webContentLink").json(t)
	id := f["id"].(string)
	view, content := f["webViewLink"].(string), f["webContentLink"].(string)
	browser := func(link string, hdr map[string]string) resp { return e.do("GET", link, hdr, nil) }
	if r := browser(view, nil); r.code != 403 || !strings.Contains(string(r.body), "You need access") {
		t.Fatalf("view link before sharing: %d %s", r.code, r.body)
	}
	if r := browser(content, nil); r.code != 403 {
		t.Fatalf("content link before sharing: %d", r.code)
	}
	if r := browser(content, auth()); r.code != 200 || !bytes.Equal(r.body, data) {
		t.Fatalf("content link with the token: %d %q", r.code, r.body)
	}
	if r := e.driveJSON("POST", "/drive/v3/files/"+id+"/permissions", `{"type":"anyone","role":"reader"}`); r.code != 200 {
		t.Fatalf("share: %d %s", r.code, r.body)
	}
	r := browser(view, nil)
	if r.code != 200 || !strings.Contains(string(r.body), "report &lt;1&gt;.html") || !strings.Contains(string(r.body), `href="/uc?id=`+id+`&amp;export=download"`) {
		t.Fatalf("view link once shared: %d %s", r.code, r.body)
	}
	r = browser(content, nil)
	if r.code != 200 || !bytes.Equal(r.body, data) {
		t.Fatalf("content link once shared: %d %q", r.code, r.body)
	}
	if cd := r.h.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "report") {
		t.Fatalf("Content-Disposition %q", cd)
	}
	if r.h.Get("X-Content-Type-Options") != "nosniff" || r.h.Get("Content-Security-Policy") != "sandbox" {
		t.Fatalf("uploaded HTML served without nosniff and a sandbox CSP: %v", r.h)
	}
	if r := browser(content, map[string]string{"Range": "bytes=0-7"}); r.code != 206 || string(r.body) != "<script>" {
		t.Fatalf("content link with Range: %d %q", r.code, r.body)
	}
	for _, p := range []string{"/file/d/nope/view", "/uc?id=nope&export=download", "/uc", "/file/d/" + id + "/other"} {
		if r := browser(p, nil); r.code != 404 {
			t.Errorf("%s: %d, want 404", p, r.code)
		}
	}
	if r := e.do("POST", view, nil, nil); r.code != 401 {
		t.Errorf("POST to a view link: %d", r.code)
	}
}

// TestDriveMetadataBodiesAreBounded: the JSON bodies of Drive's metadata
// routes are read to 1 MiB at most.
func TestDriveMetadataBodiesAreBounded(t *testing.T) {
	e := newEnv(t)
	big := `{"name":"` + strings.Repeat("x", maxMetadata) + `"}`
	for _, p := range []string{"/drive/v3/files", "/drive/v3/files/root/permissions"} {
		if r := e.driveJSON("POST", p, big); r.code != 400 || !strings.Contains(r.errMessage(t), "larger than") {
			t.Errorf("%s with a body over 1 MiB: %d %.200s", p, r.code, r.body)
		}
	}
}

// TestDriveScopesOnDeletes: the deleting routes, each on a fresh file
// (TestScopesOnEveryEndpoint covers the others).
func TestDriveScopesOnDeletes(t *testing.T) {
	e, _ := newOAuthEnv(t, func(o *Options) { o.AutoConsent = true })
	for _, c := range []struct {
		scope string
		open  bool
	}{
		{ScopeDriveFile, true}, {ScopeDrive, true}, {ScopeDriveReadonly, false},
		{"https://www.googleapis.com/auth/devstorage.read_write", false}, {scopeSend, false},
	} {
		tok := e.signIn(c.scope)["access_token"].(string)
		for _, what := range []string{"file", "permission"} {
			id := e.driveMedia([]byte("x"), "text/plain", "")["id"].(string)
			path := "/drive/v3/files/" + id
			if what == "permission" {
				e.driveJSON("POST", path+"/permissions", `{"type":"anyone","role":"reader"}`)
				path += "/permissions/anyoneWithLink"
			}
			r := e.do("DELETE", path, bearer(tok), nil)
			switch {
			case c.open && r.code != 204:
				t.Errorf("delete %s with %s: %d %s", what, c.scope, r.code, r.body)
			case !c.open && (r.code != 403 || !strings.Contains(r.errMessage(t), "insufficient authentication scopes")):
				t.Errorf("delete %s with %s: %d %s, want 403", what, c.scope, r.code, r.body)
			}
		}
	}
	// A session start is refused with the wrong scope before anything is kept.
	tok := e.signIn(ScopeDriveReadonly)["access_token"].(string)
	h := bearer(tok)
	h["X-Upload-Content-Type"] = "text/plain"
	if r := e.do("POST", driveFiles+"?uploadType=resumable", h, nil); r.code != 403 {
		t.Fatalf("resumable start with drive.readonly: %d %s", r.code, r.body)
	}
	if st := e.sb.Stats(); st.SessionsCreated != 0 {
		t.Fatalf("%d sessions created", st.SessionsCreated)
	}
}

// TestDriveQuotaAtFiling: bytes checked against the room while they came
// may no longer fit when the file is filed (another upload finished in
// between); the file is then refused, not made.
func TestDriveQuotaAtFiling(t *testing.T) {
	e := newEnv(t)
	m := methodByName["drive.files.create"]
	data := randomData(9, 1000)
	file := func() *media {
		f, err := os.CreateTemp(e.dir+"/uploads", "simple-*.part")
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data)
		f.Close()
		h := newHashes()
		h.withSHA256(true)
		h.Write(data)
		return h.media(f.Name(), int64(len(data)))
	}
	e.sb.SetDriveQuota(DriveQuota{Limit: 1500})
	u := &upload{Method: m.Name, Query: url.Values{}, Base: e.srv.URL, MediaType: "text/plain"}
	if _, ae := e.sb.finish(m, u, file(), nil); ae != nil {
		t.Fatalf("first file: %v", ae)
	}
	if _, ae := e.sb.finish(m, u, file(), nil); ae == nil || ae.Code != 403 || ae.Reason != "storageQuotaExceeded" {
		t.Fatalf("second file past the quota: %v", ae)
	}
	var l struct{ Files []any }
	json.Unmarshal(e.do("GET", "/drive/v3/files", auth(), nil).body, &l)
	if len(l.Files) != 1 {
		t.Fatalf("%d files, want 1", len(l.Files))
	}
}

// FuzzDriveSelections: fields= and q are parsed from what any client
// sends; neither parser may panic, and a selection that parses applies.
func FuzzDriveSelections(f *testing.F) {
	for _, s := range []string{"id,name", "files(id,owners(emailAddress)),nextPageToken", "storageQuota/limit", "*", "a((b)", ")",
		"name = 'x' and trashed = false", `'1a' in parents`, `name contains 'it\'s'`, "'", "!=", "and and"} {
		f.Add(s)
	}
	res := map[string]any{"id": "1", "files": []map[string]any{{"id": "2", "owners": []map[string]any{{"emailAddress": "a"}}}}}
	f.Fuzz(func(t *testing.T, s string) {
		if sel, err := parseFields(s); err == nil {
			sel.check(driveFileListSchema, "")
			sel.apply(res)
		}
		parseDriveQuery(s, func(id string) string { return id })
	})
}
