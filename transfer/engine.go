package transfer

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"
)

// run is one job's trip through a worker: from opening the file to a final
// answer or a failure.
type run struct {
	q   *Queue
	jb  *job
	rec *Record // jb.rec; the run is its only writer while it runs
	f   *os.File

	failures  int   // consecutive failures without progress: the n of the backoff
	restarts  int   // consecutive sessions lost without progress
	refreshed bool  // the token was refreshed since the last success
	best      int64 // highest offset confirmed on the current session in this run
	sent      int64 // bytes of the file handed to the transport, at the current position
	moved     int64 // bytes handed to the transport in this run, resends included: for the rate
	rate      rateMeter
	lastEmit  time.Duration

	// The file's SHA-256, computed from the bytes as they go out (nil when
	// the caller gave it). hashed is the length of the prefix it covers;
	// the transport's goroutine feeds it, hence the lock.
	hashMu sync.Mutex
	hasher hash.Hash
	hashed int64
}

// failure classes, per PROTOCOL.md section 5.
type class int

const (
	classFatal class = iota
	classRetry       // network, 5xx, rate limit: back off, then ask where it stands
	classGone        // 404/410: the session is gone
	classAuth        // 401: refresh once
)

func classify(err error) class {
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Code >= 500:
			return classRetry
		case ae.rateLimited():
			return classRetry
		case ae.Code == http.StatusNotFound || ae.Code == http.StatusGone:
			return classGone
		case ae.Code == http.StatusUnauthorized:
			return classAuth
		}
		return classFatal
	}
	var ne *NetError
	var pe *protocolError
	if errors.As(err, &ne) || errors.As(err, &pe) {
		return classRetry
	}
	return classFatal
}

// protocolError is an answer the engine cannot make sense of (a bad Range,
// a 308 to a start request). It is retried: the next answer may be sane.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// permanent marks failures that retrying later will not mend.
type permanent struct{ err error }

func (e *permanent) Error() string { return e.err.Error() }
func (e *permanent) Unwrap() error { return e.err }

// execute runs the job to its end. It returns the final response, or an
// error; when ctx was cancelled the error is ctx's cause.
func (r *run) execute(ctx context.Context) (*Response, error) {
	rec := r.rec
	if rec.Type != Resumable && rec.Sent && !r.jb.resendApproved {
		return nil, &permanent{fmt.Errorf("this %s upload was interrupted after its bytes went out; it cannot be asked whether it arrived, so it was not sent again (that could make a duplicate). Check the destination; if it is missing, retry the job or upload the file again", rec.Type)}
	}
	if err := r.openSource(ctx); err != nil {
		return nil, err
	}
	defer r.f.Close()
	r.best = rec.Confirmed
	r.sent = rec.Confirmed
	r.progress(true)
	if rec.Type == Resumable {
		return r.resumable(ctx)
	}
	return r.oneShot(ctx)
}

// openSource opens the file and makes sure it is the one the job was
// recorded with: same size and time always, and on a resume the same
// bytes where bytes were already sent. Nothing is read ahead of sending:
// a first upload hashes the file as it goes out.
func (r *run) openSource(ctx context.Context) error {
	rec := r.rec
	f, err := os.Open(rec.Path)
	if err != nil {
		return &permanent{fmt.Errorf("cannot open the file to upload: %w", err)}
	}
	if err := r.checkUnchanged(f); err != nil {
		f.Close()
		return err
	}
	if err := r.checkHashed(ctx, f); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	r.f = f
	return nil
}

// checkHashed compares the file with what the record knows of it, and
// sets up the running hash. A given SHA-256 is checked once anything may
// have gone out under it; a partial hash is checked over its prefix, the
// bytes the server may hold: so no mixed bytes ever reach it.
func (r *run) checkHashed(ctx context.Context, f *os.File) error {
	rec := r.rec
	began := rec.Session != "" || rec.Sent || rec.Confirmed > 0
	switch {
	case rec.SHA256 != "" && rec.HashState == nil:
		if !began {
			return nil // the caller's hash, and nothing sent yet to check it for
		}
		h, err := hashPrefix(ctx, f, rec.Size)
		if err != nil {
			return readError(err)
		}
		if hex.EncodeToString(h.Sum(nil)) != rec.SHA256 {
			return changedError(rec.Path, "its content (SHA-256) differs")
		}
		return nil
	case rec.Hashed > 0:
		want := sha256.New()
		if err := want.(encoding.BinaryUnmarshaler).UnmarshalBinary(rec.HashState); err != nil {
			return &permanent{fmt.Errorf("the journal's record of this job is damaged (hash state): %w", err)}
		}
		got, err := hashPrefix(ctx, f, rec.Hashed)
		if err != nil {
			return readError(err)
		}
		if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
			return changedError(rec.Path, fmt.Sprintf("its first %d bytes, already sent, differ", rec.Hashed))
		}
		r.hasher, r.hashed = want, rec.Hashed
	default:
		r.hasher, r.hashed = sha256.New(), 0
	}
	return nil
}

func readError(err error) error {
	return &permanent{fmt.Errorf("cannot read the file to upload: %w", err)}
}

// hashTee feeds the running hash with the bytes of a body as the transport
// reads them, from where the hash stands on: bytes sent again after a
// rewind are already in it.
type hashTee struct {
	r   io.Reader
	pos int64 // file offset of the next byte read
	run *run
}

func (t *hashTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		r := t.run
		r.hashMu.Lock()
		if r.hasher != nil && t.pos <= r.hashed && r.hashed < t.pos+int64(n) {
			r.hasher.Write(p[r.hashed-t.pos : n])
			r.hashed = t.pos + int64(n)
		}
		r.hashMu.Unlock()
		t.pos += int64(n)
	}
	return n, err
}

// source is the file's bytes from off, through the running hash.
func (r *run) source(off, n int64) io.Reader {
	sr := io.NewSectionReader(r.f, off, n)
	if r.hasher == nil {
		return sr
	}
	return &hashTee{r: sr, pos: off, run: r}
}

// hashState is the running hash to record with a confirmed offset.
func (r *run) hashState() (int64, []byte) {
	r.hashMu.Lock()
	defer r.hashMu.Unlock()
	if r.hasher == nil {
		return r.rec.Hashed, r.rec.HashState
	}
	state, _ := r.hasher.(encoding.BinaryMarshaler).MarshalBinary()
	return r.hashed, state
}

// fileSum is the file's SHA-256 once every byte went through the hash.
func (r *run) fileSum() string {
	r.hashMu.Lock()
	defer r.hashMu.Unlock()
	if r.hasher == nil || r.hashed != r.rec.Size {
		return ""
	}
	return hex.EncodeToString(r.hasher.Sum(nil))
}

// checkUnchanged compares size and modification time, cheaply, before each
// request: mixed bytes must never be uploaded.
func (r *run) checkUnchanged(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return &permanent{fmt.Errorf("cannot read the file to upload: %w", err)}
	}
	switch {
	case fi.Size() != r.rec.Size:
		return changedError(r.rec.Path, fmt.Sprintf("its size is now %d bytes, not %d", fi.Size(), r.rec.Size))
	case !fi.ModTime().Equal(r.rec.ModTime):
		return changedError(r.rec.Path, "its modification time changed")
	case !r.rec.ChangeTime.IsZero() && !changeTime(fi).Equal(r.rec.ChangeTime):
		return changedError(r.rec.Path, "it was written to (its change time moved)")
	}
	return nil
}

// ErrSourceChanged is wrapped by the failure of a job whose file changed.
var ErrSourceChanged = errors.New("the file changed since its upload began")

func changedError(path, how string) error {
	return &permanent{fmt.Errorf("%w (%s: %s); nothing more was sent, so no mixed bytes reach the server. Upload the file again as a new job if the new content is what you want", ErrSourceChanged, path, how)}
}

// hashPrefix hashes the first n bytes of f.
func hashPrefix(ctx context.Context, f *os.File, n int64) (hash.Hash, error) {
	h := sha256.New()
	sr := io.NewSectionReader(f, 0, n)
	buf := make([]byte, 256<<10)
	var read int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := sr.Read(buf)
		h.Write(buf[:m])
		read += int64(m)
		if err == io.EOF {
			if read != n {
				return nil, io.ErrUnexpectedEOF
			}
			return h, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// resumable is the session loop of PROTOCOL.md section 4: start a session,
// send chunks from where the server says it stands, and after any doubt
// ask it (a status query) before sending more.
func (r *run) resumable(ctx context.Context) (*Response, error) {
	rec := r.rec
	needStatus := rec.Session != "" // a session from before: where it stands is unknown
	offset := rec.Confirmed
	for {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		var (
			step string
			next int64
			resp *Response
			err  error
		)
		switch {
		case rec.Session == "":
			step = "start"
			err = r.initiate(ctx)
			if err == nil {
				offset, r.best, r.sent, needStatus = 0, 0, 0, false
				continue
			}
		case needStatus || r.expired():
			step = "status"
			next, resp, err = r.status(ctx)
			if err == nil && resp == nil {
				if r.expired() {
					// Unfinished and past its week: a new session is safer
					// than one the server may drop mid-way. The old one is
					// never sent to again, so it cannot complete.
					if err := r.dropSession("the upload session is older than its lifetime"); err != nil {
						return nil, err
					}
					continue
				}
				needStatus = false
				offset = next
				if err := r.confirm(next); err != nil {
					return nil, err
				}
			}
		default:
			step = "chunk"
			next, resp, err = r.chunk(ctx, offset)
			if err == nil && resp == nil {
				offset = next
				if err := r.confirm(next); err != nil {
					return nil, err
				}
			}
		}
		if resp != nil {
			return resp, nil
		}
		if err == nil {
			r.refreshed = false
			continue
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		var perm *permanent
		if errors.As(err, &perm) {
			return nil, err
		}
		switch classify(err) {
		case classGone:
			switch step {
			case "chunk":
				// Make sure it did not complete before calling it gone.
				needStatus = true
				continue
			case "status":
				r.restarts++
				if r.restarts > maxRestarts {
					return nil, fmt.Errorf("the server lost the upload session %d times in a row; giving up: %w", r.restarts, err)
				}
				if err := r.dropSession("the upload session is gone (expired or cancelled on the server)"); err != nil {
					return nil, err
				}
				continue
			}
			return nil, fmt.Errorf("the upload URI %s was not found; check it: %w", targetWhere(rec.URL), err)
		case classAuth:
			if err := r.refresh(ctx, err); err != nil {
				return nil, err
			}
			needStatus = rec.Session != ""
			continue
		case classRetry:
			if step == "chunk" {
				needStatus = true
			}
			if err := r.backoff(ctx, err); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, err
		}
	}
}

const maxRestarts = 3

func (r *run) expired() bool {
	rec := r.rec
	return rec.Session != "" && r.q.clock.Now().Round(0).Sub(rec.SessionStarted.Round(0)) >= r.q.sessionTTL
}

// confirm records an offset the server reported; moving forward is
// progress, which resets the backoff.
func (r *run) confirm(off int64) error {
	if off > r.rec.Size {
		return &permanent{fmt.Errorf("the server claims to store %d bytes of a %d-byte file; it cannot be trusted with this upload", off, r.rec.Size)}
	}
	if off > r.best {
		r.best = off
		r.failures = 0
		r.restarts = 0
	}
	r.sent = off
	hashed, state := r.hashState()
	if off != r.rec.Confirmed || hashed != r.rec.Hashed {
		if err := r.q.updateProgress(r.jb, func(rec *Record) { rec.Confirmed, rec.Hashed, rec.HashState = off, hashed, state }); err != nil {
			return err
		}
	}
	r.progress(true)
	return nil
}

func (r *run) dropSession(why string) error {
	r.q.emit(Event{Kind: EventRetrying, Job: r.rec.ID, Attempt: r.failures, Reason: why + "; starting a new one"})
	r.best, r.sent = 0, 0
	return r.q.update(r.jb, func(rec *Record) {
		rec.Session = ""
		rec.SessionStarted = time.Time{}
		rec.Confirmed = 0
	})
}

func (r *run) refresh(ctx context.Context, cause error) error {
	if r.refreshed || r.q.auth == nil {
		return &permanent{fmt.Errorf("the server refused the credentials even after a refresh; sign in again: %w", cause)}
	}
	r.refreshed = true
	if err := r.q.auth.Refresh(ctx); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return &permanent{fmt.Errorf("the server refused the credentials (%v) and they could not be refreshed: %w", cause, err)}
	}
	return nil
}

// backoff waits base*2^n + random(0..base) after a failure without
// progress, or gives up when n passed MaxRetries. A wake cuts the wait.
func (r *run) backoff(ctx context.Context, cause error) error {
	q := r.q
	woke := errors.Is(cause, errWoke)
	if !woke {
		if r.failures > q.maxRetries {
			return fmt.Errorf("gave up after %d tries in a row without progress (the session is kept: retry later or run `carrier resume`): %w", r.failures, cause)
		}
	}
	wait := time.Duration(0)
	if !woke {
		wait = backoffWait(q.retryBase, r.failures)
		r.failures++
	}
	wake := q.wake.Chan()
	t := q.clock.NewTimer(wait)
	defer t.Stop()
	// Sent after the timer exists, so whoever reacts to the event finds
	// the wait already under way.
	q.emit(Event{Kind: EventRetrying, Job: r.rec.ID, Attempt: r.failures, Wait: wait, Reason: cause.Error(), Woke: woke})
	select {
	case <-t.C():
	case <-wake:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// maxWait keeps every single wait under a minute (PROTOCOL.md section 5).
const maxWait = 59 * time.Second

func backoffWait(base time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	exp := base
	for i := 0; i < n && exp < maxWait; i++ {
		exp *= 2
	}
	w := exp + time.Duration(mrand.Int64N(int64(base)+1))
	return min(w, maxWait)
}

// initiate starts a session and records its URI before any byte is sent.
func (r *run) initiate(ctx context.Context) error {
	rec := r.rec
	target, err := withUploadType(rec.URL, Resumable)
	if err != nil {
		return &permanent{err}
	}
	var body io.Reader = http.NoBody
	if len(rec.Metadata) > 0 {
		body = bytes.NewReader(rec.Metadata)
	}
	req, err := http.NewRequest(rec.Method, target, body)
	if err != nil {
		return &permanent{fmt.Errorf("cannot build the request: %w", err)}
	}
	if len(rec.Metadata) > 0 {
		req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	}
	req.Header.Set("X-Upload-Content-Type", rec.ContentType)
	req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(rec.Size, 10))
	if err := r.authorize(ctx, req, true); err != nil {
		return err
	}
	a, err := r.exchange(ctx, req, "start the upload session", targetWhere(rec.URL), nil)
	if err != nil {
		return err
	}
	if a.status/100 != 2 {
		if a.status == http.StatusPermanentRedirect {
			return &protocolError{"the server answered 308 to the start of a session"}
		}
		return parseAPIError(a.status, a.body)
	}
	loc := a.header.Get("Location")
	if loc == "" {
		return &permanent{errors.New("the server started no upload session (no Location in its answer); is the URI an upload URI (/upload/...)?")}
	}
	base, _ := url.Parse(target)
	lu, err := base.Parse(loc)
	if err != nil || (lu.Scheme != "http" && lu.Scheme != "https") {
		return &permanent{errors.New("the server's session URI is not a usable http(s) URI")}
	}
	session := lu.String()
	now := r.q.clock.Now().Round(0)
	return r.q.update(r.jb, func(rec *Record) {
		rec.Session = session
		rec.SessionStarted = now
		rec.Confirmed = 0
	})
}

// authorize adds credentials; session requests get them only when the
// session lives on the target's own host.
func (r *run) authorize(ctx context.Context, req *http.Request, target bool) error {
	if r.q.auth == nil || (!target && !sameOrigin(r.rec.URL, r.rec.Session)) {
		return nil
	}
	if err := r.q.auth.Authorize(ctx, req); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return &permanent{fmt.Errorf("cannot get credentials for the upload: %w", err)}
	}
	return nil
}

// status asks the session where it stands: the offset it stores, or the
// final resource when the upload already completed.
func (r *run) status(ctx context.Context) (int64, *Response, error) {
	rec := r.rec
	req, err := http.NewRequest(http.MethodPut, rec.Session, http.NoBody)
	if err != nil {
		return 0, nil, &permanent{errors.New("the recorded session URI is unusable")}
	}
	req.ContentLength = 0
	req.Header.Set("Content-Range", "bytes */"+strconv.FormatInt(rec.Size, 10))
	if err := r.authorize(ctx, req, false); err != nil {
		return 0, nil, err
	}
	a, err := r.exchange(ctx, req, "ask where the upload stands", sessionWhere(rec.Session), nil)
	if err != nil {
		return 0, nil, err
	}
	return r.sessionAnswer(a)
}

// chunk sends the bytes from off, up to one chunk, straight from the file.
func (r *run) chunk(ctx context.Context, off int64) (int64, *Response, error) {
	rec := r.rec
	if err := r.checkUnchanged(r.f); err != nil {
		return 0, nil, err
	}
	n := min(rec.ChunkSize, rec.Size-off)
	var cr string
	var body *progressBody
	var rb io.Reader = http.NoBody
	if n <= 0 {
		// Nothing left to send (an empty file, or every byte stored but
		// not yet finalized): state the total to finish.
		cr = "bytes */" + strconv.FormatInt(rec.Size, 10)
		n = 0
	} else {
		cr = fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, rec.Size)
		body = &progressBody{r: r.source(off, n), onRead: func(m int64) {
			r.sentTo(off + m)
		}}
		rb = body
	}
	req, err := http.NewRequest(http.MethodPut, rec.Session, rb)
	if err != nil {
		return 0, nil, &permanent{errors.New("the recorded session URI is unusable")}
	}
	req.ContentLength = n
	req.Header.Set("Content-Range", cr)
	if err := r.authorize(ctx, req, false); err != nil {
		return 0, nil, err
	}
	r.sent = off
	op := "send bytes " + cr[len("bytes "):]
	a, err := r.exchange(ctx, req, op, sessionWhere(rec.Session), body)
	if err != nil {
		return 0, nil, err
	}
	return r.sessionAnswer(a)
}

// sessionAnswer reads an answer from a session URI: 308 with a Range (or
// none, meaning zero), or the final resource.
func (r *run) sessionAnswer(a *answer) (int64, *Response, error) {
	switch {
	case a.status == http.StatusPermanentRedirect:
		off, err := parseRange(a.header)
		if err != nil {
			return 0, nil, &protocolError{err.Error()}
		}
		return off, nil, nil
	case (a.status == http.StatusOK || a.status == http.StatusCreated) && len(bytes.TrimSpace(a.body)) == 0:
		// Every Google upload ends with the resource. A bare 2xx is a
		// server in trouble (one shutting down answers so), not the end of
		// the upload: ask where it stands rather than call it done.
		return 0, nil, &protocolError{fmt.Sprintf("the server answered %d without the uploaded resource", a.status)}
	case a.status == http.StatusOK || a.status == http.StatusCreated:
		return 0, &Response{Status: a.status, ContentType: a.header.Get("Content-Type"), Body: a.body}, nil
	default:
		return 0, nil, parseAPIError(a.status, a.body)
	}
}

// oneShot sends a media or multipart upload: one request, which cannot be
// asked about afterwards. It is retried only when the server said it
// failed or when the body never fully left: then it cannot have arrived.
func (r *run) oneShot(ctx context.Context) (*Response, error) {
	rec := r.rec
	target, err := withUploadType(rec.URL, rec.Type)
	if err != nil {
		return nil, &permanent{err}
	}
	for {
		if err := r.checkUnchanged(r.f); err != nil {
			return nil, err
		}
		media := r.source(0, rec.Size)
		var src io.Reader = media
		length := rec.Size
		contentType := rec.ContentType
		if rec.Type == Multipart {
			src, length, contentType = multipartBody(rec.Metadata, rec.ContentType, media, rec.Size)
		}
		body := &progressBody{r: src, onRead: func(m int64) { r.sentTo(min(m, rec.Size)) }}
		var rb io.Reader = body
		if length == 0 {
			rb = http.NoBody
		}
		req, err := http.NewRequest(rec.Method, target, rb)
		if err != nil {
			return nil, &permanent{fmt.Errorf("cannot build the request: %w", err)}
		}
		req.ContentLength = length
		req.Header.Set("Content-Type", contentType)
		if err := r.authorize(ctx, req, true); err != nil {
			return nil, err
		}
		if !rec.Sent {
			if err := r.q.update(r.jb, func(rec *Record) { rec.Sent = true }); err != nil {
				return nil, err
			}
		}
		r.sent = 0
		a, err := r.exchange(ctx, req, "upload", targetWhere(rec.URL), body)
		if err == nil && a.status/100 == 2 {
			return &Response{Status: a.status, ContentType: a.header.Get("Content-Type"), Body: a.body}, nil
		}
		if err != nil && body.count() < length {
			// The body never fully left, so the server cannot have made
			// the resource: sending again is safe, now or after a restart.
			if uerr := r.q.update(r.jb, func(rec *Record) { rec.Sent = false }); uerr != nil {
				return nil, uerr
			}
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if err == nil {
			err = parseAPIError(a.status, a.body)
			if err := r.q.update(r.jb, func(rec *Record) { rec.Sent = false }); err != nil {
				return nil, err
			}
		} else if body.count() >= length {
			return nil, &permanent{fmt.Errorf("the connection failed after the whole %s upload was sent; it may or may not have arrived, and this type of upload cannot be asked, so it was not sent again. Check the destination: %w", rec.Type, err)}
		}
		var perm *permanent
		if errors.As(err, &perm) {
			return nil, err
		}
		switch classify(err) {
		case classAuth:
			if err := r.refresh(ctx, err); err != nil {
				return nil, err
			}
		case classRetry:
			if err := r.backoff(ctx, err); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
}

// multipartBody streams metadata then media as multipart/related, with an
// exact length so no byte of the media is held in memory.
func multipartBody(meta []byte, mediaType string, media io.Reader, size int64) (io.Reader, int64, string) {
	if len(meta) == 0 {
		meta = []byte("{}") // the form requires two parts; an empty object says "no metadata"
	}
	var b [24]byte
	rand.Read(b[:])
	boundary := "carrier_" + hex.EncodeToString(b[:])
	head := "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + string(meta) +
		"\r\n--" + boundary + "\r\nContent-Type: " + mediaType + "\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	r := io.MultiReader(bytes.NewReader([]byte(head)), media, bytes.NewReader([]byte(tail)))
	return r, int64(len(head)) + size + int64(len(tail)), "multipart/related; boundary=" + boundary
}

// cancelSession deletes the session on the server; 499 is the documented
// answer, and a session already gone is as good.
func (r *run) cancelSession(ctx context.Context) error {
	rec := r.rec
	if rec.Session == "" {
		return nil
	}
	req, err := http.NewRequest(http.MethodDelete, rec.Session, http.NoBody)
	if err != nil {
		return nil
	}
	if err := r.authorize(ctx, req, false); err != nil {
		return err
	}
	a, err := r.exchange(ctx, req, "cancel the upload session", sessionWhere(rec.Session), nil)
	if err != nil {
		return err
	}
	switch {
	case a.status == 499, a.status == http.StatusNotFound, a.status == http.StatusGone, a.status/100 == 2:
		return nil
	}
	return parseAPIError(a.status, a.body)
}
