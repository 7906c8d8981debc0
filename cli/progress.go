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
)

// progress shows transfer events on stderr: a redrawn bar on a terminal,
// plain lines every few seconds otherwise (a log file or a CI job).
type progress struct {
	w       io.Writer
	tty     bool
	every   time.Duration
	last    map[string]time.Time
	started map[string]bool
	drawn   bool // a bar is on the current line
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, every: 2 * time.Second, last: map[string]time.Time{}, started: map[string]bool{}}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, 100*time.Millisecond
		}
	}
	return p
}

func (p *progress) event(e transfer.Event) {
	switch e.Kind {
	case transfer.EventProgress:
		now := time.Now()
		if now.Sub(p.last[e.Job]) < p.every && e.Confirmed < e.Total {
			return
		}
		p.last[e.Job] = now
		if p.tty {
			fmt.Fprintf(p.w, "\r\033[K%s", bar(e))
			p.drawn = true
			return
		}
		fmt.Fprintf(p.w, "%s: %s\n", e.Job, counts(e))
	case transfer.EventRetrying:
		if e.Held {
			p.line(fmt.Sprintf("%s: %s", e.Job, e.Reason))
			return
		}
		p.line(fmt.Sprintf("%s: retrying in %s (attempt %d): %s", e.Job, e.Wait.Round(time.Millisecond), e.Attempt, e.Reason))
	case transfer.EventStarted:
		if p.started[e.Job] {
			return // going on after a retry
		}
		p.started[e.Job] = true
		p.line(fmt.Sprintf("%s: started (%s)", e.Job, compose.HumanSize(e.Total)))
	case transfer.EventDone:
		line := fmt.Sprintf("%s: done, %s, status %d", e.Job, compose.HumanSize(e.Total), e.Response.Status)
		if e.Snap.Verified != "" {
			line += ", verified (" + e.Snap.Verified + ")"
		}
		p.line(line)
	case transfer.EventFailed:
		p.line(fmt.Sprintf("%s: failed: %s", e.Job, e.Message))
	case transfer.EventWaiting:
		if e.Snap.Blocked != "" {
			p.line(fmt.Sprintf("%s: waiting: %s", e.Job, e.Snap.Blocked))
		} else {
			p.line(fmt.Sprintf("%s: waiting for the uploads it needs", e.Job))
		}
	case transfer.EventPaused, transfer.EventCancelled:
		p.line(fmt.Sprintf("%s: %s", e.Job, e.Kind))
	}
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

func bar(e transfer.Event) string {
	const width = 30
	frac := 1.0
	if e.Total > 0 {
		frac = float64(e.Sent) / float64(e.Total)
	}
	n := min(width, max(0, int(frac*width)))
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "] " + counts(e)
}

func counts(e transfer.Event) string {
	pct := 100.0
	if e.Total > 0 {
		pct = 100 * float64(e.Sent) / float64(e.Total)
	}
	s := fmt.Sprintf("%s of %s (%.0f%%), %s confirmed, %s/s", compose.HumanSize(e.Sent), compose.HumanSize(e.Total), pct, compose.HumanSize(e.Confirmed), compose.HumanSize(int64(e.Rate)))
	if e.Rate > 0 && e.Total > e.Sent {
		eta := time.Duration(float64(e.Total-e.Sent) / e.Rate * float64(time.Second))
		s += ", ETA " + eta.Round(time.Second).String()
	}
	return s
}

// watch prints events until stop is closed, then drains what is left.
func (p *progress) watch(events <-chan transfer.Event, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case e := <-events:
			p.event(e)
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
	stop, printed := make(chan struct{}), make(chan struct{})
	go newProgress(env.Stderr).watch(events, stop, printed)
	return q, func() {
		q.Close()
		close(stop)
		<-printed
	}, nil
}
