package photos

import (
	"slices"

	"carrier/transfer"
)

// photosView is the journal's history as the Photos front end looks at
// it: each job by id, pointing into the history read (not a copy of each
// snapshot), and the batchCreate calls alone, so that looking for the
// calls that make a call's items again goes through the calls, not
// through every upload (a camera roll: 400 calls among 20,400 jobs).
type photosView struct {
	byID  map[string]*transfer.Snapshot
	calls []*transfer.Snapshot // in the history's order
	// more looks up the jobs byID lacks (a view of the calls alone: the
	// uploads); nil: none.
	more func(id string) (transfer.Snapshot, bool)
}

// callsView is a view of the history's batchCreate calls alone, which
// looks up any other job (an upload) as the queue holds it, or in the
// whole history, read once if one is not held: a batch's end asks for
// its calls, and the queue holds its 20,000 uploads already.
func (q *Queue) callsView() (photosView, error) {
	calls, err := q.HistoryWhere(func(s *transfer.Snapshot) bool { return isBatchCreate(*s) })
	if err != nil {
		return photosView{}, err
	}
	v := viewOf(calls)
	var all map[string]*transfer.Snapshot
	read := false
	v.more = func(id string) (transfer.Snapshot, bool) {
		if s, ok := q.Job(id); ok {
			return s, true
		}
		if !read {
			read = true
			if recs, err := q.History(); err == nil {
				all = viewOf(recs).byID
			}
		}
		if s, ok := all[id]; ok {
			return *s, true
		}
		return transfer.Snapshot{}, false
	}
	return v, nil
}

// look is job id's snapshot, and whether the view has it.
func (v photosView) look(id string) (transfer.Snapshot, bool) {
	if s, ok := v.byID[id]; ok {
		return *s, true
	}
	if v.more != nil {
		return v.more(id)
	}
	return transfer.Snapshot{}, false
}

func viewOf(recs []transfer.Snapshot) photosView {
	v := photosView{byID: make(map[string]*transfer.Snapshot, len(recs))}
	for i := range recs {
		r := &recs[i]
		v.byID[r.ID] = r
		if isBatchCreate(*r) {
			v.calls = append(v.calls, r)
		}
	}
	return v
}

// snap is job id's snapshot, the zero one when the history has none.
func (v photosView) snap(id string) transfer.Snapshot {
	s, _ := v.look(id)
	return s
}

// againOf are the calls that make again items of call b, in the
// history's order.
func (v photosView) againOf(b *transfer.Snapshot) []*transfer.Snapshot {
	var out []*transfer.Snapshot
	for _, f := range v.calls {
		if again(*f, *b, v) {
			out = append(out, f)
		}
	}
	return out
}

// again reports whether call f makes again items of call b: f needs b and
// names uploads of files b named.
func again(f, b transfer.Snapshot, v photosView) bool {
	if !slices.Contains(f.Needs, b.ID) {
		return false
	}
	fu := quotedUploads(f)
	if len(fu) == 0 {
		return false
	}
	paths := map[string]bool{}
	for _, u := range quotedUploads(b) {
		paths[v.snap(u).Path] = true
	}
	return paths[v.snap(fu[0]).Path]
}
