package transfer

// Held last bytes (Spec.SendAt) against the sandbox's Gmail: the message
// exists only once they go, Cancel deletes the session (499), and the hold
// outlives the queue. The queue runs on a fake clock: nothing here waits
// for real time to pass, only for conditions.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"carrier/sandbox"
)

// mailSandbox is the sandbox with a record of the status each DELETE of
// an upload session was answered with.
type mailSandbox struct {
	srv     *httptest.Server
	mu      sync.Mutex
	deletes []int
}

func newMailSandbox(t *testing.T) *mailSandbox {
	t.Helper()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: sbToken})
	if err != nil {
		t.Fatal(err)
	}
	m := &mailSandbox{}
	h := sb.Handler()
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			h.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: 200}
		h.ServeHTTP(sw, r)
		m.mu.Lock()
		m.deletes = append(m.deletes, sw.status)
		m.mu.Unlock()
	}))
	t.Cleanup(m.srv.Close)
	t.Cleanup(func() { sb.Close() })
	return m
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (m *mailSandbox) sendURL() string {
	return m.srv.URL + "/upload/gmail/v1/users/me/messages/send"
}

func (m *mailSandbox) deleted() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.deletes...)
}

// messages counts the messages the mailbox holds.
func (m *mailSandbox) messages(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequest("GET", m.srv.URL+"/gmail/v1/users/me/messages", nil)
	req.Header.Set("Authorization", "Bearer "+sbToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&v) != nil {
		t.Fatalf("listing the messages: %d", resp.StatusCode)
	}
	return len(v.Messages)
}

// mailFile writes a message of about size bytes.
func mailFile(t *testing.T, size int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("From: me@example.com\r\nTo: bob@example.com\r\nSubject: held back\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
	for b.Len() < size {
		b.WriteString("Every byte but the last goes ahead of time; the message exists when they come.\r\n")
	}
	p := filepath.Join(t.TempDir(), "message.eml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var scheduleStart = time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)

func scheduledQueue(t *testing.T, dir string, clock *FakeClock) *harness {
	return newHarness(t, Config{StateDir: dir, Auth: StaticToken(sbToken), Clock: clock, WakeCheck: time.Second, ChunkSize: ChunkQuantum, StallTimeout: time.Hour, MinSpeed: MinSpeed{Rate: -1}})
}

// until waits for the job to stand where ok says, failing after a deadline.
func (h *harness) until(id string, ok func(Snapshot) bool) Snapshot {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, _ := h.q.Job(id)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) || !s.State.Unfinished() {
			h.t.Fatalf("job %s stands %s (%d of %d confirmed; %s), not where the test waits for it", id, s.State, s.Confirmed, s.Size, s.Error)
		}
		select {
		case e := <-h.events:
			h.mu.Lock()
			h.seen = append(h.seen, e)
			h.mu.Unlock()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tick moves the fake clock by d once the queue's clock tick waits on it
// (the only timer of a queue whose jobs are all scheduled), so the tick
// that falls due is not missed.
func tick(t *testing.T, clock *FakeClock, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		added := clock.TimerAdded()
		if n, _ := clock.Timers(); n > 0 {
			break
		}
		select {
		case <-added:
		case <-time.After(time.Until(deadline)):
			t.Fatal("the queue's clock tick never waited on the clock")
		}
	}
	clock.Advance(d)
}

func isState(st State) func(Snapshot) bool { return func(s Snapshot) bool { return s.State == st } }

// A large message sends every byte but its last quantum, then waits: no
// message until the time, exactly one after it.
func TestScheduledMessageSendsItsLastBytesAtItsTime(t *testing.T) {
	m := newMailSandbox(t)
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, t.TempDir(), clock)
	path := mailFile(t, 3*ChunkQuantum+1000)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: path, SendAt: clock.Now().Add(10 * time.Second)})

	s := h.until(id, isState(StateScheduled))
	if s.Confirmed != 3*ChunkQuantum {
		t.Errorf("scheduled with %d of %d bytes confirmed, want all but the last partial quantum (%d)", s.Confirmed, s.Size, 3*ChunkQuantum)
	}
	if !s.SendAt.Equal(scheduleStart.Add(10 * time.Second)) {
		t.Errorf("the snapshot says it goes at %v", s.SendAt)
	}
	if n := m.messages(t); n != 0 {
		t.Fatalf("%d messages on the server before the time, want none", n)
	}
	tick(t, clock, 9*time.Second)
	if _, err := h.q.Wait(ctxShort(t), id); err == nil {
		t.Fatal("the job ended before its time")
	}
	if n := m.messages(t); n != 0 {
		t.Fatalf("%d messages a second before the time, want none", n)
	}
	tick(t, clock, time.Second)
	h.mustDone(id)
	if n := m.messages(t); n != 1 {
		t.Fatalf("%d messages after the time, want exactly one", n)
	}
	if d := m.deleted(); len(d) != 0 {
		t.Errorf("sessions deleted: %v, want none", d)
	}
}

// ctxShort is a context that ends soon, for asserting that something does
// not happen while nothing moves the fake clock.
func ctxShort(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	t.Cleanup(cancel)
	return c
}

// A small message holds all of its bytes; Undo (Cancel) deletes the
// session, which the server answers 499, and nothing is ever sent, even
// once the time has passed.
func TestUndoOfAHeldMessageDeletesItsSession(t *testing.T) {
	m := newMailSandbox(t)
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, t.TempDir(), clock)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: mailFile(t, 2000), SendAt: clock.Now().Add(10 * time.Second)})

	s := h.until(id, isState(StateScheduled))
	if s.Confirmed != 0 {
		t.Errorf("a one-quantum message confirmed %d bytes ahead, want none (its whole body is held)", s.Confirmed)
	}
	rec, _ := h.q.record(id)
	if rec.Session == "" {
		t.Fatal("no session was started ahead of the time")
	}
	if err := h.q.Cancel(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	if d := m.deleted(); len(d) != 1 || d[0] != 499 {
		t.Fatalf("DELETEs of the session answered %v, want one 499", d)
	}
	clock.Advance(time.Minute)
	if s, _ := h.q.Job(id); s.State != StateCancelled {
		t.Fatalf("the undone job is %s", s.State)
	}
	if n := m.messages(t); n != 0 {
		t.Fatalf("%d messages after Undo, want none", n)
	}
}

// The hold is in the journal: a queue closed (or killed: a scheduled job
// holds no worker, so the journal says the same) while the job waits
// leaves it scheduled for the next, which sends it once at its time, on
// the same session.
func TestScheduledJobOutlivesItsQueue(t *testing.T) {
	m := newMailSandbox(t)
	dir := t.TempDir()
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, dir, clock)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: mailFile(t, 2*ChunkQuantum+10), SendAt: clock.Now().Add(30 * time.Second)})
	h.until(id, isState(StateScheduled))
	before, _ := h.q.record(id)
	h.q.Close()
	if rec, err := h.q.Journal().Load(id); err != nil || rec.State != StateScheduled || rec.Confirmed != 2*ChunkQuantum {
		t.Fatalf("the journal holds %+v, %v: want it scheduled with its bytes but the last confirmed", rec, err)
	}

	h2 := scheduledQueue(t, dir, clock)
	if _, err := h2.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	if s, _ := h2.q.Job(id); s.State != StateScheduled {
		t.Fatalf("after a restart before its time the job is %s, want scheduled", s.State)
	}
	tick(t, clock, 30*time.Second)
	h2.mustDone(id)
	after, _ := h2.q.record(id)
	if after.Session != before.Session {
		t.Error("the restart started a new session: the bytes sent ahead were sent again")
	}
	if n := m.messages(t); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
}

// A time that passed while no Carrier ran (the undo window ended with the
// app dead) sends at once at the next start.
func TestScheduledJobWhoseTimePassedSendsAtStart(t *testing.T) {
	m := newMailSandbox(t)
	dir := t.TempDir()
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, dir, clock)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: mailFile(t, 5000), SendAt: clock.Now().Add(10 * time.Second)})
	h.until(id, isState(StateScheduled))
	h.q.Close()

	later := NewFakeClock(scheduleStart.Add(time.Hour))
	h2 := scheduledQueue(t, dir, later)
	if _, err := h2.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	h2.mustDone(id)
	if n := m.messages(t); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
}

// Send now sends a scheduled job's last bytes before its time; a job not
// scheduled is refused by name.
func TestSendNowSendsAScheduledJob(t *testing.T) {
	m := newMailSandbox(t)
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, t.TempDir(), clock)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: mailFile(t, 5000), SendAt: clock.Now().Add(24 * time.Hour)})
	h.until(id, isState(StateScheduled))
	if err := h.q.SendNow(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	h.mustDone(id)
	if n := m.messages(t); n != 1 {
		t.Fatalf("%d messages, want one", n)
	}
	if err := h.q.SendNow(ctxT(t), id); !errors.Is(err, ErrNotScheduled) {
		t.Fatalf("send now of a sent job: %v, want ErrNotScheduled", err)
	}
}

// Only a resumable upload can hold its last bytes back.
func TestSendAtRefusedForOneShotUploads(t *testing.T) {
	m := newMailSandbox(t)
	h := scheduledQueue(t, t.TempDir(), NewFakeClock(scheduleStart))
	_, err := h.q.Add(Spec{URL: m.sendURL(), Type: Media, ContentType: "message/rfc822", Path: mailFile(t, 100), SendAt: scheduleStart.Add(time.Minute)})
	if err == nil || !strings.Contains(err.Error(), "only a resumable upload") {
		t.Fatalf("a media upload with a time to send: %v", err)
	}
}

// A kill -9 while the first bytes went (the journal says running) is
// recovered as any job is, and the job waits for its time again: not
// sent early, sent once after.
func TestScheduledJobKilledWhileSendingWaitsAgain(t *testing.T) {
	m := newMailSandbox(t)
	dir := t.TempDir()
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, dir, clock)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: mailFile(t, 2*ChunkQuantum+10), SendAt: clock.Now().Add(30 * time.Second)})
	h.until(id, isState(StateScheduled))
	h.q.Close()
	j, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := j.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	rec.State = StateRunning // as a process killed mid-chunk leaves it
	if err := j.Save(rec); err != nil {
		t.Fatal(err)
	}

	h2 := scheduledQueue(t, dir, clock)
	if _, err := h2.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	h2.until(id, isState(StateScheduled))
	if n := m.messages(t); n != 0 {
		t.Fatalf("%d messages after the restart, before the time", n)
	}
	tick(t, clock, 30*time.Second)
	h2.mustDone(id)
	if n := m.messages(t); n != 1 {
		t.Fatalf("%d messages, want exactly one", n)
	}
}

// A time further ahead than ScheduleLead would outlive the session Google
// keeps a week: nothing is sent until ScheduleLead before it, the wait
// outlives the queue, and then the upload runs and holds its last bytes
// in one session, which is still that one when the message goes.
func TestFarScheduledMessageStartsItsUploadLate(t *testing.T) {
	m := newMailSandbox(t)
	dir := t.TempDir()
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, dir, clock)
	at := scheduleStart.Add(10 * 24 * time.Hour)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: mailFile(t, 3*ChunkQuantum+1000), SendAt: at})

	s := h.until(id, isState(StateScheduled))
	if rec, _ := h.q.record(id); rec.Session != "" || s.Confirmed != 0 {
		t.Fatalf("a message for 10 days ahead opened a session (%v) and confirmed %d bytes now; its session would expire before its time", rec.Session != "", s.Confirmed)
	}
	if want := at.Add(-ScheduleLead); !s.UploadFrom.Equal(want) {
		t.Errorf("the snapshot says its upload starts %v, want %v", s.UploadFrom, want)
	}

	// The wait is in the journal: another queue takes it up.
	h.q.Close()
	h = scheduledQueue(t, dir, clock)
	if _, err := h.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.q.Job(id); s.State != StateScheduled {
		t.Fatalf("after a restart the waiting job is %s, want scheduled", s.State)
	}
	tick(t, clock, 4*24*time.Hour-time.Minute)
	if _, err := h.q.Wait(ctxShort(t), id); err == nil {
		t.Fatal("the job ended before its time")
	}
	if rec, _ := h.q.record(id); rec.Session != "" {
		t.Fatal("the upload started before ScheduleLead ahead of its time")
	}

	tick(t, clock, time.Minute)
	s = h.until(id, func(s Snapshot) bool { return s.State == StateScheduled && s.Confirmed > 0 })
	if s.Confirmed != 3*ChunkQuantum || !s.UploadFrom.IsZero() {
		t.Errorf("at its start the upload holds %d of %d bytes confirmed, upload-from %v: want all but the last quantum, and no start ahead", s.Confirmed, s.Size, s.UploadFrom)
	}
	started, _ := h.q.record(id)
	if n := m.messages(t); n != 0 {
		t.Fatalf("%d messages six days ahead of the time, want none", n)
	}

	tick(t, clock, ScheduleLead)
	h.mustDone(id)
	if after, _ := h.q.record(id); after.Session != started.Session {
		t.Error("the session was replaced at the time: the upload was made twice")
	}
	if n := m.messages(t); n != 1 {
		t.Fatalf("%d messages after the time, want exactly one", n)
	}
}

// A machine asleep across the time (its wall clock moved on, its timers
// did not fire) sends at the first tick after it wakes, once, and the
// job's end says how late it went.
func TestScheduledMessageSleptThroughSendsAtWake(t *testing.T) {
	m := newMailSandbox(t)
	clock := NewFakeClock(scheduleStart)
	h := scheduledQueue(t, t.TempDir(), clock)
	at := scheduleStart.Add(time.Hour)
	id := h.add(Spec{URL: m.sendURL(), ContentType: "message/rfc822", Path: mailFile(t, 2*ChunkQuantum+10), SendAt: at})
	h.until(id, isState(StateScheduled))
	h.settled(id)

	tick(t, clock, 30*time.Minute)
	clock.Suspend(2 * time.Hour) // asleep from 21:30 to 23:30; the time was 22:00
	if n := m.messages(t); n != 0 {
		t.Fatalf("%d messages while asleep, want none", n)
	}
	tick(t, clock, time.Second) // the first tick after the wake
	h.mustDone(id)
	s, _ := h.q.Job(id)
	if n := m.messages(t); n != 1 {
		t.Fatalf("%d messages after the wake, want exactly one", n)
	}
	if late := s.Updated.Sub(at); late < 90*time.Minute || late > 91*time.Minute {
		t.Errorf("sent %v after its time, want about 90 min (the wake at 23:30 less 22:00)", late)
	}
}

// settled waits until no worker holds the job any more, so what moves it
// next is the clock, not the end of the worker's turn.
func (h *harness) settled(id string) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		h.q.mu.Lock()
		jb, err := h.q.lookup(id)
		idle := err == nil && jb.run == nil
		h.q.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s is still held by a worker", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
