package transfer

import (
	"fmt"
	"reflect"
	"slices"
	"time"
)

// An ended job's memory. A job that is done or cancelled never moves
// again (lifecycle has no move out of those states), and once the journal
// holds its record as it ended, what the queue keeps of it is what its
// snapshots show: an endedJob of about 200 bytes, held in Queue.ended,
// not the job (about 900 bytes, the Record two thirds of it). A camera
// roll's 20,400 jobs would otherwise keep 18 MB to the end of the batch
// (issue 29).
//
// The last keepWhole jobs to end stay whole, so that what a front end
// does as a job ends (DropAnswer, a look at its record) finds the job as
// it was. A person's move on an older ended job (Cancel, Retry, Pause,
// ...: each refused, since nothing moves it, but refused with the words
// it always had) takes the job back whole from the journal first
// (lookup); Job, Jobs, EachJob, History, HistoryWhere, Wait and
// DropAnswer answer from the endedJob, without reading the journal.

// keepWhole is how many of the jobs that ended last stay whole.
const keepWhole = 64

// endedJob is a done or cancelled job as its snapshots show it. The
// fields a snapshot shows that most jobs leave empty go in more.
type endedJob struct {
	created, updated               time.Time
	label, url, path, owner, ctype string
	needs                          []string
	size, confirmed                int64
	response                       *Response
	more                           *endedMore
	method, typ, proto, st, verif  uint8
	answerDropped                  bool
}

type endedMore struct {
	metadata           []byte
	sha256             string
	quote              []string
	err, cause         string
	retryable          bool
	failure            *Failure
	account, signInFor string
	sendAt             time.Time
}

// The values the small fields of an ended record take; one outside them
// keeps the job whole.
var (
	endedMethods   = []string{"POST", "PUT"}
	endedTypes     = []UploadType{Resumable, Multipart, Media, Call}
	endedProtocols = []Protocol{"", ProtocolGoogUpload, ProtocolResumable}
	endedStates    = []State{StateDone, StateCancelled}
	endedSums      = []string{"", SumSHA256, SumMD5, SumCRC32C}
)

// compactOf is r's endedJob, or false when r is not done or cancelled or
// the endedJob would not show exactly what r shows.
func compactOf(r *Record, answerDropped bool) (*endedJob, bool) {
	e := &endedJob{
		created: r.Created, updated: r.Updated, label: r.Label, url: r.URL, path: r.Path, owner: r.Owner,
		ctype: r.ContentType, needs: r.Needs, size: r.Size, confirmed: r.Confirmed, response: r.Response,
		answerDropped: answerDropped,
	}
	ok := true
	index := func(i int) uint8 {
		ok = ok && i >= 0
		return uint8(max(i, 0))
	}
	e.method = index(slices.Index(endedMethods, r.Method))
	e.typ = index(slices.Index(endedTypes, r.Type))
	e.proto = index(slices.Index(endedProtocols, r.Protocol))
	e.st = index(slices.Index(endedStates, r.State))
	e.verif = index(slices.Index(endedSums, r.Verified))
	m := endedMore{
		metadata: r.Metadata, sha256: r.SHA256, quote: r.Quote, err: r.Error, cause: r.Cause, retryable: r.Retryable,
		failure: r.Failure, account: r.Account, signInFor: r.SignInFor, sendAt: r.SendAt,
	}
	if !reflect.DeepEqual(m, endedMore{}) {
		e.more = &m
	}
	if !ok {
		return nil, false
	}
	// What it shows must be what the record shows, to the last field: a
	// field a snapshot reads that the endedJob does not keep (a new one,
	// say) keeps the job whole rather than lose it.
	back := e.record("")
	back.ID = r.ID
	if !reflect.DeepEqual(snapshotOf(r), snapshotOf(&back)) {
		return nil, false
	}
	return e, true
}

// record is the job's record as far as its snapshots show it: the
// fields a snapshot reads. The rest (the session, the sums' states) is in
// the journal.
func (e *endedJob) record(id string) Record {
	r := Record{
		Version: recordVersion, ID: id, Created: e.created, Updated: e.updated, Label: e.label, URL: e.url,
		Path: e.path, Owner: e.owner, ContentType: e.ctype, Needs: e.needs, Size: e.size, Confirmed: e.confirmed,
		Response: e.response, Method: endedMethods[e.method], Type: endedTypes[e.typ],
		Protocol: endedProtocols[e.proto], State: endedStates[e.st], Verified: endedSums[e.verif],
	}
	if m := e.more; m != nil {
		r.Metadata, r.SHA256, r.Quote, r.Error, r.Cause, r.Retryable = m.metadata, m.sha256, m.quote, m.err, m.cause, m.retryable
		r.Failure, r.Account, r.SignInFor, r.SendAt = m.failure, m.account, m.signInFor, m.sendAt
	}
	return r
}

func (e *endedJob) state() State { return endedStates[e.st] }

// snapshot is the job as people see it, as Queue.snapLocked makes it of
// the whole job: an ended job is neither held nor blocked, and moves no
// bytes.
func (q *Queue) endedSnapshot(id string, e *endedJob) Snapshot {
	r := e.record(id)
	s := snapshotOf(&r)
	s.Seq = q.seq.Add(1)
	s.AnswerInJournal = e.answerDropped
	return s
}

// endedLocked notes that jb ended for good (done or cancelled) and no
// worker holds it: it joins the jobs that ended last, and the oldest of
// those beyond keepWhole is kept as an endedJob from here on. Queue.mu
// must be held.
func (q *Queue) endedLocked(jb *job) {
	if jb.recent || q.jobs[jb.id] != jb || !settled(jb.state()) {
		return
	}
	jb.recent = true
	q.recent = append(q.recent, jb)
	for len(q.recent) > keepWhole {
		old := q.recent[0]
		q.recent[0] = nil
		q.recent = q.recent[1:]
		old.recent = false
		q.compactLocked(old)
	}
}

// compactLocked keeps jb as an endedJob, when it is still this queue's,
// ended for good, held by nobody, and the journal holds its record as it
// ended (the write of its last move succeeded): else it stays whole.
// Queue.mu must be held.
func (q *Queue) compactLocked(jb *job) {
	if q.jobs[jb.id] != jb || jb.run != nil || jb.release != nil || jb.pending {
		return
	}
	jb.mu.Lock()
	e, ok := (*endedJob)(nil), jb.endSaved && settled(jb.rec.State)
	if ok {
		e, ok = compactOf(&jb.rec, jb.answerDropped)
	}
	jb.mu.Unlock()
	if !ok {
		return
	}
	q.dropLocked(jb)
	q.ended[jb.id] = e
	jb.notify() // a Wait on it looks again, and finds the endedJob
}

// wholeLocked takes ended job id back whole: its record as the journal
// holds it (the answer's body left out again when it was dropped), or,
// should the journal no longer have it (another process forgot it), as
// far as the endedJob knows it; nothing writes an ended job's record
// again. Queue.mu must be held.
func (q *Queue) wholeLocked(id string) *job {
	e, ok := q.ended[id]
	if !ok {
		return nil
	}
	rec, err := q.journal.Load(id)
	if err != nil || rec.State != e.state() {
		r := e.record(id)
		rec = &r
	}
	if e.answerDropped && rec.Response != nil {
		a := *rec.Response
		a.Body = nil
		rec.Response = &a
	}
	jb := newJob(rec, nil)
	jb.doneSaved, jb.endSaved, jb.answerDropped = rec.State == StateDone, true, e.answerDropped
	delete(q.ended, id)
	q.jobs[id] = jb // not putLocked: a job that ended for good needs nothing (unneedLocked)
	q.endedLocked(jb)
	return jb
}

// dropAnswer is DropAnswer for an endedJob, whose record the journal
// holds as it ended. Queue.mu must be held: it guards every endedJob.
func (e *endedJob) dropAnswer(id string) error {
	if e.state() != StateDone || e.response == nil {
		return fmt.Errorf("job %s: %w", id, ErrUnfinished)
	}
	if !e.answerDropped {
		// A new Response, not the old one changed: snapshots taken before
		// keep the body they were given.
		r := *e.response
		r.Body = nil
		e.response, e.answerDropped = &r, true
	}
	return nil
}
