package transfer

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// recordReader reads the journal's files. The file system, the platform's
// word on which refusals pass (readRefusalPasses) and the clock that times
// the waits are its fields, so a test can refuse reads as Windows does, on
// every system, and go through the waits without waiting.
type recordReader struct {
	read   func(path string) ([]byte, error)
	passes func(error) bool
	clock  Clock
}

func systemRecordReader() recordReader {
	return recordReader{read: os.ReadFile, passes: readRefusalPasses, clock: SystemClock()}
}

// The waits between tries double from the first to the last, as the
// writer's do (platform.DurableRename): 1 ms to 256 ms, 511 ms in all, longer than
// another process takes to move one record into place.
const (
	readFirstWait = time.Millisecond
	readLastWait  = 256 * time.Millisecond
)

// readRecord reads a journal file, trying again while it is refused for a
// reason that passes; a refusal that outlasts the waits is reported with
// how long it lasted, the reason still wrapped (a missing file stays
// fs.ErrNotExist to errors.Is, whatever the platform).
func (rr recordReader) readRecord(path string) ([]byte, error) {
	start := rr.clock.Elapsed()
	for wait := readFirstWait; ; wait *= 2 {
		data, err := rr.read(path)
		if err == nil || !rr.passes(err) {
			return data, err
		}
		if wait > readLastWait {
			return nil, fmt.Errorf("%s stayed locked by another process for %v: %w", path, rr.clock.Elapsed()-start, err)
		}
		<-rr.clock.NewTimer(wait).C()
	}
}

// Windows' numbers for the refusals of a file being moved: the names are
// kept on every system so the predicate below can be tested on each.
const (
	errAccessDenied     = syscall.Errno(5)  // ERROR_ACCESS_DENIED
	errSharingViolation = syscall.Errno(32) // ERROR_SHARING_VIOLATION
)

// sharingViolation reports whether err is Windows' refusal of a file that
// another process holds or is moving over: a sharing violation, or "Access
// denied" while the old version is being deleted. It means this on Windows
// only (elsewhere the same numbers are other errors): only the Windows
// build asks it of a real error.
func sharingViolation(err error) bool {
	var e syscall.Errno
	return errors.As(err, &e) && (e == errAccessDenied || e == errSharingViolation)
}

// settleFailure makes a record's Failure one this Carrier words, as the
// record is read: a code a newer Carrier wrote and this one does not know
// reads as FailOther (never a refused record), and a record from before
// Failure (Error and Cause set, Failure nil) gets one, derived once from
// its Cause and the status and reason words of its stored text. This is
// the one place that reads an error's text: everything after reads the
// Failure.
func settleFailure(r *Record) {
	if r.Failure != nil {
		if !r.Failure.Code.known() {
			r.Failure.Code = FailOther
		}
		return
	}
	switch r.State {
	case StateFailed, StateSignIn, StateCancelled:
	default:
		return
	}
	if r.State == StateCancelled {
		r.Failure = &Failure{Code: FailCancelled}
		return
	}
	r.Failure = failureOfText(r.Cause, r.Error)
	if r.State == StateSignIn {
		r.Failure.Code = FailSignIn
	}
}

// Words of the engine's and Google's text in a record from before
// Failure: "the server answered 403 Forbidden (PERMISSION_DENIED): ...",
// "it answered 503 Service Unavailable".
var (
	storedStatus     = regexp.MustCompile(`answered (\d{3})\b`)
	storedStatusWord = regexp.MustCompile(`\(([A-Z][A-Z_]+[A-Z])\)`)
)

// storedReasons are the reasons whose words Google's messages (and the
// engine's) carry, for a record that kept the text only.
var storedReasons = []struct{ words, reason string }{
	{"storage quota", "storageQuotaExceeded"},
	{"insufficient storage", "storageQuotaExceeded"},
	{"insufficient authentication scopes", "insufficientPermissions"},
	{"insufficientpermissions", "insufficientPermissions"},
	{"per day", "dailyLimitExceeded"},
	{"daily limit", "dailyLimitExceeded"},
	{"rate limit", "rateLimitExceeded"},
	{"asks to slow down", "rateLimitExceeded"},
	{"quota exceeded", "quotaExceeded"},
	{"uploadtoolarge", "uploadTooLarge"},
	{"too large", "uploadTooLarge"},
	{"invalid_grant", "invalid_grant"},
}

// failureOfText is failureOf for a record from before Failure: its cause
// by name, and what its text says of the status and reason.
func failureOfText(cause, text string) *Failure {
	f := &Failure{Code: FailOther}
	if m := storedStatus.FindStringSubmatch(text); m != nil {
		f.Status, _ = strconv.Atoi(m[1])
	}
	low := strings.ToLower(text)
	for _, s := range storedReasons {
		if strings.Contains(low, s.words) {
			f.Reason = s.reason
			break
		}
	}
	word := ""
	if m := storedStatusWord.FindStringSubmatch(text); m != nil {
		word = m[1]
	}
	if f.Reason == "" {
		f.Reason = word
	}
	switch cause {
	case "source-changed":
		f.Code, f.Reason = FailSourceChanged, changedHowOfText(text)
	case "maybe-sent":
		f.Code = FailMaybeSent
	case "not-verified":
		f.Code = FailNotVerified
	case "sign-in":
		f.Code = FailSignIn
	case "daily-quota":
		f.Code = FailDailyQuota
	case "gave-up":
		f.Code = FailGaveUp
	default:
		switch {
		case f.Reason == "invalid_grant" || strings.Contains(low, "cannot get credentials") || strings.HasPrefix(low, ErrSignInNeeded.Error()):
			f.Code = FailSignIn
		case f.Status != 0 || word != "" || f.Reason != "":
			ae := &APIError{Code: f.Status, Status: word, Message: text}
			if f.Reason != "" && f.Reason != word {
				ae.Reasons = []string{f.Reason}
			}
			f.Code = ae.failureCode()
		}
	}
	return f
}

// changedHowOfText is how a file changed, from the engine's words for it
// in a record from before Failure (changedErr's fixed phrases).
func changedHowOfText(text string) string {
	switch {
	case strings.Contains(text, "its size is now"):
		return ChangedSize
	case strings.Contains(text, "its modification time changed"):
		return ChangedModified
	case strings.Contains(text, "its change time moved"):
		return ChangedWritten
	case strings.Contains(text, "differ"):
		return ChangedContent
	}
	return ""
}
