package sandbox

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxDrain bounds what a refused request's body is read for (Drain):
// the official Go client sends media below 16 MiB in one request.
const maxDrain = 32 << 20

// drain reads the rest of a request's body, if it ends within maxDrain,
// and says whether it did.
func (s *Sandbox) drain(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength > maxDrain {
		return false
	}
	select {
	case <-s.closing:
		return false
	default:
	}
	n, err := s.copyBody(w, io.Discard, r.Body, maxDrain+1, nil)
	return err == nil && n <= maxDrain
}

// refuseDrained is refuse for a method that drains refused bodies.
func (s *Sandbox) refuseDrained(w http.ResponseWriter, r *http.Request, m *uploadMethod, e *apiError) {
	if m.Drain && r.ContentLength != 0 && s.drain(w, r) {
		writeError(w, e)
		return
	}
	s.refuse(w, r, e)
}

// driveMeta is what a create may set.
type driveMeta struct {
	ID          string   `json:"id"`
	Name        *string  `json:"name"`
	MimeType    string   `json:"mimeType"`
	Parents     []string `json:"parents"`
	Description string   `json:"description"`
}

// driveOutputOnly are File fields a client may not set.
var driveOutputOnly = []string{"kind", "size", "md5Checksum", "sha1Checksum", "sha256Checksum", "webViewLink", "webContentLink",
	"quotaBytesUsed", "owners", "permissions", "permissionIds", "ownedByMe", "shared", "version", "headRevisionId",
	"spaces", "capabilities", "createdTime", "fileExtension", "fullFileExtension", "iconLink", "thumbnailLink"}

func parseDriveMeta(raw json.RawMessage) (driveMeta, *apiError) {
	var m driveMeta
	if len(raw) == 0 {
		return m, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return m, errorf(400, "parseError", "The metadata is not a File: %v", err)
	}
	for _, k := range driveOutputOnly {
		if _, ok := keys[k]; ok && k != "kind" {
			return m, errorf(http.StatusForbidden, "fieldNotWritable",
				"The resource body includes fields which are not directly writable: %s.", k)
		}
	}
	if k, ok := keys["kind"]; ok && string(k) != `"drive#file"` {
		return m, badRequest("Invalid kind %s: a File's kind is drive#file.", k)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, errorf(400, "parseError", "The metadata is not a File: %v", err)
	}
	return m, nil
}

// checkCreate is everything a create checks before a byte is kept, and
// again when the file is made.
func (s *Sandbox) checkCreate(tx *bolt.Tx, q url.Values, meta driveMeta) (parent string, e *apiError) {
	if _, e := selection(q.Get("fields"), driveFileSchema, defaultFileFields); e != nil {
		return "", e
	}
	if meta.ID != "" {
		if tx.Bucket(bDriveFiles).Get([]byte(meta.ID)) != nil {
			return "", errorf(http.StatusConflict, "duplicate", "A file already exists with the provided ID.")
		}
		if tx.Bucket(bDriveIDs).Get([]byte(meta.ID)) == nil {
			return "", errorf(http.StatusBadRequest, "fileIdNotUsable",
				"The provided file ID is not usable. Use an id from files.generateIds, once.")
		}
	}
	switch len(meta.Parents) {
	case 0:
		return s.driveRoot(), nil
	case 1:
	default:
		return "", errorf(http.StatusForbidden, "cannotAddParent", "Increasing the number of parents is not allowed: a file has one parent folder.")
	}
	parent = s.resolveID(meta.Parents[0])
	var p driveFileRec
	if err := getJSON(tx, bDriveFiles, parent, &p); err != nil {
		return "", driveNotFound(meta.Parents[0])
	}
	if !p.folder() {
		return "", badRequest("The parent %s is not a folder.", meta.Parents[0])
	}
	return parent, nil
}

func drivePrepare(s *Sandbox, tx *bolt.Tx, u *upload) *apiError {
	meta, e := parseDriveMeta(u.Metadata)
	if e != nil {
		return e
	}
	if meta.MimeType == driveFolderType {
		return badRequest("A folder has no content: create it at /drive/v3/files, without media.")
	}
	_, e = s.checkCreate(tx, u.Query, meta)
	return e
}

func driveFinish(s *Sandbox, tx *bolt.Tx, u *upload, m *media) (any, string, *apiError) {
	if e := drivePrepare(s, tx, u); e != nil {
		return nil, "", e
	}
	if free := s.driveFree(tx); free >= 0 && m.Size > free {
		return nil, "", errDriveQuota
	}
	f, e := s.createFile(tx, u, m)
	if e != nil {
		return nil, "", e
	}
	res, e := s.selectedFile(tx, f, u.Base, u.Query.Get("fields"))
	return res, f.Blob, e
}

// createFile files a new Drive file (the checks passed); m is nil for a
// file made from metadata alone.
func (s *Sandbox) createFile(tx *bolt.Tx, u *upload, m *media) (*driveFileRec, *apiError) {
	meta, e := parseDriveMeta(u.Metadata)
	if e != nil {
		return nil, e
	}
	parent, e := s.checkCreate(tx, u.Query, meta)
	if e != nil {
		return nil, e
	}
	f := &driveFileRec{ID: meta.ID, Name: "Untitled", MimeType: meta.MimeType, Description: meta.Description,
		Parent: parent, Created: s.now().UTC(), Seq: nextSeq(tx), Version: 1}
	if meta.Name != nil && *meta.Name != "" {
		f.Name = *meta.Name
	}
	if f.ID == "" {
		f.ID = newDriveID()
	} else if err := tx.Bucket(bDriveIDs).Delete([]byte(f.ID)); err != nil {
		return nil, errorf(500, "backendError", "%v", err)
	}
	if f.MimeType == "" {
		f.MimeType = u.MediaType
	}
	if f.MimeType == "" {
		f.MimeType = "application/octet-stream"
	}
	if m != nil {
		f.Size, f.MD5, f.SHA256, f.Blob = m.Size, m.MD5, m.SHA256, "drv-"+f.ID
	} else if !f.folder() {
		md, sh := md5.Sum(nil), sha256.Sum256(nil)
		f.MD5, f.SHA256 = md[:], sh[:]
	}
	if err := putJSON(tx, bDriveFiles, f.ID, f); err != nil {
		return nil, errorf(500, "backendError", "%v", err)
	}
	if err := addDriveUsage(tx, f.Size); err != nil {
		return nil, errorf(500, "backendError", "%v", err)
	}
	return f, nil
}

// serveCreateMetadata is files.create without media: folders, mostly.
func (s *Sandbox) serveCreateMetadata(w http.ResponseWriter, r *http.Request) {
	raw, e := readMetadata(r.Body)
	if e != nil {
		writeError(w, e)
		return
	}
	u := &upload{Method: "drive.files.create", Query: r.URL.Query(), Metadata: raw, Base: baseURL(r)}
	var res map[string]any
	if s.update(w, func(tx *bolt.Tx) *apiError {
		f, e := s.createFile(tx, u, nil)
		if e != nil {
			return e
		}
		res, e = s.selectedFile(tx, f, u.Base, u.Query.Get("fields"))
		return e
	}) {
		writeJSON(w, http.StatusOK, res)
	}
}

func (s *Sandbox) serveGenerateIDs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	count := 10
	if v := q.Get("count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxGenerateIDs {
			writeError(w, errorf(400, "invalid", "Invalid value for count: %q; it must be between 1 and %d.", v, maxGenerateIDs))
			return
		}
		count = n
	}
	if sp := q.Get("space"); sp != "" && sp != "drive" {
		writeError(w, errorf(400, "invalid", "Invalid value for space: %q; the sandbox's Drive has only the drive space.", sp))
		return
	}
	if t := q.Get("type"); t != "" && t != "files" {
		writeError(w, errorf(400, "invalid", "Invalid value for type: %q; the sandbox's Drive makes ids for files only.", t))
		return
	}
	sel, e := selection(q.Get("fields"), driveGeneratedIDsSchema, "*")
	if e != nil {
		writeError(w, e)
		return
	}
	ids := make([]string, count)
	if !s.update(w, func(tx *bolt.Tx) *apiError {
		b := tx.Bucket(bDriveIDs)
		now := s.now().UTC()
		var stale [][]byte
		b.ForEach(func(k, v []byte) error {
			var t time.Time
			if t.UnmarshalText(v) != nil || now.Sub(t) > generatedIDTTL {
				stale = append(stale, slices.Clone(k))
			}
			return nil
		})
		for _, k := range stale {
			b.Delete(k)
		}
		stamp, _ := now.MarshalText()
		for i := range ids {
			ids[i] = newDriveID()
			if err := b.Put([]byte(ids[i]), stamp); err != nil {
				return errorf(500, "backendError", "%v", err)
			}
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(map[string]any{"kind": "drive#generatedIds", "space": "drive", "ids": ids}))
}
