package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Cloud Storage objects.insert: the general upload target with no size
// limit; benchmarks and the transfer engine's tests use it.

type objectRec struct {
	Bucket      string            `json:"bucket"`
	Name        string            `json:"name"`
	Generation  int64             `json:"generation"`
	ContentType string            `json:"contentType"`
	Size        int64             `json:"size"`
	MD5         []byte            `json:"md5"`
	CRC32C      uint32            `json:"crc32c"`
	Created     time.Time         `json:"created"`
	Blob        string            `json:"blob"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

func objectKey(bucket, name string) string { return bucket + "\x00" + name }

func storagePrepare(s *Sandbox, tx *bolt.Tx, u *upload) *apiError {
	_, e := objectName(u)
	if e != nil {
		return e
	}
	if _, e := metadataChecksums(u.Metadata); e != nil {
		return e
	}
	if !validBucket(u.Params["bucket"]) {
		return badRequest("Invalid bucket name %q.", u.Params["bucket"])
	}
	return nil
}

func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 222 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func objectName(u *upload) (string, *apiError) {
	name := u.Query.Get("name")
	if name == "" && len(u.Metadata) > 0 {
		var meta struct {
			Name string `json:"name"`
		}
		json.Unmarshal(u.Metadata, &meta)
		name = meta.Name
	}
	if name == "" {
		return "", errorf(400, "required", "Required parameter: name (the object's name, in the query or the metadata).")
	}
	if len(name) > 1024 || strings.ContainsAny(name, "\r\n") {
		return "", badRequest("Invalid object name: at most 1024 bytes, no CR or LF.")
	}
	return name, nil
}

func storageFinish(s *Sandbox, tx *bolt.Tx, u *upload, m *media) (any, string, *apiError) {
	name, e := objectName(u)
	if e != nil {
		return nil, "", e
	}
	if e := checkChecksums(u, m); e != nil {
		return nil, "", e // before anything is written: nothing is stored
	}
	bucket := u.Params["bucket"]
	var meta struct {
		ContentType string            `json:"contentType"`
		Metadata    map[string]string `json:"metadata"`
	}
	if len(u.Metadata) > 0 {
		json.Unmarshal(u.Metadata, &meta)
	}
	gen := s.now().UnixMicro()
	var prev objectRec
	if err := getJSON(tx, bObjects, objectKey(bucket, name), &prev); err == nil && prev.Generation >= gen {
		gen = prev.Generation + 1
	}
	ct := u.MediaType
	if meta.ContentType != "" {
		ct = meta.ContentType
	}
	o := objectRec{
		Bucket: bucket, Name: name, Generation: gen, ContentType: ct, Size: m.Size,
		MD5: m.MD5, CRC32C: m.CRC32C, Created: s.now().UTC(), Metadata: meta.Metadata,
		Blob: "obj-" + newHexID() + newHexID(),
	}
	if err := putJSON(tx, bObjects, objectKey(bucket, name), &o); err != nil {
		return nil, "", errorf(500, "backendError", "store: %v", err)
	}
	if prev.Blob != "" {
		// The old generation's bytes go once the new one is committed.
		tx.OnCommit(func() { os.Remove(s.blobPath(prev.Blob)) })
	}
	return o.resource(u.Base), o.Blob, nil
}

func (o *objectRec) resource(base string) map[string]any {
	gen := strconv.FormatInt(o.Generation, 10)
	path := "/b/" + url.PathEscape(o.Bucket) + "/o/" + url.PathEscape(o.Name)
	r := map[string]any{
		"kind":           "storage#object",
		"id":             o.Bucket + "/" + o.Name + "/" + gen,
		"selfLink":       base + "/storage/v1" + path,
		"mediaLink":      base + "/download/storage/v1" + path + "?generation=" + gen + "&alt=media",
		"name":           o.Name,
		"bucket":         o.Bucket,
		"generation":     gen,
		"metageneration": "1",
		"contentType":    o.ContentType,
		"storageClass":   "STANDARD",
		"size":           strconv.FormatInt(o.Size, 10),
		"md5Hash":        base64.StdEncoding.EncodeToString(o.MD5),
		"crc32c":         crc32cString(o.CRC32C),
		"etag":           base64.StdEncoding.EncodeToString([]byte(gen))[:8],
		"timeCreated":    o.Created.Format(time.RFC3339Nano),
		"updated":        o.Created.Format(time.RFC3339Nano),
	}
	if len(o.Metadata) > 0 {
		r["metadata"] = o.Metadata
	}
	return r
}

func (s *Sandbox) storageRoutes(mux *http.ServeMux) {
	get := func(w http.ResponseWriter, r *http.Request) {
		var o objectRec
		err := s.db.View(func(tx *bolt.Tx) error {
			return getJSON(tx, bObjects, objectKey(r.PathValue("bucket"), r.PathValue("object")), &o)
		})
		if errors.Is(err, errNoRecord) {
			writeError(w, notFound("No such object: %s/%s", r.PathValue("bucket"), r.PathValue("object")))
			return
		}
		if err != nil {
			writeError(w, errorf(500, "backendError", "%v", err))
			return
		}
		if r.URL.Query().Get("alt") == "media" {
			// The whole object's hashes, even for a Range: GCS sends them
			// so, and a client checks them only on a whole read.
			h := w.Header()
			h.Set("X-Goog-Hash", googHash(o.MD5, o.CRC32C))
			h.Set("X-Goog-Stored-Content-Encoding", "identity")
			h.Set("X-Goog-Stored-Content-Length", strconv.FormatInt(o.Size, 10))
			h.Set("X-Goog-Generation", strconv.FormatInt(o.Generation, 10))
			h.Set("X-Goog-Metageneration", "1")
			s.serveBlob(w, r, o.Blob, o.ContentType, o.Created)
			return
		}
		writeJSON(w, http.StatusOK, o.resource(baseURL(r)))
	}
	s.handleFunc(mux, scopesStorageRead, "GET /storage/v1/b/{bucket}/o/{object...}", get)
	s.handleFunc(mux, scopesStorageRead, "GET /download/storage/v1/b/{bucket}/o/{object...}", get)
	s.handleFunc(mux, scopesStorageRead, "GET /storage/v1/b/{bucket}/o", func(w http.ResponseWriter, r *http.Request) {
		bucket := r.PathValue("bucket")
		prefix := r.URL.Query().Get("prefix")
		var items []map[string]any
		err := s.db.View(func(tx *bolt.Tx) error {
			return forEach(tx, bObjects, func(_ string, o *objectRec) error {
				if o.Bucket == bucket && strings.HasPrefix(o.Name, prefix) {
					items = append(items, o.resource(baseURL(r)))
				}
				return nil
			})
		})
		if err != nil {
			writeError(w, errorf(500, "backendError", "%v", err))
			return
		}
		sort.Slice(items, func(i, j int) bool { return items[i]["name"].(string) < items[j]["name"].(string) })
		out := map[string]any{"kind": "storage#objects"}
		if len(items) > 0 {
			out["items"] = items
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// serveBlob sends stored bytes, with Range support for partial reads.
func (s *Sandbox) serveBlob(w http.ResponseWriter, r *http.Request, blob, contentType string, mod time.Time) {
	f, err := os.Open(s.blobPath(blob))
	if err != nil {
		writeError(w, errorf(500, "backendError", "the stored bytes are missing: %v", err))
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", contentType)
	http.ServeContent(w, r, "", mod, f)
}

// Checksums (PROTOCOL.md 7). The sandbox computes md5Hash and crc32c as the
// bytes are stored (hashes in upload.go; a session keeps their state with
// its stored offset). A client may give either to be checked: in the
// metadata of a multipart upload or of a session's start, or in X-Goog-Hash
// on the request that carries the last bytes. A mismatch is refused with
// 400 before the object is written; a session that ends so keeps answering
// that 400 (see finish in upload.go): its bytes are not the client's, so
// there is nothing to resume.

// checksums are the hashes a client gave; nil when not given.
type checksums struct {
	md5 []byte // 16 bytes
	crc []byte // 4 bytes, big-endian
}

func crc32cString(c uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], c)
	return base64.StdEncoding.EncodeToString(b[:])
}

// googHash is the X-Goog-Hash value of stored bytes.
func googHash(md5 []byte, crc uint32) string {
	return "crc32c=" + crc32cString(crc) + ",md5=" + base64.StdEncoding.EncodeToString(md5)
}

func decodeChecksum(what, v string, n int) ([]byte, *apiError) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != n {
		return nil, errorf(400, "invalid", "Invalid %s %q: want the base64 of %d bytes.", what, v, n)
	}
	return b, nil
}

// metadataChecksums reads md5Hash and crc32c from an object's metadata.
func metadataChecksums(meta json.RawMessage) (checksums, *apiError) {
	var c checksums
	if len(meta) == 0 {
		return c, nil
	}
	var m struct {
		MD5 *string `json:"md5Hash"`
		CRC *string `json:"crc32c"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		return c, errorf(400, "invalid", "md5Hash and crc32c in the metadata must be strings (base64): %v", err)
	}
	var e *apiError
	if m.MD5 != nil {
		if c.md5, e = decodeChecksum("md5Hash", *m.MD5, 16); e != nil {
			return c, e
		}
	}
	if m.CRC != nil {
		if c.crc, e = decodeChecksum("crc32c", *m.CRC, 4); e != nil {
			return c, e
		}
	}
	return c, nil
}

// parseGoogHash reads X-Goog-Hash request headers ("crc32c=B64,md5=B64",
// one header or several). Names it does not know are ignored.
func parseGoogHash(values []string) (checksums, *apiError) {
	var c checksums
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, val, ok := strings.Cut(item, "=")
			if !ok {
				return c, errorf(400, "invalid", "Invalid X-Goog-Hash %q: want crc32c=BASE64,md5=BASE64.", v)
			}
			var dst *[]byte
			var b []byte
			var e *apiError
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "md5":
				dst = &c.md5
				b, e = decodeChecksum("md5 in X-Goog-Hash", strings.TrimSpace(val), 16)
			case "crc32c":
				dst = &c.crc
				b, e = decodeChecksum("crc32c in X-Goog-Hash", strings.TrimSpace(val), 4)
			default:
				continue
			}
			if e != nil {
				return c, e
			}
			if *dst != nil && !bytes.Equal(*dst, b) {
				return c, errorf(400, "invalid", "X-Goog-Hash names %s twice with different values.", name)
			}
			*dst = b
		}
	}
	return c, nil
}

// checkChecksums compares what the client gave with what was stored.
func checkChecksums(u *upload, m *media) *apiError {
	fromMeta, e := metadataChecksums(u.Metadata)
	if e != nil {
		return e
	}
	fromHeader, e := parseGoogHash(m.GoogHash)
	if e != nil {
		return e
	}
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], m.CRC32C)
	for _, c := range []checksums{fromMeta, fromHeader} {
		if c.crc != nil && !bytes.Equal(c.crc, crc[:]) {
			return errorf(400, "invalid", "Provided CRC32C %q doesn't match calculated CRC32C %q.",
				base64.StdEncoding.EncodeToString(c.crc), base64.StdEncoding.EncodeToString(crc[:]))
		}
		if c.md5 != nil && !bytes.Equal(c.md5, m.MD5) {
			return errorf(400, "invalid", "Provided MD5 hash %q doesn't match calculated MD5 hash %q.",
				base64.StdEncoding.EncodeToString(c.md5), base64.StdEncoding.EncodeToString(m.MD5))
		}
	}
	return nil
}
