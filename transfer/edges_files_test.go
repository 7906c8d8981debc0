package transfer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The promises of knock.go, usefile.go and answer.go, each pinned by a
// test that fails when it breaks (docs/RELIABILITY.md, Mutation).

// dialTCP is a loopback connection to ln, the dialer's end.
func dialTCP(t *testing.T, ln net.Listener) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

func listenTCP(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// A connection built without an orphanage (a nil one) is reset without
// keeping anything, and a nil orphanage takes nothing and knocks nowhere.
func TestEdgeNilOrphanageKeepsNothing(t *testing.T) {
	ln := listenTCP(t)
	ec := &engineConn{bulkConn: bulkConn{dialTCP(t, ln)}, probe: stillPath{pathState{pending: true}}}
	if err := ec.reset(); err != nil {
		t.Fatal(err)
	}
	var o *orphanage
	o.add(dialTCP(t, ln))
	if got := o.take(ln.Addr()); got != nil {
		t.Fatalf("a nil orphanage took %v", got)
	}
	o.knock(ln.Addr())
}

// Each connection reset to a server is one orphan: two connections to the
// same server are two, the same connection kept twice is one.
func TestEdgeOrphanOncePerConnection(t *testing.T) {
	ln := listenTCP(t)
	o := &orphanage{}
	a, b := dialTCP(t, ln), dialTCP(t, ln)
	o.add(a)
	o.add(a)
	o.add(b)
	got := o.take(ln.Addr())
	if len(got) != 2 || got[0].local.String() != a.LocalAddr().String() || got[1].local.String() != b.LocalAddr().String() {
		t.Fatalf("took %v, want one orphan from %v and one from %v", got, a.LocalAddr(), b.LocalAddr())
	}
}

// The list holds at most maxOrphans: the oldest goes for a new one. A
// take frees the room of the orphans it took, and keeps no reference to
// them past the list's end.
func TestEdgeOrphansBoundedAndTakingFreesRoom(t *testing.T) {
	ln := listenTCP(t)
	other := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	fill := func(o *orphanage, n int) {
		for i := range n {
			o.list = append(o.list, orphan{local: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000 + i}, remote: other, at: time.Now()})
		}
	}

	full := &orphanage{}
	fill(full, maxOrphans)
	c := dialTCP(t, ln)
	full.add(c)
	if len(full.list) != maxOrphans || full.list[0].local.Port != 40001 || full.list[maxOrphans-1].local.String() != c.LocalAddr().String() {
		t.Fatalf("a full list given one more holds %d, first from %v: want %d, the oldest gone, the new one last", len(full.list), full.list[0].local, maxOrphans)
	}

	o := &orphanage{}
	fill(o, maxOrphans-1)
	mine := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2}
	o.list = append(o.list, orphan{local: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 39999}, remote: mine, at: time.Now()})
	if got := o.take(mine); len(got) != 1 {
		t.Fatalf("took %v for %v", got, mine)
	}
	for i, x := range o.list[len(o.list):cap(o.list)] {
		if x.local != nil || x.remote != nil {
			t.Fatalf("the list keeps %v past its end (%d)", x, len(o.list)+i)
		}
	}
	o.add(dialTCP(t, ln))
	if got := o.take(other); len(got) != maxOrphans-1 {
		t.Fatalf("after a take and an add, %d orphans of the other server are left, want %d", len(got), maxOrphans-1)
	}
}

// A knock that connects (the server's end was gone, its listener answers)
// closes its connection at once: the server reads its end.
func TestEdgeKnockClosesWhatItOpens(t *testing.T) {
	ln := listenTCP(t)
	o := &orphanage{list: []orphan{{local: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, remote: ln.Addr().(*net.TCPAddr), at: time.Now()}}}
	o.knock(ln.Addr())
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Minute)) // bounds a hang only
	n, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); n != 0 || err == nil || ok && ne.Timeout() {
		t.Fatalf("the knock's connection: read %d, %v; want it closed", n, err)
	}
}

// UseFile accepts only a job that stopped for good because its file
// changed, a file of the person's with a path: not another state, not
// another failure, not Carrier's own file (a call, a spool file with its
// sum), not a record without a path.
func TestEdgeChangedFileIsTheOnlyOneToAccept(t *testing.T) {
	changed := func() Record {
		return Record{State: StateFailed, Type: Resumable, Path: "/a/file", Failure: &Failure{Code: FailSourceChanged}}
	}
	if r := changed(); changedFile(&r) != nil {
		t.Fatalf("a job stopped for its changed file refused: %v", changedFile(&r))
	}
	for name, edit := range map[string]func(*Record){
		"done":            func(r *Record) { r.State = StateDone },
		"paused":          func(r *Record) { r.State = StatePaused },
		"no failure":      func(r *Record) { r.Failure = nil },
		"another failure": func(r *Record) { r.Failure.Code = FailRefused },
		"a call":          func(r *Record) { r.Type = Call },
		"a spool file":    func(r *Record) { r.SHA256 = "ab" },
		"no path":         func(r *Record) { r.Path = "" },
	} {
		r := changed()
		edit(&r)
		if err := changedFile(&r); !errors.Is(err, ErrNotChanged) {
			t.Errorf("%s: %v, want ErrNotChanged", name, err)
		}
	}
}

// doneWithAnswer runs one job to done against a server answering body,
// and a second one to failed (400): their ids.
func doneWithAnswer(t *testing.T, h *harness, body string) (done, failed string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/refused" {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	done = h.add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
	h.mustDone(done)
	failed = h.add(Spec{URL: srv.URL + "/refused", Type: Media, ContentType: "image/png", Path: src})
	if e := h.finish(failed); e.Kind != EventFailed {
		t.Fatalf("job %s: %s, want it failed", failed, e)
	}
	return done, failed
}

// jobOf is the queue's job id.
func jobOf(t *testing.T, q *Queue, id string) *job {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	jb, err := q.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return jb
}

// assertUnlocked fails when DropAnswer left the job's lock held.
func assertUnlocked(t *testing.T, jb *job, after string) {
	t.Helper()
	if !jb.mu.TryLock() {
		t.Fatalf("%s, the job's lock is held", after)
	}
	jb.mu.Unlock()
}

// A job not done is refused as unfinished and keeps nothing locked; a
// second drop changes nothing and keeps nothing locked either. Answer of a
// job without one says so.
func TestEdgeDropAnswerRefusesAnUnfinishedJob(t *testing.T) {
	h := newHarness(t, Config{})
	done, failed := doneWithAnswer(t, h, `{"id":"kept"}`)
	if err := h.q.DropAnswer(failed); !errors.Is(err, ErrUnfinished) {
		t.Fatalf("a failed job's drop: %v, want ErrUnfinished", err)
	}
	assertUnlocked(t, jobOf(t, h.q, failed), "after a refused drop")
	if r, err := h.q.Answer(failed); err == nil {
		t.Fatalf("Answer of a failed job: %+v", r)
	}
	for i := range 2 {
		if err := h.q.DropAnswer(done); err != nil {
			t.Fatal(err)
		}
		assertUnlocked(t, jobOf(t, h.q, done), fmt.Sprintf("after drop %d", i+1))
	}
	if s, _ := h.q.Job(done); s.Response == nil || s.Response.Body != nil || !s.AnswerInJournal {
		t.Fatalf("after two drops: %+v, in the journal: %v", s.Response, s.AnswerInJournal)
	}
}

// A done job whose done record this queue did not see written (taken up
// from the journal, or its write failed) lets its body go when the
// journal's record holds the same answer, and keeps it when the journal
// holds another.
func TestEdgeDropAnswerTrustsTheJournalsCopyOnlyWhenItIsTheSame(t *testing.T) {
	for _, same := range []bool{true, false} {
		h := newHarness(t, Config{})
		id, _ := doneWithAnswer(t, h, `{"id":"kept"}`)
		jb := jobOf(t, h.q, id)
		jb.mu.Lock()
		jb.doneSaved = false
		jb.mu.Unlock()
		if !same {
			r, err := h.q.journal.Load(id)
			if err != nil {
				t.Fatal(err)
			}
			r.Response.Body = []byte(`{"id":"another"}`)
			if err := h.q.journal.Save(r); err != nil {
				t.Fatal(err)
			}
		}
		err := h.q.DropAnswer(id)
		s, _ := h.q.Job(id)
		switch {
		case same && (err != nil || s.Response.Body != nil || !s.AnswerInJournal):
			t.Fatalf("the journal holds the same answer: %v, body %q, in the journal %v; want it dropped", err, s.Response.Body, s.AnswerInJournal)
		case !same && (err == nil || !bytes.Equal(s.Response.Body, []byte(`{"id":"kept"}`)) || s.AnswerInJournal):
			t.Fatalf("the journal holds another answer: %v, body %q, in the journal %v; want it kept", err, s.Response.Body, s.AnswerInJournal)
		}
	}
}
