package transfer

import (
	"errors"
	"net/http"
	"slices"
)

// Failure is why a job failed, in parts a front end words without reading
// the error's text: the code says what kind of failure it is, once and for
// all; the status and reason say what the server answered, when it
// answered.
type Failure struct {
	// Code is stable across versions (FailGaveUp, FailRefused, ...): what
	// a front end words and decides by.
	Code FailureCode `json:"code"`
	// Status is the HTTP status of the answer that ended the job, 0 when
	// none came (the network, the file, the person).
	Status int `json:"status,omitempty"`
	// Reason is Google's reason for a refusal (errors[].reason, or the
	// error's status word such as "PERMISSION_DENIED"), "" when it gave
	// none; for FailSourceChanged, how the file changed (ChangedSize,
	// ChangedModified, ChangedWritten, ChangedContent).
	Reason string `json:"reason,omitempty"`
}

// FailureCode is a Failure's stable kind.
type FailureCode string

// The failure codes. A record's code is one of these; a code a newer
// Carrier wrote and this one does not know reads as FailOther.
const (
	FailGaveUp        FailureCode = "gave-up"        // retries ran out on a transient trouble (network, 5xx, 429)
	FailRefused       FailureCode = "refused"        // the server refused the request for good (a 4xx other than below)
	FailNotFound      FailureCode = "not-found"      // the target (a draft, an album, a session) is gone: 404, 410 on a session that cannot restart
	FailTooLarge      FailureCode = "too-large"      // the server refused the size (413, Google's size reasons)
	FailQuota         FailureCode = "quota"          // a quota or storage limit (Google's quotaExceeded, storageQuotaExceeded, RESOURCE_EXHAUSTED); a quota per day is FailDailyQuota
	FailSourceChanged FailureCode = "source-changed" // the file changed or went away under the upload
	FailMaybeSent     FailureCode = "maybe-sent"     // a one-shot upload's answer was lost: it may have arrived
	FailNotVerified   FailureCode = "not-verified"   // the server's checksum differs from the file's
	FailSignIn        FailureCode = "sign-in"        // the sign-in was refused or is dead, or no credentials could be had: only a person mends it
	FailCancelled     FailureCode = "cancelled"      // a person cancelled it
	FailOther         FailureCode = "other"          // anything else (a local error)
)

func (f *Failure) clone() *Failure {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

// FailDailyQuota is the quota of requests for the day (Google's
// dailyLimitExceeded, or a quota "per day"): it lasts until the quota
// resets, hours away, where FailQuota may pass within the hour.
const FailDailyQuota FailureCode = "daily-quota"

// known reports whether c is a code this Carrier words.
func (c FailureCode) known() bool {
	switch c {
	case FailGaveUp, FailRefused, FailNotFound, FailTooLarge, FailQuota, FailDailyQuota, FailSourceChanged,
		FailMaybeSent, FailNotVerified, FailSignIn, FailCancelled, FailOther:
		return true
	}
	return false
}

// quotaReasons are Google's reasons (and status word) for a limit of the
// account or the project rather than of the request: storage full, a
// quota used up.
var quotaReasons = []string{"quotaExceeded", "storageQuotaExceeded", "RESOURCE_EXHAUSTED"}

// tooLargeReasons are Google's reasons for a file larger than it takes.
var tooLargeReasons = []string{"uploadTooLarge", "fileTooLarge", "maxFileSizeExceeded"}

// failureOf says in parts why a job ended with err: the one place where an
// error becomes a Failure. The status and Google's reason are those of the
// server's last refusal err wraps (a 503 the retries ran out on, a 403's
// errors[].reason); the code is the named cause first (the engine knows
// what it gave up on), then what the refusal says.
func failureOf(err error) *Failure {
	f := &Failure{Code: FailOther}
	ae := (*APIError)(nil)
	if errors.As(err, &ae) {
		f.Status, f.Reason = ae.Code, ae.reason()
	}
	switch {
	case errors.Is(err, errCancelling) || errors.Is(err, ErrCancelled):
		f.Code = FailCancelled
	case errors.Is(err, ErrSourceChanged):
		f.Code = FailSourceChanged
		if ce := (*changedErr)(nil); errors.As(err, &ce) {
			f.Reason = ce.how
		}
	case errors.Is(err, ErrNotVerified):
		f.Code = FailNotVerified
	case errors.Is(err, ErrMaybeSent):
		f.Code = FailMaybeSent
	case errors.Is(err, ErrSignInNeeded), errors.Is(err, ErrSignIn), errors.As(err, new(*credentialsError)):
		f.Code = FailSignIn
	case errors.Is(err, ErrDailyQuota):
		f.Code = FailDailyQuota
	case errors.Is(err, ErrGaveUp):
		f.Code = FailGaveUp
	case ae != nil:
		f.Code = ae.failureCode()
	case errors.As(err, new(*NetError)):
		f.Code = FailGaveUp // no answer, and no retry left to wait for one
	}
	return f
}

// reason is the one reason of a refusal a Failure keeps: Google's first
// errors[].reason (then details[].reason), else its status word.
func (e *APIError) reason() string {
	if len(e.Reasons) > 0 {
		return e.Reasons[0]
	}
	return e.Status
}

// failureCode is what a refusal that ended a job was.
func (e *APIError) failureCode() FailureCode {
	has := func(names []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(e.Reasons, n) || e.Status == n })
	}
	switch {
	case e.daily():
		return FailDailyQuota
	case e.Code == http.StatusUnauthorized || e.Status == "UNAUTHENTICATED":
		return FailSignIn
	case e.Code >= 500 || e.rateLimited() || e.Code == http.StatusRequestTimeout:
		return FailGaveUp // a trouble that passes: it ends a job only once the retries ran out
	case e.Code == http.StatusRequestEntityTooLarge || has(tooLargeReasons):
		return FailTooLarge
	case has(quotaReasons):
		return FailQuota
	case e.Code == http.StatusNotFound || e.Code == http.StatusGone:
		return FailNotFound
	}
	return FailRefused
}

// credentialsError is an Authorizer's failure to give credentials for
// a request (none stored, the keychain locked): a sign-in's trouble.
type credentialsError struct{ err error }

func (e *credentialsError) Error() string {
	return "cannot get credentials for the upload: " + e.err.Error()
}
func (e *credentialsError) Unwrap() error { return e.err }
