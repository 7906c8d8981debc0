package transfer

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// UploadType is Google's uploadType parameter.
type UploadType string

const (
	// Resumable is the default: the only type that can be resumed and asked
	// whether it finished, so the only one that can guarantee no duplicate.
	Resumable UploadType = "resumable"
	// Multipart sends metadata and media in one multipart/related request.
	Multipart UploadType = "multipart"
	// Media sends the bytes alone in one request.
	Media UploadType = "media"
	// Call sends the file (a small JSON document) as the body of one
	// plain request to the URL as given, with no uploadType: the API calls
	// a job graph makes between uploads (sharing a Drive file before the
	// message that links to it goes). Whoever queues one vouches that the
	// call may be made twice with one effect, so unlike Media and
	// Multipart it is sent again when its answer was lost.
	Call UploadType = "call"
)

// Protocol is the resumable dialect a Resumable job speaks.
type Protocol string

const (
	// ProtocolResumable is uploadType=resumable (PROTOCOL.md section 4):
	// Content-Range, 308, PUT. The default, and what a record without a
	// protocol (every journal from before the second one) speaks.
	ProtocolResumable Protocol = "resumable"
	// ProtocolGoogUpload is Google's other resumable dialect (PROTOCOL.md
	// section 8, the Photos Library API's): every request a POST with
	// X-Goog-Upload-Command and X-Goog-Upload-Offset, chunks on the
	// server's granularity, and a finished upload answered with a plain
	// body (an upload token) instead of a JSON resource.
	ProtocolGoogUpload Protocol = "goog-upload"
)

// ChunkQuantum is the unit every chunk but the last must be a multiple of.
const ChunkQuantum = 256 << 10

// recordVersion changes when a field changes meaning; older records are
// then refused rather than misread.
const recordVersion = 1

// Record is one job as the journal keeps it. The first group of fields is
// fixed when the job is recorded; the second is where it stands.
type Record struct {
	Version int        `json:"version"`
	ID      string     `json:"id"`
	Created time.Time  `json:"created"`
	URL     string     `json:"url"` // the upload URI, without uploadType
	Method  string     `json:"method"`
	Type    UploadType `json:"uploadType"`
	// Protocol is the dialect of a Resumable job; empty is
	// ProtocolResumable, so the records of the first dialect read and
	// write as they always did, and a Carrier that knows only the first
	// refuses a record of the second (unknown field) rather than misread it.
	Protocol    Protocol        `json:"protocol,omitempty"`
	ContentType string          `json:"contentType"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Path        string          `json:"path"`
	Size        int64           `json:"size"`
	ModTime     time.Time       `json:"modTime"`
	ChangeTime  time.Time       `json:"changeTime,omitzero"` // the inode's, where the system tells it
	// SHA256 (hex) is the file's: given by the caller (a spool whose hash
	// is known), or computed from the bytes as they are sent and filled in
	// when the last one has gone. Until then HashState is the SHA-256 state
	// of the file's first Hashed bytes, so a resume can check that the
	// bytes already on the server are still the file's.
	SHA256    string `json:"sha256,omitempty"`
	Hashed    int64  `json:"hashed,omitempty"`
	HashState []byte `json:"hashState,omitempty"`
	// SourceSum is the sum Hashed and HashState keep when it is not the
	// SHA-256: SumCRC32C for a job that names no sum its target checks
	// (Google's second dialect, whose server verifies nothing; a raw file
	// to Gmail, which reports nothing), where the SHA-256 would cost more
	// than moving the bytes for a check against accidental change alone.
	// "" is the SHA-256, as every earlier record reads.
	SourceSum string `json:"sourceSum,omitempty"`
	// Checksums are the sums that the target checks and reports
	// (SumCRC32C, SumMD5, SumSHA256; see Spec.Checksums). They are computed
	// as the bytes go out: SumState holds their states over the file's
	// first Summed bytes.
	Checksums []string `json:"checksums,omitempty"`
	// Existing is where the resource is read when the start of a session
	// answers 409: the metadata named it (a Drive file's id), so it exists
	// because an earlier attempt made it (see Spec.Existing).
	Existing  string            `json:"existing,omitempty"`
	Summed    int64             `json:"summed,omitempty"`
	SumState  map[string][]byte `json:"sumState,omitempty"`
	ChunkSize int64             `json:"chunkSize"`
	Label     string            `json:"label,omitempty"` // for people; see Spec.Label
	// Needs are the jobs that must be done before this one starts.
	Needs []string `json:"needs,omitempty"`
	// Account is the sign-in the job's requests go out with (Spec.Account);
	// "" is the default account of its server, as every record from
	// before accounts reads.
	Account string `json:"account,omitempty"`
	// Owner is Spec.Owner: opaque to the engine.
	Owner string `json:"owner,omitempty"`
	// Quote are the jobs among Needs whose results fill the call's body
	// (see Spec.Quote).
	Quote []string `json:"quote,omitempty"`

	State          State     `json:"state"`
	Session        string    `json:"session,omitempty"` // a credential: never print it
	SessionStarted time.Time `json:"sessionStarted,omitzero"`
	// Granularity is what every chunk but the last must be a multiple of,
	// as the session's server stated it (ProtocolGoogUpload); 0: unstated.
	Granularity int64 `json:"granularity,omitempty"`
	Confirmed   int64 `json:"confirmed"` // bytes the server said it stores
	// Sent is set before a request carrying media bytes goes out: a media
	// or multipart job with Sent may have arrived, and cannot be asked.
	Sent     bool      `json:"sent,omitempty"`
	Response *Response `json:"response,omitempty"`
	Error    string    `json:"error,omitempty"`
	// Retryable marks a failure that was transient (the server kept
	// failing, the network was gone): trying again later may work.
	Retryable bool `json:"retryable,omitempty"`
	// Cause names the kind of failure (see causes), so a front end can
	// word it after a restart as well as when it happens.
	Cause string `json:"cause,omitempty"`
	// Failure is the failure in parts (status, Google's reason, a stable
	// code), so that nobody reads Error to learn what happened; nil on a
	// job that has not failed, and on records from before it.
	Failure *Failure `json:"failure,omitempty"`
	// Verified names the checksum the server reported for what it holds
	// and that matched the file's (SumSHA256, SumMD5, SumCRC32C); "" when
	// it reported none the engine had.
	Verified string `json:"verified,omitempty"`
	// SignInFor names the account to sign in as while the job is in
	// StateSignIn: the account the dead credential belonged to, as its
	// Authorizer named it, else Account.
	SignInFor string `json:"signInFor,omitempty"`
	// SendAnyway is the person's word that this job goes on a metered
	// connection (Queue.SendAnyway).
	SendAnyway bool `json:"sendAnyway,omitempty"`
	// SendAt holds back the request that carries a resumable upload's last
	// bytes until this time (Spec.SendAt): Undo send and Send later. Zero:
	// no hold. It stands with where the job is rather than with the fixed
	// fields, since the person's Send now clears it.
	SendAt  time.Time `json:"sendAt,omitzero"`
	Updated time.Time `json:"updated"`
}

// Cursor is where an upload stands: what the uploader learns as it goes
// and hands to its Sink to keep. It is the part of a Record the uploader
// writes; the rest is fixed, or the queue's.
type Cursor struct {
	Session        string // a credential: never print it
	SessionStarted time.Time
	Granularity    int64 // of the session's chunks, as its server stated it
	Confirmed      int64
	Sent           bool
	SHA256         string
	Hashed         int64
	HashState      []byte
	Summed         int64             // how far the sums of Record.Checksums go
	SumState       map[string][]byte // their states there
}

func (r *Record) cursor() Cursor {
	return Cursor{r.Session, r.SessionStarted, r.Granularity, r.Confirmed, r.Sent, r.SHA256, r.Hashed, r.HashState, r.Summed, r.SumState}
}

func (r *Record) setCursor(c Cursor) {
	r.Session, r.SessionStarted, r.Granularity, r.Confirmed, r.Sent = c.Session, c.SessionStarted, c.Granularity, c.Confirmed, c.Sent
	r.SHA256, r.Hashed, r.HashState = c.SHA256, c.Hashed, c.HashState
	r.Summed, r.SumState = c.Summed, c.SumState
}

// Response is the server's final answer to a finished upload.
type Response struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType,omitempty"`
	Body        []byte `json:"body"`
	// Verified is the checksum that verified the bytes the server holds
	// (see Record.Verified); the queue keeps it in the record.
	Verified string `json:"-"`
	googHash string // the answer's X-Goog-Hash
}

var idPattern = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$`)

// EncodeRecord is the journal's file format.
func EncodeRecord(r *Record) ([]byte, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	// Compact, not indented: a record is written at every change of
	// state, and indenting was a fifth of its encoding (issue 29).
	return json.Marshal(r)
}

// DecodeRecord parses and checks one journal file. It refuses anything it
// could misread: a record it accepts is safe to act on.
func DecodeRecord(data []byte) (*Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("job record is not valid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("job record has data after its end")
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	settleFailure(&r)
	return &r, nil
}

func (r *Record) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("job record %q: "+format, append([]any{r.ID}, a...)...)
	}
	switch {
	case r.Version != recordVersion:
		return bad("version %d is not %d (written by another Carrier version?)", r.Version, recordVersion)
	case !idPattern.MatchString(r.ID):
		return bad("invalid id")
	case r.Method != "POST" && r.Method != "PUT":
		return bad("method %q is neither POST nor PUT", r.Method)
	case r.Type != Resumable && r.Type != Multipart && r.Type != Media && r.Type != Call:
		return bad("unknown upload type %q", r.Type)
	case r.Protocol != "" && r.Protocol != ProtocolGoogUpload:
		return bad("unknown protocol %q", r.Protocol)
	case r.Protocol == ProtocolGoogUpload && (r.Type != Resumable || r.Method != http.MethodPost):
		return bad("the %s protocol is a resumable POST, not a %s %s", r.Protocol, r.Type, r.Method)
	case r.Protocol == ProtocolGoogUpload && (len(r.Metadata) > 0 || len(r.Checksums) > 0 || r.Existing != ""):
		return bad("the %s protocol sends no metadata, states no checksums and makes no resource of a chosen id", r.Protocol)
	case r.Granularity < 0:
		return bad("negative chunk granularity")
	case r.ContentType == "" || strings.ContainsAny(r.ContentType, "\r\n\x00"):
		return bad("invalid content type")
	case strings.ContainsFunc(r.Account+r.SignInFor, func(c rune) bool { return c < ' ' || c == 0x7f }):
		return bad("an account name holds a control character")
	case r.Path == "":
		return bad("no source file")
	case r.Size < 0:
		return bad("negative size")
	case r.Confirmed < 0 || r.Confirmed > r.Size:
		return bad("confirmed offset %d outside 0..%d", r.Confirmed, r.Size)
	case r.Hashed < 0 || r.Hashed > r.Size:
		return bad("hashed length %d outside 0..%d", r.Hashed, r.Size)
	case r.Hashed > 0 && r.HashState == nil && (r.SHA256 == "" || r.Hashed != r.Size):
		return bad("hashed %d bytes but holds no hash state", r.Hashed)
	case r.Existing != "" && checkHTTPURL(r.Existing) != nil:
		return bad("the existing resource's URI is unusable")
	case r.SourceSum != "" && r.SourceSum != SumCRC32C:
		return bad("unknown source sum %q", r.SourceSum)
	case !validSums(r.Checksums):
		return bad("unknown or repeated checksums %q", r.Checksums)
	case r.Summed < 0 || r.Summed > r.Size || r.Summed > 0 && len(r.SumState) != len(r.Checksums):
		return bad("summed length %d without the state of every checksum", r.Summed)
	case r.Verified != "" && r.Verified != SumSHA256 && r.Verified != SumMD5 && r.Verified != SumCRC32C:
		return bad("verified by an unknown checksum %q", r.Verified)
	case !r.SendAt.IsZero() && r.Type != Resumable:
		return bad("only a resumable upload can hold back its last bytes, not a %s upload", r.Type)
	case r.State == StateScheduled && r.SendAt.IsZero():
		return bad("scheduled without a time to send")
	case len(r.Quote) > 0 && r.Type != Call:
		return bad("only a call quotes the results of other jobs, not a %s upload", r.Type)
	case slices.ContainsFunc(r.Quote, func(q string) bool { id, _ := quoteOf(q); return !slices.Contains(r.Needs, id) }):
		return bad("it quotes a job it does not need")
	case r.ChunkSize <= 0 || r.ChunkSize%ChunkQuantum != 0:
		return bad("chunk size %d is not a positive multiple of %d", r.ChunkSize, ChunkQuantum)
	}
	if _, ok := causes[r.Cause]; !ok && r.Cause != "" {
		return bad("unknown cause %q", r.Cause)
	}
	if !r.State.valid() {
		return bad("unknown state %q", r.State)
	}
	for _, n := range r.Needs {
		if !idPattern.MatchString(n) || n == r.ID {
			return bad("needs %q, which is not another job's id", n)
		}
	}
	if r.SHA256 != "" {
		if b, err := hex.DecodeString(r.SHA256); err != nil || len(b) != 32 {
			return bad("invalid SHA-256")
		}
	}
	if err := checkHTTPURL(r.URL); err != nil {
		return bad("upload URI: %v", err)
	}
	if r.Session != "" {
		if err := checkHTTPURL(r.Session); err != nil {
			return bad("session URI is not an absolute http(s) URI")
		}
	}
	if len(r.Metadata) > 0 && !json.Valid(r.Metadata) {
		return bad("metadata is not valid JSON")
	}
	if r.Response != nil && (r.Response.Status < 100 || r.Response.Status > 599) {
		return bad("response status %d", r.Response.Status)
	}
	if r.State == StateDone && r.Response == nil {
		return bad("done without a response")
	}
	return nil
}

// googUpload reports whether the job speaks ProtocolGoogUpload.
// DueAt is when a scheduled job moves on: at SendAt its last bytes go; a
// job whose session is not opened yet (its SendAt was further ahead than
// ScheduleLead) starts its upload ScheduleLead before that. Zero when the
// job holds nothing back.
func (r *Record) DueAt() time.Time {
	if r.SendAt.IsZero() || r.Session != "" {
		return r.SendAt
	}
	return r.SendAt.Add(-ScheduleLead)
}

func (r *Record) googUpload() bool { return r.Protocol == ProtocolGoogUpload }

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URI")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an absolute http(s) URI")
	}
	return nil
}

// protocol is the job's dialect as people see it: a Resumable job's
// ProtocolResumable or ProtocolGoogUpload, "" for the one-shot types.
func (r *Record) protocol() Protocol {
	switch {
	case r.Type != Resumable:
		return ""
	case r.Protocol == "":
		return ProtocolResumable
	}
	return r.Protocol
}

// quoteOf splits a quote into the job and the field of its result ("" for
// the whole result). Job ids hold no dot.
func quoteOf(q string) (id, field string) {
	id, field, _ = strings.Cut(q, ".")
	return id, field
}

// sourceSum is the name of the sum Hashed and HashState keep.
func (r *Record) sourceSum() string {
	if r.SourceSum == "" {
		return SumSHA256
	}
	return r.SourceSum
}
