package sandbox

// Google Photos' Library API, the part an app that uploads needs:
// POST /v1/uploads (raw, and the X-Goog-Upload-* resumable dialect of
// PROTOCOL.md section 8, in photosupload.go), mediaItems.batchCreate,
// mediaItems.get/list/search, albums.create/list/get, the bytes behind a
// media item's baseUrl, the two scopes, and quotas tests can set.
//
// Where the sandbox chose, for want of a documented answer:
//   - A session URL (/v1/uploads?upload_id=ID&upload_protocol=resumable)
//     is a capability, as the sandbox's other sessions are: its requests
//     need no Authorization (a client may send one). It lives SessionTTL
//     (7 days, as Street View's documented sessions do).
//   - An X-Goog-Upload-Offset other than the bytes received is refused
//     with 400 and stores nothing; the answer carries
//     X-Goog-Upload-Status and X-Goog-Upload-Size-Received, so a client
//     learns where to go on without a query. So is a chunk other than the
//     finalizing one whose length is not a multiple of the granularity,
//     and an "upload" with no Content-Length (its length cannot be checked).
//   - The fault spec acts on Photos' upload requests as on the others
//     (latency, stall, err5xx, reset, rate, dropfinal) but for partial:
//     Google documents no count in the answer to "upload" (the sandbox
//     adds X-Goog-Upload-Size-Received), so a 200 says the chunk is kept
//     whole, and keeping less would be a server that lies.
//   - A query (or a repeated "upload, finalize") after the upload was
//     finalized answers X-Goog-Upload-Status: final with the upload token
//     again as its body, so a client whose last answer was lost learns the
//     token instead of uploading a second time. A cancelled session answers
//     a query with "canceled" and every other command with 400; its bytes
//     are gone.
//   - The type is read from the first 512 bytes (photossniff.go) when
//     they arrive, never from X-Goog-Upload-Content-Type or the file
//     name. Sound is refused at once with 400 (Photos keeps no sound), as
//     are bytes that are no picture or video it knows. Those first bytes
//     are stored only whole: a request cut inside them leaves the session
//     at 0. The limits (200 MiB for pictures, 20 GiB for videos, read as
//     binary units as methods.go reads Gmail's) answer 413, as soon as a
//     declared size (X-Goog-Upload-Raw-Size, Content-Length) or the bytes
//     pass them.
//   - Storage is the account's, shared with Drive: media items count in
//     about.storageQuota's usage once created (identical bytes once), and
//     an upload that cannot fit in what is left is refused with 403
//     storageQuotaExceeded (at its start when it declares its size, else
//     as bytes pass the room); an item that no longer fits at batchCreate
//     gets status code 8 (RESOURCE_EXHAUSTED).
//   - Upload tokens last a day from the upload's end and may be used more
//     than once in that day: identical bytes are one media item, so a
//     batchCreate sent again after a lost answer creates nothing new.
//   - batchCreate answers 200 when every item was created and 207 when
//     some were not, each with its status (code 3 for a bad, expired or
//     unknown token or a description of 1,000 characters or more). More
//     than 50 items, none, or an album the app did not create fail the
//     whole call (400, 400, 403). A call while another of the same user's
//     is running gets 409 ABORTED.
//   - Quotas: requests per day (10,000 unless set; reset at midnight,
//     Pacific time, as Google's daily quotas) count every Photos request
//     but the chunks and queries of a session already started, so an
//     upload under way is never cut by it; over it, 429
//     RESOURCE_EXHAUSTED. Uploads per minute (raw uploads and session
//     starts in the last 60 s; none unless set) answer 400 with status
//     RESOURCE_EXHAUSTED and reason rateLimitExceeded, as peers saw
//     Google do. Both last until the sandbox stops; GET and PUT
//     /sandbox/v1/photos read and set them.
//   - Not Google's: PUT /sandbox/v1/photos {"holdBatchAnswers": true}
//     (static token) holds each batchCreate's answer after its items are
//     made, until {"holdBatchAnswers": false} or the client goes, and GET
//     counts the answers held ("batchAnswersHeld"): a client can so be
//     killed at the moment its call landed unanswered (make demo-photos).
//   - productUrl names where Google Photos would show the item; the
//     sandbox serves no page there. baseUrl serves the bytes (append
//     "=d" or "=dv" as for Google's) to a token with a reading scope.
//   - Albums the person made outside the app exist only through
//     AddPersonalAlbum (for tests): the app cannot list, read or add to
//     them. albums.batchRemoveMediaItems takes items out of an album the
//     app made (as the person does in Google Photos); the items stay in
//     the library. Not served: album sharing, enrichments,
//     batchAddMediaItems, patch, filters in search.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig reads the size of the formats it knows
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// The Photos scopes the sandbox's sign-in grants and its routes check.
const (
	ScopePhotosAppend          = "https://www.googleapis.com/auth/photoslibrary.appendonly"
	ScopePhotosReadAppCreated  = "https://www.googleapis.com/auth/photoslibrary.readonly.appcreateddata"
	ScopePhotosEditAppCreated  = "https://www.googleapis.com/auth/photoslibrary.edit.appcreateddata"
	photosUploadPath           = "/v1/uploads"
	photosBytesPath            = "/photos/media/"
	photosTokenTTL             = 24 * time.Hour
	photosMaxBatch             = 50
	photosMaxDescription       = 1000 // characters; a description must be shorter
	photosMaxAlbumItems        = 20000
	photosMaxTitle             = 500
	DefaultPhotosRequestsQuota = 10000
)

// The size limits of Photos (PROTOCOL.md section 8).
const (
	PhotosPictureLimit = 200 << 20
	PhotosVideoLimit   = 20 << 30
)

var (
	scopesPhotosWrite = []string{"photoslibrary.appendonly"}
	scopesPhotosRead  = []string{"photoslibrary.readonly.appcreateddata", "photoslibrary.edit.appcreateddata"}
	scopesPhotosEdit  = []string{"photoslibrary.edit.appcreateddata"}
)

var (
	bPhotosSessions = []byte("photosSessions")
	bPhotosTokens   = []byte("photosTokens")
	bPhotosItems    = []byte("photosItems")
	bPhotosBySHA    = []byte("photosBySHA256") // the bytes' SHA-256 (hex) to the item made of them
	bPhotosAlbums   = []byte("photosAlbums")
	keyPhotosUse    = []byte("photosUsage") // in bMeta: bytes of the media items
)

func init() {
	allBuckets = append(allBuckets, bPhotosSessions, bPhotosTokens, bPhotosItems, bPhotosBySHA, bPhotosAlbums)
}

// PhotosQuota is what Photos lets the app do; 0 means no limit.
type PhotosQuota struct {
	RequestsPerDay   int64 `json:"requestsPerDay"`
	UploadsPerMinute int64 `json:"uploadsPerMinute"`
}

type photosState struct {
	mu        sync.Mutex
	quota     PhotosQuota
	day       string      // the Pacific date the count is for
	requests  int64       // counted on day
	uploads   []time.Time // raw uploads and session starts of the last minute
	batchBusy bool        // a batchCreate runs (one at a time per user)
	// batchHook runs inside batchCreate while it holds the user's turn,
	// so a test can hold one call there and send another.
	batchHook func()
	// holdAnswers, while not nil, keeps every batchCreate's answer from
	// its client, after the items were made, until it is closed, the
	// client goes or the sandbox stops (PUT /sandbox/v1/photos {"holdBatchAnswers": true}):
	// a demonstration can so kill a client whose call landed but whose
	// answer it never read. answersHeld counts the answers held so far.
	holdAnswers chan struct{}
	answersHeld int64
}

// SetPhotosQuota changes the Photos quotas at run time; the counts so far
// stay.
func (s *Sandbox) SetPhotosQuota(q PhotosQuota) {
	s.photos.mu.Lock()
	s.photos.quota = q
	s.photos.mu.Unlock()
}

// PhotosQuota returns the Photos quotas in force.
func (s *Sandbox) PhotosQuota() PhotosQuota {
	s.photos.mu.Lock()
	defer s.photos.mu.Unlock()
	return s.photos.quota
}

// pacific is where Google's daily quotas turn over.
var pacific = func() *time.Location {
	if l, err := time.LoadLocation("America/Los_Angeles"); err == nil {
		return l
	}
	return time.FixedZone("PST", -8*3600)
}()

// nextReset is the next midnight, Pacific time, after t.
func nextReset(t time.Time) time.Time {
	p := t.In(pacific)
	return time.Date(p.Year(), p.Month(), p.Day()+1, 0, 0, 0, 0, pacific)
}

// countRequest takes one request of the day's quota, and one upload of the
// minute's when upload is set.
func (s *Sandbox) countRequest(upload bool) *apiError {
	now := s.now()
	st := &s.photos
	st.mu.Lock()
	defer st.mu.Unlock()
	if day := now.In(pacific).Format(time.DateOnly); day != st.day {
		st.day, st.requests = day, 0
	}
	if q := st.quota.RequestsPerDay; q > 0 && st.requests >= q {
		return &apiError{Code: http.StatusTooManyRequests, Status: "RESOURCE_EXHAUSTED", Reason: "rateLimitExceeded",
			Message: fmt.Sprintf("Quota exceeded for quota metric 'All requests' and limit 'All requests per day' of service 'photoslibrary.googleapis.com' (%d requests). It resets at midnight Pacific time, %s.",
				q, nextReset(now).UTC().Format(time.RFC3339))}
	}
	if upload {
		recent := st.uploads[:0]
		for _, t := range st.uploads {
			if now.Sub(t) < time.Minute && !t.After(now) {
				recent = append(recent, t)
			}
		}
		st.uploads = recent
		if q := st.quota.UploadsPerMinute; q > 0 && int64(len(recent)) >= q {
			return &apiError{Code: http.StatusBadRequest, Status: "RESOURCE_EXHAUSTED", Reason: "rateLimitExceeded",
				Message: fmt.Sprintf("Quota exceeded for quota metric 'Upload requests' and limit 'Upload requests per minute per user' of service 'photoslibrary.googleapis.com' (%d a minute). Wait a minute and upload again.", q)}
		}
		st.uploads = append(st.uploads, now)
	}
	st.requests++
	return nil
}

// counted puts a Photos route under the daily quota (and the per-minute
// upload quota for the upload route).
func (s *Sandbox) counted(upload bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if e := s.countRequest(upload && r.Header.Get("X-Goog-Upload-Command") != "query"); e != nil {
			// A body read to its end lets the client read the answer: cut
			// off while it still writes, it sees a reset (Windows does)
			// and not the quota's words. A large one is cut off.
			if r.ContentLength != 0 && s.drain(w, r) {
				writeError(w, e)
				return
			}
			s.refuse(w, r, e)
			return
		}
		h(w, r)
	}
}

type photosItemRec struct {
	ID          string    `json:"id"`
	SHA256      string    `json:"sha256"` // hex; the blob is "ph-" + it
	Size        int64     `json:"size"`
	MimeType    string    `json:"mimeType"`
	Kind        string    `json:"kind"`
	FileName    string    `json:"fileName"`
	Description string    `json:"description,omitempty"`
	Width       int       `json:"width,omitempty"`
	Height      int       `json:"height,omitempty"`
	Created     time.Time `json:"created"`
	Seq         uint64    `json:"seq"`
}

type photosAlbumRec struct {
	ID         string    `json:"id"`
	Title      string    `json:"title"`
	AppCreated bool      `json:"appCreated"`
	Items      []string  `json:"items,omitempty"` // in the order they were added
	Created    time.Time `json:"created"`
	Seq        uint64    `json:"seq"`
}

// photosTokenRec is an upload's bytes, waiting to become a media item.
type photosTokenRec struct {
	SHA256   string    `json:"sha256"`
	Size     int64     `json:"size"`
	MimeType string    `json:"mimeType"`
	Kind     string    `json:"kind"`
	FileName string    `json:"fileName,omitempty"`
	Width    int       `json:"width,omitempty"`
	Height   int       `json:"height,omitempty"`
	Created  time.Time `json:"created"`
}

func photosBlob(sha string) string { return "ph-" + sha }

// newPhotosID is shaped as Google's media item and album ids: long,
// URL-safe, unguessable.
func newPhotosID() string { return "AF1Qip" + b64url(randomBytes(36)) }

func newUploadToken() string { return "CAIS" + b64url(randomBytes(60)) }

func photosUsage(tx *bolt.Tx) int64 {
	if v := tx.Bucket(bMeta).Get(keyPhotosUse); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func addPhotosUsage(tx *bolt.Tx, delta int64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(max(photosUsage(tx)+delta, 0)))
	return tx.Bucket(bMeta).Put(keyPhotosUse, buf[:])
}

// photosFree is the account's room for new bytes; negative: no limit.
func (s *Sandbox) photosFree() int64 {
	free := int64(-1)
	s.db.View(func(tx *bolt.Tx) error { free = s.driveFree(tx); return nil })
	return free
}

var errPhotosStorage = errorf(http.StatusForbidden, "storageQuotaExceeded",
	"The account's Google storage is full: Photos, Drive and Gmail share it. Free some space, or buy more, and upload again.")

// openPhotos sets the quotas and drops what outlived its use: expired
// sessions with their bytes, expired tokens, and bytes nothing names.
func (s *Sandbox) openPhotos() {
	s.SetPhotosQuota(PhotosQuota{RequestsPerDay: DefaultPhotosRequestsQuota})
	now := s.now()
	var parts, blobs []string
	s.db.Update(func(tx *bolt.Tx) error {
		var gone [][]byte
		forEach(tx, bPhotosSessions, func(id string, ps *photosSessionRec) error {
			if now.Sub(ps.Created) > s.opts.SessionTTL {
				gone = append(gone, []byte(id))
				parts = append(parts, s.photosPartPath(id))
			}
			return nil
		})
		for _, k := range gone {
			tx.Bucket(bPhotosSessions).Delete(k)
		}
		gone = nil
		live := map[string]bool{}
		forEach(tx, bPhotosTokens, func(tok string, t *photosTokenRec) error {
			if now.Sub(t.Created) > photosTokenTTL {
				gone = append(gone, []byte(tok))
				blobs = append(blobs, t.SHA256)
			} else {
				live[t.SHA256] = true
			}
			return nil
		})
		for _, k := range gone {
			tx.Bucket(bPhotosTokens).Delete(k)
		}
		blobs = slices.DeleteFunc(blobs, func(sha string) bool {
			return live[sha] || tx.Bucket(bPhotosBySHA).Get([]byte(sha)) != nil
		})
		return nil
	})
	for _, p := range parts {
		os.Remove(p)
	}
	for _, sha := range blobs {
		os.Remove(s.blobPath(photosBlob(sha)))
	}
}

func (s *Sandbox) photosRoutes(mux *http.ServeMux) {
	s.openPhotos()
	s.handleFunc(mux, scopesPhotosWrite, "POST "+photosUploadPath, s.counted(true, s.servePhotosUpload))
	s.handleFunc(mux, scopesPhotosWrite, "POST /v1/mediaItems:batchCreate", s.counted(false, s.serveBatchCreate))
	s.handleFunc(mux, scopesPhotosRead, "GET /v1/mediaItems/{id}", s.counted(false, s.serveGetMediaItem))
	s.handleFunc(mux, scopesPhotosRead, "GET /v1/mediaItems", s.counted(false, s.serveListMediaItems))
	s.handleFunc(mux, scopesPhotosRead, "POST /v1/mediaItems:search", s.counted(false, s.serveSearchMediaItems))
	s.handleFunc(mux, scopesPhotosWrite, "POST /v1/albums", s.counted(false, s.serveCreateAlbum))
	s.handleFunc(mux, scopesPhotosRead, "GET /v1/albums", s.counted(false, s.serveListAlbums))
	s.handleFunc(mux, scopesPhotosRead, "GET /v1/albums/{id}", s.counted(false, s.serveGetAlbum))
	s.handleFunc(mux, scopesPhotosEdit, "POST /v1/albums/{target}", s.counted(false, s.serveAlbumRemove))
	s.handleFunc(mux, scopesPhotosRead, "GET "+photosBytesPath+"{ref}", s.servePhotosBytes)
	static := routeAccess{staticOnly: true}
	s.handle(mux, "GET /sandbox/v1/photos", static, http.HandlerFunc(s.servePhotosControl))
	s.handle(mux, "PUT /sandbox/v1/photos", static, http.HandlerFunc(s.servePhotosControl))
}

// readJSONBody decodes a small JSON request body into v.
func readJSONBody(r *http.Request, v any) *apiError {
	raw, e := readMetadata(r.Body)
	if e != nil {
		return e
	}
	if raw == nil {
		return badRequest("The request needs a JSON body.")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errorf(400, "parseError", "Invalid JSON payload received: %v", err)
	}
	return nil
}

type batchCreateReq struct {
	AlbumID       string `json:"albumId"`
	NewMediaItems []struct {
		Description     string `json:"description"`
		SimpleMediaItem *struct {
			UploadToken string `json:"uploadToken"`
			FileName    string `json:"fileName"`
		} `json:"simpleMediaItem"`
	} `json:"newMediaItems"`
}

var errBatchBusy = &apiError{Code: http.StatusConflict, Status: "ABORTED", Reason: "aborted",
	Message: "Another mediaItems.batchCreate call for this user is still running. Make these calls one at a time: wait for its answer, then send this one again."}

func (s *Sandbox) serveBatchCreate(w http.ResponseWriter, r *http.Request) {
	var req batchCreateReq
	if e := readJSONBody(r, &req); e != nil {
		writeError(w, e)
		return
	}
	switch n := len(req.NewMediaItems); {
	case n == 0:
		writeError(w, badRequest("newMediaItems is empty: a call creates between 1 and %d media items.", photosMaxBatch))
		return
	case n > photosMaxBatch:
		writeError(w, badRequest("newMediaItems has %d items; a call creates at most %d. Send the rest in further calls, one at a time.", n, photosMaxBatch))
		return
	}
	st := &s.photos
	st.mu.Lock()
	busy, hook := st.batchBusy, st.batchHook
	st.batchBusy = true
	st.mu.Unlock()
	if busy {
		writeError(w, errBatchBusy)
		return
	}
	defer func() {
		st.mu.Lock()
		st.batchBusy = false
		st.mu.Unlock()
	}()
	if hook != nil {
		hook()
	}
	type result struct {
		token  string
		status map[string]any
		item   *photosItemRec
	}
	results := make([]result, len(req.NewMediaItems))
	allOK := true
	base := baseURL(r)
	if !s.update(w, func(tx *bolt.Tx) *apiError {
		var album *photosAlbumRec
		if req.AlbumID != "" {
			album = new(photosAlbumRec)
			if err := getJSON(tx, bPhotosAlbums, req.AlbumID, album); err != nil {
				return badRequest("Invalid album ID %q: no album with this id.", req.AlbumID)
			}
			if !album.AppCreated {
				return errorf(http.StatusForbidden, "forbidden", "No permission to add media items to this album: it was not created by this app.")
			}
		}
		free := s.driveFree(tx)
		for i, nm := range req.NewMediaItems {
			res := &results[i]
			fail := func(code int, format string, a ...any) {
				res.status = map[string]any{"code": code, "message": fmt.Sprintf(format, a...)}
				allOK = false
			}
			if nm.SimpleMediaItem == nil || nm.SimpleMediaItem.UploadToken == "" {
				fail(3, "No uploadToken: each new media item needs simpleMediaItem.uploadToken from an upload.")
				continue
			}
			res.token = nm.SimpleMediaItem.UploadToken
			if n := utf8.RuneCountInString(nm.Description); n >= photosMaxDescription {
				fail(3, "The description has %d characters; it must be shorter than %d.", n, photosMaxDescription)
				continue
			}
			var tok photosTokenRec
			if err := getJSON(tx, bPhotosTokens, res.token, &tok); err != nil {
				fail(3, "Unknown upload token: it was never issued, or it expired and was dropped. Upload the bytes again.")
				continue
			}
			if s.now().Sub(tok.Created) >= photosTokenTTL {
				fail(3, "The upload token expired (tokens last a day after their upload). Upload the bytes again.")
				continue
			}
			it := new(photosItemRec)
			if id := tx.Bucket(bPhotosBySHA).Get([]byte(tok.SHA256)); id != nil {
				// Identical bytes are one media item.
				if err := getJSON(tx, bPhotosItems, string(id), it); err != nil {
					return errorf(500, "backendError", "%v", err)
				}
			} else {
				if free >= 0 && tok.Size > free {
					fail(8, "Insufficient storage: the account's Google storage has %d bytes free and this item needs %d.", free, tok.Size)
					continue
				}
				it = &photosItemRec{ID: newPhotosID(), SHA256: tok.SHA256, Size: tok.Size, MimeType: tok.MimeType, Kind: tok.Kind,
					FileName: nm.SimpleMediaItem.FileName, Description: nm.Description, Created: s.now().UTC(), Seq: nextSeq(tx)}
				if it.FileName == "" {
					it.FileName = tok.FileName
				}
				it.Width, it.Height = tok.Width, tok.Height
				if err := putJSON(tx, bPhotosItems, it.ID, it); err != nil {
					return errorf(500, "backendError", "%v", err)
				}
				if err := tx.Bucket(bPhotosBySHA).Put([]byte(it.SHA256), []byte(it.ID)); err != nil {
					return errorf(500, "backendError", "%v", err)
				}
				if err := addPhotosUsage(tx, it.Size); err != nil {
					return errorf(500, "backendError", "%v", err)
				}
				if free >= 0 {
					free -= it.Size
				}
			}
			if album != nil && !slices.Contains(album.Items, it.ID) {
				if len(album.Items) >= photosMaxAlbumItems {
					fail(3, "The album holds %d media items, as many as an album can.", photosMaxAlbumItems)
					continue
				}
				album.Items = append(album.Items, it.ID)
			}
			res.item = it
			res.status = map[string]any{"message": "Success"}
		}
		if album != nil {
			if err := putJSON(tx, bPhotosAlbums, album.ID, album); err != nil {
				return errorf(500, "backendError", "%v", err)
			}
		}
		return nil
	}) {
		return
	}
	out := []map[string]any{}
	for _, res := range results {
		m := map[string]any{"status": res.status}
		if res.token != "" {
			m["uploadToken"] = res.token
		}
		if res.item != nil {
			m["mediaItem"] = photosItemResource(res.item, base)
		}
		out = append(out, m)
	}
	code := http.StatusOK
	if !allOK {
		code = http.StatusMultiStatus
	}
	st.mu.Lock()
	hold := st.holdAnswers
	if hold != nil {
		st.answersHeld++
	}
	st.mu.Unlock()
	if hold != nil {
		s.log.Info("photos: a batchCreate's answer is held", "items", len(out))
		select {
		case <-hold:
		case <-r.Context().Done():
			return // its client went: the answer is lost, the items made
		case <-s.closing:
			return // a sandbox that stops waits for no hold
		}
	}
	writeJSON(w, code, map[string]any{"newMediaItemResults": out})
}

// pictureSize reads the width and height of the picture formats the
// standard library knows; 0 for the others.
func (s *Sandbox) pictureSize(kind, path string) (int, int) {
	if kind != kindPicture {
		return 0, 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	c, _, err := image.DecodeConfig(io.LimitReader(f, 1<<20))
	if err != nil {
		return 0, 0
	}
	return c.Width, c.Height
}

func photosItemResource(it *photosItemRec, base string) map[string]any {
	meta := map[string]any{"creationTime": it.Created.Format(time.RFC3339Nano)}
	if it.Width > 0 {
		meta["width"], meta["height"] = strconv.Itoa(it.Width), strconv.Itoa(it.Height)
	}
	if it.Kind == kindVideo {
		meta["video"] = map[string]any{"status": "READY"}
	} else {
		meta["photo"] = map[string]any{}
	}
	m := map[string]any{
		"id":            it.ID,
		"productUrl":    base + "/photos/lr/photo/" + it.ID,
		"baseUrl":       base + photosBytesPath + it.ID,
		"mimeType":      it.MimeType,
		"mediaMetadata": meta,
		"filename":      it.FileName,
	}
	if it.Description != "" {
		m["description"] = it.Description
	}
	return m
}

func photosAlbumResource(a *photosAlbumRec, base string) map[string]any {
	m := map[string]any{
		"id":              a.ID,
		"title":           a.Title,
		"productUrl":      base + "/photos/lr/album/" + a.ID,
		"isWriteable":     a.AppCreated,
		"mediaItemsCount": strconv.Itoa(len(a.Items)),
	}
	if len(a.Items) > 0 {
		m["coverPhotoMediaItemId"] = a.Items[0]
		m["coverPhotoBaseUrl"] = base + photosBytesPath + a.Items[0]
	}
	return m
}

func photosItemNotFound(id string) *apiError {
	return notFound("Requested entity was not found: no media item %q made by this app.", id)
}

func (s *Sandbox) serveGetMediaItem(w http.ResponseWriter, r *http.Request) {
	it := new(photosItemRec)
	if s.view(w, func(tx *bolt.Tx) *apiError {
		if getJSON(tx, bPhotosItems, r.PathValue("id"), it) != nil {
			return photosItemNotFound(r.PathValue("id"))
		}
		return nil
	}) {
		writeJSON(w, http.StatusOK, photosItemResource(it, baseURL(r)))
	}
}

// allItems are the app's media items, newest first.
func allItems(tx *bolt.Tx) []*photosItemRec {
	var items []*photosItemRec
	forEach(tx, bPhotosItems, func(_ string, it *photosItemRec) error { items = append(items, it); return nil })
	slices.SortFunc(items, func(a, b *photosItemRec) int { return cmpInt(b.Seq, a.Seq) })
	return items
}

func (s *Sandbox) serveListMediaItems(w http.ResponseWriter, r *http.Request) {
	s.listItems(w, r, r.URL.Query(), "")
}

func (s *Sandbox) serveSearchMediaItems(w http.ResponseWriter, r *http.Request) {
	var req struct {
		AlbumID   string          `json:"albumId"`
		PageSize  int             `json:"pageSize"`
		PageToken string          `json:"pageToken"`
		Filters   json.RawMessage `json:"filters"`
		OrderBy   string          `json:"orderBy"`
	}
	if e := readJSONBody(r, &req); e != nil {
		writeError(w, e)
		return
	}
	if len(req.Filters) > 0 || req.OrderBy != "" {
		writeError(w, badRequest("The sandbox's mediaItems.search takes albumId, pageSize and pageToken only; filters and orderBy are not served."))
		return
	}
	q := url.Values{}
	if req.PageSize != 0 {
		q.Set("pageSize", strconv.Itoa(req.PageSize))
	}
	if req.PageToken != "" {
		q.Set("pageToken", req.PageToken)
	}
	if req.AlbumID == "" {
		req.AlbumID = "\x00all"
	}
	s.listItems(w, r, q, req.AlbumID)
}

// listItems answers a page of the app's items: all of them (album ""),
// or an album's in its order.
func (s *Sandbox) listItems(w http.ResponseWriter, r *http.Request, q url.Values, album string) {
	var out map[string]any
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		var items []*photosItemRec
		if album == "" || album == "\x00all" {
			items = allItems(tx)
		} else {
			a := new(photosAlbumRec)
			if getJSON(tx, bPhotosAlbums, album, a) != nil {
				return notFound("Requested entity was not found: no album %q.", album)
			}
			if !a.AppCreated {
				return errorf(http.StatusForbidden, "forbidden", "The album %q was not created by this app, which may read only what it created.", album)
			}
			for _, id := range a.Items {
				it := new(photosItemRec)
				if getJSON(tx, bPhotosItems, id, it) == nil {
					items = append(items, it)
				}
			}
		}
		start, end, next, e := pageBounds(q, len(items), 25, 100)
		if e != nil {
			return e
		}
		list := []map[string]any{}
		for _, it := range items[start:end] {
			list = append(list, photosItemResource(it, baseURL(r)))
		}
		out = map[string]any{}
		if len(list) > 0 {
			out["mediaItems"] = list // Google leaves an empty list out
		}
		if next != "" {
			out["nextPageToken"] = next
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sandbox) serveCreateAlbum(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Album *struct {
			Title string `json:"title"`
			ID    string `json:"id"`
		} `json:"album"`
	}
	if e := readJSONBody(r, &req); e != nil {
		writeError(w, e)
		return
	}
	switch {
	case req.Album == nil:
		writeError(w, badRequest("The request needs an album: {\"album\": {\"title\": \"...\"}}."))
		return
	case req.Album.ID != "":
		writeError(w, badRequest("An album's id is chosen by Google Photos; leave it out."))
		return
	case strings.TrimSpace(req.Album.Title) == "":
		writeError(w, badRequest("The album needs a title."))
		return
	case utf8.RuneCountInString(req.Album.Title) > photosMaxTitle:
		writeError(w, badRequest("The album's title has %d characters; at most %d.", utf8.RuneCountInString(req.Album.Title), photosMaxTitle))
		return
	}
	a := &photosAlbumRec{ID: newPhotosID(), Title: req.Album.Title, AppCreated: true, Created: s.now().UTC()}
	if s.update(w, func(tx *bolt.Tx) *apiError {
		a.Seq = nextSeq(tx)
		if err := putJSON(tx, bPhotosAlbums, a.ID, a); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		return nil
	}) {
		writeJSON(w, http.StatusOK, photosAlbumResource(a, baseURL(r)))
	}
}

// serveAlbumRemove is albums.batchRemoveMediaItems
// (POST /v1/albums/ID:batchRemoveMediaItems {"mediaItemIds": [...]}): the
// items leave the album the app made; each must be in it, and at most 50
// go in one call, as Google's.
func (s *Sandbox) serveAlbumRemove(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutSuffix(r.PathValue("target"), ":batchRemoveMediaItems")
	if !ok {
		writeError(w, notFound("No such method: %s.", r.URL.Path))
		return
	}
	var req struct {
		MediaItemIDs []string `json:"mediaItemIds"`
	}
	if e := readJSONBody(r, &req); e != nil {
		writeError(w, e)
		return
	}
	if n := len(req.MediaItemIDs); n == 0 || n > photosMaxBatch {
		writeError(w, badRequest("mediaItemIds has %d ids; a call removes between 1 and %d.", n, photosMaxBatch))
		return
	}
	if s.update(w, func(tx *bolt.Tx) *apiError {
		a := new(photosAlbumRec)
		if getJSON(tx, bPhotosAlbums, id, a) != nil {
			return notFound("Requested entity was not found: no album %q.", id)
		}
		if !a.AppCreated {
			return errorf(http.StatusForbidden, "forbidden", "No permission to remove media items from this album: it was not created by this app.")
		}
		for _, it := range req.MediaItemIDs {
			i := slices.Index(a.Items, it)
			if i < 0 {
				return badRequest("The media item %q is not in the album.", it)
			}
			a.Items = slices.Delete(a.Items, i, i+1)
		}
		if err := putJSON(tx, bPhotosAlbums, a.ID, a); err != nil {
			return errorf(500, "backendError", "%v", err)
		}
		return nil
	}) {
		writeJSON(w, http.StatusOK, map[string]any{})
	}
}

// AddPersonalAlbum makes an album as the person would in Google Photos,
// not through this app, and returns its id: the app may not see or fill it.
func (s *Sandbox) AddPersonalAlbum(title string) (string, error) {
	a := &photosAlbumRec{ID: newPhotosID(), Title: title, Created: s.now().UTC()}
	err := s.db.Update(func(tx *bolt.Tx) error {
		a.Seq = nextSeq(tx)
		return putJSON(tx, bPhotosAlbums, a.ID, a)
	})
	return a.ID, err
}

func (s *Sandbox) serveListAlbums(w http.ResponseWriter, r *http.Request) {
	var out map[string]any
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		var albums []*photosAlbumRec
		forEach(tx, bPhotosAlbums, func(_ string, a *photosAlbumRec) error {
			if a.AppCreated {
				albums = append(albums, a)
			}
			return nil
		})
		slices.SortFunc(albums, func(a, b *photosAlbumRec) int { return cmpInt(b.Seq, a.Seq) })
		start, end, next, e := pageBounds(r.URL.Query(), len(albums), 20, 50)
		if e != nil {
			return e
		}
		list := []map[string]any{}
		for _, a := range albums[start:end] {
			list = append(list, photosAlbumResource(a, baseURL(r)))
		}
		out = map[string]any{}
		if len(list) > 0 {
			out["albums"] = list
		}
		if next != "" {
			out["nextPageToken"] = next
		}
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sandbox) serveGetAlbum(w http.ResponseWriter, r *http.Request) {
	a := new(photosAlbumRec)
	if s.view(w, func(tx *bolt.Tx) *apiError {
		if getJSON(tx, bPhotosAlbums, r.PathValue("id"), a) != nil {
			return notFound("Requested entity was not found: no album %q.", r.PathValue("id"))
		}
		if !a.AppCreated {
			return errorf(http.StatusForbidden, "forbidden", "The album %q was not created by this app, which may read only what it created.", a.ID)
		}
		return nil
	}) {
		writeJSON(w, http.StatusOK, photosAlbumResource(a, baseURL(r)))
	}
}

// servePhotosBytes serves a media item's bytes at its baseUrl, with the
// suffixes Google's take ("=d" the picture, "=dv" the video).
func (s *Sandbox) servePhotosBytes(w http.ResponseWriter, r *http.Request) {
	id, suffix, _ := strings.Cut(r.PathValue("ref"), "=")
	switch suffix {
	case "", "d", "dv":
	default:
		writeError(w, badRequest("The sandbox serves a media item's bytes whole: append =d (pictures) or =dv (videos) to its baseUrl, or nothing."))
		return
	}
	it := new(photosItemRec)
	if !s.view(w, func(tx *bolt.Tx) *apiError {
		if getJSON(tx, bPhotosItems, id, it) != nil {
			return photosItemNotFound(id)
		}
		return nil
	}) {
		return
	}
	f, err := os.Open(s.blobPath(photosBlob(it.SHA256)))
	if err != nil {
		writeError(w, errorf(500, "backendError", "the stored bytes are missing: %v", pathless(err)))
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", it.MimeType)
	http.ServeContent(w, r, "", it.Created, f)
}

// servePhotosControl reads and sets the quotas: PUT /sandbox/v1/photos
// with {"requestsPerDay": N, "uploadsPerMinute": N} (0: no limit; a field
// left out stays) and "resetCounts": true to forget the counts so far;
// "holdBatchAnswers": true holds batchCreate's answers (photosState), false
// lets them go.
func (s *Sandbox) servePhotosControl(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		body, ok := controlBody(w, r)
		if !ok {
			return
		}
		var in struct {
			RequestsPerDay   *int64 `json:"requestsPerDay"`
			UploadsPerMinute *int64 `json:"uploadsPerMinute"`
			ResetCounts      bool   `json:"resetCounts"`
			HoldBatchAnswers *bool  `json:"holdBatchAnswers"`
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			writeError(w, badRequest(`The body must be JSON such as {"requestsPerDay": 10000, "uploadsPerMinute": 30, "resetCounts": true}: %v`, err))
			return
		}
		st := &s.photos
		st.mu.Lock()
		for _, v := range []*int64{in.RequestsPerDay, in.UploadsPerMinute} {
			if v != nil && *v < 0 {
				st.mu.Unlock()
				writeError(w, badRequest("A quota is a count of requests, 0 for none; got %d.", *v))
				return
			}
		}
		if in.RequestsPerDay != nil {
			st.quota.RequestsPerDay = *in.RequestsPerDay
		}
		if in.UploadsPerMinute != nil {
			st.quota.UploadsPerMinute = *in.UploadsPerMinute
		}
		if in.ResetCounts {
			st.requests, st.uploads = 0, nil
		}
		switch {
		case in.HoldBatchAnswers == nil:
		case *in.HoldBatchAnswers && st.holdAnswers == nil:
			st.holdAnswers = make(chan struct{})
		case !*in.HoldBatchAnswers && st.holdAnswers != nil:
			close(st.holdAnswers) // the answers held go to the clients still there
			st.holdAnswers = nil
		}
		st.mu.Unlock()
		s.log.Info("photos quota changed", "requestsPerDay", s.PhotosQuota().RequestsPerDay, "uploadsPerMinute", s.PhotosQuota().UploadsPerMinute)
	}
	st := &s.photos
	now := s.now()
	st.mu.Lock()
	today := st.requests
	if st.day != now.In(pacific).Format(time.DateOnly) {
		today = 0 // the count is yesterday's until the next request
	}
	out := map[string]any{"requestsPerDay": st.quota.RequestsPerDay, "uploadsPerMinute": st.quota.UploadsPerMinute,
		"requestsToday": today, "resetsAt": nextReset(now).UTC().Format(time.RFC3339),
		"holdBatchAnswers": st.holdAnswers != nil, "batchAnswersHeld": st.answersHeld}
	st.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}
