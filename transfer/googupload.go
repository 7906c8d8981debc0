package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The second resumable dialect (PROTOCOL.md section 8, ProtocolGoogUpload):
// every request is a POST, the command and the offset travel in headers,
// and the session answers 200 with its state in X-Goog-Upload-Status. The
// session loop, the retry decision, the sums, progress and holds are the
// first dialect's (resumable.go): only the requests and the reading of
// their answers differ, here.

const (
	hdrCommand     = "X-Goog-Upload-Command"
	hdrOffset      = "X-Goog-Upload-Offset"
	hdrStatus      = "X-Goog-Upload-Status"
	hdrReceived    = "X-Goog-Upload-Size-Received"
	hdrGranularity = "X-Goog-Upload-Chunk-Granularity"
	hdrSessionURL  = "X-Goog-Upload-URL"
)

// googState is what an answer of the dialect says of its session.
type googState struct {
	status   string // active, final, canceled; "" when unstated
	received int64  // bytes stored; -1 when unstated
}

func googStateOf(h http.Header) (googState, error) {
	st := googState{status: strings.ToLower(strings.TrimSpace(h.Get(hdrStatus))), received: -1}
	if v := strings.TrimSpace(h.Get(hdrReceived)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return st, &protocolError{fmt.Sprintf("unreadable %s %q in the server's answer", hdrReceived, printable(v))}
		}
		st.received = n
	}
	return st, nil
}

func (s googState) canceled() bool { return s.status == "canceled" || s.status == "cancelled" }

// googStart starts a session: a POST to the upload URI as given, with no
// body. The session URI and the granularity are kept durably before any
// byte goes.
func (up *upload) googStart(ctx context.Context) error {
	rec := up.rec
	req, err := http.NewRequest(http.MethodPost, rec.URL, http.NoBody)
	if err != nil {
		return &permanent{fmt.Errorf("cannot build the request: %w", err)}
	}
	req.ContentLength = 0
	req.Header.Set("X-Goog-Upload-Protocol", "resumable")
	req.Header.Set(hdrCommand, "start")
	req.Header.Set("X-Goog-Upload-Raw-Size", strconv.FormatInt(rec.Size, 10))
	req.Header.Set("X-Goog-Upload-Content-Type", rec.ContentType)
	if name := headerFileName(rec.Path); name != "" {
		req.Header.Set("X-Goog-Upload-File-Name", name)
	}
	if err := up.authorize(ctx, req, true); err != nil {
		return err
	}
	a, err := up.exchange(ctx, req, "start the upload session", targetWhere(rec.URL), nil)
	if err != nil {
		return err
	}
	if a.status/100 != 2 {
		return googAPIError(a)
	}
	loc := strings.TrimSpace(a.header.Get(hdrSessionURL))
	if loc == "" {
		return &permanent{fmt.Errorf("the server started no upload session (no %s in its answer); does the URI take uploads in this protocol?", hdrSessionURL)}
	}
	base, _ := url.Parse(rec.URL)
	lu, err := base.Parse(loc)
	if err != nil || (lu.Scheme != "http" && lu.Scheme != "https") || lu.Host == "" {
		return &permanent{errors.New("the server's session URI is not a usable http(s) URI")}
	}
	if base.Scheme == "https" && lu.Scheme != "https" {
		// The file would leave in the clear, and the session URI with it.
		return &permanent{errors.New("the server answered an https upload with a session URI that is not https; nothing was sent")}
	}
	gran, err := granularityOf(a.header)
	if err != nil {
		// Nothing was sent to this session: it expires on the server.
		return &permanent{err}
	}
	now := up.u.Clock.Now().Round(0)
	return up.keep(true, func(c *Cursor) {
		c.Session = lu.String()
		c.SessionStarted = now
		c.Granularity = gran
		c.Confirmed = 0
	})
}

// granularityOf reads the chunk granularity a server states; 0 when it
// states none.
func granularityOf(h http.Header) (int64, error) {
	v := strings.TrimSpace(h.Get(hdrGranularity))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("the server's chunk granularity %q is not a positive number of bytes", printable(v))
	}
	return n, nil
}

// headerFileName is the file's name as the start states it to the
// server, which shows it to people; "" (not stated) when it cannot travel
// in a header as it is.
func headerFileName(path string) string {
	name := filepath.Base(path)
	if !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return ""
	}
	return name
}

// granularity is what the session's chunks must be multiples of.
func (up *upload) granularity() int64 {
	if g := up.rec.Granularity; g > 0 {
		return g
	}
	return ChunkQuantum
}

// googQuery asks the session where it stands: the offset it stores, or the
// finished upload's result.
func (up *upload) googQuery(ctx context.Context) (int64, *Response, error) {
	rec := up.rec
	req, err := http.NewRequest(http.MethodPost, rec.Session, http.NoBody)
	if err != nil {
		return 0, nil, &permanent{errors.New("the recorded session URI is unusable")}
	}
	req.ContentLength = 0
	req.Header.Set(hdrCommand, "query")
	if err := up.authorize(ctx, req, false); err != nil {
		return 0, nil, err
	}
	a, err := up.exchange(ctx, req, "ask where the upload stands", sessionWhere(rec.Session), nil)
	if err != nil {
		return 0, nil, err
	}
	st, err := googStateOf(a.header)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case a.status/100 != 2 && st.canceled():
		return 0, nil, &sessionGone{fmt.Sprintf("the server says the upload session was cancelled (it answered %d)", a.status)}
	case a.status/100 != 2:
		return 0, nil, googAPIError(a)
	case st.canceled():
		return 0, nil, &sessionGone{"the server says the upload session was cancelled"}
	case st.status == "final":
		resp, err := up.googFinal(a, st)
		if err != nil && errors.As(err, new(*finishError)) {
			// Asked, the server says the upload is finished but does not
			// give its result: it will not later either, and sending the
			// bytes again makes a second item of them.
			return 0, nil, &permanent{fmt.Errorf("%w: the server says the upload finished, but the answer that carried its result was lost and the server does not give it again (%w); the bytes were not sent again, since that could make a duplicate", ErrMaybeSent, err)}
		}
		return 0, resp, err
	case st.status != "active" && st.status != "":
		return 0, nil, &protocolError{fmt.Sprintf("the server says the upload session is %q, which this protocol does not know", printable(st.status))}
	case st.received < 0:
		return 0, nil, &protocolError{fmt.Sprintf("the server's answer to a query does not say how much it holds (no %s)", hdrReceived)}
	}
	return st.received, nil, nil
}

// googChunk sends the bytes from off, up to one chunk, straight from the
// file: a multiple of the granularity, or the rest of the file, which
// finalizes the upload.
func (up *upload) googChunk(ctx context.Context, off int64) (int64, *Response, error) {
	rec := up.rec
	gran := up.granularity()
	n := min(up.chunks.size(rec.ChunkSize), up.sendTo()-off)
	n = max(n-n%gran, gran)
	final := off+n >= rec.Size
	cmd := "upload"
	if final {
		n = rec.Size - off
		cmd = "upload, finalize"
	}
	var body *progressBody
	var rb io.Reader = http.NoBody
	op := "finish the upload"
	if n > 0 {
		body = &progressBody{r: up.source(off, n), onRead: func(m int64) { up.sentTo(off + m) }}
		rb = body
		op = fmt.Sprintf("send bytes %d-%d", off, off+n-1)
	}
	req, err := http.NewRequest(http.MethodPost, rec.Session, rb)
	if err != nil {
		return 0, nil, &permanent{errors.New("the recorded session URI is unusable")}
	}
	req.ContentLength = n
	req.Header.Set(hdrCommand, cmd)
	req.Header.Set(hdrOffset, strconv.FormatInt(off, 10))
	if err := up.authorize(ctx, req, false); err != nil {
		return 0, nil, err
	}
	a, err := up.sendChunk(ctx, req, body, off, op)
	if err != nil {
		return 0, nil, err
	}
	return up.googChunkAnswer(a, off, n, final)
}

// googChunkAnswer reads the answer to bytes sent from off: where the
// upload stands, or its result.
func (up *upload) googChunkAnswer(a *answer, off, n int64, final bool) (int64, *Response, error) {
	st, err := googStateOf(a.header)
	if err != nil {
		return 0, nil, err
	}
	if st.canceled() {
		return 0, nil, &sessionGone{fmt.Sprintf("the server says the upload session was cancelled (it answered %d)", a.status)}
	}
	if a.status/100 != 2 {
		if st.status == "active" && st.received >= 0 && st.received != off && offsetRefusal(a.status) {
			// The server refused the offset and said where it stands: go
			// on from there, as after a 308's Range. Where it stands at
			// the offset sent, the refusal is of the bytes, in its words.
			return st.received, nil, nil
		}
		return 0, nil, googAPIError(a)
	}
	switch {
	case st.status == "final":
		resp, err := up.googFinal(a, st)
		return 0, resp, err
	case st.status != "active" && st.status != "":
		return 0, nil, &protocolError{fmt.Sprintf("the server says the upload session is %q, which this protocol does not know", printable(st.status))}
	case st.received >= 0:
		return st.received, nil, nil
	case !final:
		// A 200 to an upload command says the chunk arrived whole.
		return off + n, nil, nil
	}
	return 0, nil, &protocolError{"the server did not finish the upload it was told to finish, nor say how much it holds"}
}

// offsetRefusal reports whether an error status, with the session's state
// stated, may be a refusal of the offset rather than of the request: not
// the ones the retry decision reads (auth, gone, busy, slow down).
func offsetRefusal(code int) bool {
	return code/100 == 4 && !slices.Contains([]int{http.StatusUnauthorized, http.StatusNotFound, http.StatusRequestTimeout, http.StatusGone, http.StatusTooManyRequests}, code)
}

// googFinal reads a finished upload's answer: its body is the result (an
// upload token), opaque here, and must be there; a stated size must be
// the file's.
func (up *upload) googFinal(a *answer, st googState) (*Response, error) {
	if st.received >= 0 && st.received != up.rec.Size {
		return nil, &finishError{fmt.Sprintf("the server says the upload finished with %d bytes, not the file's %d", st.received, up.rec.Size)}
	}
	if len(strings.TrimSpace(string(a.body))) == 0 {
		return nil, &finishError{fmt.Sprintf("the server answered %d, the upload finished, without its result", a.status)}
	}
	return finalResponse(a), nil
}

// googAPIError reads a refusal; a 400 whose words ask to slow down (the
// per-minute quota of PROTOCOL.md section 8) is paced like a 429.
func googAPIError(a *answer) *APIError {
	e := parseAPIError(a.status, a.body)
	if a.status == http.StatusBadRequest {
		e.slowDown = e.Status == "RESOURCE_EXHAUSTED" || slices.ContainsFunc(e.Reasons, func(r string) bool {
			return r == "rateLimitExceeded" || r == "userRateLimitExceeded" || r == "RATE_LIMIT_EXCEEDED"
		})
	}
	return e
}

// googCancel ends the session on the server, so it can never finish. A
// session already gone or finished is as good: nothing more goes to it.
func (up *upload) googCancel(ctx context.Context) error {
	rec := up.rec
	req, err := http.NewRequest(http.MethodPost, rec.Session, http.NoBody)
	if err != nil {
		return nil
	}
	req.ContentLength = 0
	req.Header.Set(hdrCommand, "cancel")
	if err := up.authorize(ctx, req, false); err != nil {
		return err
	}
	a, err := up.exchange(ctx, req, "cancel the upload session", sessionWhere(rec.Session), nil)
	if err != nil {
		return err
	}
	st, _ := googStateOf(a.header)
	switch {
	case a.status/100 == 2, a.status == 499, a.status == http.StatusNotFound, a.status == http.StatusGone,
		st.canceled(), st.status == "final":
		return nil
	}
	return googAPIError(a)
}
