package transfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// gates hold the start of named uploads until the test opens them.
type gates struct {
	mu     sync.Mutex
	ch     map[string]chan struct{}
	fail   map[string]int // answer 400 to the start of name this many times
	starts []string
	done   func() int // completions so far
	at     map[string]int
}

func newGates(f *fakeServer, names ...string) *gates {
	g := &gates{ch: map[string]chan struct{}{}, fail: map[string]int{}, at: map[string]int{}}
	for _, n := range names {
		g.ch[n] = make(chan struct{})
	}
	g.done = func() int { c, _, _ := f.stats(); return c }
	f.hook = func(kind string, _ int, w http.ResponseWriter, r *http.Request, _ *fakeSession) bool {
		if kind != "start" {
			return false
		}
		name := r.URL.Query().Get("name")
		g.mu.Lock()
		g.starts = append(g.starts, name)
		g.at[name] = g.done()
		ch := g.ch[name]
		failing := g.fail[name] > 0
		if failing {
			g.fail[name]--
		}
		g.mu.Unlock()
		if failing {
			googleError(w, 400, "INVALID_ARGUMENT", "invalid", "refused "+name)
			return true
		}
		if ch != nil {
			select {
			case <-ch:
			case <-r.Context().Done():
				return true
			}
		}
		return false
	}
	return g
}

func (g *gates) open(name string) { close(g.ch[name]) }

// completionsAtStart is how many uploads had completed when name started.
func (g *gates) completionsAtStart(name string) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n, ok := g.at[name]
	return n, ok
}

func named(f *fakeServer, name string) string {
	return f.srv.URL + "/upload/storage/v1/b/bkt/o?name=" + name
}

// await returns the first event, seen before or arriving now, that no
// await took yet and that match accepts: so events another wait passed
// over are not lost.
func (h *harness) await(match func(Event) bool) Event {
	h.t.Helper()
	h.mu.Lock()
	if h.taken == nil {
		h.taken = map[int]bool{}
	}
	for i, e := range h.seen {
		if !h.taken[i] && match(e) {
			h.taken[i] = true
			h.mu.Unlock()
			return e
		}
	}
	h.mu.Unlock()
	for {
		e := h.next()
		h.mu.Lock()
		i := len(h.seen) - 1
		ok := match(e) && !h.taken[i]
		if ok {
			h.taken[i] = true
		}
		h.mu.Unlock()
		if ok {
			return e
		}
	}
}

// untilState waits for an event putting job id in state st.
func (h *harness) untilState(id string, st State) Event {
	h.t.Helper()
	return h.await(func(e Event) bool { return e.Job == id && e.Snap.State == st && e.Kind != EventProgress })
}

func TestJobWaitsForBothItNeeds(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "a", "b")
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pb, _ := writeFile(t, 2000)
	pc, dc := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	b := h.add(Spec{URL: named(f, "b"), ContentType: "application/octet-stream", Path: pb})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a, b}})
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != "" {
		t.Fatalf("a job whose needs are unfinished waits, unblocked: %+v", s)
	}
	g.open("a")
	h.mustDone(a)
	if s, _ := h.q.Job(c); s.State != StateWaiting {
		t.Fatalf("one of two needs done: the job must still wait, is %s", s.State)
	}
	g.open("b")
	h.mustDone(b)
	if resourceSHA(t, h.mustDone(c)) != sha(dc) {
		t.Fatal("bytes differ")
	}
	if n, ok := g.completionsAtStart("c"); !ok || n != 2 {
		t.Errorf("the dependent started after %d completions (started=%v), want 2", n, ok)
	}
	rec, _ := h.q.journal.Load(c)
	if strings.Join(rec.Needs, ",") != strings.Join(sortedIDs(a, b), ",") {
		t.Errorf("the journal keeps needs %v", rec.Needs)
	}
}

func sortedIDs(ids ...string) []string {
	if ids[0] > ids[1] {
		ids[0], ids[1] = ids[1], ids[0]
	}
	return ids
}

// A failed need leaves the dependent visibly waiting; a retry of the need
// releases it.
func TestFailedNeedBlocksUntilRetried(t *testing.T) {
	f := newFake(t)
	g := newGates(f)
	g.fail["a"] = 1
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pc, dc := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa, Label: "Holiday.mov"})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	if e := h.finish(a); e.Kind != EventFailed {
		t.Fatalf("need: %s", e)
	}
	for {
		e := h.untilState(c, StateWaiting)
		if e.Snap.Blocked != "" {
			if !strings.Contains(e.Snap.Blocked, "Holiday.mov") || !strings.Contains(e.Snap.Blocked, "failed") {
				t.Errorf("blocked says %q", e.Snap.Blocked)
			}
			break
		}
	}
	if err := h.q.Forget(a); !errors.Is(err, ErrNeeded) {
		t.Errorf("forgetting a needed job: %v, want ErrNeeded", err)
	}
	if err := h.q.Retry(ctxT(t), a); err != nil {
		t.Fatal(err)
	}
	h.mustDone(a)
	if resourceSHA(t, h.mustDone(c)) != sha(dc) {
		t.Fatal("bytes differ")
	}
	if s, _ := h.q.Job(c); s.Blocked != "" {
		t.Errorf("a released job still says blocked: %q", s.Blocked)
	}
}

func TestNeedsMustBeKnown(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 10)
	if _, err := h.q.Add(Spec{URL: f.url(), ContentType: "text/plain", Path: p, Needs: []string{"20300101T000000-deadbeef"}}); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("a need nobody knows: %v", err)
	}
}

// The child process of TestDependentsKilledBetweenNeeds: it queues a, b
// and c (which needs both) and runs until it is killed.
func TestDependentsKillChild(t *testing.T) {
	state := os.Getenv("CARRIER_DEPS_CHILD_STATE")
	if state == "" {
		t.Skip("run by TestDependentsKilledBetweenNeeds as its child process")
	}
	base := os.Getenv("CARRIER_DEPS_CHILD_URL")
	paths := strings.Split(os.Getenv("CARRIER_DEPS_CHILD_FILES"), string(os.PathListSeparator))
	q, err := New(Config{StateDir: state, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url := func(name string) string { return base + "/upload/storage/v1/b/bkt/o?name=" + name }
	a, err := q.Add(Spec{URL: url("a"), ContentType: "application/octet-stream", Path: paths[0]})
	if err != nil {
		t.Fatal(err)
	}
	b, err := q.Add(Spec{URL: url("b"), ContentType: "application/octet-stream", Path: paths[1], ChunkSize: ChunkQuantum})
	if err != nil {
		t.Fatal(err)
	}
	c, err := q.Add(Spec{URL: url("c"), ContentType: "application/octet-stream", Path: paths[2], Needs: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "ids"), []byte(a+" "+b+" "+c), 0o600); err != nil {
		t.Fatal(err)
	}
	select {} // until the parent kills this process
}

// A process is killed (SIGKILL) after the first of two needs is done and
// while the second is half sent: the next start finishes the second in
// its own session, then the dependent, each exactly once.
func TestDependentsKilledBetweenNeeds(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	var bChunks int
	var mu sync.Mutex
	f.hook = func(kind string, _ int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind != "chunk" || s.size != 5*Q {
			return false
		}
		mu.Lock()
		bChunks++
		n := bChunks
		mu.Unlock()
		if n == 3 { // b's third chunk never answers: the kill comes first
			f.hold(r)
			return true
		}
		return false
	}
	state := t.TempDir()
	pa, _ := writeFile(t, 1000)
	pb, db := writeFile(t, 5*Q)
	pc, dc := writeFile(t, 3000)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestDependentsKillChild$")
	cmd.Env = append(os.Environ(), "CARRIER_DEPS_CHILD_STATE="+state, "CARRIER_DEPS_CHILD_URL="+f.srv.URL,
		"CARRIER_DEPS_CHILD_FILES="+strings.Join([]string{pa, pb, pc}, string(os.PathListSeparator)))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	j, err := OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var seen string
	deadline := time.Now().Add(30 * time.Second)
	for { // polling another process's files: there is no event to wait on
		if data, err := os.ReadFile(filepath.Join(state, "ids")); err == nil {
			ids = strings.Fields(string(data))
			ra, erra := j.Load(ids[0])
			rb, errb := j.Load(ids[1])
			// b half sent: the server has its third chunk (held), so it
			// confirmed two. The journal's figure may lag: progress between
			// durable saves is written when it can be (on Windows a
			// reader, this test, can refuse the rename).
			if erra == nil && errb == nil && ra.State == StateDone && rb.Confirmed >= Q && bChunksSeen(&mu, &bChunks) >= 3 {
				break
			}
			if erra == nil && errb == nil {
				seen = fmt.Sprintf("a %s, b %s with %d confirmed (%s), %d chunks of b seen", ra.State, rb.State, rb.Confirmed, rb.Error, bChunksSeen(&mu, &bChunks))
			} else {
				seen = fmt.Sprintf("a: %v, b: %v", erra, errb)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never got a done and b half sent (last seen: %s); its output:\n%s", seen, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
	a, b, c := ids[0], ids[1], ids[2]
	if rc, _ := j.Load(c); rc.State != StateWaiting {
		t.Fatalf("the dependent was %s when its process died", rc.State)
	}

	h := newHarness(t, Config{StateDir: state})
	got, err := h.q.ResumeJournal(false)
	if err != nil || len(got) != 2 {
		t.Fatalf("resumed %v (a=%s): %v", got, a, err)
	}
	if resourceSHA(t, h.mustDone(b)) != sha(db) {
		t.Fatal("the second need's bytes differ")
	}
	if resourceSHA(t, h.mustDone(c)) != sha(dc) {
		t.Fatal("the dependent's bytes differ")
	}
	if comp, _, sessions := f.stats(); comp != 3 || sessions != 3 {
		t.Errorf("%d completions in %d sessions, want 3 in 3 (b goes on in its session)", comp, sessions)
	}
}

// Jobs found running in the journal (their process died) each run once:
// taking them up never queues one twice, whatever the workers do meanwhile.
func TestRecoveredJobsRunOnce(t *testing.T) {
	f := newFake(t)
	state := t.TempDir()
	j, err := OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	h0 := newHarness(t, Config{StateDir: state})
	h0.q.Close() // a queue only to make records the way Add does
	const n = 24
	for i := range n {
		path, _ := writeFile(t, int64(1000+i))
		rec, err := h0.q.newRecord(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
		if err != nil {
			t.Fatal(err)
		}
		rec.ID = fmt.Sprintf("20300101T000000-%08x", i)
		rec.State = StateRunning // as a killed process leaves it
		if err := j.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, Config{StateDir: state, Workers: 4})
	ids, err := h.q.ResumeJournal(false)
	if err != nil || len(ids) != n {
		t.Fatalf("resumed %d: %v", len(ids), err)
	}
	for _, id := range ids {
		h.mustDone(id)
	}
	if comp, _, sessions := f.stats(); comp != n || sessions != n {
		t.Errorf("%d completions in %d sessions for %d jobs: a job ran twice", comp, sessions, n)
	}
}

func bChunksSeen(mu *sync.Mutex, n *int) int {
	mu.Lock()
	defer mu.Unlock()
	return *n
}

// ResumeJournalExcept leaves the named jobs and everything that needs them,
// directly or through another, where they stand, and takes up the rest:
// a job taken up that needs one left behind would wait for nobody.
func TestResumeJournalExceptLeavesWhatNeedsTheExcepted(t *testing.T) {
	f := newFake(t)
	newGates(f, "a", "b", "e") // their starts wait: the three stay running
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 1000)
	spec := func(name string, needs ...string) Spec {
		return Spec{URL: named(f, name), ContentType: "application/octet-stream", Path: p, Needs: needs}
	}
	a := h.add(spec("a"))
	b := h.add(spec("b"))
	c := h.add(spec("c", a))
	d := h.add(spec("d", b, c))
	e := h.add(spec("e"))
	for _, id := range []string{a, b, e} {
		h.untilState(id, StateRunning)
	}
	h.q.Close()

	h2 := newHarness(t, Config{StateDir: h.dir})
	ids, err := h2.q.ResumeJournalExcept(false, []string{a})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	want := []string{b, e}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("taken %v, want b and e %v (a, c needing a, d needing c left)", ids, want)
	}
	for _, id := range []string{a, c, d} {
		if _, held := h2.q.Job(id); held {
			t.Errorf("job %s was taken up", id)
		}
	}
	// Left where they stand, they are still the journal's to take later.
	h3 := newHarness(t, Config{StateDir: h.dir})
	ids, err = h3.q.ResumeJournal(false)
	if err != nil && len(ids) == 0 {
		t.Fatal(err)
	}
	slices.Sort(ids)
	want = []string{a, c, d}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("the next resume took %v, want %v", ids, want)
	}
	// The jobs the first resume holds are named, each (BusyJobs), and
	// nothing else went wrong.
	busy, rest := BusyJobs(err)
	slices.Sort(busy)
	want = []string{b, e}
	slices.Sort(want)
	if !slices.Equal(busy, want) || rest != nil || !errors.Is(err, ErrBusy) {
		t.Errorf("held elsewhere: %v (rest %v), want %v", busy, rest, want)
	}
}

// What needs an excepted job through others is left too, whatever order
// the journal lists them in (a dependent before what it needs here).
func TestLeftBehindFollowsNeedsThroughOthers(t *testing.T) {
	recs := []*Record{
		{ID: "top", Needs: []string{"mid"}},
		{ID: "mid", Needs: []string{"low", "other"}},
		{ID: "low"},
		{ID: "other"},
		{ID: "apart", Needs: []string{"other"}},
	}
	left := leftBehind(recs, []string{"low"})
	var got []string
	for id := range left {
		got = append(got, id)
	}
	slices.Sort(got)
	if want := []string{"low", "mid", "top"}; !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
}

// Wait gives back a job whose need failed, saying so, instead of waiting
// for ever; once the need is retried, Wait waits for the job's end again.
func TestWaitGivesBackAJobWhoseNeedFailed(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "a")
	g.fail["a"] = 1
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pc, dc := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa, Label: "Holiday.mov"})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	d := h.add(Spec{URL: named(f, "d"), ContentType: "application/octet-stream", Path: pc, Needs: []string{c}})
	for _, id := range []string{d, c} { // d needs a through c
		s, err := h.q.Wait(ctxT(t), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.State != StateWaiting || !strings.Contains(s.Blocked, "Holiday.mov") || !strings.Contains(s.Blocked, "failed") {
			t.Fatalf("Wait gave back %s, blocked %q", s.State, s.Blocked)
		}
	}
	if err := h.q.Retry(ctxT(t), a); err != nil {
		t.Fatal(err)
	}
	// a runs again, held at its start: c is on its way, not blocked.
	h.untilState(a, StateRunning)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	s, err := h.q.Wait(ctx, d)
	cancel()
	if err == nil {
		t.Fatalf("Wait gave back %s (blocked %q) while its need ran again", s.State, s.Blocked)
	}
	g.open("a")
	for _, id := range []string{c, d} {
		s, err = h.q.Wait(ctxT(t), id)
		if err != nil || s.State != StateDone || resourceSHA(t, s.Response) != sha(dc) {
			t.Fatalf("after the retry: %s, %v", s.State, err)
		}
	}
}

// A job's end looks at the jobs that need it, not at every job of the
// queue: among 2,000 finished jobs that need nothing of it, an upload and
// the one job that needs it cost a handful of steps of the dependency
// bookkeeping (depSteps), and so does forgetting them.
func TestJobEndLooksOnlyAtItsDependents(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, Config{})
	const finished = 2000
	h.q.mu.Lock()
	for i := range finished {
		h.q.putLocked(newJob(&Record{ID: fmt.Sprintf("old%04d", i), State: StateDone}, nil))
	}
	h.q.mu.Unlock()
	p, _ := writeFile(t, 1000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: p})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: p, Needs: []string{a}})
	h.mustDone(a)
	h.mustDone(c)
	for _, id := range []string{a, c} { // and let go by their workers
		if _, err := h.q.Wait(ctxT(t), id); err != nil {
			t.Fatal(err)
		}
	}
	// c was looked at when a ended, perhaps once more on a periodic look
	// at the waiting jobs; nothing else.
	if n := h.q.depSteps.Load(); n > 4 {
		t.Errorf("two jobs ending looked at %d jobs, in a queue of %d", n, finished+2)
	}
	before := h.q.depSteps.Load()
	for _, id := range []string{c, a} {
		if err := h.q.Forget(id); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.q.depSteps.Load() - before; n > 1 {
		t.Errorf("forgetting looked at %d jobs", n)
	}
}

// A Wait already waiting for a job that needs, through a waiting one, a
// job cancelled meanwhile gives the job back: the jobs that need the
// cancelled one, and those that need them, are told.
func TestWaitingWaitLearnsOfANeedCancelledThroughOthers(t *testing.T) {
	f := newFake(t)
	newGates(f, "a")
	h := newHarness(t, Config{})
	p, _ := writeFile(t, 1000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: p, Label: "Holiday.mov"})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: p, Needs: []string{a}})
	d := h.add(Spec{URL: named(f, "d"), ContentType: "application/octet-stream", Path: p, Needs: []string{c}})
	h.untilState(a, StateRunning)
	got := make(chan Snapshot, 1)
	go func() {
		s, _ := h.q.Wait(ctxT(t), d)
		got <- s
	}()
	time.Sleep(50 * time.Millisecond) // let Wait go to sleep on d
	if err := h.q.Cancel(ctxT(t), a); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s.State != StateWaiting || !strings.Contains(s.Blocked, "Holiday.mov") {
			t.Fatalf("Wait gave back %s, blocked %q", s.State, s.Blocked)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait for d did not learn that a was cancelled")
	}
}

// Adding a job and starting one do not look through the pending list: 150
// jobs queued behind one that holds the only worker cost no step there,
// where each add and each start looked through the list (11,000 steps).
func TestPendingListIsNotWalkedPerJob(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "first")
	h := newHarness(t, Config{Workers: 1})
	p, _ := writeFile(t, 100)
	first := h.add(Spec{URL: named(f, "first"), ContentType: "application/octet-stream", Path: p})
	h.untilState(first, StateRunning)
	var last string
	for i := range 150 {
		last = h.add(Spec{URL: named(f, fmt.Sprintf("j%d", i)), ContentType: "application/octet-stream", Path: p})
	}
	g.open("first")
	h.mustDone(first)
	h.mustDone(last)
	if n := h.q.pendingSteps.Load(); n > 0 {
		t.Errorf("151 jobs looked at %d jobs of the pending list", n)
	}
}
