// Package gapi is Carrier's one client for plain Google API calls (not
// uploads): Drive's files, ids, storage and deletes, Photos' albums,
// Gmail's drafts and mailbox, Mirror's timeline. It has the shape of
// Google's own gensupport: one call function (method, path, query, JSON
// body in, JSON answer out) with one read limit for every answer, a 401
// answered by one refresh of the token and one more try, transient
// failures (429, 5xx, no answer) tried again with backoff a bounded number
// of times when the call may be repeated, and one structured error
// (*Error) that callers test with errors.As instead of reading its text.
//
// Uploads go through transfer's engine, which has its own retry decision;
// this package asks for tokens the same way (transfer.Authorizer).
package gapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"carrier/transfer"
)

// MaxAnswer is the read limit of every answer: the largest a Carrier
// call reads whole is a draft's raw message (at most 35 MiB, a third more
// in base64) or an attachment of one. An answer over it is refused, never
// cut short.
const MaxAnswer = 64 << 20

// DefaultRetries is how many times a repeatable call is tried again after
// a transient failure before its error is returned.
const DefaultRetries = 4

// Doer sends one HTTP request (*http.Client is one).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Client calls one Google API root.
type Client struct {
	Root    string              // the API root, e.g. https://www.googleapis.com
	Auth    transfer.Authorizer // puts the token on each request; nil: none
	HTTP    Doer                // nil: http.DefaultClient
	Service string              // what errors call the server ("Google Drive"); "": its host
	Limit   int64               // the read limit of answers; 0: MaxAnswer
	Retries int                 // tries after a transient failure; 0: DefaultRetries, <0: none
	Backoff time.Duration       // the first wait before a try again; 0: half a second
}

// Call is one request.
type Call struct {
	Method string     // "": GET
	Path   string     // under Root ("/drive/v3/about"), or an absolute URL on Root's origin
	Query  url.Values // added to Path's own query
	// Body is sent as JSON: a []byte or json.RawMessage as it is, any
	// other value marshalled; nil: no body.
	Body any
	// Idempotent marks a call that may be sent again after it went out
	// and no answer (or a transient one) came back. GET, HEAD and DELETE
	// are; a POST is only when its caller says so.
	Idempotent bool
}

// ErrElsewhere says a call named an address off the client's root's
// origin: neither the token nor the request goes there (a request alone
// would tell that server something was opened).
var ErrElsewhere = errors.New("the server named an address on another server; Carrier reads only from the server it asked")

// Error is a refusal from a Google API, in the fields of Google's JSON
// error form.
type Error struct {
	Service string   // who answered, as the client names it
	Code    int      // the HTTP status
	Status  string   // Google's error.status word, e.g. PERMISSION_DENIED
	Reasons []string // errors[].reason, then details[].reason
	Message string   // the server's own words, made printable
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s answered %d %s", e.Service, e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("%s answered %d: %s", e.Service, e.Code, e.Message)
}

// Has reports whether Google gave reason among the error's reasons.
func (e *Error) Has(reason string) bool { return slices.Contains(e.Reasons, reason) }

// transient reports whether the refusal may pass by itself: the server's
// load (5xx), a request to slow down (429, or a 403 whose reason says
// so), Google's 409 ABORTED (try the request again).
func (e *Error) transient() bool {
	switch {
	case e.Code >= 500, e.Code == http.StatusTooManyRequests, e.Code == http.StatusRequestTimeout:
		return true
	case e.Code == http.StatusConflict:
		return e.Status == "ABORTED"
	case e.Code == http.StatusForbidden:
		return e.Has("rateLimitExceeded") || e.Has("userRateLimitExceeded")
	}
	return false
}

// StatusOf is the HTTP status of the refusal err carries, 0 when it
// carries none (no answer came).
func StatusOf(err error) int {
	if e := (*Error)(nil); errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// TooLargeError is an answer longer than the client's read limit.
type TooLargeError struct {
	Service string
	Limit   int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s answered with more than %s, more than Carrier reads", e.Service, size(e.Limit))
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Get reads the JSON resource at path into out.
func (c *Client) Get(ctx context.Context, path string, out any) error {
	return c.Do(ctx, Call{Path: path}, out)
}

// Do makes the call and reads a 2xx answer's JSON into out: a *[]byte
// takes the body as it is, nil discards it. A refusal is an *Error; a 401
// after the token was refreshed once is a *transfer.SignInError wrapping
// it; an answer over the read limit a *TooLargeError.
func (c *Client) Do(ctx context.Context, call Call, out any) error {
	answer, _, err := c.run(ctx, call, false)
	if err != nil {
		return err
	}
	return decode(c.service(c.Root), answer, out)
}

// Open makes the call and returns a 2xx answer's body for the caller to
// read as it arrives and close: the one answer not held whole (an
// attachment goes to disk as it comes), so the caller bounds what it
// reads. Refusals are as Do's.
func (c *Client) Open(ctx context.Context, call Call) (io.ReadCloser, error) {
	_, body, err := c.run(ctx, call, true)
	return body, err
}

// run makes the call, tried again as the package says; stream returns a
// 2xx answer's body unread.
func (c *Client) run(ctx context.Context, call Call, stream bool) ([]byte, io.ReadCloser, error) {
	target, err := c.url(call)
	if err != nil {
		return nil, nil, err
	}
	var body []byte
	switch b := call.Body.(type) {
	case nil:
	case []byte:
		body = b
	case json.RawMessage:
		body = b
	default:
		if body, err = json.Marshal(b); err != nil {
			return nil, nil, err
		}
	}
	method := cmpOr(call.Method, http.MethodGet)
	repeatable := call.Idempotent || method == http.MethodGet || method == http.MethodHead || method == http.MethodDelete
	retries := c.Retries
	if retries == 0 {
		retries = DefaultRetries
	}
	refreshed := false
	for try := 0; ; try++ {
		answer, open, sent, err := c.once(ctx, method, target, body, stream)
		if err == nil {
			return answer, open, nil
		}
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		var refused *Error
		if errors.As(err, &refused) && refused.Code == http.StatusUnauthorized && c.Auth != nil {
			if refreshed {
				return nil, nil, &transfer.SignInError{Account: transfer.AccountOf(ctx), Err: fmt.Errorf("%w, again after its token was renewed: sign in again", err)}
			}
			refreshed = true
			if rerr := c.Auth.Refresh(ctx); rerr != nil {
				return nil, nil, fmt.Errorf("%w; the token could not be renewed: %w", err, rerr)
			}
			try-- // the refresh's try is not a transient failure's
			continue
		}
		transient := errors.As(err, &refused) && refused.transient() || isNetError(err)
		if !transient || try >= retries || (sent && !repeatable) {
			return nil, nil, err
		}
		if serr := sleep(ctx, c.wait(try, err)); serr != nil {
			return nil, nil, serr
		}
	}
}

// once sends the request once and reads a 2xx answer, or with stream
// returns its body unread; sent reports whether the request may have
// reached the server (a connection was had for it).
func (c *Client) once(ctx context.Context, method, target string, body []byte, stream bool) (answer []byte, open io.ReadCloser, sent bool, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { sent = true }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, target, rd)
	if err != nil {
		return nil, nil, false, err
	}
	if req.URL.User != nil {
		return nil, nil, false, ErrElsewhere
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	}
	if c.Auth != nil {
		if err := c.Auth.Authorize(ctx, req); err != nil {
			return nil, nil, false, err
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	service := c.service(target)
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, sent, context.Cause(ctx)
		}
		// The URL goes: net/http puts it whole, query and all, in its text.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, sent, &netError{service: service, err: err}
	}
	if stream && resp.StatusCode/100 == 2 {
		return nil, resp.Body, true, nil
	}
	defer resp.Body.Close()
	limit := c.Limit
	if limit <= 0 {
		limit = MaxAnswer
	}
	answer, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, true, context.Cause(ctx)
		}
		return nil, nil, true, &netError{service: service, err: err, reading: true}
	}
	if int64(len(answer)) > limit {
		return nil, nil, true, &TooLargeError{Service: service, Limit: limit}
	}
	if resp.StatusCode/100 != 2 {
		e := parse(resp.StatusCode, answer)
		e.Service = service
		if e.transient() {
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				return nil, nil, true, &retryAfter{err: e, wait: time.Duration(min(s, 60)) * time.Second}
			}
		}
		return nil, nil, true, e
	}
	return answer, nil, true, nil
}

// retryAfter is a transient refusal that says when to try again.
type retryAfter struct {
	err  *Error
	wait time.Duration
}

func (r *retryAfter) Error() string { return r.err.Error() }
func (r *retryAfter) Unwrap() error { return r.err }

// netError is a call that got no whole answer.
type netError struct {
	service string
	err     error
	reading bool
}

func (e *netError) Error() string {
	if e.reading {
		return fmt.Sprintf("cannot read %s answer: %v", possessive(e.service), e.err)
	}
	return fmt.Sprintf("cannot reach %s: %v", e.service, e.err)
}

func (e *netError) Unwrap() error { return e.err }

func isNetError(err error) bool {
	var ne *netError
	return errors.As(err, &ne)
}

// wait is how long to wait before try+1: Retry-After when the server said
// it, else base*2^try plus up to base at random.
func (c *Client) wait(try int, err error) time.Duration {
	if ra := (*retryAfter)(nil); errors.As(err, &ra) {
		return ra.wait
	}
	base := c.Backoff
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	return base<<min(try, 6) + time.Duration(mrand.Int64N(int64(base)+1))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// url is the call's address: under Root, or an absolute one on its origin.
func (c *Client) url(call Call) (string, error) {
	target := strings.TrimRight(c.Root, "/") + call.Path
	if !strings.HasPrefix(call.Path, "/") || strings.HasPrefix(call.Path, "//") {
		target = call.Path
		if o := origin(target); o == "" || o != origin(c.Root) {
			return "", ErrElsewhere
		}
	}
	if len(call.Query) > 0 {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + call.Query.Encode()
	}
	return target, nil
}

// origin is scheme://host of an absolute http(s) address, lower case; ""
// for anything else.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

func (c *Client) service(target string) string {
	if c.Service != "" {
		return c.Service
	}
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		return u.Host
	}
	return "the server"
}

// decode reads a 2xx answer into out.
func decode(service string, answer []byte, out any) error {
	switch v := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*v = answer
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s answer is not what was asked for: %w", possessive(service), err)
	}
	return nil
}

// parse reads Google's JSON error form; an answer in another form (a
// proxy's page) keeps its first line, short.
func parse(code int, body []byte) *Error {
	e := &Error{Code: code}
	var g struct {
		Error struct {
			Message string `json:"message"`
			Status  string `json:"status"`
			Errors  []struct {
				Message string `json:"message"`
				Reason  string `json:"reason"`
			} `json:"errors"`
			Details []struct {
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &g) == nil {
		e.Status, e.Message = g.Error.Status, g.Error.Message
		for _, x := range g.Error.Errors {
			if x.Reason != "" {
				e.Reasons = append(e.Reasons, x.Reason)
			}
			if e.Message == "" {
				e.Message = x.Message
			}
		}
		for _, x := range g.Error.Details {
			if x.Reason != "" {
				e.Reasons = append(e.Reasons, x.Reason)
			}
		}
	}
	e.Message = printable(e.Message)
	return e
}

// printable replaces control characters (C0, DEL, C1: terminal escapes,
// line breaks) in a server's words, which reach terminals and windows.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

// possessive is "Gmail's", "Google Photos'".
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}

func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
