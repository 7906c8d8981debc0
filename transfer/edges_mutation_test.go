package transfer

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Promises of the engine's edges found by mutation runs, each pinned by a
// test that fails when it breaks (docs/RELIABILITY.md, Mutation).

// A request whose connection could not be made says the server could not
// be reached; one whose connection broke later says it dropped: a person
// tells "my network or the host is down" from "it went away midway".
func TestEdgeNetErrorSaysWhetherTheServerWasReached(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	for _, c := range []struct {
		err       error
		want, not string
	}{
		{refused, "could not reach the server: ", "dropped"},
		{reset, "the connection dropped: ", "could not reach"},
		{errors.New("unexpected EOF"), "the connection dropped: ", "could not reach"},
	} {
		got := netError("send bytes 0-9", "upload.example/x", c.err).Error()
		if !strings.HasPrefix(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%v gave %q: want it to begin %q", c.err, got, c.want)
		}
	}
}

// A limit made without a clock keeps time by the system's, and a nil one
// limits nothing: both are ready to use.
func TestEdgeLimitWithoutAClockOrNil(t *testing.T) {
	l := NewLimiter(5000, nil)
	if l.Rate() != 5000 {
		t.Errorf("a limit of 5000 B/s without a clock says %d", l.Rate())
	}
	var none *Limiter
	none.SetRate(5000)
	none.refund(10)
	if g, waited, err := none.take(1<<20, nil, nil); g != 1<<20 || waited || err != nil || none.Rate() != 0 {
		t.Errorf("a nil limit granted %d of 1 MiB (waited %v, %v), rate %d", g, waited, err, none.Rate())
	}
}

// limitWait is a take of n bytes that waits in its own goroutine: it
// returns once the take has set its timer.
type limitWait struct {
	stop  chan struct{}
	ticks atomic.Int32
	done  chan limitTaken
}

type limitTaken struct {
	granted int
	waited  bool
	err     error
}

func startTake(t *testing.T, l *Limiter, clock *FakeClock, n int) *limitWait {
	t.Helper()
	w := &limitWait{stop: make(chan struct{}), done: make(chan limitTaken, 1)}
	added := clock.TimerAdded()
	go func() {
		g, waited, err := l.take(n, w.stop, func() { w.ticks.Add(1) })
		w.done <- limitTaken{g, waited, err}
	}()
	select {
	case <-added:
	case r := <-w.done:
		t.Fatalf("a take of %d bytes went at once: %+v", n, r)
	}
	return w
}

// timerIn is when the clock's one timer falls due.
func timerIn(t *testing.T, clock *FakeClock) time.Duration {
	t.Helper()
	n, next := clock.Timers()
	if n != 1 {
		t.Fatalf("%d timers wait, want the take's one", n)
	}
	return next
}

// A read waits just as long as the rate needs to release its bytes, and
// at least a millisecond and at most limitTick; it says that it waited,
// the stall watchdog's tick runs while it waits, and a wait ended leaves
// no timer and no waiting read behind.
func TestEdgeLimitWaitsWhatTheRateNeeds(t *testing.T) {
	for _, c := range []struct {
		rate   int64
		stored int // taken at once first, of the piece an idle second stored
		n      int
		want   time.Duration
	}{
		{10240, 1 << 10, 512, 50 * time.Millisecond},   // 512 B at 10 KiB/s
		{1000, 256, 256, limitTick},                    // 256 ms, cut to a tick
		{1 << 20, 64<<10 - 100, 200, time.Millisecond}, // 95 µs, made 1 ms
	} {
		l, clock := limiterAt(c.rate)
		if g, ok := takeNow(l, c.stored); !ok || g != c.stored {
			t.Fatalf("%d B/s: the stored %d bytes did not go at once (%d)", c.rate, c.stored, g)
		}
		w := startTake(t, l, clock, c.n)
		if got := timerIn(t, clock); got != c.want {
			t.Errorf("%d B/s: %d bytes owed wait %s, want %s", c.rate, c.n, got, c.want)
		}
		l.mu.Lock()
		waiting := l.waiting
		l.mu.Unlock()
		if waiting != 1 {
			t.Errorf("%d B/s: %d reads said waiting, want 1", c.rate, waiting)
		}
		clock.Advance(time.Second)
		r := <-w.done
		if r.granted != c.n || !r.waited || r.err != nil || w.ticks.Load() == 0 {
			t.Errorf("%d B/s: a take of %d bytes gave %+v after %d ticks; want them all, waited", c.rate, c.n, r, w.ticks.Load())
		}
		l.mu.Lock()
		waiting = l.waiting
		l.mu.Unlock()
		if n, _ := clock.Timers(); n != 0 || waiting != 0 {
			t.Errorf("%d B/s: after the take %d timers and %d waiting reads are left", c.rate, n, waiting)
		}
	}
}

// A read stopped while it waits gives its bytes back and leaves no timer.
func TestEdgeLimitStoppedWaitLeavesNothing(t *testing.T) {
	l, clock := limiterAt(10240)
	takeNow(l, 1<<10)
	w := startTake(t, l, clock, 512)
	close(w.stop)
	if r := <-w.done; r.granted != 0 || !errors.Is(r.err, errBodyClosed) {
		t.Errorf("a stopped take gave %+v", r)
	}
	if n, _ := clock.Timers(); n != 0 {
		t.Errorf("a stopped take left %d timers", n)
	}
}

// A change of rate reaches a read that waits at once: the time before it
// pays at the old rate, what is still owed at the new one, and no limit
// lets the read go.
func TestEdgeLimitChangeReachesAWaitingRead(t *testing.T) {
	l, clock := limiterAt(10240)
	takeNow(l, 1<<10)
	w := startTake(t, l, clock, 512) // 50 ms at 10 KiB/s
	clock.Advance(25 * time.Millisecond)
	added := clock.TimerAdded()
	l.SetRate(20480) // 256 bytes paid at 10 KiB/s; 256 owed at 20 KiB/s
	select {
	case <-added:
	case r := <-w.done:
		t.Fatalf("a raise of the rate let a read go with 256 of its bytes unpaid: %+v", r)
	case <-time.After(10 * time.Second):
		t.Fatal("a change of rate did not reach the waiting read")
	}
	if got := timerIn(t, clock); got != 12500*time.Microsecond {
		t.Errorf("256 bytes owed at 20 KiB/s wait %s, want 12.5ms", got)
	}
	l.SetRate(0)
	if r := <-w.done; r.granted != 512 || !r.waited || r.err != nil {
		t.Errorf("a read the limit was lifted for gave %+v", r)
	}
	if n, _ := clock.Timers(); n != 0 {
		t.Errorf("%d timers left after the read went", n)
	}
}

// depsQueue is a queue's bookkeeping of who needs whom, with no workers:
// the jobs given are this queue's, the journal a new one.
func depsQueue(t *testing.T) *Queue {
	t.Helper()
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Queue{journal: j, jobs: map[string]*job{}, ended: map[string]*endedJob{},
		needers: map[string][]*job{}, waiting: map[*job]struct{}{}, scheduled: map[*job]struct{}{}}
}

// A waiting job says why it cannot go on by itself, by the first need
// that stops it, named by its label (its id when it has none): one that
// failed, was cancelled, waits for a sign-in, lost its file, or is in no
// journal. A need under way here, or under way in another process (in
// the journal only), stops nothing; one done there is done.
func TestEdgeWaitingJobNamesWhatStopsIt(t *testing.T) {
	q := depsQueue(t)
	path, _ := writeFile(t, 10)
	for id, st := range map[string]State{"20300101T000000-0000000a": StateRunning, "20300101T000000-0000000b": StateDone} {
		r := uploadRecord(t, "https://upload.example/x", path, ChunkQuantum)
		r.Version, r.ID, r.State, r.Created, r.Updated = recordVersion, id, st, time.Now(), time.Now()
		if st == StateDone {
			r.Response = &Response{Status: 200}
			r.Confirmed = r.Size
		}
		if err := q.journal.Save(&r); err != nil {
			t.Fatal(err)
		}
	}
	for id, st := range map[string]State{"failed": StateFailed, "signin": StateSignIn, "missing": StateMissing, "running": StateRunning, "nolabel": StateFailed} {
		label := "the " + id
		if id == "nolabel" {
			label = ""
		}
		q.jobs[id] = newJob(&Record{ID: id, State: st, Label: label}, nil)
	}
	for id, st := range map[string]State{"cancelled": StateCancelled, "done": StateDone} {
		e, ok := compactOf(&Record{Version: recordVersion, ID: id, Method: "POST", Type: Media, State: st, Label: "the " + id}, false)
		if !ok {
			t.Fatalf("no ended job of %s", id)
		}
		q.ended[id] = e
	}
	for _, c := range []struct {
		needs   []string
		met     bool
		blocked string
	}{
		{[]string{"done", "20300101T000000-0000000b"}, true, ""},
		{[]string{"done", "running"}, false, ""},
		{[]string{"20300101T000000-0000000a"}, false, ""},
		{[]string{"failed"}, false, `it needs "the failed", which failed`},
		{[]string{"cancelled"}, false, `it needs "the cancelled", which was cancelled`},
		{[]string{"signin"}, false, `it needs "the signin", which waits for a sign-in`},
		{[]string{"missing"}, false, `it needs "the missing", whose file is no longer where it was`},
		{[]string{"20300101T000000-0000000c"}, false, "it needs job 20300101T000000-0000000c, which is no longer in the journal"},
		{[]string{"nolabel"}, false, `it needs "nolabel", which failed`},
		{[]string{"running", "failed", "cancelled"}, false, `it needs "the failed", which failed`},
		{[]string{"cancelled", "failed"}, false, `it needs "the cancelled", which was cancelled`},
		{[]string{"signin", "failed"}, false, `it needs "the signin", which waits for a sign-in`},
		{[]string{"missing", "failed"}, false, `it needs "the missing", whose file is no longer where it was`},
		{[]string{"20300101T000000-0000000c", "failed"}, false, "it needs job 20300101T000000-0000000c, which is no longer in the journal"},
	} {
		jb := newJob(&Record{ID: "waiter", State: StateWaiting, Needs: c.needs}, nil)
		if met, blocked := q.needsMet(jb); met != c.met || blocked != c.blocked {
			t.Errorf("needing %v: met %v, blocked %q; want %v, %q", c.needs, met, blocked, c.met, c.blocked)
		}
	}
}

// The queue's index of who waits for whom follows its jobs in and out: a
// waiting job is among the waiting, a scheduled one among the scheduled,
// each listed under every job it needs; a job that leaves is in none, and
// a need nobody still waits for is no longer kept.
func TestEdgeDependencyIndexFollowsTheJobs(t *testing.T) {
	q := depsQueue(t)
	w1 := newJob(&Record{ID: "w1", State: StateWaiting, Needs: []string{"a", "b"}}, nil)
	w2 := newJob(&Record{ID: "w2", State: StateWaiting, Needs: []string{"a"}}, nil)
	s := newJob(&Record{ID: "s", State: StateScheduled}, nil)
	r := newJob(&Record{ID: "r", State: StateQueued, Needs: []string{"b"}}, nil)
	for _, jb := range []*job{w1, w2, s, r} {
		q.putLocked(jb)
	}
	check := func(when string, jobs []*job, waiting, scheduled []*job, needers map[string][]*job) {
		t.Helper()
		var ids []string
		for id := range q.jobs {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		var want []string
		for _, jb := range jobs {
			want = append(want, jb.id)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: the jobs are %v, want %v", when, ids, want)
		}
		for name, c := range map[string]struct {
			got  map[*job]struct{}
			want []*job
		}{"waiting": {q.waiting, waiting}, "scheduled": {q.scheduled, scheduled}} {
			if len(c.got) != len(c.want) {
				t.Errorf("%s: %d %s, want %d", when, len(c.got), name, len(c.want))
			}
			for _, jb := range c.want {
				if _, ok := c.got[jb]; !ok {
					t.Errorf("%s: %s is not among the %s", when, jb.id, name)
				}
			}
		}
		if len(q.needers) != len(needers) {
			t.Errorf("%s: needers of %d jobs kept, want %d", when, len(q.needers), len(needers))
		}
		for id, want := range needers {
			if got := q.needers[id]; !slices.Equal(got, want) {
				t.Errorf("%s: %d jobs need %s, want %d", when, len(got), id, len(want))
			}
		}
	}
	check("all in", []*job{r, s, w1, w2}, []*job{w1, w2}, []*job{s}, map[string][]*job{"a": {w1, w2}, "b": {w1, r}})
	q.dropLocked(w1)
	check("w1 out", []*job{r, s, w2}, []*job{w2}, []*job{s}, map[string][]*job{"a": {w2}, "b": {r}})
	q.dropLocked(s)
	q.dropLocked(r)
	check("w2 left", []*job{w2}, []*job{w2}, nil, map[string][]*job{"a": {w2}})
	q.dropLocked(w2)
	check("none", nil, nil, nil, nil)
}

// A Wait for a waiting job learns what stops it through the jobs it
// waits for that wait in their turn: a need that failed two steps away
// stops it too; needs done, or ended here, stop nothing.
func TestEdgeWaitingJobStuckThroughOthers(t *testing.T) {
	q := depsQueue(t)
	e, ok := compactOf(&Record{Version: recordVersion, ID: "done", Method: "POST", Type: Media, State: StateDone}, false)
	if !ok {
		t.Fatal("no ended job")
	}
	q.ended["done"] = e
	for _, r := range []Record{
		{ID: "failed", State: StateFailed, Label: "Holiday.mov"},
		{ID: "running", State: StateRunning},
		{ID: "mid", State: StateWaiting, Needs: []string{"failed"}},
		{ID: "free", State: StateWaiting, Needs: []string{"running"}},
		{ID: "top", State: StateWaiting, Needs: []string{"done", "free", "mid"}},
		{ID: "topfree", State: StateWaiting, Needs: []string{"done", "free"}},
	} {
		q.putLocked(newJob(&r, nil))
	}
	want := `it needs "Holiday.mov", which failed`
	if got := q.stuckLocked(q.jobs["top"], map[string]bool{}); got != want {
		t.Errorf("a job that needs one whose need failed is stuck for %q, want %q", got, want)
	}
	if got := q.stuckLocked(q.jobs["topfree"], map[string]bool{}); got != "" {
		t.Errorf("a job whose needs are done or under way is stuck for %q", got)
	}
}

// A need's failure reaches every job that waits on it, directly or
// through others, looking once at each however they are joined: two
// jobs that wait on one and are both needed by a third cost one look at
// the third, not two.
func TestEdgeNeedsFailureLooksOnceAtEachWaiter(t *testing.T) {
	q := depsQueue(t)
	for _, r := range []Record{
		{ID: "x", State: StateFailed, Label: "Holiday.mov"},
		{ID: "a", State: StateWaiting, Needs: []string{"x"}},
		{ID: "b1", State: StateWaiting, Needs: []string{"a"}},
		{ID: "b2", State: StateWaiting, Needs: []string{"a"}},
		{ID: "c", State: StateWaiting, Needs: []string{"b1", "b2"}},
	} {
		q.putLocked(newJob(&r, nil))
	}
	waits := map[string]chan struct{}{}
	for _, id := range []string{"a", "b1", "b2", "c"} {
		waits[id] = make(chan struct{})
		q.jobs[id].changed = waits[id]
	}
	q.recheckWaiting("x")
	if got := q.jobs["a"].blocked; got != `it needs "Holiday.mov", which failed` {
		t.Errorf("the job that needs the failed one says %q", got)
	}
	for id, ch := range waits {
		select {
		case <-ch:
		default:
			t.Errorf("a Wait for %s was not woken", id)
		}
	}
	// One look at a, the need's waiter; then one at each job reached.
	if n := q.depSteps.Load(); n != 5 {
		t.Errorf("the failure cost %d looks at 4 waiting jobs, want 5", n)
	}
}

// Jobs that need each other (a journal can hold them: a record is
// refused only when it needs itself) wait for ever, and a Wait for one
// of them says nothing stops it, once, rather than looking round the
// ring without end.
func TestEdgeWaitOnJobsThatNeedEachOtherEnds(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20)) // a look without end fails at once
	q := depsQueue(t)
	for _, r := range []Record{
		{ID: "a", State: StateWaiting, Needs: []string{"b"}},
		{ID: "b", State: StateWaiting, Needs: []string{"c"}},
		{ID: "c", State: StateWaiting, Needs: []string{"a"}},
	} {
		q.putLocked(newJob(&r, nil))
	}
	if got := q.stuckLocked(q.jobs["a"], map[string]bool{}); got != "" {
		t.Errorf("a ring of waiting jobs is stuck for %q", got)
	}
}

// The write rate reaches back over exactly its window: a sample 5 s old
// still counts.
func TestEdgeWriteRateWindowIsInclusive(t *testing.T) {
	var m rateMeter
	m.add(0, 0)
	m.add(time.Second, 1000)
	if got := m.add(rateWindow, 9000); got != 1800 {
		t.Errorf("rate %v, want 1800 (9000 B over the 5 s since the first sample)", got)
	}
}

// The server's confirmations: an offset that did not move keeps the
// samples (no progress is not a reset), one that went back starts them
// afresh; samples older than the window go, but the last two stay, and
// one exactly the window old stays. The pace counts the time since the
// last confirmation, never below 0.
func TestEdgeConfirmationsKeptForThePace(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name string
		adds []rateSample
		want confirmEstimate
	}{
		{"unmoved", []rateSample{{0, 0}, {s, 100}, {2 * s, 100}}, confirmEstimate{bytes: 100, span: 2 * s, count: 2, at: 2 * s, left: 900}},
		{"went back", []rateSample{{0, 0}, {s, 100}, {2 * s, 50}}, confirmEstimate{at: 2 * s, left: 950}},
		{"window", []rateSample{{0, 0}, {10 * s, 100}, {confirmWindow, 200}}, confirmEstimate{bytes: 200, span: confirmWindow, count: 2, at: confirmWindow, left: 800}},
		{"old", []rateSample{{0, 0}, {s, 100}, {60 * s, 1000}}, confirmEstimate{bytes: 900, span: 59 * s, count: 1, at: 60 * s}},
	} {
		var m confirmMeter
		for _, a := range c.adds {
			m.add(a.at, a.bytes)
		}
		if got := m.estimate(1000); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	e := confirmEstimate{bytes: 100, span: s, count: 1, at: 10 * s, left: 900}
	if p := e.pace(12 * s); p != (Pace{Bytes: 100, Span: s, Gaps: 1, Since: 2 * s, Left: 900}) {
		t.Errorf("pace 2 s after the last confirmation: %+v", p)
	}
	if p := e.pace(9 * s); p.Since != 0 {
		t.Errorf("pace read before the last confirmation's time: since %s", p.Since)
	}
}

// A confirmation is overdue only after twice the usual gap and a second
// more: until then the rate is the pace's, after it falls. A pace with no
// gaps is never overdue, and one with nothing left has no ETA.
func TestEdgePaceOverdueAfterTwiceItsGapAndASecond(t *testing.T) {
	p := Pace{Bytes: 3000, Span: 3 * time.Second, Gaps: 3, Left: 3000} // gaps of 1 s
	if r := p.Rate(3 * time.Second); r != 1000 {
		t.Errorf("3 s after a confirmation (twice the gap and a second): rate %v, want 1000", r)
	}
	if r := p.Rate(3*time.Second + time.Millisecond); r >= 1000 {
		t.Errorf("just over 3 s after a confirmation: rate %v, want it falling", r)
	}
	if r := (Pace{Bytes: 1000, Span: time.Second, Left: 5000}).Rate(time.Hour); r != 1000 {
		t.Errorf("a pace with no gaps: rate %v an hour on, want 1000", r)
	}
	if e := (Pace{Bytes: 1000, Span: time.Second, Gaps: 1}).ETA(0); e != 0 {
		t.Errorf("nothing left: ETA %s", e)
	}
}

// The queue's periodic look at all its waiting jobs learns of a need
// another process holds failing there: the job waiting on it says so.
func TestEdgePeriodicLookLearnsOfANeedFailedElsewhere(t *testing.T) {
	q := depsQueue(t)
	path, _ := writeFile(t, 10)
	r := uploadRecord(t, "https://upload.example/x", path, ChunkQuantum)
	r.Version, r.ID, r.State, r.Label, r.Created, r.Updated = recordVersion, "20300101T000000-0000000f", StateFailed, "Other.mov", time.Now(), time.Now()
	r.Error = "refused"
	if err := q.journal.Save(&r); err != nil {
		t.Fatal(err)
	}
	w := newJob(&Record{ID: "w", State: StateWaiting, Needs: []string{r.ID}}, nil)
	q.putLocked(w)
	q.recheckWaiting("")
	if want := `it needs "Other.mov", which failed`; w.blocked != want {
		t.Errorf("the waiting job says %q, want %q", w.blocked, want)
	}
}

// A call that quotes results takes a body of up to 4 MiB, that size
// included; each place gets its job's result as a JSON string, or the
// named field of it, trimmed; a result without the field, or empty, is
// refused.
func TestEdgeFillQuotesEachResult(t *testing.T) {
	fill := func(tmpl []byte, quote []string, results ...string) ([]byte, error) {
		up := &upload{rec: &Record{Size: int64(len(tmpl)), Quote: quote}}
		for _, r := range results {
			up.quoted = append(up.quoted, []byte(r))
		}
		return up.fill(bytes.NewReader(tmpl))
	}
	big := bytes.Repeat([]byte(" "), maxQuoteTemplate)
	if got, err := fill(big, nil); err != nil || len(got) != maxQuoteTemplate {
		t.Errorf("a body of 4 MiB: %d bytes, %v", len(got), err)
	}
	if _, err := fill(append(big, ' '), nil); err == nil {
		t.Error("a body over 4 MiB was taken")
	}
	got, err := fill([]byte("{\"a\":\x00,\"b\":\x00}"), []string{"j1", "j2.id"}, " tok\n", ` {"id": "x\"1", "n": 2} `)
	if want := `{"a":"tok","b":"x\"1"}`; err != nil || string(got) != want {
		t.Errorf("filled %q (%v), want %q", got, err, want)
	}
	for _, c := range []struct {
		quote  string
		result string
		says   string
	}{
		{"j1.id", `{"name": "x"}`, `has no string "id"`},
		{"j1.id", `{"id": 7}`, `has no string "id"`},
		{"j1.id", `not json`, `has no string "id"`},
		{"j1", "  ", "has none"},
		{"j1.id", "  ", "has none"},
		{"j1.id", `{"id": ""}`, "has none"},
	} {
		if _, err := fill([]byte("[\x00]"), []string{c.quote}, c.result); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("quoting %s of %q: %v, want it to say %q", c.quote, c.result, err, c.says)
		}
	}
}

// A failed request's words never carry its URL as Go's transport gives
// it (a session's path can hold its id): only the place the engine
// names, a target by scheme, host and path, a session by its host.
func TestEdgeNetErrorNamesOnlyWhereItWent(t *testing.T) {
	session := "https://upload.example/sessions/ID-7f3a?upload_id=SECRET"
	err := netError("send bytes 0-9", sessionWhere(session), &url.Error{Op: "Put", URL: session, Err: io.ErrUnexpectedEOF})
	var ne *NetError
	if !errors.As(err, &ne) || ne.Err != io.ErrUnexpectedEOF {
		t.Fatalf("the cause kept is %#v, want the transport's own", ne)
	}
	if got := err.Error(); strings.Contains(got, "ID-7f3a") || strings.Contains(got, "SECRET") || !strings.Contains(got, "the upload session at upload.example") {
		t.Errorf("the words are %q", got)
	}
	for _, c := range []struct{ got, want string }{
		{targetWhere("https://upload.example/upload/drive/v3/files?uploadType=resumable&key=K"), "https://upload.example/upload/drive/v3/files"},
		{targetWhere("https://upload.example/%zz"), "the upload URI"},
		{sessionWhere("https://upload.example/%zz"), "the upload session"},
	} {
		if c.got != c.want {
			t.Errorf("named %q, want %q", c.got, c.want)
		}
	}
}

// Whether a job is still needed (Forget refuses one that is) is asked of
// the jobs that need it alone, and each look is counted in the queue's
// bookkeeping steps: one unfinished needer, one step.
func TestEdgeNeededAsksOnlyItsNeeders(t *testing.T) {
	q := depsQueue(t)
	q.putLocked(newJob(&Record{ID: "w", State: StateWaiting, Needs: []string{"a"}}, nil))
	q.putLocked(newJob(&Record{ID: "other", State: StateQueued}, nil))
	if !q.neededLocked("a") || q.neededLocked("b") {
		t.Error("a job a waiting one needs is not needed, or one nobody needs is")
	}
	if n := q.depSteps.Load(); n != 1 {
		t.Errorf("the two questions took %d steps, want 1 (the one job that needs a)", n)
	}
}
