package transfer

import (
	"errors"
	mrand "math/rand/v2"
	"net/http"
	"time"
)

// Why an upload ended, for the front ends to word for their medium (the
// engine's text states what happened, never what to do about it).
var (
	// ErrSourceChanged: the file changed since its upload began.
	ErrSourceChanged = errors.New("the file changed since its upload began")
	// ErrMaybeSent: a media or multipart upload's bytes went out and no
	// answer came; it may have arrived, and cannot be asked.
	ErrMaybeSent = errors.New("the upload may or may not have arrived")
	// ErrGaveUp: the server or the network kept failing; the session is
	// kept, so trying again later goes on where it stood.
	ErrGaveUp = errors.New("the server or the network kept failing")
	// ErrSignIn: the server refused the credentials.
	ErrSignIn = errors.New("the server refused the credentials")
	// ErrDailyQuota: the server's quota of requests for the day is used
	// up. Retrying before it resets only spends the night: the job fails
	// at once, and a retry after the reset goes on.
	ErrDailyQuota = errors.New("the day's quota of requests is used up")
)

// causes names the failures a front end words specially, as the journal
// keeps them.
var causes = map[string]error{
	"source-changed": ErrSourceChanged,
	"maybe-sent":     ErrMaybeSent,
	"gave-up":        ErrGaveUp,
	"sign-in":        ErrSignIn,
	"not-verified":   ErrNotVerified,
	"daily-quota":    ErrDailyQuota,
}

// causeOf is the name of err's kind of failure, "" for any other.
func causeOf(err error) string {
	for name, c := range causes {
		if errors.Is(err, c) {
			return name
		}
	}
	return ""
}

// failure classes, per PROTOCOL.md section 5.
type class int

const (
	classFatal class = iota
	classRetry       // network, 408, 5xx, rate limit: back off, then ask where it stands
	classGone        // 404/410: the session is gone
	classAuth        // 401: refresh once
)

func classify(err error) class {
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.daily():
			return classFatal
		case ae.Code >= 500, ae.Code == http.StatusRequestTimeout:
			// Google's retry strategy: "HTTP 408, 429, and 5xx", on
			// any request of an upload.
			return classRetry
		case ae.rateLimited():
			return classRetry
		case ae.Code == http.StatusConflict && ae.Status == "ABORTED":
			// Google's "retry the whole request": another call of the
			// person's was running (Photos' batchCreate, one at a time).
			return classRetry
		case ae.Code == http.StatusNotFound || ae.Code == http.StatusGone:
			return classGone
		case ae.Code == http.StatusUnauthorized:
			return classAuth
		}
		return classFatal
	}
	if ge := (*sessionGone)(nil); errors.As(err, &ge) {
		return classGone
	}
	var ne *NetError
	var pe *protocolError
	var fe *finishError
	if errors.As(err, &ne) || errors.As(err, &pe) || errors.As(err, &fe) {
		return classRetry
	}
	return classFatal
}

// step is the request that failed.
type step int

const (
	stepStart  step = iota // start a session, or a one-shot upload
	stepStatus             // ask a session where it stands
	stepChunk              // send bytes to a session
)

// verdict is what to do after a failure.
type verdict int

const (
	verdictFail       verdict = iota // end the upload with the error
	verdictRetry                     // back off, then the same step again
	verdictBackoffAsk                // back off, then ask the session where it stands
	verdictAsk                       // ask the session at once (did it complete?)
	verdictNewSession                // the session is gone: start another
	verdictRefresh                   // refresh the credentials, then go on
)

func (v verdict) String() string {
	return [...]string{"fail", "retry", "backoff+ask", "ask", "new session", "refresh"}[v]
}

// decide is the one retry decision of the engine, for both upload kinds.
func decide(s step, err error) verdict {
	var perm *permanent
	if errors.As(err, &perm) {
		return verdictFail
	}
	switch classify(err) {
	case classRetry:
		if s == stepChunk {
			return verdictBackoffAsk
		}
		return verdictRetry
	case classGone:
		switch s {
		case stepChunk:
			return verdictAsk // make sure it did not complete before calling it gone
		case stepStatus:
			return verdictNewSession
		}
		return verdictFail // the upload URI itself is not found
	case classAuth:
		return verdictRefresh
	}
	return verdictFail
}

// protocolError is an answer the engine cannot make sense of (a bad Range,
// a 308 to a start request). It is retried: the next answer may be sane.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// sessionGone is a session its server says it ended without an HTTP
// status to say so (the second dialect's X-Goog-Upload-Status: canceled):
// handled as a 404 of the session.
type sessionGone struct{ msg string }

func (e *sessionGone) Error() string { return e.msg }

// finishError is a finishing answer (2xx) that is not the uploaded
// resource: cut short, not a JSON object, or of another size than the
// file. The upload may well be complete, but it is not called done on
// that: the session is asked again (retried like a protocolError).
type finishError struct{ msg string }

func (e *finishError) Error() string { return e.msg }

// permanent marks failures that retrying later will not mend.
type permanent struct{ err error }

func (e *permanent) Error() string { return e.err.Error() }
func (e *permanent) Unwrap() error { return e.err }

// retryable reports whether a failure might go away by itself, so trying
// the job again later may work.
func retryable(err error) bool {
	var perm *permanent
	if errors.Is(err, ErrDailyQuota) {
		return true // once the quota resets
	}
	return !errors.As(err, &perm) && classify(err) == classRetry
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
