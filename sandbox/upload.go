package sandbox

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Chunks of a resumable upload, except the last, are multiples of this.
const chunkGranularity = 256 << 10

// maxMetadata bounds the JSON metadata of an upload.
const maxMetadata = 1 << 20

// uploadMethod is one API method that takes media (PROTOCOL.md section 1).
type uploadMethod struct {
	Name       string // API method name, for messages
	HTTPMethod string
	Pattern    string // http.ServeMux pattern of the media URI
	Limit      int64  // largest media in bytes; 0 = none
	Accept     []string
	SHA256     bool // the resource reports a SHA-256 of the media (Drive)
	// Room, when set, bounds uploads by what the account may still store
	// (Drive's quota): the bytes free, negative for no bound, and the
	// refusal for an upload that would pass them.
	Room func(s *Sandbox) (free int64, full *apiError)
	// Drain reads the rest of a refused request's body (up to maxDrain)
	// before answering, as Google's front ends do: a client that writes
	// its whole body before reading (the official Go client) then sees the
	// refusal (Drive's 409 or 403) rather than a reset. Others close unread.
	Drain bool
	// Prepare checks the path and metadata before any byte is stored.
	Prepare func(s *Sandbox, tx *bolt.Tx, u *upload) *apiError
	// Finish creates the resource from stored media. It returns the
	// resource and the blob name the media file is to be moved to.
	Finish func(s *Sandbox, tx *bolt.Tx, u *upload, m *media) (resource any, blob string, e *apiError)
	// GCS is Cloud Storage's dialect (PROTOCOL.md 4.2, 7): an upload ends
	// with 200 whatever started it, X-Goog-Hash on the request with the
	// last bytes is checked, and the answer that ends the upload carries it.
	GCS bool
}

// upload is what an upload is for, the same for all three upload types.
type upload struct {
	Method    string            `json:"method"`
	Params    map[string]string `json:"params"` // path parameters
	Query     url.Values        `json:"query"`
	Metadata  json.RawMessage   `json:"metadata,omitempty"`
	MediaType string            `json:"mediaType"`
	Base      string            `json:"base"` // scheme://host the upload came to, for links in resources
}

// media is stored bytes waiting to become a resource.
type media struct {
	Path   string
	Size   int64
	MD5    []byte
	CRC32C uint32
	SHA256 []byte // only for methods that report it
	// GoogHash is X-Goog-Hash of the request that carried the last bytes.
	GoogHash []string
	root     *messagePart // a Gmail message, parsed before the write transaction
}

var methodByName = map[string]*uploadMethod{}

func init() {
	for _, m := range uploadMethods {
		methodByName[m.Name] = m
	}
}

func (m *uploadMethod) accepts(mediaType string) bool {
	if len(m.Accept) == 0 {
		return true
	}
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	for _, a := range m.Accept {
		if a == mt || (strings.HasSuffix(a, "/*") && strings.HasPrefix(mt, a[:len(a)-1])) {
			return true
		}
	}
	return false
}

func (m *uploadMethod) refuseType(mediaType string) *apiError {
	if mediaType == "" {
		return errorf(400, "badContent", "No media type given. %s accepts [%s]%s.", m.Name, strings.Join(m.Accept, ", "), mailHint(m))
	}
	return errorf(400, "badContent", "Media type '%s' is not supported. Valid media types: [%s]%s", mediaType, strings.Join(m.Accept, ", "), mailHint(m))
}

// checkGoogHash refuses a malformed X-Goog-Hash before any byte is read.
func (m *uploadMethod) checkGoogHash(r *http.Request) *apiError {
	if m == nil || !m.GCS {
		return nil
	}
	_, e := parseGoogHash(r.Header.Values("X-Goog-Hash"))
	return e
}

func mailHint(m *uploadMethod) string {
	for _, a := range m.Accept {
		if a == "message/*" {
			return " (send mail as message/rfc822)"
		}
	}
	return ""
}

func (m *uploadMethod) tooLarge(size int64) *apiError {
	return errorf(http.StatusRequestEntityTooLarge, "uploadTooLarge",
		"Media is %d bytes; %s takes at most %d bytes (%s). Make it smaller by %d bytes.",
		size, m.Name, m.Limit, humanSize(m.Limit), size-m.Limit)
}

// admit checks that an upload of n bytes fits: the method's limit, then
// the room the account has left where the method has a quota.
func (s *Sandbox) admit(m *uploadMethod, n int64) *apiError {
	if m.Limit > 0 && n > m.Limit {
		return m.tooLarge(n)
	}
	if m.Room != nil {
		if free, full := m.Room(s); free >= 0 && n > free {
			return full
		}
	}
	return nil
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// uploadHandler serves a method's media URI: the three upload types.
func (s *Sandbox) uploadHandler(m *uploadMethod) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := &upload{Method: m.Name, Params: map[string]string{}, Query: r.URL.Query(), Base: baseURL(r)}
		for _, p := range patternParams(m.Pattern) {
			u.Params[p] = r.PathValue(p)
		}
		u.Query.Del("uploadType")
		var e *apiError
		switch t := r.URL.Query().Get("uploadType"); t {
		case "resumable":
			e = s.initiate(w, r, m, u)
		case "multipart":
			e = s.simpleUpload(w, r, m, u, true)
		case "media":
			e = s.simpleUpload(w, r, m, u, false)
		case "":
			e = badRequest("Upload requests must include an uploadType URL parameter: media, multipart or resumable.")
		default:
			e = badRequest("Invalid uploadType %q: use media, multipart or resumable.", t)
		}
		if e != nil {
			if r.ContentLength != 0 && !(m.Drain && s.drain(w, r)) {
				w.Header().Set("Connection", "close") // the body may be unread
			}
			writeError(w, e)
		}
	})
}

func patternParams(pattern string) []string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(strings.Trim(seg, "{}"), "..."))
		}
	}
	return out
}

func readMetadata(r io.Reader) (json.RawMessage, *apiError) {
	data, err := io.ReadAll(io.LimitReader(r, maxMetadata+1))
	if err != nil {
		abortIfInjected(err)
		return nil, badRequest("Could not read the metadata: %v", err)
	}
	if len(data) > maxMetadata {
		return nil, badRequest("The metadata is larger than %d bytes.", maxMetadata)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, errorf(400, "parseError", "The metadata is not a JSON object: %v", err)
	}
	return data, nil
}

// prepare runs the method's checks in a read transaction.
func (s *Sandbox) prepare(m *uploadMethod, u *upload) *apiError {
	if m.Prepare == nil {
		return nil
	}
	var e *apiError
	if err := s.db.View(func(tx *bolt.Tx) error { e = m.Prepare(s, tx, u); return nil }); err != nil {
		return errorf(500, "backendError", "store: %v", err)
	}
	return e
}

// initiate starts a resumable session (PROTOCOL.md 4.1).
func (s *Sandbox) initiate(w http.ResponseWriter, r *http.Request, m *uploadMethod, u *upload) *apiError {
	plan, handled := s.beginFaults(w, r)
	if handled {
		return nil
	}
	_ = plan
	meta, e := readMetadata(r.Body)
	if e != nil {
		return e
	}
	u.Metadata = meta
	u.MediaType = r.Header.Get("X-Upload-Content-Type")
	if u.MediaType == "" && len(m.Accept) == 0 {
		u.MediaType = "application/octet-stream"
	}
	if !m.accepts(u.MediaType) {
		return m.refuseType(u.MediaType)
	}
	declared := int64(-1)
	if v := r.Header.Get("X-Upload-Content-Length"); v != "" {
		n, err := parseSize(v)
		if err != nil {
			return badRequest("X-Upload-Content-Length: %v", err)
		}
		if e := s.admit(m, n); e != nil {
			return e
		}
		declared = n
	}
	if e := s.prepare(m, u); e != nil {
		return e
	}
	sess := &sessionRec{
		ID: newUploadID(), Upload: *u, Path: r.URL.Path, Started: r.Method,
		Declared: declared, Total: declared, Created: s.now(),
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return putJSON(tx, bSessions, sess.ID, sess) }); err != nil {
		return errorf(500, "backendError", "store: %v", err)
	}
	s.stats.sessionsCreated.Add(1)
	q := url.Values{}
	for k, v := range u.Query {
		q[k] = v
	}
	q.Set("uploadType", "resumable")
	q.Set("upload_id", sess.ID)
	w.Header().Set("Location", baseURL(r)+r.URL.Path+"?"+q.Encode())
	w.Header().Set("X-GUploader-UploadID", sess.ID)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// simpleUpload serves uploadType=media and uploadType=multipart: one request
// carries everything, so nothing survives an interruption.
func (s *Sandbox) simpleUpload(w http.ResponseWriter, r *http.Request, m *uploadMethod, u *upload, multi bool) *apiError {
	plan, handled := s.beginFaults(w, r)
	if handled {
		return nil
	}
	if e := m.checkGoogHash(r); e != nil {
		return e
	}
	body := io.Reader(r.Body)
	if multi {
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
			return badRequest("A multipart upload needs Content-Type: multipart/related; boundary=...; got %q.", r.Header.Get("Content-Type"))
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		part, err := mr.NextPart()
		if err != nil {
			abortIfInjected(err)
			return badRequest("The multipart body must be metadata (application/json) then media; the first part is unreadable: %v", err)
		}
		if pt, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type")); pt != "application/json" {
			return badRequest("The multipart body must be metadata (application/json) then media; the first part is %q.", part.Header.Get("Content-Type"))
		}
		meta, e := readMetadata(part)
		if e != nil {
			return e
		}
		u.Metadata = meta
		part, err = mr.NextPart()
		if err != nil {
			abortIfInjected(err)
			return badRequest("The multipart body must be metadata (application/json) then media; the media part is missing or unreadable: %v", err)
		}
		u.MediaType = part.Header.Get("Content-Type")
		body = part
		if strings.EqualFold(part.Header.Get("Content-Transfer-Encoding"), "base64") {
			body = base64.NewDecoder(base64.StdEncoding, part)
		}
		if !m.accepts(u.MediaType) {
			return m.refuseType(u.MediaType)
		}
		if e := s.prepare(m, u); e != nil {
			return e
		}
		md, e := s.receiveSimple(r, w, m, body)
		if e != nil {
			return e
		}
		defer os.Remove(md.Path)
		if _, err := mr.NextPart(); err != io.EOF {
			abortIfInjected(err)
			return badRequest("The multipart body must be exactly two parts, metadata then media; found more.")
		}
		return s.finishSimple(w, r, m, u, md, plan)
	}
	u.MediaType = r.Header.Get("Content-Type")
	if u.MediaType == "" && len(m.Accept) == 0 {
		u.MediaType = "application/octet-stream"
	}
	if !m.accepts(u.MediaType) {
		return m.refuseType(u.MediaType)
	}
	if r.ContentLength > 0 {
		if e := s.admit(m, r.ContentLength); e != nil {
			return e
		}
	}
	if e := s.prepare(m, u); e != nil {
		return e
	}
	md, e := s.receiveSimple(r, w, m, body)
	if e != nil {
		return e
	}
	defer os.Remove(md.Path)
	return s.finishSimple(w, r, m, u, md, plan)
}

func (s *Sandbox) receiveSimple(r *http.Request, w http.ResponseWriter, m *uploadMethod, body io.Reader) (*media, *apiError) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "uploads"), "simple-*.part")
	if err != nil {
		return nil, errorf(500, "backendError", "store: %v", err)
	}
	defer f.Close()
	h := newHashes()
	h.withSHA256(m.SHA256)
	limit := m.Limit
	if limit == 0 {
		limit = maxUploadSize
	}
	over := func(n int64) error { return m.tooLarge(n) }
	if m.Room != nil {
		if free, full := m.Room(s); free >= 0 && free < limit {
			limit, over = free, func(int64) error { return full }
		}
	}
	n, err := s.copyBody(w, f, body, limit+1, h)
	if err == nil && n > limit {
		err = over(n)
	}
	if err == nil {
		err = s.fsync(f)
	}
	if err != nil {
		os.Remove(f.Name())
		if errors.Is(err, errInjectedReset) {
			abortConn()
		}
		var ae *apiError
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, badRequest("The upload body could not be read to its end: %v", err)
	}
	s.stats.bytesStored.Add(n)
	return h.media(f.Name(), n), nil
}

func (s *Sandbox) finishSimple(w http.ResponseWriter, r *http.Request, m *uploadMethod, u *upload, md *media, plan faultPlan) *apiError {
	md.GoogHash = r.Header.Values("X-Goog-Hash")
	res, e := s.finish(m, u, md, nil)
	if e != nil {
		return e
	}
	if plan.dropFinal {
		s.stats.faults.Add(1)
		abortConn()
	}
	if m.GCS {
		w.Header().Set("X-Goog-Hash", googHash(md.MD5, md.CRC32C))
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// finish turns stored media into the method's resource in one transaction;
// with a session, the session is marked done with the same answer.
func (s *Sandbox) finish(m *uploadMethod, u *upload, md *media, sess *sessionRec) (any, *apiError) {
	// Parsing a message is the one step whose memory grows with what a
	// client sent (bounded by mailparse's limits): a few at a time, and
	// outside the store's one write transaction.
	select {
	case s.heavy <- struct{}{}:
		defer func() { <-s.heavy }()
	case <-s.closing:
		return nil, errorf(503, "backendError", "the sandbox is stopping")
	}
	if strings.HasPrefix(m.Name, "gmail.") && md.root == nil {
		if root, err := parseMessage(md.Path, parseOptions{}); err == nil {
			md.root = root
		}
	}
	var res any
	var ae *apiError
	var moved, blob string
	err := s.db.Update(func(tx *bolt.Tx) error {
		res, blob, ae = m.Finish(s, tx, u, md)
		if ae != nil {
			if sess == nil {
				return nil
			}
			// A session that cannot become a resource keeps answering why.
			sess.Done, sess.ResultCode = true, ae.Code
			sess.Result, _ = json.MarshalIndent(errorBodyOf(ae), "", "  ")
			return putJSON(tx, bSessions, sess.ID, sess)
		}
		// A second name for the bytes, not a move: until the commit, the
		// session's part file stays where a retry after a crash finds it.
		dst := s.blobPath(blob)
		if err := os.Link(md.Path, dst); err != nil {
			return fmt.Errorf("filing the upload: %w", pathless(err))
		}
		moved = dst
		if sess != nil {
			sess.Done, sess.ResultCode = true, sess.successCode()
			sess.Result, _ = json.MarshalIndent(res, "", "  ")
			if err := putJSON(tx, bSessions, sess.ID, sess); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if moved != "" {
			os.Remove(moved)
		}
		return nil, errorf(500, "backendError", "store: %v", pathless(err))
	}
	if ae != nil {
		if sess != nil {
			os.Remove(md.Path) // the session only answers why now
		}
		return nil, ae
	}
	os.Remove(md.Path) // the blob's name holds the bytes now
	if !s.opts.NoSync {
		syncDir(filepath.Dir(s.blobPath(blob)))
	}
	s.stats.completions.Add(1)
	return res, nil
}

// pathless drops the file names from a file system error: the names of
// part files carry upload ids, which are credentials.
func pathless(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

func errorBodyOf(e *apiError) errorBody {
	var b errorBody
	msg := printable(e.Message)
	b.Error.Code, b.Error.Message, b.Error.Status = e.Code, msg, e.Status
	b.Error.Errors = []errorItem{{Message: msg, Domain: "global", Reason: e.Reason}}
	return b
}

// hashes follow the bytes as they are stored; their state is saved with the
// session so a resumed or restarted upload still yields md5Hash and crc32c
// without reading the file again.
type hashes struct {
	md5 hash.Hash
	crc hash.Hash32
	sha hash.Hash // nil unless the method reports a SHA-256
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newHashes() *hashes { return &hashes{md5: md5.New(), crc: crc32.New(castagnoli)} }

func (h *hashes) withSHA256(on bool) {
	if on && h.sha == nil {
		h.sha = sha256.New()
	}
}

func (h *hashes) Write(p []byte) (int, error) {
	h.md5.Write(p)
	h.crc.Write(p)
	if h.sha != nil {
		h.sha.Write(p)
	}
	return len(p), nil
}

// media is the stored file at path with the sums of its bytes.
func (h *hashes) media(path string, size int64) *media {
	md := &media{Path: path, Size: size, MD5: h.md5.Sum(nil), CRC32C: h.crc.Sum32()}
	if h.sha != nil {
		md.SHA256 = h.sha.Sum(nil)
	}
	return md
}

func (h *hashes) state() (md5State, crcState []byte) {
	a, _ := h.md5.(encoding.BinaryMarshaler).MarshalBinary()
	b, _ := h.crc.(encoding.BinaryMarshaler).MarshalBinary()
	return a, b
}

// sessionHashes restores the hashes of a session's stored prefix.
func sessionHashes(sess *sessionRec) (*hashes, error) {
	h, err := restoreHashes(sess.MD5State, sess.CRCState)
	if err != nil {
		return nil, err
	}
	if m := methodByName[sess.Upload.Method]; m != nil && m.SHA256 {
		h.withSHA256(true)
		if sess.SHAState != nil {
			if err := h.sha.(encoding.BinaryUnmarshaler).UnmarshalBinary(sess.SHAState); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// keepHashes saves the hashes' state with the session.
func (sess *sessionRec) keepHashes(h *hashes) {
	sess.MD5State, sess.CRCState = h.state()
	if h.sha != nil {
		sess.SHAState, _ = h.sha.(encoding.BinaryMarshaler).MarshalBinary()
	}
}

func restoreHashes(md5State, crcState []byte) (*hashes, error) {
	h := newHashes()
	if md5State == nil {
		return h, nil
	}
	if err := h.md5.(encoding.BinaryUnmarshaler).UnmarshalBinary(md5State); err != nil {
		return nil, err
	}
	if err := h.crc.(encoding.BinaryUnmarshaler).UnmarshalBinary(crcState); err != nil {
		return nil, err
	}
	return h, nil
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copyBody streams at most n bytes of src into dst and the hashes, pushing
// the connection's read deadline forward as bytes arrive. It returns what
// was written even on error: bytes that arrived are kept.
func (s *Sandbox) copyBody(w http.ResponseWriter, dst io.Writer, src io.Reader, n int64, h *hashes) (int64, error) {
	rc := http.NewResponseController(w)
	streaming(w)
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var written, since int64
	var lastDeadline time.Time
	for written < n {
		// The deadline moves only while bytes arrive at minBodyRate: a
		// body trickled a byte at a time must not hold its connection.
		if now := time.Now(); lastDeadline.IsZero() ||
			now.Sub(lastDeadline) > s.opts.BodyIdle/8 && float64(written-since) >= minBodyRate*now.Sub(lastDeadline).Seconds() {
			rc.SetReadDeadline(now.Add(s.opts.BodyIdle))
			lastDeadline, since = now, written
		}
		p := buf
		if rem := n - written; rem < int64(len(p)) {
			p = p[:rem]
		}
		nr, rerr := src.Read(p)
		if nr > 0 {
			s.stats.bytesReceived.Add(int64(nr))
			nw, werr := dst.Write(p[:nr])
			if h != nil {
				h.Write(p[:nw])
			}
			written += int64(nw)
			if werr != nil {
				return written, fmt.Errorf("store: %w", werr)
			}
		}
		if rerr == io.EOF {
			return written, nil
		}
		if rerr != nil {
			return written, rerr
		}
	}
	return written, nil
}

// discard reads and drops n bytes of a body: bytes the client sent again.
func (s *Sandbox) discard(w http.ResponseWriter, src io.Reader, n int64) (int64, error) {
	return s.copyBody(w, io.Discard, src, n, nil)
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
