package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// sessionRec is a resumable session as stored. Its bytes are in
// uploads/ID.part; Stored is the truth, and the file is cut back to it
// before every write, so bytes a crash left past it never count.
type sessionRec struct {
	ID         string          `json:"id"`
	Upload     upload          `json:"upload"`
	Path       string          `json:"path"`
	Started    string          `json:"started"`  // POST or PUT: decides 201 or 200 at the end (but GCS: 200)
	Declared   int64           `json:"declared"` // X-Upload-Content-Length, -1 if not given
	Total      int64           `json:"total"`    // -1 until known
	Stored     int64           `json:"stored"`
	MD5State   []byte          `json:"md5State,omitempty"`
	CRCState   []byte          `json:"crcState,omitempty"`
	SHAState   []byte          `json:"shaState,omitempty"` // SHA-256, for methods that report it
	Created    time.Time       `json:"created"`
	Done       bool            `json:"done"`
	ResultCode int             `json:"resultCode,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
}

func (sess *sessionRec) successCode() int {
	if m := methodByName[sess.Upload.Method]; sess.Started == http.MethodPut || m != nil && m.GCS {
		return http.StatusOK
	}
	return http.StatusCreated
}

var errSessionGone = notFound("No upload session with this id: it expired, was cancelled, or never existed. Start a new upload.")

func (s *Sandbox) loadSession(id string) (*sessionRec, *apiError) {
	sess := new(sessionRec)
	err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx, bSessions, id, sess) })
	if errors.Is(err, errNoRecord) {
		return nil, errSessionGone
	}
	if err != nil {
		return nil, errorf(500, "backendError", "%v", err)
	}
	if s.now().Sub(sess.Created) > s.opts.SessionTTL {
		s.dropSession(id)
		return nil, errSessionGone
	}
	return sess, nil
}

func (s *Sandbox) saveSession(sess *sessionRec) error {
	return s.db.Update(func(tx *bolt.Tx) error { return putJSON(tx, bSessions, sess.ID, sess) })
}

func (s *Sandbox) dropSession(id string) {
	s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bSessions).Delete([]byte(id)) })
	os.Remove(s.uploadPath(id))
}

// serveSession answers requests to a session URI (PROTOCOL.md 4.2-4.4).
// They need no Authorization: the URI is the capability (unless the
// session-needs-token switch is on: sessionAuth, before this).
func (s *Sandbox) serveSession(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("upload_id")
	w.Header().Set("X-GUploader-UploadID", id)
	switch r.Method {
	case http.MethodPut, http.MethodPost, http.MethodDelete:
	default:
		writeError(w, errorf(http.StatusMethodNotAllowed, "httpMethodNotAllowed", "A session URI takes PUT or POST (bytes or a status query) and DELETE (cancel), not %s.", r.Method))
		return
	}
	var plan faultPlan
	if r.Method != http.MethodDelete {
		var handled bool
		if plan, handled = s.beginFaults(w, r); handled {
			return
		}
	}
	var unlock func()
	var ok bool
	switch {
	case s.root.serialize.Load():
		unlock, ok = s.sessionLock(r, id)
	case r.Method != http.MethodDelete && isStatusQuery(r):
		if s.peekStatus(w, r, id) {
			return
		}
		unlock, ok = s.sessionLock(r, id) // the upload is being filed: its answer is coming
	default:
		// A chunk or a cancel takes the session over from a request that
		// holds it, which stops reading its body (PROTOCOL.md 4.3.1).
		var lost *atomic.Bool
		var stale bool
		unlock, lost, stale, ok = s.takeSession(w, r, id)
		if stale {
			s.refuseStale(w, r, id)
			return
		}
		if ok {
			r.Body = &supersedable{ReadCloser: r.Body, lost: lost}
		}
	}
	if !ok {
		// Stopping, or the client left: never the implicit 200 of a
		// handler that wrote nothing, which reads as a finished upload.
		s.refuse(w, r, errShuttingDown)
		return
	}
	defer unlock()
	sess, e := s.loadSession(id)
	if e != nil {
		s.refuse(w, r, e)
		return
	}
	if r.Method == http.MethodDelete {
		s.dropSession(id)
		writeError(w, errorf(499, "canceled", "The upload was cancelled by the client."))
		return
	}
	if sess.Done {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close") // the body stays unread
		}
		s.replay(w, sess)
		return
	}
	if e := methodByName[sess.Upload.Method].checkGoogHash(r); e != nil {
		s.refuse(w, r, e)
		return
	}
	s.serveBytes(w, r, sess, plan)
}

// refuse answers without reading the body; the connection is then
// closed, since an unread body cannot be skipped on a kept-alive one.
func (s *Sandbox) refuse(w http.ResponseWriter, r *http.Request, e *apiError) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	writeError(w, e)
}

// replay answers a finished session: a status query after completion gets
// the resource, so a client whose last answer was lost never sends twice.
func (s *Sandbox) replay(w http.ResponseWriter, sess *sessionRec) {
	if m := methodByName[sess.Upload.Method]; m != nil && m.GCS && sess.ResultCode < 300 {
		if h, err := restoreHashes(sess.MD5State, sess.CRCState); err == nil {
			w.Header().Set("X-Goog-Hash", googHash(h.md5.Sum(nil), h.crc.Sum32()))
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(sess.ResultCode)
	w.Write(sess.Result)
}

func (s *Sandbox) incomplete(w http.ResponseWriter, r *http.Request, sess *sessionRec) {
	if rg := rangeHeader(sess.Stored); rg != "" {
		w.Header().Set("Range", rg)
	}
	w.Header().Set("Content-Length", "0")
	if r.Header.Get("X-GUploader-No-308") == "yes" {
		w.Header().Set("X-HTTP-Status-Code-Override", "308")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusPermanentRedirect)
}

func (s *Sandbox) serveBytes(w http.ResponseWriter, r *http.Request, sess *sessionRec, plan faultPlan) {
	m := methodByName[sess.Upload.Method]
	var cr contentRange
	if v := r.Header.Get("Content-Range"); v != "" {
		var err error
		if cr, err = parseContentRange(v); err != nil {
			s.refuse(w, r, badRequest("%v", err))
			return
		}
	} else {
		switch {
		case r.ContentLength > 0: // the whole upload in one request
			cr = contentRange{First: 0, Last: r.ContentLength - 1, Total: r.ContentLength}
		case r.ContentLength == 0 && sess.Total == 0:
			cr = contentRange{Query: true, Total: 0}
		case r.ContentLength == 0:
			cr = contentRange{Query: true, Total: -1}
		default:
			s.refuse(w, r, badRequest("Send Content-Range (bytes FIRST-LAST/TOTAL) or Content-Length with the bytes of a session."))
			return
		}
	}
	if cr.Total >= 0 {
		switch {
		case sess.Total >= 0 && cr.Total != sess.Total:
			s.refuse(w, r, badRequest("The total in Content-Range (%d) contradicts the upload's size (%d, from X-Upload-Content-Length or an earlier request).", cr.Total, sess.Total))
			return
		case cr.Total < sess.Stored:
			s.refuse(w, r, badRequest("The total in Content-Range (%d) is less than the %d bytes already stored.", cr.Total, sess.Stored))
			return
		}
		if e := s.admit(m, cr.Total); e != nil {
			s.refuseDrained(w, r, m, e)
			return
		}
		if sess.Total < 0 {
			sess.Total = cr.Total
			if err := s.saveSession(sess); err != nil {
				s.refuse(w, r, errorf(500, "backendError", "store: %v", err))
				return
			}
		}
	}
	if cr.Query {
		if sess.Total >= 0 && sess.Stored == sess.Total {
			s.complete(w, r, sess, plan)
			return
		}
		s.incomplete(w, r, sess)
		return
	}
	span := cr.Last - cr.First + 1
	if r.ContentLength >= 0 && r.ContentLength != span {
		s.refuse(w, r, badRequest("Content-Length is %d but Content-Range names %d bytes.", r.ContentLength, span))
		return
	}
	if cr.First > sess.Stored {
		// Real servers answer 503 and change nothing; Range says where to go on.
		if rg := rangeHeader(sess.Stored); rg != "" {
			w.Header().Set("Range", rg)
		}
		s.refuse(w, r, errorf(http.StatusServiceUnavailable, "backendError",
			"The chunk starts at byte %d but only %d bytes are stored; ask where the upload stands and resume from there.", cr.First, sess.Stored))
		return
	}
	final := sess.Total >= 0 && cr.Last+1 == sess.Total
	if !final && span%chunkGranularity != 0 {
		s.refuse(w, r, badRequest("A chunk other than the last must be a multiple of %d bytes; this one is %d bytes.", chunkGranularity, span))
		return
	}
	if e := s.admit(m, cr.Last+1); e != nil {
		s.refuseDrained(w, r, m, e)
		return
	}
	body := io.Reader(r.Body)
	if skip := sess.Stored - cr.First; skip > 0 {
		if n, err := s.discard(w, body, skip); err != nil || n < skip {
			s.interrupted(w, err)
			return
		}
	}
	end := cr.Last + 1
	keepEnd := end
	if plan.partial {
		// Keep only part of the new bytes, rounded down to 256 KiB, as a
		// server that persisted less than it received.
		k := sess.Stored + int64(plan.keepFrac*float64(end-sess.Stored))
		k -= k % chunkGranularity
		if k < end && k >= sess.Stored {
			keepEnd = k
			s.stats.faults.Add(1)
		}
	}
	n, err := s.appendBytes(w, sess, body, keepEnd-sess.Stored)
	if n > 0 {
		if serr := s.saveSession(sess); serr != nil && err == nil {
			err = serr
		}
	}
	if err == nil && keepEnd < end {
		_, err = s.discard(w, body, end-keepEnd)
	}
	if err != nil {
		s.interrupted(w, err)
		return
	}
	if sess.Total >= 0 && sess.Stored == sess.Total {
		s.complete(w, r, sess, plan)
		return
	}
	s.incomplete(w, r, sess)
}

// appendBytes stores up to n body bytes after sess.Stored, durably, and
// advances sess.Stored by what was written, even when the body broke off.
func (s *Sandbox) appendBytes(w http.ResponseWriter, sess *sessionRec, body io.Reader, n int64) (int64, error) {
	if n <= 0 {
		return 0, nil
	}
	f, err := os.OpenFile(s.uploadPath(sess.ID), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Truncate(sess.Stored); err != nil {
		return 0, err
	}
	if _, err := f.Seek(sess.Stored, io.SeekStart); err != nil {
		return 0, err
	}
	h, err := sessionHashes(sess)
	if err != nil {
		return 0, err
	}
	written, cerr := s.copyBody(w, f, body, n, h)
	if written == 0 {
		return 0, cerr
	}
	if err := s.fsync(f); err != nil {
		return 0, err
	}
	sess.Stored += written
	sess.keepHashes(h)
	s.stats.bytesStored.Add(written)
	if cerr == nil && written < n {
		cerr = io.ErrUnexpectedEOF
	}
	return written, cerr
}

// interrupted ends a request whose body broke off. What arrived is already
// stored; an injected reset closes the connection with no answer at all.
func (s *Sandbox) interrupted(w http.ResponseWriter, err error) {
	if errors.Is(err, errInjectedReset) {
		abortConn()
	}
	if errors.Is(err, errSuperseded) {
		// No answer: the connection is dropped, as a server drops a request
		// it ended. Its client has most likely gone (it sent the session a
		// chunk or a cancel on another connection), but when it has not,
		// because this request is the live one and the newcomer a stale
		// copy a proxy delivered late, an answer such as 400 would read as
		// permanent and fail the upload; a dropped connection makes the
		// client ask where the session stands and go on (PROTOCOL.md 4.3.1).
		abortConn()
	}
	w.Header().Set("Connection", "close")
	writeError(w, badRequest("The request body ended early (%v); ask where the upload stands and resume.", err))
}

func (s *Sandbox) complete(w http.ResponseWriter, r *http.Request, sess *sessionRec, plan faultPlan) {
	m := methodByName[sess.Upload.Method]
	h, err := sessionHashes(sess)
	if err != nil {
		writeError(w, errorf(500, "backendError", "store: %v", err))
		return
	}
	path := s.uploadPath(sess.ID)
	if sess.Stored == 0 {
		// An empty upload has no part file yet.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			writeError(w, errorf(500, "backendError", "store: %v", err))
			return
		}
		f.Close()
	}
	md := h.media(path, sess.Stored)
	md.GoogHash = r.Header.Values("X-Goog-Hash")
	if _, e := s.finish(m, &sess.Upload, md, sess); e != nil && !sess.Done {
		writeError(w, e)
		return
	}
	if sess.ResultCode < 300 {
		s.stats.sessionsCompleted.Add(1)
	}
	if plan.dropFinal {
		s.stats.faults.Add(1)
		abortConn()
	}
	s.replay(w, sess)
}

// isStatusQuery says whether a session request asks where the upload
// stands: no body, and no Content-Range or one naming no bytes.
func isStatusQuery(r *http.Request) bool {
	if r.ContentLength != 0 {
		return false
	}
	v := r.Header.Get("Content-Range")
	if v == "" {
		return true
	}
	cr, err := parseContentRange(v)
	return err == nil && cr.Query
}

// peekStatus answers a status query from the stored session without
// waiting for a request in flight on it: the offset is what was persisted,
// never bytes a stalled request holds unsaved. It returns false, having
// written nothing, when the answer must wait for the session's lock: the
// bytes are all stored and the upload is being filed.
func (s *Sandbox) peekStatus(w http.ResponseWriter, r *http.Request, id string) bool {
	sess, e := s.loadSession(id)
	if e != nil {
		s.refuse(w, r, e)
		return true
	}
	if sess.Done {
		s.replay(w, sess)
		return true
	}
	total := sess.Total
	if v := r.Header.Get("Content-Range"); v != "" {
		cr, err := parseContentRange(v)
		if err != nil {
			s.refuse(w, r, badRequest("%v", err))
			return true
		}
		if cr.Total >= 0 {
			switch {
			case sess.Total >= 0 && cr.Total != sess.Total:
				s.refuse(w, r, badRequest("The total in Content-Range (%d) contradicts the upload's size (%d, from X-Upload-Content-Length or an earlier request).", cr.Total, sess.Total))
				return true
			case cr.Total < sess.Stored:
				s.refuse(w, r, badRequest("The total in Content-Range (%d) is less than the %d bytes already stored.", cr.Total, sess.Stored))
				return true
			}
			if e := s.admit(methodByName[sess.Upload.Method], cr.Total); e != nil {
				s.refuse(w, r, e)
				return true
			}
			// A total the session did not know yet is stored by the next
			// request under the lock (a chunk states it again).
			total = cr.Total
		}
	} else if sess.Total == 0 {
		return false
	}
	if total >= 0 && sess.Stored == total {
		return false
	}
	s.incomplete(w, r, sess)
	return true
}

// sessionHolder is a request holding a session's lock that a newer request
// may take the session over from: stop marks it lost and wakes its body
// read at once, however dead its connection.
type sessionHolder struct {
	seq   uint64
	first int64 // the first byte its Content-Range names; -1: none (a cancel)
	lost  atomic.Bool
	rc    *http.ResponseController
}

// firstByte is the first byte a request to a session carries, or -1 for a
// cancel or a request whose Content-Range does not parse (it is refused
// once it holds the session).
func firstByte(r *http.Request) int64 {
	if r.Method == http.MethodDelete {
		return -1
	}
	v := r.Header.Get("Content-Range")
	if v == "" {
		return 0 // the whole upload in one request
	}
	cr, err := parseContentRange(v)
	if err != nil || cr.Query {
		return -1
	}
	return cr.First
}

// refuseStale answers a request that starts behind the request holding its
// session: 503, which a client retries, with Range from the stored session
// and the body unread. The session is left to the holder.
func (s *Sandbox) refuseStale(w http.ResponseWriter, r *http.Request, id string) {
	sess, e := s.loadSession(id)
	if e != nil {
		s.refuse(w, r, e)
		return
	}
	if rg := rangeHeader(sess.Stored); rg != "" {
		w.Header().Set("Range", rg)
	}
	s.refuse(w, r, errorf(http.StatusServiceUnavailable, "backendError",
		"The chunk starts at byte %d, behind a request in progress on this upload session; ask where the upload stands and resume from there.", firstByte(r)))
}

func (h *sessionHolder) stop() {
	h.lost.Store(true)
	h.rc.SetReadDeadline(time.Now())
}

// errSuperseded ends the body of a request whose session another request
// took over.
var errSuperseded = errors.New("another request on this upload session took it over")

// supersedable is a body that stops once its request lost the session: the
// bytes read until then are stored as any that arrived, under the lock, so
// the file, the offset and the hashes stay one story.
type supersedable struct {
	io.ReadCloser
	lost *atomic.Bool
}

func (b *supersedable) Read(p []byte) (int, error) {
	if b.lost.Load() {
		return 0, errSuperseded
	}
	n, err := b.ReadCloser.Read(p)
	if b.lost.Load() {
		return n, errSuperseded
	}
	return n, err
}

// takeSession takes a session's lock for a request that carries bytes or
// cancels, stopping any older request that holds it rather than waiting
// behind a body that may never come; it gives up when the request ends
// or the sandbox stops. A request whose bytes start before those of the
// holder does not take over but comes back stale: a client sends from
// the offset it was last given, never behind a request it sent after, so
// it is an abandoned request that a proxy delivered late (PROTOCOL.md
// 4.3.1).
func (s *Sandbox) takeSession(w http.ResponseWriter, r *http.Request, id string) (unlock func(), lost *atomic.Bool, stale, ok bool) {
	me := &sessionHolder{seq: s.root.holderSeq.Add(1), first: firstByte(r), rc: http.NewResponseController(w)}
	m, release := s.sessionEntry(id)
	// The holder may take the lock a moment before it says who it is:
	// look again until the lock is ours.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s.locksMu.Lock()
		if h := m.holder; h != nil && h.seq < me.seq && !h.lost.Load() {
			if me.first >= 0 && me.first < h.first {
				s.locksMu.Unlock()
				release()
				return nil, nil, true, false
			}
			h.stop()
		}
		s.locksMu.Unlock()
		select {
		case m.ch <- struct{}{}:
			s.locksMu.Lock()
			m.holder = me
			s.locksMu.Unlock()
			return func() {
				s.locksMu.Lock()
				if m.holder == me {
					m.holder = nil
				}
				s.locksMu.Unlock()
				<-m.ch
				release()
			}, &me.lost, false, true
		case <-tick.C:
		case <-r.Context().Done():
			release()
			return nil, nil, false, false
		case <-s.closing:
			release()
			return nil, nil, false, false
		}
	}
}

// SetSerializeSessions switches SerializeSessions at run time, for every
// account; requests already waiting keep the rule they came under.
func (s *Sandbox) SetSerializeSessions(on bool) { s.root.serialize.Store(on) }

// SerializeSessions says whether session requests wait for each other.
func (s *Sandbox) SerializeSessions() bool { return s.root.serialize.Load() }

// serveSessionsControl is GET and PUT /sandbox/v1/sessions:
// {"serialize": true} makes session requests wait for each other again.
func (s *Sandbox) serveSessionsControl(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		body, ok := controlBody(w, r)
		if !ok {
			return
		}
		var in struct {
			Serialize *bool `json:"serialize"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil || in.Serialize == nil {
			writeError(w, badRequest(`The body must be JSON such as {"serialize": true}, the one session control.`))
			return
		}
		s.SetSerializeSessions(*in.Serialize)
	}
	writeJSON(w, http.StatusOK, map[string]bool{"serialize": s.SerializeSessions()})
}
