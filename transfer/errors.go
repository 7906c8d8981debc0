package transfer

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// APIError is a refusal from the server, in Google's JSON error form
// {"error":{"code","message","errors":[{"reason"}],"status"}} when the
// server sent one.
type APIError struct {
	Code    int      // HTTP status
	Status  string   // Google's status word, e.g. INVALID_ARGUMENT
	Message string   // the server's own words, redacted
	Reasons []string // errors[].reason, e.g. rateLimitExceeded, then details[].reason (Google's ErrorInfo)

	// slowDown: the answer's words ask to slow down whatever its code says
	// (the second dialect's per-minute quota comes as a 400).
	slowDown bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	// A 5xx or a request to slow down is the server's load, not the
	// connection's fault: the words say so, since a person otherwise
	// blames the network.
	switch {
	case e.Code >= 500:
		fmt.Fprintf(&b, "the server is busy (it answered %d %s)", e.Code, http.StatusText(e.Code))
	case e.daily():
		fmt.Fprintf(&b, "the server's quota for the day is used up (it answered %d %s)", e.Code, http.StatusText(e.Code))
	case e.rateLimited():
		fmt.Fprintf(&b, "the server asks to slow down (it answered %d %s)", e.Code, http.StatusText(e.Code))
	default:
		fmt.Fprintf(&b, "the server answered %d %s", e.Code, http.StatusText(e.Code))
	}
	if e.Status != "" {
		fmt.Fprintf(&b, " (%s)", e.Status)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// daily reports whether the refusal is a quota per day (Google's words:
// "Quota exceeded for quota metric ... per day", or the reason
// dailyLimitExceeded): it lasts until the quota resets, hours away.
func (e *APIError) daily() bool {
	if slices.Contains(e.Reasons, "dailyLimitExceeded") {
		return true
	}
	return (e.Code == http.StatusTooManyRequests || e.Code == http.StatusForbidden || e.Status == "RESOURCE_EXHAUSTED") &&
		strings.Contains(strings.ToLower(e.Message), "per day")
}

// Is makes a quota per day an ErrDailyQuota, so the job's cause says so.
func (e *APIError) Is(target error) bool { return target == ErrDailyQuota && e.daily() }

// rateLimited reports whether the refusal asks the client to slow down, so
// it deserves a backoff rather than a failure.
func (e *APIError) rateLimited() bool {
	if e.Code == http.StatusTooManyRequests || e.slowDown {
		return true
	}
	if e.Code != http.StatusForbidden {
		return false
	}
	for _, r := range e.Reasons {
		if r == "rateLimitExceeded" || r == "userRateLimitExceeded" {
			return true
		}
	}
	return false
}

// maxErrorBody bounds what is read of an error answer: a message a person
// reads, not a download.
const maxErrorBody = 64 << 10

// parseAPIError builds an APIError from an answer the caller has judged an
// error; body is what was read of it.
func parseAPIError(code int, body []byte) *APIError {
	e := &APIError{Code: code}
	var g struct {
		Error struct {
			Code    int    `json:"code"`
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
	if json.Unmarshal(body, &g) == nil && (g.Error.Message != "" || g.Error.Status != "" || len(g.Error.Errors) > 0) {
		e.Status = g.Error.Status
		e.Message = g.Error.Message
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
	} else {
		// Not Google's form (a proxy's HTML page, plain text): keep a short
		// readable line of it.
		s := strings.TrimSpace(string(body))
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = strings.TrimSpace(s[:i])
		}
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		e.Message = s
	}
	e.Message = printable(redact(e.Message))
	return e
}

// printable replaces control characters (C0, DEL, C1: terminal escapes,
// line breaks) in a server's text, which reaches terminals, windows and
// notifications.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

// NetError is a request that got no answer: the connection failed, broke,
// stalled, or was abandoned. It names the host and path of the request but
// never its query or, for a session URI, its path: both can carry the
// upload_id, which is a credential.
type NetError struct {
	Op    string // what was being done, e.g. "send bytes 0-262143"
	Where string // host and path, redacted
	Err   error  // the cause, with any *url.Error unwrapped
}

func (e *NetError) Error() string {
	if ab := (*abandonedError)(nil); errors.As(e.Err, &ab) {
		return fmt.Sprintf("%s, so the request was abandoned (%s to %s)", ab.msg, e.Op, e.Where)
	}
	return fmt.Sprintf("%s: %s to %s: %s", e.what(), e.Op, e.Where, redact(e.Err.Error()))
}

// what says in a few words what became of the connection: a person reads
// "the connection dropped" where the system says "read: connection reset
// by peer".
func (e *NetError) what() string {
	var op *net.OpError
	switch {
	case errors.As(e.Err, &op) && op.Op == "dial":
		return "could not reach the server"
	}
	return "the connection dropped"
}

// abandonedError is a cause the engine gives a request it abandons itself
// (stalled, too slow, a wake, a hold), as opposed to one the network broke.
type abandonedError struct{ msg string }

func (e *abandonedError) Error() string { return e.msg }

func (e *NetError) Unwrap() error { return e.Err }

// netError wraps a transport error so that the URL inside *url.Error is
// dropped: net/http puts the full URL, upload_id included, in its text.
func netError(op, where string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &NetError{Op: op, Where: where, Err: err}
}

var secretParam = regexp.MustCompile(`(?i)(upload_id|access_token|token|key|sig|signature)=[^&\s"']*`)

// redact removes anything that looks like a session id or token from text
// that may reach a person, a log or the journal's error field.
func redact(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	return secretParam.ReplaceAllString(s, "$1=REDACTED")
}

// targetWhere names a target URI for messages: scheme, host and path only.
func targetWhere(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the upload URI"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// sessionWhere names a session URI for messages: its host only, since
// servers are free to put the session id in the path.
func sessionWhere(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the upload session"
	}
	return "the upload session at " + u.Host
}
