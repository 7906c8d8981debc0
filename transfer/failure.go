package transfer

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
	// none.
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
	FailQuota         FailureCode = "quota"          // a quota or storage limit (Google's quotaExceeded, storageQuotaExceeded, RESOURCE_EXHAUSTED)
	FailSourceChanged FailureCode = "source-changed" // the file changed or went away under the upload
	FailMaybeSent     FailureCode = "maybe-sent"     // a one-shot upload's answer was lost: it may have arrived
	FailNotVerified   FailureCode = "not-verified"   // the server's checksum differs from the file's
	FailSignIn        FailureCode = "sign-in"        // the sign-in was refused and cannot be mended by the engine
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
