package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Promises of jobs.go and intake.go found by a whole mutation run of the
// two files, each pinned by a test that fails when it breaks
// (docs/RELIABILITY.md, Mutation).

// snapQueue is a queue reduced to what a snapshot reads (its clock, its
// sequence, its metered rule), and a job of it in state st.
func snapQueue(st State) (*Queue, *job, *FakeClock) {
	clk := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	q := &Queue{clock: clk}
	jb := newJob(&Record{ID: "j", State: st, Size: 10000, Confirmed: 1000}, nil)
	return q, jb, clk
}

// A running job's snapshot carries what its upload last told: the bytes
// written and their rate, the bytes the peer acknowledged (then what Sent
// says), and the pace of confirmations, aged by the time since it came.
func TestEdgeSnapshotCarriesTheLiveProgress(t *testing.T) {
	q, jb, clk := snapQueue(StateRunning)
	sink := jobSink{q, jb}
	clk.Advance(5 * time.Second)
	p := Pace{Bytes: 4000, Span: 2 * time.Second, Gaps: 2, Left: 6000}
	sink.Paced(p)
	clk.Advance(500 * time.Millisecond)
	sink.Progress(3000, 1500)
	sink.Acked(2500)
	s := q.snapshot(jb)
	if s.Written != 3000 || s.WriteRate != 1500 {
		t.Errorf("written %d at %v B/s, want 3000 at 1500", s.Written, s.WriteRate)
	}
	if s.Acked != 2500 || s.Sent != 2500 {
		t.Errorf("acked %d, sent %d: want both 2500 (the peer's word, under what was written)", s.Acked, s.Sent)
	}
	want := p
	want.Since = 500 * time.Millisecond
	if s.Pace != want {
		t.Errorf("pace %+v, want %+v (half a second old)", s.Pace, want)
	}
	if s.ConfirmedRate != 2000 || s.Rate != 2000 || s.ETA != p.ETA(500*time.Millisecond) {
		t.Errorf("confirmed rate %v (Rate %v), ETA %v: want 2000 B/s and %v", s.ConfirmedRate, s.Rate, s.ETA, p.ETA(500*time.Millisecond))
	}
}

// A pace that comes at the clock's very start (elapsed 0) is kept all the
// same; a job whose upload told no pace shows none, however late.
func TestEdgeSnapshotPaceFromTheClocksStart(t *testing.T) {
	q, jb, clk := snapQueue(StateRunning)
	p := Pace{Bytes: 4000, Span: 2 * time.Second, Gaps: 2, Left: 6000}
	jobSink{q, jb}.Paced(p)
	if s := q.snapshot(jb); s.Pace != p || s.ConfirmedRate != 2000 {
		t.Errorf("pace told at elapsed 0: snapshot has %+v at %v B/s, want %+v", s.Pace, s.ConfirmedRate, p)
	}
	q, jb, clk = snapQueue(StateRunning)
	clk.Advance(7 * time.Second)
	if s := q.snapshot(jb); s.Pace != (Pace{}) || s.ETA != 0 {
		t.Errorf("no pace told: snapshot has %+v, ETA %v", s.Pace, s.ETA)
	}
}

// Of two snapshots of a job, the later has the higher Seq.
func TestEdgeSnapshotSeqGrows(t *testing.T) {
	q, jb, _ := snapQueue(StateQueued)
	a, b := q.snapshot(jb), q.snapshot(jb)
	if a.Seq == 0 || b.Seq <= a.Seq {
		t.Errorf("Seq %d then %d: want a growing number", a.Seq, b.Seq)
	}
}

// A snapshot says why the system holds a job: the metered rule's hold for
// a large job on a metered connection, else the hold its upload waits on
// while it runs.
func TestEdgeSnapshotSaysWhyTheJobIsHeld(t *testing.T) {
	q, jb, _ := snapQueue(StateQueued)
	q.meter.on, q.meter.policy = true, MeteredPolicy{Pause: true, Over: 100}
	if s := q.snapshot(jb); s.Held != HeldMetered {
		t.Errorf("a large queued job on a metered connection: Held %q, want %q", s.Held, HeldMetered)
	}
	q, jb, _ = snapQueue(StateRetrying)
	jb.heldWhy = "Google asks every client to wait"
	if s := q.snapshot(jb); s.Held != jb.heldWhy {
		t.Errorf("a job its upload holds: Held %q, want %q", s.Held, jb.heldWhy)
	}
}

// A job that failed and is retried holds its journal lock again while it
// is sent: another process cannot take it.
func TestEdgeRetriedJobHoldsItsLockAgain(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "a")
	g.mu.Lock()
	g.fail["a"] = 1
	g.mu.Unlock()
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	if e := h.finish(a); e.Kind != EventFailed {
		t.Fatalf("first try: %s", e)
	}
	if err := h.q.Retry(ctxT(t), a); err != nil {
		t.Fatal(err)
	}
	release, err := h.q.journal.Lock(a)
	if err == nil {
		release()
	}
	if !errors.Is(err, ErrBusy) {
		t.Errorf("the retried job's lock could be taken (%v): it runs unlocked", err)
	}
	g.open("a")
	h.mustDone(a)
}

// A move the lifecycle refuses leaves the job as it was, and free: the
// next look at it goes through.
func TestEdgeRefusedMoveLeavesTheJobFree(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "a")
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	h.q.mu.Lock()
	jb := h.q.jobs[c]
	h.q.mu.Unlock()
	if err := h.q.transition(jb, MoveStart, StateRunning, nil, Event{}); err == nil {
		t.Fatal("a waiting job was started")
	}
	var s Snapshot
	returnsWithin(t, "Job", func() { s, _ = h.q.Job(c) })
	if s.State != StateWaiting {
		t.Errorf("after a refused start the job is %s", s.State)
	}
	g.open("a")
	h.mustDone(a)
	h.mustDone(c)
}

// recordWrites counts the journal's writes of job records (not progress
// files) whose name ends in suffix.
func recordWrites(t *testing.T, suffix string) func() int {
	var mu sync.Mutex
	n := 0
	old := renameRecord
	swapSeam(t, &renameRecord, func(from, to string) error {
		if strings.HasSuffix(to, suffix) {
			mu.Lock()
			n++
			mu.Unlock()
		}
		return old(from, to)
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// Each move stamps the record with the queue's clock.
func TestEdgeMoveStampsTheRecord(t *testing.T) {
	clk := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	f := newFake(t)
	newGates(f, "a") // a is held at its start: c waits
	h := newHarness(t, Config{Clock: clk})
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	clk.Advance(time.Hour)
	if err := h.q.Pause(c); err != nil {
		t.Fatal(err)
	}
	want := clk.Now()
	if s, _ := h.q.Job(c); !s.Updated.Equal(want) {
		t.Errorf("paused an hour after it was added: Updated %v, want %v", s.Updated, want)
	}
	if r, err := h.q.journal.Load(c); err != nil || !r.Updated.Equal(want) {
		t.Errorf("the journal's record: Updated %v (%v), want %v", r.Updated, err, want)
	}
}

// Between durable writes, a job's progress goes to its progress file
// alone; a durable write comes once durableEvery has passed since the
// last (a move's included), at once when asked, and not again before the
// next durableEvery. The queue's record takes the cursor, stamped with
// the queue's clock, either way.
func TestEdgeCheckpointWritesTheRecordOncePerInterval(t *testing.T) {
	clk := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	f := newFake(t)
	newGates(f, "a") // a is held at its start: c waits
	h := newHarness(t, Config{Clock: clk})
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	writes := recordWrites(t, c+".json")
	if err := h.q.Pause(c); err != nil { // a durable write, now
		t.Fatal(err)
	}
	h.q.mu.Lock()
	sink := jobSink{h.q, h.q.jobs[c]}
	h.q.mu.Unlock()
	step := func(what string, confirmed int64, durable bool, wantWrites int) {
		t.Helper()
		if err := sink.Checkpoint(Cursor{Session: "https://upload.example/s/1", Confirmed: confirmed}, durable); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := writes(); n != wantWrites {
			t.Errorf("%s: %d writes of the record, want %d", what, n, wantWrites)
		}
		if s, _ := h.q.Job(c); s.Confirmed != confirmed {
			t.Errorf("%s: the job shows %d confirmed, want %d", what, s.Confirmed, confirmed)
		}
	}
	step("right after the move", 100, false, 1)
	data, err := os.ReadFile(h.q.journal.path(c, ".progress"))
	var p progress
	if err != nil || json.Unmarshal(data, &p) != nil || p.Confirmed != 100 {
		t.Errorf("the progress file holds %q (%v), want 100 confirmed", data, err)
	}
	clk.Advance(durableEvery - time.Nanosecond)
	step("just before durableEvery", 200, false, 1)
	clk.Advance(time.Nanosecond)
	step("at durableEvery", 300, false, 2)
	step("right after", 400, false, 2)
	step("asked durable", 500, true, 3)
	if r, err := h.q.journal.Load(c); err != nil || r.Confirmed != 500 || !r.Updated.Equal(clk.Now()) {
		t.Errorf("the journal's record: %d confirmed at %v (%v), want 500 at %v", r.Confirmed, r.Updated, err, clk.Now())
	}
}

// A waiting job says so when a job it needs is cancelled; paused, it says
// nothing of why it waited; resumed, it waits again and says why.
func TestEdgeWaitingJobSaysItsNeedWasCancelled(t *testing.T) {
	f := newFake(t)
	newGates(f, "a") // a is held at its start: c waits
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa, Label: "Holiday.mov"})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	if err := h.q.Cancel(ctxT(t), a); err != nil {
		t.Fatal(err)
	}
	const want = `it needs "Holiday.mov", which was cancelled`
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != want {
		t.Errorf("its need cancelled, the job is %s, blocked %q; want waiting, %q", s.State, s.Blocked, want)
	}
	if err := h.q.Pause(c); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.q.Job(c); s.State != StatePaused || s.Blocked != "" {
		t.Errorf("paused, the job is %s, blocked %q", s.State, s.Blocked)
	}
	if err := h.q.Resume(ctxT(t), c); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != want {
		t.Errorf("resumed, the job is %s, blocked %q; want waiting, %q", s.State, s.Blocked, want)
	}
}

// gatedDeadAuth refuses every request for a dead sign-in, once gate is
// closed (before, it waits), and lets them all through once alive.
type gatedDeadAuth struct {
	gate  chan struct{}
	alive atomic.Bool
}

func (a *gatedDeadAuth) Authorize(ctx context.Context, _ *http.Request) error {
	if a.alive.Load() {
		return nil
	}
	select {
	case <-a.gate:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return &SignInError{Account: "zoe@example.com", Err: errors.New("the token endpoint answered invalid_grant")}
}

func (a *gatedDeadAuth) Refresh(context.Context) error {
	if a.alive.Load() {
		return nil
	}
	return &SignInError{Account: "zoe@example.com", Err: errors.New("the token endpoint answered invalid_grant")}
}

// A waiting job says so when a job it needs parks for a sign-in, and
// stops saying it once the sign-in sends that job on.
func TestEdgeWaitingJobFollowsItsNeedsSignIn(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "a")
	auth := &gatedDeadAuth{gate: make(chan struct{})}
	// A fake clock: the queue's periodic look at every waiting job (a few
	// seconds apart) never comes, so only the need's moves tell.
	h := newHarness(t, Config{Auth: auth, Clock: NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))})
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa, Label: "Holiday.mov"})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	close(auth.gate) // a's sign-in dies only now that c waits for it
	h.untilState(a, StateSignIn)
	const want = `it needs "Holiday.mov", which waits for a sign-in`
	h.await(func(e Event) bool { return e.Job == c && e.Kind == EventWaiting && e.Snap.Blocked == want })
	auth.alive.Store(true)
	if _, err := h.q.SignedIn(""); err != nil {
		t.Fatal(err)
	}
	// a is held at its start now: c still waits, for nothing but a.
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != "" {
		t.Errorf("its need sent on, the job is %s, blocked %q", s.State, s.Blocked)
	}
	g.open("a")
	h.mustDone(a)
	h.mustDone(c)
}

// A waiting job says so when the file of a job it needs is gone, and
// stops saying it once that job is sent on from where its file went.
func TestEdgeWaitingJobFollowsItsNeedsFile(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "z", "a")
	// A fake clock: the queue's periodic look at every waiting job (a few
	// seconds apart) never comes, so only the need's moves tell.
	h := newHarness(t, Config{Workers: 1, Clock: NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))})
	pz, _ := writeFile(t, 500)
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	z := h.add(Spec{URL: named(f, "z"), ContentType: "application/octet-stream", Path: pz})
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa, Label: "Holiday.mov"})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	moved := pa + ".moved"
	if err := os.Rename(pa, moved); err != nil {
		t.Fatal(err)
	}
	g.open("z") // the one worker takes a next, and finds its file gone
	h.mustDone(z)
	h.untilState(a, StateMissing)
	const want = `it needs "Holiday.mov", whose file is no longer where it was`
	h.await(func(e Event) bool { return e.Job == c && e.Kind == EventWaiting && e.Snap.Blocked == want })
	if err := h.q.Locate(ctxT(t), a, moved); err != nil {
		t.Fatal(err)
	}
	// a is held at its start now: c still waits, for nothing but a.
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != "" {
		t.Errorf("its need sent on, the job is %s, blocked %q", s.State, s.Blocked)
	}
	g.open("a")
	h.mustDone(a)
	h.mustDone(c)
}

// indexesHold checks the queue's indexes against its jobs' states: the
// pending list holds each queued job once at most (and those only, and
// job.pending says so), q.waiting the waiting jobs, q.scheduled the
// scheduled ones. Only while no worker moves a job: a move changes the
// state before the indexes.
func indexesHold(t *testing.T, h *harness, when string) {
	t.Helper()
	h.q.mu.Lock()
	defer h.q.mu.Unlock()
	inList := map[*job]int{}
	for _, jb := range h.q.pending {
		inList[jb]++
	}
	for id, jb := range h.q.jobs {
		st := jb.state()
		if n := inList[jb]; n > 1 || n == 1 && st != StateQueued || jb.pending != (n == 1) {
			t.Errorf("%s: job %s (%s) is %d times in the pending list (pending %v)", when, id, st, n, jb.pending)
		}
		if _, in := h.q.waiting[jb]; in != (st == StateWaiting) {
			t.Errorf("%s: job %s (%s) among the waiting: %v", when, id, st, in)
		}
		if _, in := h.q.scheduled[jb]; in != (st == StateScheduled) {
			t.Errorf("%s: job %s (%s) among the scheduled: %v", when, id, st, in)
		}
	}
}

// The queue's indexes follow its jobs' moves: a job paused or resumed
// while it waits its turn, a job held back for its time and sent now, a
// waiting job released, each is where its state says and nowhere else;
// a job done is no longer indexed as needing others.
func TestEdgeIndexesFollowTheMoves(t *testing.T) {
	clk := NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	f := newFake(t)
	g := newGates(f, "z")
	h := newHarness(t, Config{Workers: 1, Clock: clk})
	ps, _ := writeFile(t, 700)
	pz, _ := writeFile(t, 500)
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	s := h.add(Spec{URL: named(f, "s"), ContentType: "application/octet-stream", Path: ps, SendAt: clk.Now().Add(2 * ScheduleLead)})
	h.untilState(s, StateScheduled)
	z := h.add(Spec{URL: named(f, "z"), ContentType: "application/octet-stream", Path: pz})
	h.untilState(z, StateRunning) // the one worker is held at z's start
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	indexesHold(t, h, "added")
	if err := h.q.Pause(a); err != nil {
		t.Fatal(err)
	}
	indexesHold(t, h, "paused in its turn")
	if err := h.q.Resume(ctxT(t), a); err != nil {
		t.Fatal(err)
	}
	indexesHold(t, h, "resumed")
	if err := h.q.SendNow(ctxT(t), s); err != nil {
		t.Fatal(err)
	}
	indexesHold(t, h, "sent now")
	g.open("z")
	for _, id := range []string{z, a, c, s} {
		h.mustDone(id)
	}
	h.q.mu.Lock()
	defer h.q.mu.Unlock()
	if len(h.q.waiting) != 0 || len(h.q.scheduled) != 0 || len(h.q.needers) != 0 {
		t.Errorf("all done, %d jobs are still among the waiting, %d among the scheduled, %d among the needed", len(h.q.waiting), len(h.q.scheduled), len(h.q.needers))
	}
}

// A job that parks for a sign-in tells every Wait under way (the queue's
// parked channel closes), and the word is given once: a new channel
// stands for the next park, so later Waits block rather than spin.
func TestEdgeParkIsToldOnce(t *testing.T) {
	f := newFake(t)
	auth := &gatedDeadAuth{gate: make(chan struct{})}
	h := newHarness(t, Config{Auth: auth})
	p, _ := writeFile(t, 1000)
	a := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: p})
	h.untilState(a, StateRunning) // its request waits at the gate
	h.q.mu.Lock()
	before := h.q.parked
	h.q.mu.Unlock()
	close(auth.gate)
	h.untilState(a, StateSignIn)
	h.q.mu.Lock()
	after := h.q.parked
	h.q.mu.Unlock()
	select {
	case <-before:
	default:
		t.Error("a job parked and the Waits under way were not told")
	}
	select {
	case <-after:
		t.Error("the word that a job parked stands still: every later Wait would spin on it")
	default:
	}
}

// untilLetGo waits until no worker holds job id (its worker settles it
// after its last event) and returns it.
func untilLetGo(t *testing.T, h *harness, id string) *job {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		h.q.mu.Lock()
		jb := h.q.jobs[id]
		free := jb != nil && jb.run == nil
		h.q.mu.Unlock()
		if free {
			return jb
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: its worker never let go of it", id)
		}
	}
}

// A job done with its record written lets the queue trust the journal:
// dropping its answer reads no record back, and the job may be kept
// compact, as the journal holds it.
func TestEdgeDoneRecordWrittenIsTrusted(t *testing.T) {
	f := newFake(t)
	// A fake clock: no tick of the queue's reads the journal meanwhile.
	h := newHarness(t, Config{Clock: NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))})
	p, _ := writeFile(t, 1000)
	a := h.add(Spec{URL: f.url(), Type: Media, ContentType: "text/plain", Path: p})
	h.mustDone(a)
	jb := untilLetGo(t, h, a)
	reads := 0
	read := h.q.journal.reader.read
	h.q.journal.reader.read = func(p string) ([]byte, error) {
		reads++
		return read(p)
	}
	if err := h.q.DropAnswer(a); err != nil {
		t.Fatal(err)
	}
	if reads != 0 {
		t.Errorf("dropping the answer of a job done here read %d files of the journal", reads)
	}
	h.q.mu.Lock()
	defer h.q.mu.Unlock()
	h.q.compactLocked(jb)
	if _, ok := h.q.ended[a]; !ok {
		t.Error("a job whose end the journal holds was not kept compact")
	}
}

// A job done while the journal refused its record keeps its answer whole:
// the queue drops no body the journal lacks, and keeps the job whole.
func TestEdgeDoneRecordRefusedKeepsTheAnswer(t *testing.T) {
	f := newFake(t)
	arrived, answer := make(chan struct{}), make(chan struct{})
	f.hook = func(kind string, _ int, _ http.ResponseWriter, r *http.Request, _ *fakeSession) bool {
		if kind == "media" {
			close(arrived)
			select {
			case <-answer:
			case <-r.Context().Done():
			}
		}
		return false
	}
	h := newHarness(t, Config{})
	on, _ := failRename(t, h.dir)
	p, _ := writeFile(t, 1000)
	a := h.add(Spec{URL: f.url(), Type: Media, ContentType: "text/plain", Path: p})
	<-arrived
	on(true) // the job's record cannot be written from here on
	close(answer)
	h.mustDone(a)
	jb := untilLetGo(t, h, a)
	if err := h.q.DropAnswer(a); err == nil {
		t.Error("the answer's body was dropped though the journal never held it")
	}
	if s, _ := h.q.Job(a); s.Response == nil || len(s.Response.Body) == 0 || s.AnswerInJournal {
		t.Errorf("the job's answer is %+v (in the journal: %v)", s.Response, s.AnswerInJournal)
	}
	h.q.mu.Lock()
	defer h.q.mu.Unlock()
	h.q.compactLocked(jb)
	if _, ok := h.q.ended[a]; ok {
		t.Error("a job whose end the journal lacks was kept compact, as if the journal held it")
	}
}

// A job that waits to try again still shows how far its bytes went, and
// the system's hold it waits on while it does; sent on, it says nothing
// of the hold any more.
func TestEdgeRetryKeepsTheProgressAndSaysTheHold(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "z")
	h := newHarness(t, Config{Workers: 1})
	pz, _ := writeFile(t, 500)
	pa, _ := writeFile(t, 1000)
	z := h.add(Spec{URL: named(f, "z"), ContentType: "application/octet-stream", Path: pz})
	h.untilState(z, StateRunning) // the one worker is held at z's start
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	h.q.mu.Lock()
	jb := h.q.jobs[a]
	h.q.mu.Unlock()
	// This test is a's worker: it starts a and tells what its upload does.
	if err := h.q.transition(jb, MoveStart, StateRunning, nil, Event{}); err != nil {
		t.Fatal(err)
	}
	sink := jobSink{h.q, jb}
	sink.Progress(700, 100)
	const why = "Google asks every client to wait"
	sink.Retrying(RetryNotice{Attempt: 1, Reason: why, Held: true})
	if s, _ := h.q.Job(a); s.State != StateRetrying || s.Written != 700 || s.Held != why {
		t.Errorf("waiting to try again: %s, %d written, held %q; want retrying, 700, %q", s.State, s.Written, s.Held, why)
	}
	sink.Retried()
	if s, _ := h.q.Job(a); s.State != StateRunning || s.Written != 700 || s.Held != "" {
		t.Errorf("sent on: %s, %d written, held %q; want running, 700, none", s.State, s.Written, s.Held)
	}
	if err := h.q.transition(jb, MoveStop, StateQueued, nil, Event{}); err != nil {
		t.Fatal(err)
	}
	g.open("z")
	h.mustDone(z)
	h.mustDone(a)
}

// A spec is recorded with the queue's defaults filled in (POST, the
// resumable type, the queue's chunk cap), its method in capitals, its
// needs sorted once each, its SHA-256 in lower case, its metadata a copy
// of the caller's, empty lists as none (an ended job kept compact holds
// no more than it must); a job with neither a SHA-256 nor checksums stated keeps
// a CRC32C for the source check, and one with either keeps none.
func TestEdgeSpecRecordedWithDefaults(t *testing.T) {
	h := newHarness(t, Config{ChunkSize: 4 * ChunkQuantum})
	p, _ := writeFile(t, 100)
	meta := []byte(`{"name":"a"}`)
	sum := strings.Repeat("AB", 32)
	r, err := h.q.newRecord(Spec{URL: "http://h/u", ContentType: "a/b", Path: p, Metadata: meta, Method: "put",
		Needs: []string{"n2", "n1", "n2"}, SHA256: sum})
	if err != nil {
		t.Fatal(err)
	}
	meta[2] = 'X'
	if r.Method != "PUT" || r.Type != Resumable || r.ChunkSize != 4*ChunkQuantum || string(r.Metadata) != `{"name":"a"}` ||
		strings.Join(r.Needs, ",") != "n1,n2" || r.SHA256 != strings.ToLower(sum) || r.SourceSum != "" {
		t.Errorf("recorded %s %s, chunks of %d, metadata %s, needs %q, SHA-256 %s, source sum %q",
			r.Method, r.Type, r.ChunkSize, r.Metadata, r.Needs, r.SHA256, r.SourceSum)
	}
	r, err = h.q.newRecord(Spec{URL: "http://h/u", ContentType: "a/b", Path: p, Type: Media, Needs: []string{}, Quote: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "POST" || r.Type != Media || r.SourceSum != SumCRC32C || r.Needs != nil || r.Quote != nil {
		t.Errorf("recorded %s %s, source sum %q, needs %#v, quotes %#v; want POST media, %q, none, none", r.Method, r.Type, r.SourceSum, r.Needs, r.Quote, SumCRC32C)
	}
	r, err = h.q.newRecord(Spec{URL: "http://h/u", ContentType: "a/b", Path: p, Checksums: []string{SumMD5}})
	if err != nil {
		t.Fatal(err)
	}
	if r.SourceSum != "" {
		t.Errorf("a job stating checksums keeps the source sum %q too", r.SourceSum)
	}
}

// A job added after a job it needs failed waits, and says why from the
// start, in the event that tells it was added; it is in no list a worker
// takes jobs from.
func TestEdgeJobAddedBehindAFailedNeedSaysSo(t *testing.T) {
	f := newFake(t)
	g := newGates(f)
	g.mu.Lock()
	g.fail["a"] = 1
	g.mu.Unlock()
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa, Label: "Holiday.mov"})
	if e := h.finish(a); e.Kind != EventFailed {
		t.Fatalf("need: %s", e)
	}
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	const want = `it needs "Holiday.mov", which failed`
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != want {
		t.Errorf("added behind a failed need, the job is %s, blocked %q; want waiting, %q", s.State, s.Blocked, want)
	}
	if e := h.await(func(e Event) bool { return e.Job == c }); e.Kind != EventWaiting || e.Snap.Blocked != want {
		t.Errorf("the job's first event: %s, blocked %q", e, e.Snap.Blocked)
	}
	indexesHold(t, h, "added behind a failed need")
}

// An Add to a closed queue fails and lets the job's lock go.
func TestEdgeAddToAClosedQueueLetsTheLockGo(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 100)
	h.q.Close()
	if id, err := h.q.Add(Spec{URL: f.url(), ContentType: "text/plain", Path: p}); err == nil {
		t.Fatalf("a closed queue took job %s", id)
	}
	recs, _ := h.q.journal.listFolder()
	if len(recs) == 0 {
		t.Fatal("no record was written")
	}
	for _, r := range recs {
		release, err := h.q.journal.Lock(r.ID)
		if err != nil {
			t.Errorf("job %s, which the closed queue refused, is still locked: %v", r.ID, err)
			continue
		}
		release()
	}
}

// A job this queue holds counts as known to a job added behind it, even
// once its record left the folder (another process forgot it): the queue
// knows where it stands.
func TestEdgeNeedHeldByTheQueueIsKnown(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 100)
	a := h.add(Spec{URL: f.url(), Type: Media, ContentType: "text/plain", Path: p})
	h.mustDone(a)
	jb := untilLetGo(t, h, a)
	for _, compact := range []bool{false, true} {
		if compact {
			h.q.mu.Lock()
			h.q.compactLocked(jb)
			_, ok := h.q.ended[a]
			h.q.mu.Unlock()
			if !ok {
				t.Fatal("the done job was not kept compact")
			}
		}
		if err := os.Remove(h.q.journal.path(a, ".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		c, err := h.q.Add(Spec{URL: f.url(), Type: Media, ContentType: "text/plain", Path: p, Needs: []string{a}})
		if err != nil {
			t.Fatalf("compact %v: a job needing one the queue holds done was refused: %v", compact, err)
		}
		h.mustDone(c)
	}
}

// A job whose file was gone when it last ran, taken up again by a new
// queue while the file is back where it was, is sent on at once; taken
// up, it is not taken up twice.
func TestEdgeGhostTakenUpWithItsFileBackGoesOn(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "z", "a")
	h := newHarness(t, Config{Workers: 1})
	pz, _ := writeFile(t, 500)
	pa, _ := writeFile(t, 1000)
	z := h.add(Spec{URL: named(f, "z"), ContentType: "application/octet-stream", Path: pz})
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	if err := os.Rename(pa, pa+".away"); err != nil {
		t.Fatal(err)
	}
	g.open("z") // the one worker takes a next, and finds its file gone
	h.mustDone(z)
	h.untilState(a, StateMissing)
	h.q.Close()
	if err := os.Rename(pa+".away", pa); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, Config{StateDir: h.dir})
	if ids, err := h2.q.ResumeJournal(false); err != nil || len(ids) != 1 || ids[0] != a {
		t.Fatalf("taken up: %v, %v", ids, err)
	}
	// a is held at its start now; the queue holds it, so a second look at
	// the journal leaves it alone.
	if ids, err := h2.q.ResumeJournal(false); err != nil || len(ids) != 0 {
		t.Errorf("taken up again: %v, %v", ids, err)
	}
	g.open("a")
	h2.mustDone(a)
}

// ResumeJournal(true) takes up what another process left: a job queued,
// one found running, a parked job, a paused job and one that failed for a passing
// reason go back to the queue, their failure and sign-in words cleared;
// one that failed for good, and one done, stay where they are.
func TestEdgeResumeAllTakesUpWhatWasLeft(t *testing.T) {
	f := newFake(t)
	names := []string{"queued", "running", "parked", "paused", "passing", "final", "done"}
	newGates(f, names...) // every upload waits at its start
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 1000)
	ids := map[string]string{}
	for _, name := range names {
		r, err := h.q.newRecord(Spec{URL: named(f, name), ContentType: "application/octet-stream", Path: p})
		if err != nil {
			t.Fatal(err)
		}
		switch name {
		case "running":
			r.State = StateRunning
		case "parked":
			r.State, r.Error, r.SignInFor = StateSignIn, "sign in again", "zoe@example.com"
		case "paused":
			r.State = StatePaused
		case "passing", "final":
			r.State, r.Error, r.Retryable, r.Cause = StateFailed, "the network failed", name == "passing", "gave-up"
		case "done":
			r.State, r.Response, r.Confirmed = StateDone, &Response{Status: 200, Body: []byte("{}")}, r.Size
		}
		if err := h.q.journal.Save(r); err != nil {
			t.Fatal(err)
		}
		ids[name] = r.ID
	}
	taken, err := h.q.ResumeJournal(true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(taken)
	want := []string{ids["queued"], ids["running"], ids["parked"], ids["paused"], ids["passing"]}
	slices.Sort(want)
	if !slices.Equal(taken, want) {
		t.Errorf("taken up %q, want %q", taken, want)
	}
	for _, name := range names[:5] {
		r, _ := h.q.record(ids[name])
		if !r.State.Unfinished() || r.State == StatePaused || r.State == StateSignIn || r.Error != "" || r.Retryable || r.Cause != "" || r.SignInFor != "" {
			t.Errorf("%s: %s, error %q (retryable %v, cause %q), sign-in for %q", name, r.State, r.Error, r.Retryable, r.Cause, r.SignInFor)
		}
	}
	for _, name := range names[5:] {
		if r, _ := h.q.journal.Load(ids[name]); r.State != StateFailed && r.State != StateDone {
			t.Errorf("%s was moved: %s", name, r.State)
		}
	}
}

// A spec's chunk size that is no multiple of 256 KiB is refused in the
// spec's words, not a record's.
func TestEdgeBadChunkSizeRefusedInTheSpecsWords(t *testing.T) {
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 100)
	_, err := h.q.Add(Spec{URL: "http://h/u", ContentType: "a/b", Path: p, ChunkSize: 1000})
	if err == nil || !strings.Contains(err.Error(), "chunk size 1000 is not a positive multiple of 256 KiB") || strings.Contains(err.Error(), "record") {
		t.Errorf("refused with %v", err)
	}
}

// The goog upload protocol is taken for a plain resumable POST, and
// refused with any other type or method, metadata, checksums or an
// existing resource.
func TestEdgeGoogUploadSpecsTakenAndRefused(t *testing.T) {
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 100)
	good := Spec{URL: "http://h/u", ContentType: "a/b", Path: p, Protocol: ProtocolGoogUpload}
	if r, err := h.q.newRecord(good); err != nil || r.Protocol != ProtocolGoogUpload {
		t.Fatalf("a plain goog upload: %v", err)
	}
	for name, change := range map[string]func(*Spec){
		"media":     func(s *Spec) { s.Type = Media },
		"put":       func(s *Spec) { s.Method = "PUT" },
		"metadata":  func(s *Spec) { s.Metadata = []byte(`{}`) },
		"checksums": func(s *Spec) { s.Checksums = []string{SumMD5} },
		"existing":  func(s *Spec) { s.Existing = "http://h/f/1" },
	} {
		s := good
		change(&s)
		if _, err := h.q.newRecord(s); err == nil || !strings.Contains(err.Error(), "protocol") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
