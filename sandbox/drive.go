package sandbox

// Google Drive v3, the part an app needs to send large files as links:
// files.create (media, multipart and resumable, through the same upload
// machinery as Gmail and Cloud Storage, and metadata-only for folders),
// files.generateIds, files.get (fields= and alt=media with Range),
// files.list, files.delete, permissions.create/list/get/delete, about.get,
// and the two browser links a File carries (drivelinks.go).
//
// By concern: this file holds the store (records, My Drive, ids) and the
// files resource (get, delete, the File's fields); drivecreate.go
// files.create and generateIds; drivequery.go files.list (paging, orderBy
// and the q parser); driveperms.go permissions; driveabout.go the quota
// and about.get.
//
// Where the sandbox chose, for want of a documented answer (PROTOCOL.md
// section 1 is the contract; these are the rest):
//   - A create naming an id that a file already has: 409, reason
//     "duplicate", "A file already exists with the provided ID." (the
//     message Drive is seen to give; the reason is what fakes that were
//     checked against Drive use). An id that files.generateIds did not
//     hand out, or one already spent (its file created, perhaps deleted
//     since): 400, reason "fileIdNotUsable", "The provided file ID is not
//     usable." Both are checked when a resumable session starts, so a
//     retried create learns at once, and again when the file is made.
//   - Generated ids are kept 30 days, then forgotten (Drive states no
//     lifetime); that is longer than a resumable session lives.
//   - A finished resumable upload answers 201 (the session was started
//     with POST), as the sandbox's other POST sessions do; Drive
//     documents "200 OK or 201 Created".
//   - Expiry of a permission: on type anyone or domain, 400
//     "cannotSetExpirationOnAnyoneOrDomain"; in the past, 400
//     "expirationDatesMustBeInTheFuture"; more than a year ahead, 400
//     "invalid". sendNotificationEmail=true on anyone or domain is refused
//     (400 "invalid"); false is accepted, as clients often send it. No
//     mail is sent: the sandbox records only that one would have been.
//   - A second permission for the same grantee replaces the first (the
//     last applies), and keeps its id: Drive's permission ids name the
//     grantee. Expired permissions vanish from every answer.
//   - Roles: reader, commenter and writer; owner, organizer and
//     fileOrganizer are refused (400 "invalid"): there is one account and
//     no shared drives.
//   - Scopes: drive.file and drive open everything here, drive.readonly the
//     reads. With drive.file Google shows an app only the files it made
//     or was given; the sandbox treats every file in it as made by the app.
//   - Every file has one parent, a folder or "root" (My Drive, created
//     with the store); parents naming a file that is not a folder: 400.
//     files.delete deletes at once (there is no trash): trashed is
//     always false, and deleting a folder deletes what it holds.
//   - files.list's q takes terms joined by "and": name = / contains,
//     mimeType = / !=, trashed = true|false, 'ID' in parents. Anything
//     else (or, not, dates, fullText) is refused with 400 "invalid".
//     orderBy takes createdTime, modifiedTime, name and folder, each
//     with an optional desc; without it, newest first.
//   - The quota counts Drive's files, Photos' media items (photos.go) and
//     DriveQuota.OtherUsage (what Gmail would use); usageInDriveTrash is
//     always 0. A
//     resumable session that declares its size is refused at its start;
//     one that does not, when its bytes pass the room left; a file that
//     no longer fits when it is filed (others finished first) also gets
//     403 storageQuotaExceeded, from its session from then on.
//   - A refused Drive upload (409, 403 quota, 400) is answered after its
//     body is read to the end, up to 32 MiB, as Google's front ends do, so
//     a client that writes a whole body before reading sees the answer;
//     the sandbox's other methods still close such a connection unread.
//   - Not served: files.update/copy, revisions, changes, shared drives,
//     appDataFolder, exports, and the /resumable/upload/drive/v3/files
//     alias of the discovery document.

import (
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The Drive scopes the sandbox's sign-in grants and its routes check.
const (
	ScopeDriveFile     = "https://www.googleapis.com/auth/drive.file"
	ScopeDrive         = "https://www.googleapis.com/auth/drive"
	ScopeDriveReadonly = "https://www.googleapis.com/auth/drive.readonly"
)

var (
	scopesDriveWrite = []string{"drive.file", "drive"}
	scopesDriveRead  = []string{"drive.file", "drive", "drive.readonly"}
)

const (
	// limitDrive is files.create's maxSize in the discovery document:
	// 5,120 GiB (5,497,558,138,880 bytes); about.get reports it.
	limitDrive = 5120 << 30
	// DefaultDriveQuota is a free account's 15 GiB.
	DefaultDriveQuota = 15 << 30
	driveFolderType   = "application/vnd.google-apps.folder"
	generatedIDTTL    = 30 * 24 * time.Hour
	maxGenerateIDs    = 1000
)

// Drive's records live in buckets of their own: files by id, permissions
// by file id and permission id, ids handed out by generateIds.
var (
	bDriveFiles = []byte("driveFiles")
	bDrivePerms = []byte("drivePermissions")
	bDriveIDs   = []byte("driveGeneratedIds")
	keyDriveUse = []byte("driveUsage") // in bMeta: bytes of Drive's files
	keyDriveTop = []byte("driveRoot")  // in bMeta: the id of My Drive
)

func init() { allBuckets = append(allBuckets, bDriveFiles, bDrivePerms, bDriveIDs) }

type driveState struct {
	mu    sync.Mutex
	quota DriveQuota
	root  string
}

type driveFileRec struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	MimeType    string    `json:"mimeType"`
	Description string    `json:"description,omitempty"`
	Parent      string    `json:"parent,omitempty"` // "" only for My Drive
	Size        int64     `json:"size"`
	MD5         []byte    `json:"md5,omitempty"`
	SHA256      []byte    `json:"sha256,omitempty"`
	Blob        string    `json:"blob,omitempty"` // "" for folders and empty files made without media
	Created     time.Time `json:"created"`
	Seq         uint64    `json:"seq"`
	Version     int64     `json:"version"`
}

func (f *driveFileRec) folder() bool { return f.MimeType == driveFolderType }

// newDriveID is shaped as Drive's: 33 characters of [A-Za-z0-9_-],
// starting with 1, 192 random bits.
func newDriveID() string { return "1" + b64url(randomBytes(24)) }

func b64url(b []byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var out strings.Builder
	for i := 0; i+2 < len(b); i += 3 {
		n := uint(b[i])<<16 | uint(b[i+1])<<8 | uint(b[i+2])
		for sh := 18; sh >= 0; sh -= 6 {
			out.WriteByte(alphabet[n>>uint(sh)&63])
		}
	}
	return out.String()
}

func driveNotFound(id string) *apiError {
	return errorf(http.StatusNotFound, "notFound", "File not found: %s.", id)
}

// openDrive sets the quota from the options and makes My Drive once.
func (s *Sandbox) openDrive() {
	q := DriveQuota{Limit: s.opts.DriveQuota}
	if q.Limit == 0 {
		q.Limit = DefaultDriveQuota
	}
	s.SetDriveQuota(q)
	var root string
	err := s.db.Update(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bMeta).Get(keyDriveTop); v != nil {
			root = string(v)
			return nil
		}
		f := &driveFileRec{ID: "0A" + b64url(randomBytes(15)), Name: "My Drive", MimeType: driveFolderType, Created: s.now().UTC(), Version: 1}
		if err := putJSON(tx, bDriveFiles, f.ID, f); err != nil {
			return err
		}
		root = f.ID
		return tx.Bucket(bMeta).Put(keyDriveTop, []byte(root))
	})
	if err != nil {
		s.log.Error("drive: cannot make My Drive", "err", err)
	}
	s.drive.mu.Lock()
	s.drive.root = root
	s.drive.mu.Unlock()
}

func (s *Sandbox) driveRoot() string {
	s.drive.mu.Lock()
	defer s.drive.mu.Unlock()
	return s.drive.root
}

// resolveID reads "root" as My Drive's id, as Drive does.
func (s *Sandbox) resolveID(id string) string {
	if id == "root" {
		return s.driveRoot()
	}
	return id
}

func driveTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (s *Sandbox) driveUser() map[string]any {
	name, _, _ := strings.Cut(s.opts.Account, "@")
	return map[string]any{"kind": "drive#user", "displayName": name, "me": true,
		"permissionId": grantID("user", s.opts.Account), "emailAddress": s.opts.Account}
}

// fileResource renders a file with every field the sandbox fills.
func (s *Sandbox) fileResource(tx *bolt.Tx, f *driveFileRec, base string) map[string]any {
	perms := s.filePerms(tx, f.ID)
	ids := []string{}
	var plist []map[string]any
	for _, p := range perms {
		ids = append(ids, p.ID)
		plist = append(plist, p.resource())
	}
	r := map[string]any{
		"kind": "drive#file", "id": f.ID, "name": f.Name, "mimeType": f.MimeType,
		"createdTime": driveTime(f.Created), "modifiedTime": driveTime(f.Created),
		"trashed": false, "explicitlyTrashed": false, "starred": false, "viewedByMe": true,
		"ownedByMe": true, "owners": []map[string]any{s.driveUser()}, "spaces": []string{"drive"},
		"version": strconv.FormatInt(f.Version, 10), "shared": len(perms) > 1,
		"permissionIds": ids, "permissions": plist, "quotaBytesUsed": strconv.FormatInt(f.Size, 10),
		"writersCanShare": true, "copyRequiresWriterPermission": false, "viewersCanCopyContent": true,
		"webViewLink": base + "/file/d/" + f.ID + "/view?usp=drivesdk",
	}
	if f.Parent != "" {
		r["parents"] = []string{f.Parent}
	}
	if f.Description != "" {
		r["description"] = f.Description
	}
	if f.folder() {
		r["webViewLink"] = base + "/drive/folders/" + f.ID
		return r
	}
	r["size"] = strconv.FormatInt(f.Size, 10)
	r["md5Checksum"] = hex.EncodeToString(f.MD5)
	r["sha256Checksum"] = hex.EncodeToString(f.SHA256)
	r["originalFilename"] = f.Name
	r["headRevisionId"] = "0B" + f.ID[1:]
	r["webContentLink"] = base + "/uc?id=" + f.ID + "&export=download"
	if ext := path.Ext(f.Name); len(ext) > 1 && !strings.ContainsAny(ext, " /") {
		r["fileExtension"] = ext[1:]
		full := ext[1:]
		if i := strings.Index(f.Name, "."); i > 0 && i < len(f.Name)-1 {
			full = f.Name[i+1:]
		}
		r["fullFileExtension"] = full
	}
	return r
}

func (s *Sandbox) selectedFile(tx *bolt.Tx, f *driveFileRec, base, fields string) (map[string]any, *apiError) {
	sel, e := selection(fields, driveFileSchema, defaultFileFields)
	if e != nil {
		return nil, e
	}
	return sel.apply(s.fileResource(tx, f, base)).(map[string]any), nil
}

func (s *Sandbox) getFile(tx *bolt.Tx, id string) (*driveFileRec, *apiError) {
	f := new(driveFileRec)
	err := getJSON(tx, bDriveFiles, s.resolveID(id), f)
	if errors.Is(err, errNoRecord) {
		return nil, driveNotFound(id)
	}
	if err != nil {
		return nil, errorf(500, "backendError", "%v", err)
	}
	return f, nil
}

// view runs fn in a read transaction and answers its error, if any.
func (s *Sandbox) view(w http.ResponseWriter, fn func(tx *bolt.Tx) *apiError) bool {
	var e *apiError
	if err := s.db.View(func(tx *bolt.Tx) error { e = fn(tx); return nil }); err != nil {
		e = errorf(500, "backendError", "store: %v", err)
	}
	if e != nil {
		writeError(w, e)
		return false
	}
	return true
}

func (s *Sandbox) update(w http.ResponseWriter, fn func(tx *bolt.Tx) *apiError) bool {
	var e *apiError
	err := s.db.Update(func(tx *bolt.Tx) error {
		if e = fn(tx); e != nil {
			return e // rolls back
		}
		return nil
	})
	if err != nil && e == nil {
		e = errorf(500, "backendError", "store: %v", err)
	}
	if e != nil {
		writeError(w, e)
		return false
	}
	return true
}

func (s *Sandbox) driveRoutes(mux *http.ServeMux) {
	s.openDrive()
	s.handleFunc(mux, scopesDriveWrite, "POST /drive/v3/files", s.serveCreateMetadata)
	s.handleFunc(mux, scopesDriveWrite, "GET /drive/v3/files/generateIds", s.serveGenerateIDs)
	s.handleFunc(mux, scopesDriveRead, "GET /drive/v3/files", s.serveListFiles)
	s.handleFunc(mux, scopesDriveRead, "GET /drive/v3/files/{fileId}", s.serveGetFile)
	s.handleFunc(mux, scopesDriveWrite, "DELETE /drive/v3/files/{fileId}", s.serveDeleteFile)
	s.handleFunc(mux, scopesDriveWrite, "POST /drive/v3/files/{fileId}/permissions", s.serveCreatePermission)
	s.handleFunc(mux, scopesDriveRead, "GET /drive/v3/files/{fileId}/permissions", s.serveListPermissions)
	s.handleFunc(mux, scopesDriveRead, "GET /drive/v3/files/{fileId}/permissions/{permissionId}", s.serveGetPermission)
	s.handleFunc(mux, scopesDriveWrite, "DELETE /drive/v3/files/{fileId}/permissions/{permissionId}", s.serveDeletePermission)
	s.handleFunc(mux, scopesDriveRead, "GET /drive/v3/about", s.serveAbout)
	static := routeAccess{staticOnly: true}
	s.handle(mux, "GET /sandbox/v1/drive", static, http.HandlerFunc(s.serveDriveControl))
	s.handle(mux, "PUT /sandbox/v1/drive", static, http.HandlerFunc(s.serveDriveControl))
}

func (s *Sandbox) serveGetFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("fileId")
	var f *driveFileRec
	var res map[string]any
	alt := r.URL.Query().Get("alt")
	switch alt {
	case "", "json", "media":
	default:
		writeError(w, badRequest("Invalid alt %q: use json or media.", alt))
		return
	}
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		var e *apiError
		if f, e = s.getFile(tx, id); e != nil || alt == "media" {
			return e
		}
		res, e = s.selectedFile(tx, f, baseURL(r), r.URL.Query().Get("fields"))
		return e
	}) {
		return
	}
	if alt == "media" {
		s.serveDriveBytes(w, r, f, false)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// serveDriveBytes sends a file's bytes, with Range; attach names the file
// for a browser to save.
func (s *Sandbox) serveDriveBytes(w http.ResponseWriter, r *http.Request, f *driveFileRec, attach bool) {
	if f.folder() {
		writeError(w, errorf(http.StatusForbidden, "fileNotDownloadable",
			"Only files with binary content can be downloaded; %s is a folder.", f.ID))
		return
	}
	// Bytes anyone uploaded, on the sandbox's own origin: never run them.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox")
	if attach {
		w.Header().Set("Content-Disposition", contentDisposition(f.Name))
	}
	if f.Blob == "" {
		w.Header().Set("Content-Type", f.MimeType)
		http.ServeContent(w, r, "", f.Created, strings.NewReader(""))
		return
	}
	s.serveBlob(w, r, f.Blob, f.MimeType, f.Created)
}

func (s *Sandbox) serveDeleteFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("fileId")
	var blobs []string
	if !s.update(w, func(tx *bolt.Tx) *apiError {
		f, e := s.getFile(tx, id)
		if e != nil {
			return e
		}
		if f.ID == s.driveRoot() {
			return errorf(http.StatusForbidden, "cannotDeleteRootFolder", "My Drive cannot be deleted.")
		}
		// A folder goes with everything under it.
		doomed := map[string]*driveFileRec{f.ID: f}
		for grew := true; grew; {
			grew = false
			err := forEach(tx, bDriveFiles, func(_ string, c *driveFileRec) error {
				if doomed[c.Parent] != nil && doomed[c.ID] == nil {
					doomed[c.ID], grew = c, true
				}
				return nil
			})
			if err != nil {
				return errorf(500, "backendError", "%v", err)
			}
		}
		var freed int64
		for _, d := range doomed {
			if err := s.dropFile(tx, d); err != nil {
				return errorf(500, "backendError", "%v", err)
			}
			freed += d.Size
			if d.Blob != "" {
				blobs = append(blobs, d.Blob)
			}
		}
		if err := addDriveUsage(tx, -freed); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		return nil
	}) {
		return
	}
	for _, b := range blobs {
		os.Remove(s.blobPath(b))
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sandbox) dropFile(tx *bolt.Tx, f *driveFileRec) error {
	if err := tx.Bucket(bDriveFiles).Delete([]byte(f.ID)); err != nil {
		return err
	}
	b := tx.Bucket(bDrivePerms)
	var keys [][]byte
	c := b.Cursor()
	prefix := f.ID + "/"
	for k, _ := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, _ = c.Next() {
		keys = append(keys, slices.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
