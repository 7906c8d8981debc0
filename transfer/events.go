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
	Sent      int64   // bytes of the file handed to the network at the current position
	Confirmed int64   // bytes the server said it stores
	Total     int64   // file size
	Rate      float64 // bytes per second over the last few seconds

	// Retrying.
	Attempt int           // consecutive failures so far without progress
	Wait    time.Duration // before the next try (0 after a wake)
	Reason  string        // what failed
	Woke    bool          // the machine woke from sleep: asking the session at once
	Held    bool          // held by the system until it lets go (Reason says why): no retry burnt

	Response *Response // Done
	Err      error     // Failed
	Message  string    // Failed: Err's text, for a person
}

func (e Event) String() string {
	switch e.Kind {
	case EventProgress:
		return fmt.Sprintf("%s %s sent=%d confirmed=%d total=%d rate=%.0fB/s", e.Job, e.Kind, e.Sent, e.Confirmed, e.Total, e.Rate)
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
	ContentType string
	Metadata    []byte
	Path        string
	Size        int64
	SHA256      string
	Needs       []string

	State     State
	Confirmed int64   // bytes the server said it stores
	Sent      int64   // bytes handed to the network at the current position (live)
	Rate      float64 // bytes per second over the last few seconds (live)
	Blocked   string  // waiting: why it cannot go on by itself (a job it needs failed)
	Response  *Response
	Error     string
	Retryable bool
	// Cause is the kind of failure, for errors.Is against ErrGaveUp,
	// ErrSourceChanged, ErrMaybeSent, ErrSignIn or ErrNotVerified; nil for
	// any other.
	Cause error
	// Verified names the checksum that verified what the server holds
	// (SumSHA256, SumMD5, SumCRC32C), "" when the server reported none.
	Verified string
}

func snapshotOf(r *Record) Snapshot {
	return Snapshot{
		ID: r.ID, Label: r.Label, Created: r.Created, Updated: r.Updated, URL: r.URL, Method: r.Method,
		Type: r.Type, ContentType: r.ContentType, Metadata: r.Metadata, Path: r.Path, Size: r.Size,
		SHA256: r.SHA256, Needs: r.Needs, State: r.State, Confirmed: r.Confirmed, Sent: r.Confirmed,
		Response: r.Response, Error: r.Error, Retryable: r.Retryable, Cause: causes[r.Cause],
		Verified: r.Verified,
	}
}
