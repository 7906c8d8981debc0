package sandbox

// Photos' uploads (PROTOCOL.md section 8): raw, and the resumable dialect
// whose every request is a POST naming its X-Goog-Upload-Command. The
// choices made where Google's pages are silent are listed in photos.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// photosSessionRec is a resumable Photos upload as stored; its bytes are
// in uploads/ph-ID.part, cut back to Stored before every write.
type photosSessionRec struct {
	ID       string    `json:"id"`
	Declared int64     `json:"declared"` // X-Goog-Upload-Raw-Size; -1 when not given
	FileName string    `json:"fileName,omitempty"`
	Stored   int64     `json:"stored"`
	SHAState []byte    `json:"shaState,omitempty"` // SHA-256 of the stored bytes so far
	MimeType string    `json:"mimeType,omitempty"` // read from the first bytes
	Kind     string    `json:"kind,omitempty"`
	Created  time.Time `json:"created"`
	State    string    `json:"state"` // active, final or canceled
	Token    string    `json:"token,omitempty"`
}

const (
	uploadActive   = "active"
	uploadFinal    = "final"
	uploadCanceled = "canceled"
)

func (s *Sandbox) photosPartPath(id string) string { return s.uploadPath("ph-" + id) }

func uploadStatus(w http.ResponseWriter, state string, received int64) {
	w.Header().Set("X-Goog-Upload-Status", state)
	w.Header().Set("X-Goog-Upload-Size-Received", formatInt(received))
}

func kindLimit(kind string) int64 {
	if kind == kindPicture {
		return PhotosPictureLimit
	}
	return PhotosVideoLimit
}

func photosTooLarge(kind string, n int64) *apiError {
	if kind == kindPicture {
		return errorf(http.StatusRequestEntityTooLarge, "uploadTooLarge",
			"The picture is %d bytes; Google Photos takes pictures of at most 200 MiB (%d bytes).", n, int64(PhotosPictureLimit))
	}
	return errorf(http.StatusRequestEntityTooLarge, "uploadTooLarge",
		"The media is %d bytes; Google Photos takes videos of at most 20 GiB (%d bytes) and pictures of at most 200 MiB.", n, int64(PhotosVideoLimit))
}

// sniffCheck reads the type from an upload's first bytes and refuses what
// Photos does not keep.
func sniffCheck(head []byte) (mimeType, kind string, e *apiError) {
	if len(head) == 0 {
		return "", "", errorf(400, "badContent", "The upload is empty: Google Photos needs the bytes of a picture or a video.")
	}
	mimeType, kind = sniffMedia(head)
	switch kind {
	case "":
		return "", "", errorf(400, "badContent",
			"The bytes are not a picture or a video that Google Photos takes (the type is read from the file's first bytes, not its name or the type declared).")
	case kindAudio:
		return "", "", errorf(400, "badContent",
			"The file is sound (%s). Google Photos keeps pictures and videos only; send sound to Drive instead.", mimeType)
	}
	return mimeType, kind, nil
}

// limitFor is what a kind of media may reach here: its limit, or the
// account's free storage when that is less, with the refusal for each.
func (s *Sandbox) limitFor(kind string) (int64, func(n int64) *apiError) {
	limit, over := kindLimit(kind), func(n int64) *apiError { return photosTooLarge(kind, n) }
	if free := s.photosFree(); free >= 0 && free < limit {
		return free, func(int64) *apiError { return errPhotosStorage }
	}
	return limit, over
}

// servePhotosUpload serves POST /v1/uploads: a raw upload, or a resumable
// session's start.
func (s *Sandbox) servePhotosUpload(w http.ResponseWriter, r *http.Request) {
	switch p := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Goog-Upload-Protocol"))); p {
	case "raw":
		s.photosRaw(w, r)
	case "resumable":
		if c := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Goog-Upload-Command"))); c != "start" {
			s.refuse(w, r, badRequest("A resumable upload begins with X-Goog-Upload-Command: start at %s (got %q); its other commands go to the X-Goog-Upload-URL the start answered.", photosUploadPath, printable(c)))
			return
		}
		s.photosStart(w, r)
	case "":
		s.refuse(w, r, badRequest("Send X-Goog-Upload-Protocol: raw (the bytes in this request) or resumable (X-Goog-Upload-Command: start, then the bytes to the session URL)."))
	default:
		s.refuse(w, r, badRequest("Unknown X-Goog-Upload-Protocol %q: use raw or resumable.", printable(p)))
	}
}

func (s *Sandbox) photosStart(w http.ResponseWriter, r *http.Request) {
	if _, handled := s.beginFaults(w, r); handled {
		return
	}
	if r.ContentLength != 0 {
		// A start carries no bytes; a small body (metadata some clients
		// send) is read and ignored.
		if n, err := s.discard(w, r.Body, maxMetadata+1); err != nil || n > maxMetadata {
			s.refuse(w, r, badRequest("A start carries no media: send the bytes to the session URL it answers."))
			return
		}
	}
	declared := int64(-1)
	if v := r.Header.Get("X-Goog-Upload-Raw-Size"); v != "" {
		n, err := parseSize(v)
		if err != nil {
			writeError(w, badRequest("X-Goog-Upload-Raw-Size: %v", err))
			return
		}
		if n > PhotosVideoLimit {
			writeError(w, photosTooLarge("", n))
			return
		}
		if free := s.photosFree(); free >= 0 && n > free {
			writeError(w, errPhotosStorage)
			return
		}
		declared = n
	}
	ps := &photosSessionRec{ID: newUploadID(), Declared: declared, FileName: r.Header.Get("X-Goog-Upload-File-Name"),
		Created: s.now(), State: uploadActive}
	if err := s.savePhotosSession(ps); err != nil {
		writeError(w, errorf(500, "backendError", "store: %v", err))
		return
	}
	s.stats.sessionsCreated.Add(1)
	w.Header().Set("X-Goog-Upload-Status", uploadActive)
	w.Header().Set("X-Goog-Upload-URL", baseURL(r)+photosUploadPath+"?upload_id="+ps.ID+"&upload_protocol=resumable")
	w.Header().Set("X-Goog-Upload-Chunk-Granularity", formatInt(chunkGranularity))
	w.Header().Set("X-GUploader-UploadID", ps.ID)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func (s *Sandbox) savePhotosSession(ps *photosSessionRec) error {
	return s.db.Update(func(tx *bolt.Tx) error { return putJSON(tx, bPhotosSessions, ps.ID, ps) })
}

func (s *Sandbox) loadPhotosSession(id string) (*photosSessionRec, *apiError) {
	ps := new(photosSessionRec)
	err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx, bPhotosSessions, id, ps) })
	if errors.Is(err, errNoRecord) {
		return nil, errSessionGone
	}
	if err != nil {
		return nil, errorf(500, "backendError", "%v", err)
	}
	if s.now().Sub(ps.Created) > s.opts.SessionTTL {
		s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bPhotosSessions).Delete([]byte(id)) })
		os.Remove(s.photosPartPath(id))
		return nil, errSessionGone
	}
	return ps, nil
}

// photosRaw serves a raw upload: the bytes in one request, a token back.
func (s *Sandbox) photosRaw(w http.ResponseWriter, r *http.Request) {
	plan, handled := s.beginFaults(w, r)
	if handled {
		return
	}
	n := r.ContentLength
	if n > PhotosVideoLimit {
		s.refuse(w, r, photosTooLarge("", n))
		return
	}
	if free := s.photosFree(); free >= 0 && n > free {
		s.refuse(w, r, errPhotosStorage)
		return
	}
	var head bytes.Buffer
	if _, err := s.copyBody(w, &head, r.Body, sniffLen, nil); err != nil {
		s.interrupted(w, err)
		return
	}
	mimeType, kind, e := sniffCheck(head.Bytes())
	if e == nil && n > kindLimit(kind) {
		e = photosTooLarge(kind, n)
	}
	if e != nil {
		s.refuse(w, r, e)
		return
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, "uploads"), "simple-photos-*.part")
	if err != nil {
		writeError(w, errorf(500, "backendError", "store: %v", pathless(err)))
		return
	}
	defer os.Remove(f.Name()) // once filed, the blob's name holds the bytes
	defer f.Close()
	sum := sha256.New()
	dst := io.MultiWriter(f, sum)
	dst.Write(head.Bytes())
	limit, over := s.limitFor(kind)
	m, err := s.copyBody(w, dst, r.Body, limit-int64(head.Len())+1, nil)
	total := int64(head.Len()) + m
	if err == nil && total > limit {
		s.refuse(w, r, over(total))
		return
	}
	if err == nil {
		err = s.fsync(f)
	}
	if err != nil {
		s.interrupted(w, err)
		return
	}
	s.stats.bytesStored.Add(total)
	token, e := s.fileUpload(f.Name(), total, sum.Sum(nil), mimeType, kind, r.Header.Get("X-Goog-Upload-File-Name"), nil)
	if e != nil {
		writeError(w, e)
		return
	}
	s.stats.completions.Add(1)
	if plan.dropFinal {
		s.stats.faults.Add(1)
		abortConn()
	}
	writeToken(w, token)
}

func writeToken(w http.ResponseWriter, token string) {
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, token)
}

// fileUpload keeps finished bytes under their SHA-256 (identical bytes
// are stored once) and issues their upload token; with a session, the
// session becomes final with it in the same transaction.
func (s *Sandbox) fileUpload(path string, size int64, sum []byte, mimeType, kind, fileName string, ps *photosSessionRec) (string, *apiError) {
	sha := hex.EncodeToString(sum)
	blob := s.blobPath(photosBlob(sha))
	linked := false
	if _, err := os.Stat(blob); err != nil {
		// A second name, not a move: until the commit, a session's part
		// file stays where a retry finds it.
		if err := os.Link(path, blob); err != nil && !errors.Is(err, os.ErrExist) {
			return "", errorf(500, "backendError", "filing the upload: %v", pathless(err))
		}
		linked = true
		if !s.opts.NoSync {
			syncDir(filepath.Dir(blob))
		}
	}
	rec := &photosTokenRec{SHA256: sha, Size: size, MimeType: mimeType, Kind: kind, FileName: fileName, Created: s.now().UTC()}
	rec.Width, rec.Height = s.pictureSize(kind, blob)
	token := newUploadToken()
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := putJSON(tx, bPhotosTokens, token, rec); err != nil {
			return err
		}
		if ps == nil {
			return nil
		}
		ps.State, ps.Token = uploadFinal, token
		return putJSON(tx, bPhotosSessions, ps.ID, ps)
	})
	if err != nil {
		if ps != nil {
			ps.State, ps.Token = uploadActive, ""
		}
		if linked {
			s.db.View(func(tx *bolt.Tx) error {
				if tx.Bucket(bPhotosBySHA).Get([]byte(sha)) == nil {
					os.Remove(blob) // no item names the bytes; a token may, but its record is not written
				}
				return nil
			})
		}
		return "", errorf(500, "backendError", "store: %v", err)
	}
	if ps != nil {
		os.Remove(path)
	}
	return token, nil
}

// uploadCommand is X-Goog-Upload-Command read: "upload, finalize" is two.
type uploadCommand struct{ query, cancel, upload, finalize bool }

func parseUploadCommand(v string) (uploadCommand, *apiError) {
	var c uploadCommand
	n := 0
	for _, part := range strings.Split(v, ",") {
		switch p := strings.ToLower(strings.TrimSpace(part)); p {
		case "query":
			c.query = true
		case "cancel":
			c.cancel = true
		case "upload":
			c.upload = true
		case "finalize":
			c.finalize = true
		case "start":
			return c, badRequest("X-Goog-Upload-Command: start goes to %s, not to a session URL.", photosUploadPath)
		case "":
			continue
		default:
			return c, badRequest("Unknown X-Goog-Upload-Command %q: a session takes upload, \"upload, finalize\", finalize, query or cancel.", printable(p))
		}
		n++
	}
	switch {
	case n == 0:
		return c, badRequest("Send X-Goog-Upload-Command: upload, \"upload, finalize\", finalize, query or cancel.")
	case (c.query || c.cancel) && n > 1:
		return c, badRequest("X-Goog-Upload-Command %q mixes commands that go alone: query and cancel are sent by themselves.", printable(v))
	}
	return c, nil
}

// servePhotosSession answers the requests to a session URL. They need no
// Authorization: the URL is the capability.
func (s *Sandbox) servePhotosSession(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("upload_id")
	w.Header().Set("X-GUploader-UploadID", id)
	if r.Method != http.MethodPost {
		s.refuse(w, r, errorf(http.StatusMethodNotAllowed, "httpMethodNotAllowed",
			"A Photos session URL takes POST with X-Goog-Upload-Command, not %s.", r.Method))
		return
	}
	cmd, e := parseUploadCommand(r.Header.Get("X-Goog-Upload-Command"))
	if e != nil {
		s.refuse(w, r, e)
		return
	}
	var plan faultPlan
	if !cmd.cancel {
		var handled bool
		if plan, handled = s.beginFaults(w, r); handled {
			return
		}
	}
	unlock, ok := s.sessionLock(r, "photos:"+id)
	if !ok {
		s.refuse(w, r, errShuttingDown)
		return
	}
	defer unlock()
	ps, e := s.loadPhotosSession(id)
	if e != nil {
		s.refuse(w, r, e)
		return
	}
	switch ps.State {
	case uploadCanceled:
		uploadStatus(w, uploadCanceled, 0)
		if cmd.query || cmd.cancel {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return
		}
		s.refuse(w, r, badRequest("The upload was cancelled; start a new one."))
		return
	case uploadFinal:
		// The token again, so a client whose answer was lost never
		// uploads twice; bytes sent again stay unread.
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
		}
		uploadStatus(w, uploadFinal, ps.Stored)
		writeToken(w, ps.Token)
		return
	}
	switch {
	case cmd.query:
		uploadStatus(w, uploadActive, ps.Stored)
		w.Header().Set("X-Goog-Upload-Chunk-Granularity", formatInt(chunkGranularity))
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	case cmd.cancel:
		ps.State = uploadCanceled
		if err := s.savePhotosSession(ps); err != nil {
			s.refuse(w, r, errorf(500, "backendError", "store: %v", err))
			return
		}
		os.Remove(s.photosPartPath(ps.ID))
		uploadStatus(w, uploadCanceled, 0)
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	default:
		s.photosChunk(w, r, ps, cmd.finalize, plan)
	}
}

// photosChunk stores a request's bytes at the session's offset and, when
// it finalizes, turns them into an upload token.
func (s *Sandbox) photosChunk(w http.ResponseWriter, r *http.Request, ps *photosSessionRec, finalize bool, plan faultPlan) {
	refuse := func(e *apiError) {
		uploadStatus(w, uploadActive, ps.Stored)
		s.refuse(w, r, e)
	}
	n := r.ContentLength
	if v := r.Header.Get("X-Goog-Upload-Offset"); v != "" || n != 0 {
		off, err := parseSize(v)
		if err != nil {
			refuse(badRequest("X-Goog-Upload-Offset %q: %v. Send the offset of the chunk's first byte.", printable(v), err))
			return
		}
		if off != ps.Stored {
			refuse(badRequest("X-Goog-Upload-Offset is %d but %d bytes were received; send from byte %d (X-Goog-Upload-Size-Received says where the upload stands).",
				off, ps.Stored, ps.Stored))
			return
		}
	}
	if !finalize {
		switch {
		case n < 0:
			refuse(badRequest("An upload chunk needs a Content-Length, a multiple of %d bytes; only the finalizing chunk may be of any length.", chunkGranularity))
			return
		case n%chunkGranularity != 0:
			refuse(badRequest("A chunk other than the finalizing one must be a multiple of %d bytes (X-Goog-Upload-Chunk-Granularity); this one is %d bytes.", chunkGranularity, n))
			return
		}
	}
	if n >= 0 {
		end := ps.Stored + n
		switch {
		case ps.Declared >= 0 && end > ps.Declared:
			refuse(badRequest("The chunk ends at byte %d, past the %d bytes X-Goog-Upload-Raw-Size declared.", end, ps.Declared))
			return
		case finalize && ps.Declared >= 0 && end != ps.Declared:
			refuse(badRequest("The upload is finalized at %d bytes but X-Goog-Upload-Raw-Size declared %d.", end, ps.Declared))
			return
		case end > kindLimit(ps.Kind):
			refuse(photosTooLarge(ps.Kind, max(end, ps.Declared)))
			return
		}
		if free := s.photosFree(); free >= 0 && end > free {
			refuse(errPhotosStorage)
			return
		}
	}
	e, err := s.appendPhotos(w, r, ps, n)
	if e != nil {
		refuse(e)
		return
	}
	if err != nil {
		uploadStatus(w, uploadActive, ps.Stored)
		s.interrupted(w, err)
		return
	}
	if !finalize {
		uploadStatus(w, uploadActive, ps.Stored)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	}
	switch {
	case ps.Declared >= 0 && ps.Stored != ps.Declared:
		refuse(badRequest("The upload is finalized at %d bytes but X-Goog-Upload-Raw-Size declared %d.", ps.Stored, ps.Declared))
		return
	case ps.Stored == 0:
		refuse(errorf(400, "badContent", "The upload is empty: Google Photos needs the bytes of a picture or a video."))
		return
	}
	sum, err := sessionSHA(ps)
	if err != nil {
		refuse(errorf(500, "backendError", "store: %v", err))
		return
	}
	if _, e := s.fileUpload(s.photosPartPath(ps.ID), ps.Stored, sum.Sum(nil), ps.MimeType, ps.Kind, ps.FileName, ps); e != nil {
		refuse(e)
		return
	}
	s.stats.sessionsCompleted.Add(1)
	s.stats.completions.Add(1)
	if plan.dropFinal {
		s.stats.faults.Add(1)
		abortConn()
	}
	uploadStatus(w, uploadFinal, ps.Stored)
	writeToken(w, ps.Token)
}

func sessionSHA(ps *photosSessionRec) (hash.Hash, error) {
	h := sha256.New()
	if ps.SHAState != nil {
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(ps.SHAState); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// appendPhotos stores the request's bytes (n of them, or up to the end of
// the body when n < 0) after ps.Stored, durably, and records how far the
// session got, even when the body broke off. The first bytes of a session
// are read whole before any is kept, since they decide the type. It
// returns a refusal in e (nothing stored) or a broken body in err.
func (s *Sandbox) appendPhotos(w http.ResponseWriter, r *http.Request, ps *photosSessionRec, n int64) (e *apiError, err error) {
	if n == 0 {
		return nil, nil
	}
	var head bytes.Buffer
	if ps.Kind == "" {
		want := int64(sniffLen)
		if n >= 0 && n < want {
			want = n
		}
		got, err := s.copyBody(w, &head, r.Body, want, nil)
		if err == nil && n >= 0 && got < want {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		mimeType, kind, e := sniffCheck(head.Bytes())
		if e != nil {
			return e, nil
		}
		if total := max(ps.Declared, ps.Stored+n); total > kindLimit(kind) {
			return photosTooLarge(kind, total), nil
		}
		ps.MimeType, ps.Kind = mimeType, kind
	}
	f, err := os.OpenFile(s.photosPartPath(ps.ID), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return errorf(500, "backendError", "store: %v", pathless(err)), nil
	}
	defer f.Close()
	if err := f.Truncate(ps.Stored); err != nil {
		return errorf(500, "backendError", "store: %v", pathless(err)), nil
	}
	if _, err := f.Seek(ps.Stored, io.SeekStart); err != nil {
		return errorf(500, "backendError", "store: %v", pathless(err)), nil
	}
	sum, err := sessionSHA(ps)
	if err != nil {
		return errorf(500, "backendError", "store: %v", err), nil
	}
	dst := io.MultiWriter(f, sum)
	dst.Write(head.Bytes())
	written := int64(head.Len())
	limit, over := s.limitFor(ps.Kind)
	rest := limit - ps.Stored - written + 1
	if n >= 0 {
		rest = n - written
	}
	m, cerr := s.copyBody(w, dst, r.Body, rest, nil)
	written += m
	if n < 0 && ps.Stored+written > limit {
		// Nothing of this request is kept: the session stays where it was.
		f.Truncate(ps.Stored)
		if head.Len() > 0 {
			ps.MimeType, ps.Kind = "", "" // read from this request's bytes, now dropped
		}
		return over(ps.Stored + written), nil
	}
	if err := s.fsync(f); err != nil {
		return errorf(500, "backendError", "store: %v", pathless(err)), nil
	}
	ps.Stored += written
	ps.SHAState, _ = sum.(encoding.BinaryMarshaler).MarshalBinary()
	if err := s.savePhotosSession(ps); err != nil {
		return errorf(500, "backendError", "store: %v", err), nil
	}
	s.stats.bytesStored.Add(written)
	if cerr == nil && n >= 0 && written < n {
		cerr = io.ErrUnexpectedEOF
	}
	return nil, cerr
}
