package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/transfer"

	"carrier/internal/syncio"
)

// progress shows transfer events on stderr: a redrawn bar on a terminal,
// plain lines every couple of seconds otherwise (a log file or a CI job).
// Both tell what the server confirmed, at the pace it confirmed it: bytes
// written to the connection may sit in the kernel's buffers or a proxy's.
// Between events a ticker keeps them going (tick), the ETA counting down
// from the event's Pace.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration    // how often a line is printed (not a tty) or the bar redrawn
	now   func() time.Time // injected by tests
	// jobs holds a view of each job that has not ended (ended), so a
	// printer of 20,000 pictures keeps the few running, not 20,000.
	jobs     map[string]*jobView
	order    []string // jobs in the order they started; ended ones leave at the next tick
	cur      string   // the job whose bar is drawn (tty)
	drawn    bool     // a bar is on the current line
	lastDraw time.Time
}

// jobView is the newest progress of a running job, and what its last
// line said.
type jobView struct {
	e        transfer.Event // newest progress event
	got      time.Time      // when it came
	started  bool
	running  bool // progress is to be shown (not waiting, retrying or ended)
	lastConf int64
	lastWrit int64
	held     string // the words of the metered hold last said
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, every: 2 * time.Second, now: time.Now, jobs: map[string]*jobView{}}
	if isTerminal(w) {
		p.tty, p.every = true, 500*time.Millisecond
	}
	return p
}

// isTerminal says whether w ends in a terminal, looking through the lock
// runQueue puts around stderr: the writer it sees is never the file.
func isTerminal(w io.Writer) bool {
	if l, ok := w.(*syncio.Writer); ok {
		w = l.W
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *progress) job(id string) *jobView {
	j := p.jobs[id]
	if j == nil {
		j = &jobView{}
		p.jobs[id] = j
		p.order = append(p.order, id)
	}
	return j
}

func (p *progress) event(e transfer.Event) {
	j := p.jobs[e.Job]
	if j == nil {
		switch e.Kind {
		case transfer.EventProgress, transfer.EventStarted:
			j = p.job(e.Job)
		default:
			// A job that has not started (queued, waiting for the ones
			// it needs): its words are said, and no view of it is kept,
			// so a batch of 20,000 pictures queued at once holds none.
			j = &jobView{}
		}
	}
	switch e.Kind {
	case transfer.EventProgress:
		if e.Snap.Held == transfer.HeldMetered {
			// Queued and kept back: said once, or it would look stuck.
			if j.held == "" {
				j.held = e.Snap.Held
				j.running = false
				p.line(fmt.Sprintf("%s: %s; large uploads wait while the connection is metered (--on-metered continue sends them anyway)", who(e), e.Snap.Held))
			}
			return
		}
		if j.held != "" {
			j.held = ""
			p.line(fmt.Sprintf("%s: the connection is no longer metered; going on", who(e)))
		}
		j.e, j.got, j.running = e, p.now(), true
		if p.tty {
			p.cur = e.Job
			if p.now().Sub(p.lastDraw) >= 100*time.Millisecond || e.Confirmed >= e.Total {
				p.draw()
			}
		}
	case transfer.EventRetrying:
		j.running = false
		if e.Held {
			p.line(fmt.Sprintf("%s: %s", who(e), e.Reason))
			return
		}
		p.line(fmt.Sprintf("%s: retrying in %s (attempt %d): %s", who(e), e.Wait.Round(time.Millisecond), e.Attempt, e.Reason))
	case transfer.EventStarted:
		j.running = true
		if j.started {
			return // going on after a retry
		}
		j.started = true
		p.line(fmt.Sprintf("%s: started (%s)", who(e), compose.HumanSize(e.Total)))
	case transfer.EventDone:
		j.running = false
		line := fmt.Sprintf("%s: done, %s, status %d", who(e), compose.HumanSize(e.Total), e.Response.Status)
		if e.Snap.Verified != "" {
			line += ", verified (" + e.Snap.Verified + ")"
		}
		p.line(line)
		p.ended(e.Job)
	case transfer.EventFailed:
		j.running = false
		p.line(fmt.Sprintf("%s: failed: %s", who(e), e.Message))
		p.ended(e.Job)
	case transfer.EventWaiting:
		j.running = false
		if e.Snap.Blocked != "" {
			p.line(fmt.Sprintf("%s: waiting: %s", who(e), e.Snap.Blocked))
		} else {
			p.line(fmt.Sprintf("%s: waiting for the uploads it needs", who(e)))
		}
	case transfer.EventSignIn:
		j.running = false
		p.line(fmt.Sprintf("%s: waiting for a sign-in: %s", who(e), parkedWords(e.Snap)))
	case transfer.EventMissing:
		j.running = false
		p.line(fmt.Sprintf("%s: waiting: %s", who(e), ghostWords(e.Job, e.Snap.Path)))
	case transfer.EventScheduled:
		j.running = false
		p.line(fmt.Sprintf("%s: %s of %s with the server; the rest goes at %s", who(e), compose.HumanSize(e.Confirmed), compose.HumanSize(e.Total), e.Snap.SendAt.Local().Format("15:04:05")))
	case transfer.EventPaused, transfer.EventCancelled:
		j.running = false
		p.line(fmt.Sprintf("%s: %s", who(e), e.Kind))
		if e.Kind == transfer.EventCancelled {
			p.ended(e.Job)
		}
	}
}

// ended drops the view of a job that ended: nothing more is drawn for it,
// and one that is sent again (a retry) starts a view anew.
func (p *progress) ended(id string) { delete(p.jobs, id) }

// tick prints what moved: on a terminal the bar redrawn, otherwise a line
// for each running job whose bytes moved since its last line or whose ETA
// is counting down.
func (p *progress) tick() {
	live := p.order[:0]
	for _, id := range p.order {
		if p.jobs[id] != nil {
			live = append(live, id)
		}
	}
	clear(p.order[len(live):])
	p.order = live
	if p.tty {
		if j := p.jobs[p.cur]; j != nil && j.running {
			p.draw()
		}
		return
	}
	now := p.now()
	for _, id := range p.order {
		j := p.jobs[id]
		if !j.running || j.got.IsZero() {
			continue
		}
		moved := j.e.Confirmed != j.lastConf || j.e.Written != j.lastWrit
		if !moved && j.e.Snap.Pace.Rate(now.Sub(j.got)) <= 0 {
			continue
		}
		p.line(who(j.e) + ": " + counts(j.e, now.Sub(j.got)))
		j.lastConf, j.lastWrit = j.e.Confirmed, j.e.Written
	}
}

func (p *progress) draw() {
	j := p.jobs[p.cur]
	if j == nil {
		return
	}
	now := p.now()
	p.lastDraw = now
	fmt.Fprintf(p.w, "\r\033[K%s", bar(j.e, now.Sub(j.got)))
	p.drawn = true
}

// line prints a whole line, first ending any bar being drawn. Lines quote
// servers (a refusal, a reason to retry) and the journal: they go out as
// Printable text.
func (p *progress) line(s string) {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	fmt.Fprintln(p.w, app.Printable(s))
}

func (p *progress) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// bar is the redrawn line: what the server confirmed, d after the event.
func bar(e transfer.Event, d time.Duration) string {
	const width = 30
	frac := 1.0
	if e.Total > 0 {
		frac = float64(e.Confirmed) / float64(e.Total)
	}
	n := min(width, max(0, int(frac*width)))
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "] " + counts(e, d)
}

// counts says what the server confirmed, its pace and the time left, d
// after the event e: "X of Y confirmed by the server (P%), R/s, about T
// left". Until the server confirmed twice there is no pace to tell: the
// bytes written to the connection are said instead, as what they are.
func counts(e transfer.Event, d time.Duration) string {
	pct := 100.0
	if e.Total > 0 {
		pct = 100 * float64(e.Confirmed) / float64(e.Total)
	}
	s := fmt.Sprintf("%s of %s confirmed by the server (%.0f%%)", compose.HumanSize(e.Confirmed), compose.HumanSize(e.Total), pct)
	rate := e.Snap.Pace.Rate(d)
	if rate <= 0 {
		if e.Written > e.Confirmed {
			s += fmt.Sprintf(", %s written to the network, not yet confirmed", compose.HumanSize(e.Written-e.Confirmed))
		}
		return s
	}
	s += fmt.Sprintf(", %s/s", compose.HumanSize(int64(rate)))
	if eta := e.Snap.Pace.ETA(d); eta > 0 && e.Confirmed < e.Total {
		s += ", about " + eta.Round(time.Second).String() + " left"
	}
	return s
}

// watch prints events until stop is closed, then drains what is left;
// between events it ticks every p.every.
func (p *progress) watch(events <-chan transfer.Event, stop <-chan struct{}, done chan<- struct{}) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	p.run(events, t.C, stop, done)
}

func (p *progress) run(events <-chan transfer.Event, tick <-chan time.Time, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case e := <-events:
			p.event(e)
		case <-tick:
			p.tick()
		case <-stop:
			for {
				select {
				case e := <-events:
					p.event(e)
				default:
					p.finish()
					return
				}
			}
		}
	}
}

// runQueue starts a queue with the flags' settings (auth as given, or each
// server's own) and a progress printer on stderr; close stops both, after
// the printer has shown the last events.
func runQueue(ctx context.Context, env *Env, f *transferFlags, auth transfer.Authorizer) (q *app.Queue, stopAll func(), err error) {
	events := make(chan transfer.Event, 256)
	cfg, err := f.config(ctx, env, events, auth)
	if err != nil {
		return nil, nil, err
	}
	q, err = app.OpenQueue(cfg, app.NewSpool(app.SpoolDir(f.stateDir)))
	if err != nil {
		return nil, nil, err
	}
	q.SetSchedule(f.schedule) // before any job is added: a rate, or a timetable followed
	// The command's own words on stderr go out between the printer's
	// lines, never inside one.
	if _, ok := env.Stderr.(*syncio.Writer); !ok {
		env.Stderr = &syncio.Writer{W: env.Stderr}
	}
	stop, printed := make(chan struct{}), make(chan struct{})
	go newProgress(env.Stderr).watch(events, stop, printed)
	return q, func() {
		q.Close()
		close(stop)
		<-printed
	}, nil
}

// who names a job in a line: its id, which `carrier resume` and the
// journal know it by, and its label when it has one ("film.mov · to
// Google Drive"), so the parts of a message with links are told apart.
func who(e transfer.Event) string {
	if e.Snap.Label == "" {
		return e.Job
	}
	return e.Job + " (" + app.Printable(e.Snap.Label) + ")"
}
