package sandbox

// Google Drive v3, the part an app needs to send large files as links:
// files.create (media, multipart and resumable, through the same upload
// machinery as Gmail and Cloud Storage, and metadata-only for folders),
// files.generateIds, files.get (fields= and alt=media with Range),
// files.list, files.delete, permissions.create/list/get/delete, about.get,
// and the two browser links a File carries (drivelinks.go).
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
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path"
	"slices"
	"sort"
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

// DriveQuota is the storage the sandbox's Drive reports and enforces.
type DriveQuota struct {
	Limit      int64 // bytes; negative: no limit
	OtherUsage int64 // bytes used outside Drive and Photos (Gmail), counted against Limit
}

type driveState struct {
	mu    sync.Mutex
	quota DriveQuota
	root  string
}

// SetDriveQuota changes the Drive quota at run time ("Drive is full" is a
// Limit at or below what is used). It lasts until the sandbox stops.
func (s *Sandbox) SetDriveQuota(q DriveQuota) {
	s.drive.mu.Lock()
	s.drive.quota = q
	s.drive.mu.Unlock()
}

// DriveQuota returns the Drive quota in force.
func (s *Sandbox) DriveQuota() DriveQuota {
	s.drive.mu.Lock()
	defer s.drive.mu.Unlock()
	return s.drive.quota
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

type drivePermRec struct {
	ID             string    `json:"id"`
	Type           string    `json:"type"`
	Role           string    `json:"role"`
	Email          string    `json:"email,omitempty"`
	Domain         string    `json:"domain,omitempty"`
	AllowDiscovery bool      `json:"allowDiscovery,omitempty"`
	Expires        time.Time `json:"expires,omitempty"`
	Notified       bool      `json:"notified,omitempty"` // a mail would have gone to the grantee
}

func (p *drivePermRec) live(now time.Time) bool { return p.Expires.IsZero() || now.Before(p.Expires) }

func permKey(fileID, permID string) string { return fileID + "/" + permID }

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

// grantID is the permission id of a grantee: Drive's ids name the person
// (or group, or domain), the same on every file.
func grantID(kind, who string) string {
	sum := sha256.Sum256([]byte(kind + ":" + strings.ToLower(who)))
	return fmt.Sprintf("%020d", binary.BigEndian.Uint64(sum[:8]))
}

func driveNotFound(id string) *apiError {
	return errorf(http.StatusNotFound, "notFound", "File not found: %s.", id)
}

var errDriveQuota = errorf(http.StatusForbidden, "storageQuotaExceeded",
	"The user's Drive storage quota has been exceeded.")

func driveUsage(tx *bolt.Tx) int64 {
	if v := tx.Bucket(bMeta).Get(keyDriveUse); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func addDriveUsage(tx *bolt.Tx, delta int64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(max(driveUsage(tx)+delta, 0)))
	return tx.Bucket(bMeta).Put(keyDriveUse, buf[:])
}

// room is what the quota leaves for new bytes; negative: no limit.
func (s *Sandbox) driveFree(tx *bolt.Tx) int64 {
	q := s.DriveQuota()
	if q.Limit < 0 {
		return -1
	}
	return max(q.Limit-q.OtherUsage-driveUsage(tx)-photosUsage(tx), 0)
}

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

// driveRoom is drive.files.create's Room: uploads are bounded by the quota.
func driveRoom(s *Sandbox) (int64, *apiError) {
	free := int64(-1)
	s.db.View(func(tx *bolt.Tx) error { free = s.driveFree(tx); return nil })
	return free, errDriveQuota
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

func driveTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (s *Sandbox) driveUser() map[string]any {
	name, _, _ := strings.Cut(s.opts.Account, "@")
	return map[string]any{"kind": "drive#user", "displayName": name, "me": true,
		"permissionId": grantID("user", s.opts.Account), "emailAddress": s.opts.Account}
}

// filePerms are a file's live permissions, the owner's first.
func (s *Sandbox) filePerms(tx *bolt.Tx, fileID string) []*drivePermRec {
	out := []*drivePermRec{{ID: grantID("user", s.opts.Account), Type: "user", Role: "owner", Email: s.opts.Account}}
	c := tx.Bucket(bDrivePerms).Cursor()
	prefix := []byte(fileID + "/")
	for k, v := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, v = c.Next() {
		p := new(drivePermRec)
		if json.Unmarshal(v, p) == nil && p.live(s.now()) {
			out = append(out, p)
		}
	}
	return out
}

func (p *drivePermRec) resource() map[string]any {
	r := map[string]any{"kind": "drive#permission", "id": p.ID, "type": p.Type, "role": p.Role}
	switch p.Type {
	case "user", "group":
		r["emailAddress"], r["displayName"], r["deleted"] = p.Email, p.Email, false
		if p.Type == "user" {
			r["pendingOwner"] = false
		}
	case "domain":
		r["domain"], r["displayName"], r["allowFileDiscovery"] = p.Domain, p.Domain, p.AllowDiscovery
	case "anyone":
		r["allowFileDiscovery"] = p.AllowDiscovery
	}
	if !p.Expires.IsZero() {
		r["expirationTime"] = driveTime(p.Expires)
	}
	return r
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

// pageBounds reads pageSize and pageToken (an offset, opaque to clients).
func pageBounds(q url.Values, n, def, most int) (int, int, string, *apiError) {
	size := def
	if v := q.Get("pageSize"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 1 || m > most {
			return 0, 0, "", errorf(400, "invalid", "Invalid value for pageSize: %q; it must be between 1 and %d.", v, most)
		}
		size = m
	}
	start := 0
	if v := q.Get("pageToken"); v != "" {
		st, err := strconv.Atoi(strings.TrimPrefix(v, "p"))
		if err != nil || st < 0 || !strings.HasPrefix(v, "p") {
			return 0, 0, "", errorf(400, "invalid", "Invalid pageToken %q: use the nextPageToken of the previous page.", v)
		}
		start = min(st, n)
	}
	end := min(start+size, n)
	next := ""
	if end < n {
		next = "p" + strconv.Itoa(end)
	}
	return start, end, next, nil
}

func (s *Sandbox) serveListFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sel, e := selection(q.Get("fields"), driveFileListSchema, defaultFileListFields)
	if e != nil {
		writeError(w, e)
		return
	}
	match, e := parseDriveQuery(q.Get("q"), s.resolveID)
	if e != nil {
		writeError(w, e)
		return
	}
	less, e := driveOrder(q.Get("orderBy"))
	if e != nil {
		writeError(w, e)
		return
	}
	if c := q.Get("corpora"); c != "" && c != "user" {
		writeError(w, errorf(400, "invalid", "Invalid value for corpora: %q; the sandbox has only the user's own files.", c))
		return
	}
	var out map[string]any
	root := s.driveRoot()
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		var all []*driveFileRec
		err := forEach(tx, bDriveFiles, func(_ string, f *driveFileRec) error {
			if f.ID != root && match(f) {
				all = append(all, f)
			}
			return nil
		})
		if err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		sort.SliceStable(all, func(i, j int) bool { return less(all[i], all[j]) })
		start, end, next, e := pageBounds(q, len(all), 100, 1000)
		if e != nil {
			return e
		}
		files := []map[string]any{}
		for _, f := range all[start:end] {
			files = append(files, s.fileResource(tx, f, baseURL(r)))
		}
		out = map[string]any{"kind": "drive#fileList", "incompleteSearch": false, "files": files}
		if next != "" {
			out["nextPageToken"] = next
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(out))
}

// driveOrder reads orderBy: createdTime, modifiedTime, name, folder, each
// optionally with desc. The default is newest first.
func driveOrder(orderBy string) (func(a, b *driveFileRec) bool, *apiError) {
	type key struct {
		cmp  func(a, b *driveFileRec) int
		desc bool
	}
	byName := map[string]func(a, b *driveFileRec) int{
		"createdTime":  func(a, b *driveFileRec) int { return cmpInt(a.Seq, b.Seq) },
		"modifiedTime": func(a, b *driveFileRec) int { return cmpInt(a.Seq, b.Seq) },
		"name":         func(a, b *driveFileRec) int { return strings.Compare(a.Name, b.Name) },
		"folder": func(a, b *driveFileRec) int {
			return -cmpInt(boolInt(a.folder()), boolInt(b.folder())) // folders first
		},
	}
	keys := []key{{byName["createdTime"], true}}
	if strings.TrimSpace(orderBy) != "" {
		keys = nil
		for _, part := range strings.Split(orderBy, ",") {
			f := strings.Fields(part)
			if len(f) == 0 || len(f) > 2 || len(f) == 2 && f[1] != "desc" || byName[f[0]] == nil {
				return nil, errorf(400, "invalid", "Invalid orderBy %q: the sandbox sorts by createdTime, modifiedTime, name and folder, each optionally followed by desc.", orderBy)
			}
			keys = append(keys, key{byName[f[0]], len(f) == 2})
		}
	}
	return func(a, b *driveFileRec) bool {
		for _, k := range keys {
			c := k.cmp(a, b)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return a.ID < b.ID
	}, nil
}

func cmpInt[T int | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parseDriveQuery reads the subset of Drive's search language the sandbox
// serves (see the top of this file).
func parseDriveQuery(q string, resolve func(string) string) (func(*driveFileRec) bool, *apiError) {
	refuse := func(why string) (func(*driveFileRec) bool, *apiError) {
		return nil, errorf(400, "invalid", "Invalid Value for q (%s): the sandbox's files.list understands terms joined by 'and': "+
			"name = '...', name contains '...', mimeType = '...', mimeType != '...', trashed = true|false, '...' in parents.", why)
	}
	toks, err := queryTokens(q)
	if err != nil {
		return refuse(err.Error())
	}
	var terms []func(*driveFileRec) bool
	for len(toks) > 0 {
		var t []qtok
		i := slices.IndexFunc(toks, func(x qtok) bool { return !x.str && strings.EqualFold(x.s, "and") })
		if i < 0 {
			t, toks = toks, nil
		} else {
			t, toks = toks[:i], toks[i+1:]
			if len(toks) == 0 {
				return refuse("nothing after and")
			}
		}
		if len(t) != 3 {
			return refuse(fmt.Sprintf("%q is not a term it knows", joinToks(t)))
		}
		a, op, b := t[0], t[1], t[2]
		switch {
		case !a.str && a.s == "name" && op.s == "=" && b.str:
			terms = append(terms, func(f *driveFileRec) bool { return f.Name == b.s })
		case !a.str && a.s == "name" && op.s == "contains" && b.str:
			terms = append(terms, func(f *driveFileRec) bool { return strings.Contains(strings.ToLower(f.Name), strings.ToLower(b.s)) })
		case !a.str && a.s == "mimeType" && (op.s == "=" || op.s == "!=") && b.str:
			eq := op.s == "="
			terms = append(terms, func(f *driveFileRec) bool { return (f.MimeType == b.s) == eq })
		case !a.str && a.s == "trashed" && (op.s == "=" || op.s == "!=") && !b.str && (b.s == "true" || b.s == "false"):
			want := (b.s == "true") == (op.s == "=")
			terms = append(terms, func(*driveFileRec) bool { return !want })
		case a.str && op.s == "in" && !b.str && b.s == "parents":
			parent := resolve(a.s)
			terms = append(terms, func(f *driveFileRec) bool { return f.Parent == parent })
		default:
			return refuse(fmt.Sprintf("%q is not a term it knows", joinToks(t)))
		}
	}
	return func(f *driveFileRec) bool {
		for _, t := range terms {
			if !t(f) {
				return false
			}
		}
		return true
	}, nil
}

type qtok struct {
	s   string
	str bool // a quoted string
}

func joinToks(t []qtok) string {
	var parts []string
	for _, x := range t {
		if x.str {
			parts = append(parts, "'"+x.s+"'")
		} else {
			parts = append(parts, x.s)
		}
	}
	return strings.Join(parts, " ")
}

func queryTokens(q string) ([]qtok, error) {
	var out []qtok
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(q) {
					return nil, errors.New("a quoted string is not closed")
				}
				if q[i] == '\\' && i+1 < len(q) {
					b.WriteByte(q[i+1])
					i += 2
					continue
				}
				if q[i] == '\'' {
					i++
					break
				}
				b.WriteByte(q[i])
				i++
			}
			out = append(out, qtok{s: b.String(), str: true})
		case c == '=':
			out = append(out, qtok{s: "="})
			i++
		case c == '!' && i+1 < len(q) && q[i+1] == '=':
			out = append(out, qtok{s: "!="})
			i += 2
		default:
			j := i
			for j < len(q) && !strings.ContainsRune(" \t\r\n='!", rune(q[j])) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q", q[i])
			}
			out = append(out, qtok{s: q[i:j]})
			i = j
		}
	}
	return out, nil
}

// permission create and list

type permissionIn struct {
	Type               string `json:"type"`
	Role               string `json:"role"`
	EmailAddress       string `json:"emailAddress"`
	Domain             string `json:"domain"`
	AllowFileDiscovery bool   `json:"allowFileDiscovery"`
	ExpirationTime     string `json:"expirationTime"`
}

func (s *Sandbox) newPermission(r *http.Request, raw json.RawMessage) (*drivePermRec, *apiError) {
	var in permissionIn
	if len(raw) == 0 {
		return nil, errorf(400, "required", "The permission type field is required.")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, errorf(400, "parseError", "The body is not a Permission: %v", err)
	}
	p := &drivePermRec{Type: in.Type, Role: in.Role}
	switch in.Type {
	case "":
		return nil, errorf(400, "required", "The permission type field is required.")
	case "user", "group":
		if in.EmailAddress == "" {
			return nil, errorf(400, "required", "The permission emailAddress field is required for type %s.", in.Type)
		}
		a, err := mail.ParseAddress(in.EmailAddress)
		if err != nil || a.Address != in.EmailAddress || !strings.Contains(a.Address, "@") {
			return nil, errorf(400, "invalid", "Invalid emailAddress %q.", in.EmailAddress)
		}
		p.Email, p.ID = in.EmailAddress, grantID(in.Type, in.EmailAddress)
	case "domain":
		if in.Domain == "" || strings.ContainsAny(in.Domain, "@/ ") || !strings.Contains(in.Domain, ".") {
			return nil, errorf(400, "required", "The permission domain field is required (a domain name) for type domain.")
		}
		p.Domain, p.AllowDiscovery, p.ID = strings.ToLower(in.Domain), in.AllowFileDiscovery, grantID("domain", in.Domain)
	case "anyone":
		p.AllowDiscovery, p.ID = in.AllowFileDiscovery, "anyoneWithLink"
		if in.AllowFileDiscovery {
			p.ID = "anyone"
		}
	default:
		return nil, errorf(400, "invalid", "Invalid permission type %q: use user, group, domain or anyone.", in.Type)
	}
	switch in.Role {
	case "reader", "commenter", "writer":
	case "":
		return nil, errorf(400, "required", "The permission role field is required.")
	case "owner", "organizer", "fileOrganizer":
		return nil, errorf(400, "invalid", "The sandbox's Drive does not grant role %s: use reader, commenter or writer.", in.Role)
	default:
		return nil, errorf(400, "invalid", "Invalid permission role %q: use reader, commenter or writer.", in.Role)
	}
	if (in.Type == "user" || in.Type == "group") && in.AllowFileDiscovery {
		return nil, errorf(400, "invalid", "allowFileDiscovery applies only to permissions of type domain or anyone.")
	}
	if in.ExpirationTime != "" {
		if in.Type != "user" && in.Type != "group" {
			return nil, errorf(400, "cannotSetExpirationOnAnyoneOrDomain", "Expiration dates cannot be set on permissions of type %s, only on user and group permissions.", in.Type)
		}
		t, err := time.Parse(time.RFC3339Nano, in.ExpirationTime)
		if err != nil {
			return nil, errorf(400, "invalid", "Invalid expirationTime %q: an RFC 3339 date-time such as 2030-01-31T12:00:00Z.", in.ExpirationTime)
		}
		now := s.now()
		switch {
		case !t.After(now):
			return nil, errorf(400, "expirationDatesMustBeInTheFuture", "Expiration dates must be in the future.")
		case t.After(now.AddDate(1, 0, 0)):
			return nil, errorf(400, "invalid", "Expiration dates cannot be more than a year in the future.")
		}
		p.Expires = t.UTC()
	}
	notify := in.Type == "user" || in.Type == "group"
	if v := r.URL.Query().Get("sendNotificationEmail"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, errorf(400, "invalid", "Invalid value for sendNotificationEmail: %q.", v)
		}
		if b && !notify {
			return nil, errorf(400, "invalid", "sendNotificationEmail applies only to user and group permissions.")
		}
		notify = b
	}
	p.Notified = notify
	return p, nil
}

func (s *Sandbox) serveCreatePermission(w http.ResponseWriter, r *http.Request) {
	sel, e := selection(r.URL.Query().Get("fields"), drivePermissionSchema, defaultPermissionFields)
	if e != nil {
		writeError(w, e)
		return
	}
	raw, e := readMetadata(r.Body)
	if e != nil {
		writeError(w, e)
		return
	}
	p, e := s.newPermission(r, raw)
	if e != nil {
		writeError(w, e)
		return
	}
	id := r.PathValue("fileId")
	if !s.update(w, func(tx *bolt.Tx) *apiError {
		f, e := s.getFile(tx, id)
		if e != nil {
			return e
		}
		if p.ID == grantID("user", s.opts.Account) {
			return errorf(403, "cannotChangeOwnerAcl", "The owner's permission cannot be changed this way.")
		}
		f.Version++
		if err := putJSON(tx, bDriveFiles, f.ID, f); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		// Drive's permission id names the grantee: a second grant to the
		// same one replaces the first (the last applies).
		if err := putJSON(tx, bDrivePerms, permKey(f.ID, p.ID), p); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(p.resource()))
}

func (s *Sandbox) serveListPermissions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sel, e := selection(q.Get("fields"), drivePermissionListSchema, defaultPermListFields)
	if e != nil {
		writeError(w, e)
		return
	}
	var out map[string]any
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		f, e := s.getFile(tx, r.PathValue("fileId"))
		if e != nil {
			return e
		}
		perms := s.filePerms(tx, f.ID)
		start, end, next, e := pageBounds(q, len(perms), 100, 100)
		if e != nil {
			return e
		}
		list := []map[string]any{}
		for _, p := range perms[start:end] {
			list = append(list, p.resource())
		}
		out = map[string]any{"kind": "drive#permissionList", "permissions": list}
		if next != "" {
			out["nextPageToken"] = next
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(out))
}

func (s *Sandbox) findPermission(tx *bolt.Tx, r *http.Request) (*driveFileRec, *drivePermRec, *apiError) {
	f, e := s.getFile(tx, r.PathValue("fileId"))
	if e != nil {
		return nil, nil, e
	}
	for _, p := range s.filePerms(tx, f.ID) {
		if p.ID == r.PathValue("permissionId") {
			return f, p, nil
		}
	}
	return nil, nil, errorf(http.StatusNotFound, "notFound", "Permission not found: %s.", r.PathValue("permissionId"))
}

func (s *Sandbox) serveGetPermission(w http.ResponseWriter, r *http.Request) {
	sel, e := selection(r.URL.Query().Get("fields"), drivePermissionSchema, defaultPermissionFields)
	if e != nil {
		writeError(w, e)
		return
	}
	var p *drivePermRec
	if s.view(w, func(tx *bolt.Tx) *apiError { _, p, e = s.findPermission(tx, r); return e }) {
		writeJSON(w, http.StatusOK, sel.apply(p.resource()))
	}
}

func (s *Sandbox) serveDeletePermission(w http.ResponseWriter, r *http.Request) {
	if s.update(w, func(tx *bolt.Tx) *apiError {
		f, p, e := s.findPermission(tx, r)
		if e != nil {
			return e
		}
		if p.Role == "owner" {
			return errorf(403, "cannotRemoveOwner", "The owner of a file cannot be removed.")
		}
		f.Version++
		if err := putJSON(tx, bDriveFiles, f.ID, f); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		if err := tx.Bucket(bDrivePerms).Delete([]byte(permKey(f.ID, p.ID))); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		return nil
	}) {
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Sandbox) serveAbout(w http.ResponseWriter, r *http.Request) {
	fields := r.URL.Query().Get("fields")
	if strings.TrimSpace(fields) == "" {
		writeError(w, errorf(400, "required", "The 'fields' parameter is required for this method."))
		return
	}
	sel, e := selection(fields, driveAboutSchema, "")
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, sel.apply(map[string]any{
		"kind": "drive#about", "user": s.driveUser(), "storageQuota": s.storageQuota(),
		"maxUploadSize": strconv.FormatInt(limitDrive, 10), "appInstalled": false,
		"canCreateDrives": false, "canCreateTeamDrives": false,
	}))
}

// storageQuota is about.get's storageQuota: int64 values as strings.
func (s *Sandbox) storageQuota() map[string]any {
	q := s.DriveQuota()
	var used, photos int64
	s.db.View(func(tx *bolt.Tx) error { used, photos = driveUsage(tx), photosUsage(tx); return nil })
	out := map[string]any{
		"usage":             strconv.FormatInt(used+photos+q.OtherUsage, 10),
		"usageInDrive":      strconv.FormatInt(used, 10),
		"usageInDriveTrash": "0",
	}
	if q.Limit >= 0 {
		out["limit"] = strconv.FormatInt(q.Limit, 10) // absent when unlimited, as Drive does
	}
	return out
}

// serveDriveControl reads and sets the quota: PUT /sandbox/v1/drive with
// {"limit": N, "otherUsage": N} (numbers or numeric strings; a negative
// limit is none; a field left out stays as it is).
func (s *Sandbox) serveDriveControl(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
		if err != nil {
			writeError(w, badRequest("The body is too long or unreadable: %v", err))
			return
		}
		var in map[string]json.RawMessage
		if err := json.Unmarshal(body, &in); err != nil {
			writeError(w, badRequest(`The body must be JSON such as {"limit": 1000000, "otherUsage": 0}: %v`, err))
			return
		}
		q := s.DriveQuota()
		for k, v := range in {
			var n json.Number
			if err := json.Unmarshal(v, &n); err != nil {
				var str string
				if json.Unmarshal(v, &str) != nil {
					writeError(w, badRequest("%s must be a number of bytes.", k))
					return
				}
				n = json.Number(str)
			}
			x, err := n.Int64()
			if err != nil {
				writeError(w, badRequest("%s must be a whole number of bytes: %v", k, err))
				return
			}
			switch k {
			case "limit":
				q.Limit = x
			case "otherUsage":
				if x < 0 {
					writeError(w, badRequest("otherUsage cannot be negative."))
					return
				}
				q.OtherUsage = x
			default:
				writeError(w, badRequest("Unknown field %q: the Drive controls are limit and otherUsage.", k))
				return
			}
		}
		s.SetDriveQuota(q)
		s.log.Info("drive quota changed", "limit", q.Limit, "otherUsage", q.OtherUsage)
	}
	q := s.DriveQuota()
	out := s.storageQuota()
	out["otherUsage"] = strconv.FormatInt(q.OtherUsage, 10)
	if q.Limit < 0 {
		out["limit"] = "-1"
	}
	writeJSON(w, http.StatusOK, out)
}
