package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"carrier/transfer"
)

// A progress event as the queue sends it: confirmed bytes and the pace
// of 1.5 MB/s measured over 3 confirmations.
func progressEvent(job string, written, confirmed, total int64, pace transfer.Pace) transfer.Event {
	snap := transfer.Snapshot{ID: job, Size: total, Confirmed: confirmed, Written: written, Pace: pace,
		ConfirmedRate: pace.Rate(0), ETA: pace.ETA(0)}
	return transfer.Event{Kind: transfer.EventProgress, Job: job, Snap: snap, Written: written, Sent: written,
		Confirmed: confirmed, Total: total, ConfirmedRate: snap.ConfirmedRate, Rate: snap.ConfirmedRate, ETA: snap.ETA}
}

type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time { return c.t }

// Issue 13: a log gets a line every 2 s (the ticker, between events too)
// saying what the server confirmed, its pace and the time left counting
// down; bytes only written to the connection are never shown as sent.
func TestProgressLinesTellWhatTheServerConfirmed(t *testing.T) {
	var out bytes.Buffer
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := &progress{w: &out, every: 2 * time.Second, now: clock.now, jobs: map[string]*jobView{}}
	const MiB = 1 << 20
	total := int64(24 * MiB)

	p.event(transfer.Event{Kind: transfer.EventStarted, Job: "j", Total: total})
	// The kernel took 16 MiB; the server confirmed nothing yet.
	p.event(progressEvent("j", 16*MiB, 0, total, transfer.Pace{}))
	clock.t = clock.t.Add(2 * time.Second)
	p.tick()
	// A confirmation: 9 MiB confirmed over 6 s, 15 MiB left at 1.5 MiB/s: 10 s.
	pace := transfer.Pace{Bytes: 9 * MiB, Span: 6 * time.Second, Gaps: 3, Left: 15 * MiB}
	p.event(progressEvent("j", 16*MiB, 9*MiB, total, pace))
	clock.t = clock.t.Add(2 * time.Second)
	p.tick() // no event since: the ETA counts down from the event's pace
	clock.t = clock.t.Add(2 * time.Second)
	p.tick()
	p.event(transfer.Event{Kind: transfer.EventPaused, Job: "j"})
	clock.t = clock.t.Add(2 * time.Second)
	p.tick() // paused: nothing moves, no line

	want := []string{
		"j: started (24.0 MiB)",
		"j: 0 bytes of 24.0 MiB confirmed by the server (0%), 16.0 MiB written to the network, not yet confirmed",
		"j: 9.0 MiB of 24.0 MiB confirmed by the server (38%), 1.5 MiB/s, about 8s left",
		"j: 9.0 MiB of 24.0 MiB confirmed by the server (38%), 1.5 MiB/s, about 6s left",
		"j: paused",
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// On a terminal the bar fills with what the server confirmed, not with what
// was written, and is redrawn on the ticker with the ETA counting down.
func TestProgressBarShowsConfirmedBytes(t *testing.T) {
	var out bytes.Buffer
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := &progress{w: &out, tty: true, every: 500 * time.Millisecond, now: clock.now, jobs: map[string]*jobView{}}
	const MiB = 1 << 20
	pace := transfer.Pace{Bytes: 9 * MiB, Span: 6 * time.Second, Gaps: 3, Left: 15 * MiB}
	p.event(progressEvent("j", 24*MiB, 9*MiB, 24*MiB, pace))
	clock.t = clock.t.Add(3 * time.Second)
	p.tick()
	p.finish()
	draws := strings.Split(out.String(), "\r\033[K")
	if len(draws) != 3 {
		t.Fatalf("want 2 draws, got %q", out.String())
	}
	first, second := strings.TrimSpace(draws[1]), strings.TrimSpace(draws[2])
	if !strings.HasPrefix(first, "[###########-------------------] 9.0 MiB of 24.0 MiB confirmed by the server (38%), 1.5 MiB/s, about 10s left") {
		t.Fatalf("bar %q", first)
	}
	if !strings.HasSuffix(second, "about 7s left") {
		t.Fatalf("redrawn bar %q: the ETA should count down", second)
	}
}

// The printer ticks between events: lines come while an upload's chunk is
// in flight and no event arrives.
func TestProgressTicksWithoutEvents(t *testing.T) {
	var out bytes.Buffer
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := &progress{w: &out, every: 2 * time.Second, now: clock.now, jobs: map[string]*jobView{}}
	events, tick := make(chan transfer.Event), make(chan time.Time)
	stop, done := make(chan struct{}), make(chan struct{})
	go p.run(events, tick, stop, done)
	const MiB = 1 << 20
	events <- progressEvent("j", 10*MiB, 9*MiB, 24*MiB, transfer.Pace{Bytes: 9 * MiB, Span: 6 * time.Second, Gaps: 3, Left: 15 * MiB})
	tick <- time.Time{}
	tick <- time.Time{} // the second tick is taken only once the first was handled
	close(stop)
	<-done
	if n := strings.Count(out.String(), "confirmed by the server"); n != 2 {
		t.Fatalf("%d lines for 2 ticks:\n%s", n, out.String())
	}
}

// The parts of a message with links are told apart by their labels,
// which lose any control character a file name carried.
func TestProgressLinesNameTheJob(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, every: 2 * time.Second, now: time.Now, jobs: map[string]*jobView{}}
	p.event(transfer.Event{Kind: transfer.EventStarted, Job: "j1", Total: 10, Snap: transfer.Snapshot{Label: "film\x1b[2J.mov · to Google Drive"}})
	if got := out.String(); !strings.HasPrefix(got, "j1 (film") || !strings.Contains(got, ".mov · to Google Drive): started") || strings.Contains(got, "\x1b") {
		t.Fatalf("line %q", got)
	}
}

// Issue 13: a large upload kept back on a metered connection says so once
// (or `carrier upload` would look stuck), and says when it goes on.
func TestProgressSaysMeteredHold(t *testing.T) {
	var out bytes.Buffer
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := &progress{w: &out, every: 2 * time.Second, now: clock.now, jobs: map[string]*jobView{}}
	held := progressEvent("j", 0, 0, 64<<20, transfer.Pace{})
	held.Snap.Held = transfer.HeldMetered
	p.event(held)
	p.event(held)
	clock.t = clock.t.Add(2 * time.Second)
	p.tick()
	p.event(progressEvent("j", 1<<20, 0, 64<<20, transfer.Pace{}))
	want := []string{
		"j: Paused: metered connection; large uploads wait while the connection is metered (--on-metered continue sends them anyway)",
		"j: the connection is no longer metered; going on",
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Issue 29: the printer keeps a view of the jobs that have not ended only,
// so a run of 20,000 pictures holds a few views, not 20,000, and its
// ticks look at those few.
func TestProgressForgetsEndedJobs(t *testing.T) {
	var out bytes.Buffer
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := &progress{w: &out, every: 2 * time.Second, now: clock.now, jobs: map[string]*jobView{}}
	for i := range 1000 {
		id := fmt.Sprintf("j%d", i)
		p.event(transfer.Event{Kind: transfer.EventStarted, Job: id, Total: 100})
		p.event(progressEvent(id, 100, 100, 100, transfer.Pace{}))
		switch i % 3 {
		case 0:
			p.event(transfer.Event{Kind: transfer.EventDone, Job: id, Total: 100, Response: &transfer.Response{Status: 200}})
		case 1:
			p.event(transfer.Event{Kind: transfer.EventFailed, Job: id, Message: "no"})
		case 2:
			p.event(transfer.Event{Kind: transfer.EventCancelled, Job: id})
		}
	}
	p.event(transfer.Event{Kind: transfer.EventStarted, Job: "running", Total: 100})
	clock.t = clock.t.Add(2 * time.Second)
	p.tick()
	if len(p.jobs) != 1 || len(p.order) != 1 {
		t.Errorf("after 1,000 jobs ended and one runs, the printer holds %d views and %d in order", len(p.jobs), len(p.order))
	}
}

// Issue 29: nor does it keep a view of a job that is queued or waits for
// the ones it needs: a camera roll queues 20,400 jobs at once, most of
// them waiting.
func TestProgressKeepsNoViewOfJobsNotStarted(t *testing.T) {
	var out bytes.Buffer
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := &progress{w: &out, every: 2 * time.Second, now: clock.now, jobs: map[string]*jobView{}}
	for i := range 1000 {
		id := fmt.Sprintf("j%d", i)
		p.event(transfer.Event{Kind: transfer.EventQueued, Job: id, Total: 100})
		if i%2 == 0 {
			p.event(transfer.Event{Kind: transfer.EventWaiting, Job: id, Total: 100})
		}
	}
	if len(p.jobs) != 0 || len(p.order) != 0 {
		t.Fatalf("after 1,000 jobs were queued, the printer holds %d views and %d in order; want none", len(p.jobs), len(p.order))
	}
	if n := strings.Count(out.String(), "waiting for the uploads it needs"); n != 500 {
		t.Fatalf("%d waiting lines; want 500:\n%s", n, out.String())
	}
	// One that starts has its view, and its start is said once.
	p.event(transfer.Event{Kind: transfer.EventStarted, Job: "j1", Total: 100})
	p.event(transfer.Event{Kind: transfer.EventRetrying, Job: "j1", Reason: "a hiccup"})
	p.event(transfer.Event{Kind: transfer.EventStarted, Job: "j1", Total: 100})
	if len(p.jobs) != 1 || strings.Count(out.String(), "started") != 1 {
		t.Fatalf("%d views, and the lines:\n%s", len(p.jobs), out.String())
	}
}
