package transfer

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Spec is what to upload.
type Spec struct {
	URL    string     // the media upload URI; uploadType is set from Type
	Method string     // POST (default) or PUT (updates)
	Type   UploadType // default Resumable
	// Protocol is the dialect of a Resumable upload: ProtocolResumable
	// (the default) or ProtocolGoogUpload, whose start goes to URL as
	// given (no uploadType) and whose finished upload's result is the
	// server's plain answer (Photos: the upload token) in Response.Body.
	Protocol    Protocol
	ContentType string // media type of the file
	Metadata    []byte // JSON; none for Media
	Path        string // the file; it must not change until the job ends
	ChunkSize   int64  // the largest chunk (chunks are sized from the measured pace, chunksize.go); 0: the queue's
	// SHA256 is the file's SHA-256 (hex) when the caller already knows it
	// (compose hashes a spool as it writes it): the engine then reads the
	// file only to send it. It is checked again on every resume.
	SHA256 string
	// Checksums are the sums that the target checks and reports
	// (SumCRC32C, SumMD5), so the engine computes them as the bytes go
	// out, states them on the request carrying the last bytes, and
	// compares them with what the server reports. Whoever knows the target
	// sets them (internal/app for Cloud Storage: CRC32C); none by default.
	// SumSHA256 names a target that reports the file's SHA-256 (Drive), so
	// it is computed as the bytes go out. A job with none keeps a CRC32C
	// for the source check (Record.SourceSum), and should the target
	// report a SHA-256 all the same, reads the file once more at the end to
	// compare it; a job with some has no SHA-256 unless it names it or the
	// caller gave it: its sums stand for the source check.
	Checksums []string
	// Existing is the URI of the resource the metadata names, for targets
	// where a create under an id the caller chose answers 409 once that id
	// exists (Drive). A 409 to the start of a session then means an earlier
	// attempt made it, its answer lost: the engine reads the resource there
	// and checks it against the file (size, and checksums the server
	// reports) as if the upload had just finished. Empty: a 409 fails.
	Existing string
	// Label names the job for people ("Report · to bob@example.com"); the
	// engine only keeps it. It must not hold a credential.
	Label string
	// Needs are jobs (of this journal) that must be done before this one
	// starts. If one fails or is cancelled, this one waits until a retry
	// of it is done, or until it is cancelled itself.
	Needs []string
	// Account is the sign-in the job goes with, for the Authorizer
	// (AccountOf) and for Queue.SignedIn; "" is the default account of
	// the job's server. It must not hold a credential.
	Account string
	// Owner is whoever queued the job, in its own terms (a delivery's id,
	// "d-…"): kept in the record and in every snapshot, never interpreted.
	// It must not hold a credential.
	Owner string
	// Quote (Call jobs only) names jobs among Needs whose results the
	// call's body carries: the file is then a template in which each NUL
	// byte (which JSON text never holds raw) stands for the next quoted
	// job's Response.Body, trimmed of spaces, as a JSON string. A call
	// between uploads can so name what they produced (an upload token)
	// although it is recorded before they start. "ID.field" quotes the
	// string field of job ID's result, a JSON object (an album's "id").
	Quote []string
	// SendAt holds back the last bytes of a resumable upload until this
	// time: every byte but the last request's goes at once, then the job
	// waits as StateScheduled, its session open, and the last request goes
	// at SendAt (or at once once that has passed, after a restart or a
	// sleep). Until then nothing exists on the server, and Cancel deletes
	// the session: Undo send (SendAt a few seconds ahead) and Send later
	// (SendAt the chosen time) are the same hold. Zero: no hold. Only the
	// Resumable type can hold. A session lives a week, so a SendAt further
	// ahead than ScheduleLead waits as StateScheduled with nothing sent
	// (the move "defer") and starts its upload ScheduleLead before it.
	SendAt time.Time
}

// Add records a job and queues it (or lets it wait for the jobs it
// needs). The record is on disk before Add returns, so a crash from here
// on cannot lose it.
func (q *Queue) Add(spec Spec) (string, error) {
	rec, err := q.newRecord(spec)
	if err != nil {
		return "", err
	}
	for _, n := range rec.Needs {
		if !q.known(n) {
			return "", fmt.Errorf("the job needs job %q, which is not in the journal: %w", n, ErrUnknownJob)
		}
	}
	release, err := q.journal.Lock(rec.ID)
	if err != nil {
		return "", err
	}
	jb := newJob(rec, release)
	q.mu.Lock()
	if ok, _ := q.needsMet(jb); !ok {
		// Made before the record is first saved: the job starts out
		// waiting.
		if err := jb.rec.move(MoveHold, StateWaiting); err != nil {
			q.mu.Unlock()
			release()
			return "", err
		}
	}
	q.mu.Unlock()
	if err := q.journal.Save(&jb.rec); err != nil {
		release()
		return "", err
	}
	if err := q.adopt(jb); err != nil {
		release()
		return "", err
	}
	return rec.ID, nil
}

// known reports whether id is a job of this queue or its journal.
func (q *Queue) known(id string) bool {
	q.mu.Lock()
	_, ok := q.jobs[id]
	ok = ok || q.ended[id] != nil
	q.mu.Unlock()
	if ok {
		return true
	}
	_, err := q.journal.Load(id)
	return err == nil
}

// adopt takes a job into the queue as it stands and tells so.
func (q *Queue) adopt(jb *job) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return errClosed
	}
	q.putLocked(jb)
	st := jb.state() // no worker has it yet
	// A job ResumeJournal moved to queued is pending already, or taken by
	// a worker even: queued twice, it would run twice at once.
	if st == StateQueued && jb.run == nil && !jb.pending {
		q.pushPendingLocked(jb)
	}
	if st == StateWaiting {
		_, blocked := q.needsMet(jb)
		jb.mu.Lock()
		jb.blocked = blocked
		jb.mu.Unlock()
	}
	q.mu.Unlock()
	q.emit(Event{Kind: stateInfo(st).event, Snap: q.snapshot(jb)})
	if st == StateScheduled {
		q.sendDue() // its time may have passed while no Carrier ran
	}
	if st == StateMissing {
		q.findGhosts(jb.id) // its file may be back where it was
	}
	return nil
}

func (q *Queue) newRecord(spec Spec) (*Record, error) {
	now := q.clock.Now().Round(0)
	method := strings.ToUpper(spec.Method)
	if method == "" {
		method = http.MethodPost
	}
	typ := spec.Type
	if typ == "" {
		typ = Resumable
	}
	proto, err := specProtocol(spec, typ, method)
	if err != nil {
		return nil, err
	}
	chunk := spec.ChunkSize
	if chunk == 0 {
		chunk = q.chunkSize
	}
	if chunk < 0 || chunk%ChunkQuantum != 0 {
		return nil, fmt.Errorf("chunk size %d is not a positive multiple of 256 KiB (%d)", chunk, ChunkQuantum)
	}
	var meta json.RawMessage
	if len(spec.Metadata) > 0 {
		if !json.Valid(spec.Metadata) {
			return nil, errors.New("the metadata is not valid JSON")
		}
		if typ == Media {
			return nil, errors.New("a media upload carries no metadata; use the multipart or resumable upload type")
		}
		meta = append(json.RawMessage(nil), spec.Metadata...)
	}
	if err := checkHTTPURL(spec.URL); err != nil {
		return nil, fmt.Errorf("the upload URI: %w", err)
	}
	path, err := filepath.Abs(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot find the file to upload: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the file to upload: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	var b [4]byte
	rand.Read(b[:])
	rec := &Record{
		Version:     recordVersion,
		ID:          now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:]),
		Created:     now,
		URL:         spec.URL,
		Method:      method,
		Type:        typ,
		Protocol:    proto,
		ContentType: spec.ContentType,
		Metadata:    meta,
		Path:        path,
		Size:        fi.Size(),
		ModTime:     fi.ModTime(),
		ChangeTime:  changeTimeOf(path, fi),
		ChunkSize:   chunk,
		Label:       spec.Label,
		Needs:       slices.Compact(slices.Sorted(slices.Values(spec.Needs))),
		SHA256:      strings.ToLower(spec.SHA256),
		Checksums:   slices.Clone(spec.Checksums),
		Existing:    spec.Existing,
		Account:     spec.Account,
		Owner:       spec.Owner,
		Quote:       slices.Clone(spec.Quote),
		SendAt:      spec.SendAt.Round(0),
		State:       StateQueued,
		Updated:     now,
	}
	if len(rec.Needs) == 0 {
		rec.Needs = nil
	}
	if len(rec.Quote) == 0 {
		rec.Quote = nil
	}
	if rec.SHA256 != "" {
		rec.Hashed = rec.Size
	}
	if rec.SHA256 == "" && len(rec.Checksums) == 0 {
		// Nothing says the target checks a SHA-256 (Photos and Gmail report
		// no checksum): see Record.SourceSum.
		rec.SourceSum = SumCRC32C
	}
	if err := rec.validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// specProtocol checks the spec's protocol against the rest of it and
// returns it as the record keeps it ("" for the first dialect).
func specProtocol(spec Spec, typ UploadType, method string) (Protocol, error) {
	switch spec.Protocol {
	case "", ProtocolResumable:
		return "", nil
	case ProtocolGoogUpload:
	default:
		return "", fmt.Errorf("unknown upload protocol %q (want %q or %q)", spec.Protocol, ProtocolResumable, ProtocolGoogUpload)
	}
	p := spec.Protocol
	switch {
	case typ != Resumable:
		return "", fmt.Errorf("the %s protocol is resumable; a %s upload cannot speak it", p, typ)
	case method != http.MethodPost:
		return "", fmt.Errorf("the %s protocol sends every request as a POST, not %s", p, method)
	case len(spec.Metadata) > 0:
		// Its start carries no body: what describes the item goes to the
		// API call that uses the result.
		return "", fmt.Errorf("the %s protocol carries no metadata", p)
	case len(spec.Checksums) > 0:
		return "", fmt.Errorf("the %s protocol has no way to state or report checksums", p)
	case spec.Existing != "":
		return "", fmt.Errorf("the %s protocol makes no resource under a chosen id, so it has no existing one to read", p)
	}
	return p, nil
}

// ResumeJournal takes up the journal's unfinished jobs that no other
// process holds. Queued jobs start (each first asks its session where it
// stands), jobs found running (their process died) too; paused jobs stay
// paused, waiting ones wait. With all, paused jobs and jobs that failed for
// a passing reason (the network, a server in trouble) start too, as
// `carrier resume` wants. It returns the ids taken; jobs it could not take
// (held elsewhere, unreadable) are reported in the error, each job held
// elsewhere as a *BusyError (BusyJobs).
//
// A job parked for a sign-in (StateSignIn) is tried once: a credential may
// work now (the person signed in from another Carrier, or the Authorizer
// was only missing a keychain at the last start); if not, it parks again.
func (q *Queue) ResumeJournal(all bool) ([]string, error) {
	return q.ResumeJournalExcept(all, nil)
}

// ResumeJournalExcept is ResumeJournal leaving where they stand the jobs
// named in except and every job that needs one of them, directly or
// through others: taken up, a job that needs a job left behind would wait
// for it with nobody to send it on. `carrier resume` leaves so the jobs
// Google Photos' daily quota stopped until its reset.
func (q *Queue) ResumeJournalExcept(all bool, except []string) ([]string, error) {
	var left map[string]bool
	if len(except) > 0 {
		recs, _ := q.journal.listFolder()
		left = leftBehind(recs, except)
	}
	return q.takeJournal(func(r *Record) bool {
		return !left[r.ID] && (r.State.Unfinished() || all && r.State == StateFailed && r.Retryable)
	}, all)
}

// leftBehind is except and every job of recs that needs one of them,
// directly or through others, in whatever order recs come.
func leftBehind(recs []*Record, except []string) map[string]bool {
	left := map[string]bool{}
	for _, id := range except {
		left[id] = true
	}
	for grew := true; grew; {
		grew = false
		for _, r := range recs {
			if !left[r.ID] && slices.ContainsFunc(r.Needs, func(n string) bool { return left[n] }) {
				left[r.ID], grew = true, true
			}
		}
	}
	return left
}

// takeJournal takes up the journal's jobs that wanted picks and no process
// holds, as ResumeJournal says.
func (q *Queue) takeJournal(wanted func(*Record) bool, all bool) ([]string, error) {
	recs, err := q.journal.listFolder()
	errs := []error{err}
	var ids []string
	for _, rec := range recs {
		if !wanted(rec) {
			continue
		}
		q.mu.Lock()
		_, have := q.jobs[rec.ID]
		have = have || q.ended[rec.ID] != nil
		q.mu.Unlock()
		if have {
			continue
		}
		release, err := q.journal.Lock(rec.ID)
		if errors.Is(err, ErrBusy) {
			errs = append(errs, &BusyError{ID: rec.ID})
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", rec.ID, err))
			continue
		}
		// Read again under the lock: another process may have moved it on.
		if rec, err = q.journal.Load(rec.ID); err != nil || !wanted(rec) {
			release()
			errs = append(errs, err)
			continue
		}
		jb := newJob(rec, release)
		// A job found running belonged to a process that died; the person's
		// `resume all` lets paused and failed ones go on.
		var merr error
		switch st := rec.State; {
		case st.Active():
			merr = q.transition(jb, MoveRecover, StateQueued, nil, Event{})
		case st == StateSignIn:
			merr = q.transition(jb, MoveUnpark, StateQueued, unparked, Event{})
		case all && st == StatePaused:
			merr = q.transition(jb, MoveResume, StateQueued, clearFailure, Event{})
		case all && st == StateFailed:
			merr = q.transition(jb, MoveRetry, StateQueued, clearFailure, Event{})
		}
		if merr != nil {
			release()
			errs = append(errs, fmt.Errorf("job %s: %w", rec.ID, merr))
			continue
		}
		if err := q.adopt(jb); err != nil {
			release()
			return ids, err
		}
		ids = append(ids, rec.ID)
	}
	return ids, errors.Join(errs...)
}

func clearFailure(r *Record) { r.Error, r.Retryable, r.Cause, r.Failure = "", false, "", nil }

// claim takes a job of the journal that this queue does not hold (one that
// failed in an earlier run, say) without starting it, so the person can
// retry or cancel it. Jobs another process works stay theirs (ErrBusy).
func (q *Queue) claim(id string) error {
	q.mu.Lock()
	_, have := q.jobs[id]
	have = have || q.ended[id] != nil
	closed := q.closed
	q.mu.Unlock()
	if have || closed {
		return nil
	}
	release, err := q.journal.Lock(id)
	if err != nil {
		return err
	}
	rec, err := q.journal.Load(id)
	if err != nil {
		release()
		return fmt.Errorf("job %q: %w", id, ErrUnknownJob)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, have := q.jobs[id]; have || q.ended[id] != nil || q.closed {
		release()
		return nil
	}
	q.putLocked(newJob(rec, release))
	return nil
}
