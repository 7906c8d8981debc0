package sandbox

import (
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
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], o.CRC32C)
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
		"crc32c":         base64.StdEncoding.EncodeToString(crc[:]),
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
