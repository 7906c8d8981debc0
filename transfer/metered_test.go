package transfer

import (
	"errors"
	"testing"
)

func meteredSpec(f *fakeServer, path string) Spec {
	return Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: ChunkQuantum}
}

// On a metered connection a large job waits in the queue, saying so, and
// takes no worker: a small one behind it goes (one worker only). Send
// anyway lets the large one go, and the journal keeps that word.
func TestMeteredHoldsLargeJobs(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	h := newHarness(t, Config{Workers: 1, Metered: MeteredPolicy{Pause: true, Over: 2 * Q}})
	h.q.SetMetered(true)
	bigPath, bigData := writeFile(t, 4*Q)
	smallPath, _ := writeFile(t, Q)
	big := h.add(meteredSpec(f, bigPath))
	small := h.add(meteredSpec(f, smallPath))
	e := h.await(func(e Event) bool { return e.Job == big && e.Kind == EventQueued })
	if e.Snap.Held != HeldMetered {
		t.Fatalf("the large job's row says Held %q, want %q", e.Snap.Held, HeldMetered)
	}
	h.mustDone(small)
	if n := f.count("start"); n != 1 {
		t.Fatalf("%d sessions started: the large job went on a metered connection", n)
	}
	if s, _ := h.q.Job(big); s.Held != HeldMetered || s.State != StateQueued {
		t.Fatalf("the large job: %s, held %q", s.State, s.Held)
	}
	if err := h.q.SendAnyway(big); err != nil {
		t.Fatal(err)
	}
	if rec, _ := h.q.journal.Load(big); !rec.SendAnyway {
		t.Errorf("the journal does not keep send-anyway")
	}
	if resourceSHA(t, h.mustDone(big)) != sha(bigData) {
		t.Fatal("bytes differ")
	}
	if err := h.q.SendAnyway("nope"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("SendAnyway of an unknown job: %v", err)
	}
}

// A job running when the connection turns metered stops at once without
// burning a retry (it is allowed none): its request is abandoned, its
// place is durable, and when the connection is no longer metered it goes
// on in the same session.
func TestMeteredStopsRunningJobAndReleases(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	held := stopAfterChunk(f, 2)
	h := newHarness(t, Config{MaxRetries: -1, Metered: MeteredPolicy{Pause: true, Over: Q}})
	path, data := writeFile(t, 4*Q)
	id := h.add(meteredSpec(f, path))
	waitChan(t, held)
	h.q.SetMetered(true)
	e := h.await(func(e Event) bool { return e.Job == id && e.Kind == EventQueued && e.Snap.Held == HeldMetered })
	if e.Snap.Confirmed < Q {
		t.Errorf("the held row shows %d bytes; the server holds %d", e.Snap.Confirmed, Q)
	}
	if rec, _ := h.q.journal.Load(id); rec.State != StateQueued || rec.Confirmed < Q {
		t.Errorf("the journal holds %s at %d", rec.State, rec.Confirmed)
	}
	f.hook = nil
	h.q.SetMetered(false)
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if _, _, sessions := f.stats(); sessions != 1 {
		t.Errorf("%d sessions: a metered hold keeps the session", sessions)
	}
	for _, e := range h.seen {
		if e.Kind == EventFailed {
			t.Errorf("failed: %s", e)
		}
	}
}

// The person's policy is live: turning the pause off releases held jobs.
func TestMeteredPolicyLive(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, Config{Metered: MeteredPolicy{Pause: true, Over: 1000}})
	h.q.SetMetered(true)
	path, _ := writeFile(t, 5000)
	id := h.add(meteredSpec(f, path))
	h.await(func(e Event) bool { return e.Job == id && e.Snap.Held == HeldMetered })
	h.q.SetMeteredPolicy(MeteredPolicy{Pause: false})
	h.mustDone(id)
}

// Send anyway survives a restart: the next process does not hold the job
// back on a metered connection.
func TestSendAnywayKeptAcrossRestart(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	held := stopAfterChunk(f, 2)
	state := t.TempDir()
	pol := MeteredPolicy{Pause: true, Over: Q}
	path, data := writeFile(t, 4*Q)
	h1 := newHarness(t, Config{StateDir: state, Metered: pol})
	id := h1.add(meteredSpec(f, path))
	if err := h1.q.SendAnyway(id); err != nil {
		t.Fatal(err)
	}
	waitChan(t, held)
	h1.q.Close()
	f.hook = nil
	h2 := newHarness(t, Config{StateDir: state, Metered: pol})
	h2.q.SetMetered(true)
	if _, err := h2.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, h2.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
}
