package transfer

import (
	"fmt"
	"time"
)

// EventKind says what happened to a job.
type EventKind int

const (
	EventQueued    EventKind = iota + 1 // recorded and waiting for a worker
	EventStarted                        // a worker took it
	EventProgress                       // bytes moved or were confirmed
	EventRetrying                       // something failed; it will try again after Wait
	EventPaused                         // stopped by Pause; the session is kept
	EventDone                           // finished; Response holds the server's answer
	EventFailed                         // gave up; Message says why and what to do
	EventCancelled                      // stopped by Cancel; the session was deleted
	EventWaiting                        // waiting for the jobs it needs; Snap.Blocked says why when one of them failed
	EventSignIn                         // parked: its sign-in ended; Snap.SignInFor names the account to sign in as
	EventScheduled                      // every byte but the last is with the server; the last go at Snap.SendAt
	EventMissing                        // a ghost: its file is no longer at Snap.Path; Queue.Locate sends it on
)

func (k EventKind) String() string {
	switch k {
	case EventQueued:
		return "queued"
	case EventStarted:
		return "started"
	case EventProgress:
		return "progress"
	case EventRetrying:
		return "retrying"
	case EventPaused:
		return "paused"
	case EventDone:
		return "done"
	case EventFailed:
		return "failed"
	case EventCancelled:
		return "cancelled"
	case EventWaiting:
		return "waiting"
	case EventSignIn:
		return "sign-in"
	case EventScheduled:
		return "scheduled"
	case EventMissing:
		return "missing"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing that happened to a job, with the job as it stands
// after it (Snap): a front end folds events into its view and never asks
// the queue back. No field ever holds a session URI or a token.
type Event struct {
	Kind EventKind
	Job  string
	Snap Snapshot

	// Progress, on every event: Snap's, repeated for convenience.
	Written       int64         // bytes of the file written to the connection (the kernel's buffers): not proof of arrival
	Confirmed     int64         // bytes the server said it stores
	Total         int64         // file size
	ConfirmedRate float64       // bytes per second the server confirms, smoothed; 0 until two confirmations
	ETA           time.Duration // time left at ConfirmedRate, counting down between confirmations; 0: unknown
	WriteRate     float64       // bytes per second written to the connection (not a speed of the link)
	// Sent is Snap.Sent: Acked where known, else Written; Rate is ConfirmedRate.
	Sent int64
	Rate float64

	// Retrying.
	Attempt int           // consecutive failures so far without progress
	Wait    time.Duration // before the next try (0 after a wake)
	Reason  string        // what failed
	Woke    bool          // the machine woke from sleep: asking the session at once
	Held    bool          // held by the system until it lets go (Reason says why): no retry burnt
	Status  int           // the HTTP status of the answer that failed (503, 429); 0: no answer came

	Response *Response // Done
	Err      error     // Failed
	Message  string    // Failed: Err's text, for a person
}

func (e Event) String() string {
	switch e.Kind {
	case EventProgress:
		return fmt.Sprintf("%s %s written=%d confirmed=%d total=%d rate=%.0fB/s eta=%s", e.Job, e.Kind, e.Written, e.Confirmed, e.Total, e.ConfirmedRate, e.ETA.Round(time.Second))
	case EventRetrying:
		return fmt.Sprintf("%s %s attempt=%d wait=%s: %s", e.Job, e.Kind, e.Attempt, e.Wait, e.Reason)
	case EventDone:
		return fmt.Sprintf("%s %s status=%d", e.Job, e.Kind, e.Response.Status)
	case EventFailed:
		return fmt.Sprintf("%s %s: %s", e.Job, e.Kind, e.Message)
	}
	return e.Job + " " + e.Kind.String()
}

// rateMeter measures bytes per second over a sliding window of samples.
type rateMeter struct {
	samples []rateSample
}

type rateSample struct {
	at    time.Duration
	bytes int64
}

const rateWindow = 5 * time.Second

func (m *rateMeter) add(at time.Duration, total int64) float64 {
	if n := len(m.samples); n == 0 || at-m.samples[n-1].at >= 200*time.Millisecond {
		m.samples = append(m.samples, rateSample{at, total})
	}
	i := 0
	for i < len(m.samples)-1 && at-m.samples[i].at > rateWindow {
		i++
	}
	m.samples = m.samples[i:]
	first := m.samples[0]
	dt := (at - first.at).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(total-first.bytes) / dt
}

// Snapshot is a job as people see it: everything but credentials. Seq
// grows with every change of any job, so of two snapshots of one job the
// one with the higher Seq is the newer.
type Snapshot struct {
	Seq         uint64
	ID          string
	Label       string
	Created     time.Time
	Updated     time.Time
	URL         string
	Method      string
	Type        UploadType
	Protocol    Protocol // of a Resumable job: ProtocolResumable or ProtocolGoogUpload
	ContentType string
	Metadata    []byte
	Path        string
	Size        int64
	SHA256      string
	Needs       []string
	Quote       []string // the jobs whose results a call's body carries (Spec.Quote)

	State     State
	Confirmed int64 // bytes the server said it stores
	// Written is how far the file was written to the connection (live): the
	// kernel's buffers and any proxy between may hold megabytes of it, so it
	// says nothing of what reached the server; Confirmed does.
	Written   int64
	WriteRate float64 // bytes per second written to the connection (live)
	// ConfirmedRate is the pace of the server's confirmations in bytes per
	// second (live): 0 until two confirmations gave one, and decaying while
	// a confirmation is overdue. Pace has what it was measured from.
	ConfirmedRate float64
	// ETA is the time left at ConfirmedRate (live), counting down between
	// confirmations; 0 when unknown.
	ETA time.Duration
	// Pace lets a front end count ETA down between events: Pace.ETA(d)
	// is the ETA d after this snapshot was taken.
	Pace Pace
	// Acked is how far the peer's TCP acknowledged the file's bytes (live),
	// where the system tells (Linux, HTTP/1: acked.go); 0 elsewhere. Bytes
	// acknowledged reached the server's host, or a proxy on the way.
	Acked int64
	// Sent is how far the bytes went: Acked where the system tells, else
	// Written. Rate is ConfirmedRate, kept for the readers of the old name.
	Sent    int64
	Rate    float64
	Blocked string // waiting: why it cannot go on by itself (a job it needs failed)
	// Account is the sign-in the job goes with ("" the default account of
	// its server); SignInFor, while the job is in StateSignIn, the account
	// to sign in as again for it to go on.
	Account   string
	SignInFor string
	// Held says why the job sends nothing now although nobody paused it:
	// HeldMetered (the connection is metered and the job is large: a
	// front end offers Queue.SendAnyway), or the system's hold ("Offline:
	// waiting for the network"). "" when it is not held.
	Held     string
	Response *Response
	// AnswerInJournal says the queue forgot the body of Response (a
	// front end used it: Queue.DropAnswer); Queue.Answer reads it from
	// the journal.
	AnswerInJournal bool
	Error           string
	Retryable       bool
	// Cause is the kind of failure, for errors.Is against ErrGaveUp,
	// ErrSourceChanged, ErrMaybeSent, ErrSignIn or ErrNotVerified; nil for
	// any other.
	Cause error
	// Failure is the record's failure in parts; nil when none.
	Failure *Failure
	// Owner is Spec.Owner.
	Owner string
	// Verified names the checksum that verified what the server holds
	// (SumSHA256, SumMD5, SumCRC32C), "" when the server reported none.
	Verified string
	// SendAt is when the job's last bytes go (Spec.SendAt); zero: as soon
	// as they can. While the job is StateScheduled, the server holds every
	// byte but those.
	SendAt time.Time
	// UploadFrom is, while the job is StateScheduled with nothing sent (its
	// SendAt was further ahead than ScheduleLead), when its upload starts;
	// zero otherwise.
	UploadFrom time.Time
}

// Snapshot is the record as a job's snapshot, for a front end that reads
// the journal without a queue (`carrier jobs`, `carrier resume --list`).
func (r *Record) Snapshot() Snapshot { return snapshotOf(r) }

func snapshotOf(r *Record) Snapshot {
	return Snapshot{
		ID: r.ID, Label: r.Label, Created: r.Created, Updated: r.Updated, URL: r.URL, Method: r.Method,
		Type: r.Type, Protocol: r.protocol(), ContentType: r.ContentType, Metadata: r.Metadata, Path: r.Path, Size: r.Size,
		SHA256: r.SHA256, Needs: r.Needs, Quote: r.Quote, State: r.State, Confirmed: r.Confirmed, Sent: r.Confirmed, Written: r.Confirmed,
		Response: r.Response, Error: r.Error, Retryable: r.Retryable, Cause: causes[r.Cause],
		Verified: r.Verified, Account: r.Account, SignInFor: r.SignInFor, Owner: r.Owner, Failure: r.Failure.clone(),
		SendAt: r.SendAt, UploadFrom: uploadFrom(r),
	}
}

func uploadFrom(r *Record) time.Time {
	if r.State != StateScheduled || r.Session != "" {
		return time.Time{}
	}
	return r.DueAt()
}

// confirmWindow is how far back confirmations count for ConfirmedRate; the
// two newest count whatever their age.
const confirmWindow = 20 * time.Second

// confirmMeter measures the pace of the server's confirmations: bytes
// confirmed over the time between the oldest and newest confirmation in a
// sliding window. Bytes written to the connection never enter it.
type confirmMeter struct {
	samples []rateSample
}

// add notes that the server stands at off at elapsed time at. An offset
// that went back (a new session) starts the measure again.
func (m *confirmMeter) add(at time.Duration, off int64) {
	if n := len(m.samples); n > 0 && off < m.samples[n-1].bytes {
		m.samples = m.samples[:0]
	}
	m.samples = append(m.samples, rateSample{at, off})
	i := 0
	for i < len(m.samples)-2 && at-m.samples[i].at > confirmWindow {
		i++
	}
	m.samples = m.samples[i:]
}

// estimate is the pace as of the newest confirmation, for a file of size.
func (m *confirmMeter) estimate(size int64) confirmEstimate {
	n := len(m.samples)
	if n == 0 {
		return confirmEstimate{}
	}
	first, last := m.samples[0], m.samples[n-1]
	return confirmEstimate{bytes: last.bytes - first.bytes, span: last.at - first.at, count: n - 1, at: last.at, left: size - last.bytes}
}

// confirmEstimate is a confirmMeter's measure, kept with the job's live
// progress; at is the elapsed time of the newest confirmation.
type confirmEstimate struct {
	bytes int64
	span  time.Duration
	count int
	at    time.Duration
	left  int64
}

// pace is the estimate seen at elapsed time now.
func (e confirmEstimate) pace(now time.Duration) Pace {
	return Pace{Bytes: e.bytes, Span: e.span, Gaps: e.count, Since: max(now-e.at, 0), Left: e.left}
}

// Pace is how fast the server confirmed bytes: Bytes confirmed over Span,
// across Gaps intervals between confirmations, the newest Since ago, with
// Left bytes not confirmed yet. Zero: nothing measured.
type Pace struct {
	Bytes int64
	Span  time.Duration
	Gaps  int
	Since time.Duration
	Left  int64
}

// overdueAfter is how long past the usual gap between confirmations the
// measured rate stands before the wait itself counts against it.
func (p Pace) overdue(since time.Duration) bool {
	if p.Gaps <= 0 {
		return false
	}
	gap := p.Span / time.Duration(p.Gaps)
	return since > 2*gap+time.Second
}

// Rate is the confirmed bytes per second d after the pace was taken: the
// measured one, or while a confirmation is overdue one that counts the
// wait as time with no bytes (so a stall shows as a falling rate, not a
// frozen one). 0 until two confirmations.
func (p Pace) Rate(d time.Duration) float64 {
	if p.Span <= 0 || p.Bytes <= 0 {
		return 0
	}
	since := p.Since + d
	if p.overdue(since) {
		return float64(p.Bytes) / (p.Span + since).Seconds()
	}
	return float64(p.Bytes) / p.Span.Seconds()
}

// ETA is the time left d after the pace was taken: what the rest takes at
// the measured rate, less the time since the newest confirmation (bytes
// keep arriving between confirmations); while a confirmation is overdue,
// what the rest takes at the falling rate. Never negative; 0: unknown.
func (p Pace) ETA(d time.Duration) time.Duration {
	r := p.Rate(d)
	if r <= 0 || p.Left <= 0 {
		return 0
	}
	since := p.Since + d
	full := time.Duration(float64(p.Left) / r * float64(time.Second))
	if p.overdue(since) {
		return full
	}
	// Not overdue yet: the next confirmation is due, so about a second.
	return max(full-since, time.Second)
}
