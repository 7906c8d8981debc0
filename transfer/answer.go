package transfer

import (
	"bytes"
	"fmt"
)

// A done job's answer stays in memory while the queue holds the job, for
// its snapshots. A front end that has used an answer may let the queue
// forget its body (DropAnswer): the journal keeps it, and Answer reads it
// back. A camera roll's batchCreate calls answer with about 0.9 KB per
// picture, which 20,000 pictures' jobs would otherwise hold to the end of
// the batch (issue 29).

// DropAnswer lets the queue forget the body of done job id's answer: its
// snapshots then carry the answer's status and type without the body,
// and say so (Snapshot.AnswerInJournal). The body goes only when the
// journal holds it: the job's record was written when it was done, or is
// read back and holds the same body. A job that is not done, or not held
// by this queue, is refused; one whose answer went already is left alone.
func (q *Queue) DropAnswer(id string) error {
	q.mu.Lock()
	if e, ok := q.ended[id]; ok {
		// The journal holds its record as it ended (compactLocked).
		defer q.mu.Unlock()
		return e.dropAnswer(id)
	}
	jb, err := q.lookup(id)
	q.mu.Unlock()
	if err != nil {
		return err
	}
	jb.mu.Lock()
	if jb.rec.State != StateDone || jb.rec.Response == nil {
		jb.mu.Unlock()
		return fmt.Errorf("job %s: %w", id, ErrUnfinished)
	}
	if jb.answerDropped {
		jb.mu.Unlock()
		return nil
	}
	saved, body := jb.doneSaved, jb.rec.Response.Body
	jb.mu.Unlock()
	if !saved {
		// Taken up from the journal, or its last write failed: the body
		// goes only if the journal's record has it.
		r, err := q.journal.Load(id)
		if err != nil {
			return err
		}
		if r.State != StateDone || r.Response == nil || !bytes.Equal(r.Response.Body, body) {
			return fmt.Errorf("job %s: the journal does not hold its answer", id)
		}
	}
	jb.mu.Lock()
	defer jb.mu.Unlock()
	if jb.rec.State == StateDone && jb.rec.Response != nil && !jb.answerDropped {
		// A new Response, not the old one changed: snapshots taken before
		// (an event's) keep the body they were given.
		r := *jb.rec.Response
		r.Body = nil
		jb.rec.Response = &r
		jb.answerDropped = true
	}
	return nil
}

// Answer is job id's answer as the journal holds it (a done job's, its
// body whole, whether or not the queue still holds it): for a snapshot
// whose AnswerInJournal is set.
func (q *Queue) Answer(id string) (*Response, error) {
	r, err := q.journal.Load(id)
	if err != nil {
		return nil, err
	}
	if r.Response == nil {
		return nil, fmt.Errorf("job %s has no answer (%s)", id, r.State)
	}
	return r.Response, nil
}

// Answers is Answer for each of ids, by id, the journal read once for
// them all (Journal.LoadMany): a job with no answer, or the journal no
// longer has, is left out.
func (q *Queue) Answers(ids []string) (map[string]*Response, error) {
	recs, err := q.journal.LoadMany(ids)
	out := make(map[string]*Response, len(recs))
	for id, r := range recs {
		if r.Response != nil {
			out[id] = r.Response
		}
	}
	return out, err
}
