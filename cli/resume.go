package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/photos"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "resume",
		Summary: "finish (or list) every unfinished upload of the journal (exit 4: some wait for a sign-in); jobs another Carrier sends are its own (exit 0; --wait waits for them)",
		Run:     runResume,
	})
}

func runResume(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "resume", "[--state-dir DIR] [--list] [--wait] [--endpoint URL (the server a token is for)]")
	var tf transferFlags
	tf.add(fs, env.dirs())
	list := fs.Bool("list", false, "list the unfinished and failed jobs instead of resuming them")
	wait := fs.Bool("wait", false, "wait for the uploads another Carrier is sending to end (and send those it leaves unfinished), and for Google Photos' daily quota to reset (midnight Pacific time) to send the uploads it stopped")
	endpoint := fs.String("endpoint", "", "the server --token, --token-file or CARRIER_TOKEN is for; jobs on other servers use their own sign-ins")
	locate := fs.String("locate", "", "`ID` of a job whose file is no longer where it was, or that stopped because its file changed, followed by the file's path: the same file (its size, and the bytes already sent) goes on where the server stands (another file is refused)")
	newPath, err := parseLocate(fs, args, locate)
	if err != nil {
		return err
	}
	if *list {
		return listJobs(env, tf.stateDir)
	}
	if *endpoint != "" {
		base, err := normalizeEndpoint(*endpoint)
		if err != nil {
			return err
		}
		tf.tokenFor = base
	}
	// Jobs for the embedded sandbox need it serving: start it unless a
	// Carrier already serves it (then it has to prove it serves the folder).
	stop, err := tf.serveEmbedded(ctx, embeddedOrigins(tf.stateDir, tf.sandboxDir), "jobs wait for")
	if err != nil {
		return err
	}
	defer stop()
	q, done, err := runQueue(ctx, env, &tf, nil)
	if err != nil {
		return err
	}
	defer done()
	// Jobs Google Photos' daily quota stopped would only be refused again
	// before its reset, each refusal a request of the next day's quota
	// spent: they are left for then, with what needs them (a batch's
	// call waits for its uploads).
	quota := photos.NewQuotaWait(q)
	if err := quota.Load(); err != nil {
		return err
	}
	r := resumer{ctx: ctx, env: env, q: q, seen: map[string]bool{}, stateDir: tf.stateDir, elsewhere: map[string]bool{}}
	if *locate != "" {
		err := q.Locate(ctx, *locate, newPath)
		if errors.Is(err, transfer.ErrNotMissing) {
			// A job stopped because its file changed takes the file
			// again, here or found elsewhere, when it holds the bytes
			// the server holds.
			if uerr := q.UseFile(ctx, *locate, newPath); !errors.Is(uerr, transfer.ErrNotChanged) {
				err = uerr
			}
		}
		if err != nil {
			return locateError(*locate, newPath, err)
		}
		fmt.Fprintf(env.Stderr, "carrier resume: job %s goes on from %s\n", *locate, app.Printable(newPath))
		r.again = []string{*locate} // finished with the rest of the journal
	}
	for pass := 0; ; pass++ {
		later, due, err := quotaWaits(quota, q, clockNow())
		if err != nil {
			return err
		}
		ids, skipped := q.ResumeJournalExcept(true, slices.Collect(maps.Keys(later)))
		busy, skipped := transfer.BusyJobs(skipped)
		if skipped != nil && pass == 0 {
			// Unreadable, or not to be locked: said once.
			r.failed = append(r.failed, fmt.Errorf("some jobs were not resumed: %w", skipped))
		}
		for _, id := range due {
			if err := sendOn(ctx, q, id); err != nil {
				r.failed = append(r.failed, err)
			}
		}
		// The jobs the quota stopped in an earlier pass, and those that
		// wait for them, are waited for again.
		ids, r.again = append(r.again, ids...), nil
		if pass == 0 && len(ids) == 0 && skipped == nil && len(later) == 0 && len(busy) == 0 {
			fmt.Fprintln(env.Stderr, "carrier resume: no unfinished uploads")
			return nil
		}
		r.heldElsewhere(busy, ids, *wait)
		if err := r.finish(ids); err != nil {
			return err
		}
		// Jobs another Carrier holds are waited for until it lets them go:
		// what it finished is said, what it left unfinished is sent here.
		for len(r.busy) > 0 && *wait {
			select {
			case <-ctx.Done():
				return fmt.Errorf("interrupted; %s stay with the Carrier that sends them", jobsWord(len(r.busy)))
			case <-time.After(busyPoll):
			}
			if later, _, err = quotaWaits(quota, q, clockNow()); err != nil {
				return err
			}
			ids, skipped := q.ResumeJournalExcept(true, slices.Collect(maps.Keys(later)))
			busy, _ := transfer.BusyJobs(skipped) // the rest was said in the first pass
			r.heldElsewhere(busy, ids, true)
			if err := r.finish(ids); err != nil {
				return err
			}
		}
		if later, _, err = quotaWaits(quota, q, clockNow()); err != nil {
			return err
		}
		if len(later) == 0 {
			break
		}
		reset := soonest(later)
		if !*wait {
			r.quota = &quotaWaiting{quotaSentence(len(later), photos.PhotosQuotaWordsAt(clockNow(), reset)) + ". Run `carrier resume` after that, or `carrier resume --wait` to wait for it"}
			break
		}
		fmt.Fprintf(env.Stderr, "carrier resume: %s. Waiting for it; Ctrl+C stops waiting, and the uploads stay in the journal\n",
			quotaSentence(len(later), photos.PhotosQuotaWordsAt(clockNow(), reset)))
		if photos.WaitUntil(ctx, reset, clockNow, quotaWait) != nil {
			return fmt.Errorf("interrupted; the uploads waiting for Google Photos' quota stay in the journal: run `carrier resume` after its reset")
		}
	}
	return r.status()
}

// resumer finishes the jobs a resume took up and gathers how they ended.
type resumer struct {
	ctx    context.Context
	env    *Env
	q      *app.Queue
	seen   map[string]bool // jobs finished or being finished
	failed []error
	parked signInNeeded
	quota  *quotaWaiting // uploads left for the quota's reset
	again  []string      // held jobs the quota stopped, or that wait for one: finished after the reset

	stateDir  string
	elsewhere map[string]bool // jobs found held by another Carrier, ever
	busy      []string        // those it holds still, at the last look
}

// heldElsewhere takes note of the jobs another Carrier holds (busy) as the
// journal was read again, this resume having taken up ids: those newly
// held are said once (with wait; without, status says them at the end),
// and of those let go since, what became of them.
func (r *resumer) heldElsewhere(busy, ids []string, wait bool) {
	var fresh []string
	for _, id := range busy {
		if !r.elsewhere[id] {
			r.elsewhere[id] = true
			fresh = append(fresh, id)
		}
	}
	if wait && len(fresh) > 0 {
		fmt.Fprintf(r.env.Stderr, "carrier resume: another Carrier is sending %s: %s. Waiting for it to end them; Ctrl+C stops waiting, and they stay its own\n",
			jobsWord(len(fresh)), r.describe(fresh))
	}
	var taken []string
	for _, id := range r.busy {
		switch {
		case slices.Contains(busy, id):
		case slices.Contains(ids, id):
			taken = append(taken, id)
		default:
			r.endedElsewhere(id)
		}
	}
	if len(taken) > 0 {
		fmt.Fprintf(r.env.Stderr, "carrier resume: the other Carrier stopped before finishing %s: %s; sending them here\n",
			jobsWord(len(taken)), strings.Join(taken, ", "))
	}
	r.busy = busy
}

// endedElsewhere says what became of a job another Carrier let go of and
// this resume did not take up.
func (r *resumer) endedElsewhere(id string) {
	j, err := transfer.OpenJournal(r.stateDir)
	if err != nil {
		r.failed = append(r.failed, err)
		return
	}
	rec, err := j.Load(id)
	switch {
	case err != nil:
		fmt.Fprintf(r.env.Stderr, "carrier resume: job %s: ended in the other Carrier, which removed it from the journal\n", id)
	case rec.State == transfer.StateDone:
		fmt.Fprintf(r.env.Stderr, "carrier resume: job %s: sent by the other Carrier\n", id)
	case rec.State == transfer.StateCancelled:
		fmt.Fprintf(r.env.Stderr, "carrier resume: job %s: cancelled in the other Carrier\n", id)
	case rec.State == transfer.StateFailed:
		s := rec.Snapshot()
		if _, ok := photos.QuotaStopped(s); ok {
			return // left for the quota's reset, said with the others
		}
		r.failed = append(r.failed, fmt.Errorf("job %s failed in the other Carrier: %s%s", id, s.Error, adviceFor(s.Failure)))
	}
	// Unfinished and not taken: it waits for a job the quota stopped
	// (said with those), or a third Carrier took it up.
}

// describe names jobs for people: each id, with its file or label and
// its state where it is not being sent.
func (r *resumer) describe(ids []string) string {
	j, _ := transfer.OpenJournal(r.stateDir)
	parts := make([]string, 0, len(ids))
	for _, id := range ids {
		var what []string
		if j != nil {
			if rec, err := j.Load(id); err == nil {
				if name := cmp.Or(rec.Label, filepath.Base(rec.Path)); name != "" && name != "." {
					what = append(what, app.Printable(name))
				}
				if !rec.State.Active() && rec.State != transfer.StateQueued {
					what = append(what, string(rec.State))
				}
			}
		}
		if len(what) > 0 {
			id += " (" + strings.Join(what, ", ") + ")"
		}
		parts = append(parts, id)
	}
	return strings.Join(parts, ", ")
}

func jobsWord(n int) string {
	if n == 1 {
		return "1 job"
	}
	return fmt.Sprintf("%d jobs", n)
}

// busyPoll is how often `carrier resume --wait` looks whether another
// Carrier let go of the jobs it holds; tests shorten it.
var busyPoll = time.Second

func (r *resumer) finish(ids []string) error {
	// A Photos batch's call may find items whose upload expired (a day
	// asleep): the uploads and call that make them again are queued as it
	// ends, and waited for here like the rest.
	for _, id := range ids {
		r.seen[id] = true
	}
	for k := 0; k < len(ids); k++ {
		id := ids[k]
		err := finishJob(r.ctx, r.env, r.q, id, false)
		if err == nil {
			more, merr := photos.Of(r.q).PhotosMore(id)
			if merr != nil {
				r.failed = append(r.failed, merr)
			}
			for _, m := range more {
				if !r.seen[m] {
					r.seen[m] = true
					ids = append(ids, m)
				}
			}
			continue
		}
		if r.ctx.Err() != nil {
			return fmt.Errorf("interrupted; unfinished jobs stay in the journal: run `carrier resume` again")
		}
		if sn := (*signInNeeded)(nil); errors.As(err, &sn) {
			r.parked.merge(sn)
			continue
		}
		if s, ok := r.q.Job(id); ok && stoppedByQuota(r.q, s) {
			r.again = append(r.again, id) // said once for all, with its reset, below
			continue
		}
		r.failed = append(r.failed, err)
	}
	return nil
}

// status is the resume's outcome: what failed, whom to sign in as, what
// waits for a quota, in that order of weight for the exit status.
func (r *resumer) status() error {
	if len(r.busy) > 0 {
		// Not a failure: the other Carrier finishes them, and a script
		// that needs them ended runs `carrier resume --wait`.
		fmt.Fprintf(r.env.Stderr, "carrier resume: another Carrier is sending %s: %s. They are its own to finish; `carrier resume --wait` waits for them\n",
			jobsWord(len(r.busy)), r.describe(r.busy))
	}
	if r.quota != nil && (len(r.failed) > 0 || r.parked.accounts != nil) {
		fmt.Fprintf(r.env.Stderr, "carrier resume: %s\n", r.quota.Error())
	}
	switch {
	case len(r.failed) > 0 && r.parked.accounts != nil:
		// Something failed for good: that is the status, and the words
		// still name whom to sign in as.
		return fmt.Errorf("%w\n%s", errors.Join(r.failed...), r.parked.Error())
	case len(r.failed) > 0:
		return errors.Join(r.failed...)
	case r.parked.accounts != nil:
		return &r.parked
	case r.quota != nil:
		return r.quota
	}
	return nil
}

// quotaWaits are the jobs Google Photos' daily quota stopped: later, those
// whose reset is still to come (job → reset); due, those this queue holds
// whose reset has passed, to send on (the journal's others are taken up
// with the rest).
func quotaWaits(w *photos.QuotaWait, q *app.Queue, now time.Time) (later map[string]time.Time, due []string, err error) {
	waits, err := w.Waiting()
	if err != nil {
		return nil, nil, err
	}
	later = map[string]time.Time{}
	for id, at := range waits {
		if at.After(now) {
			later[id] = at
		} else if _, held := q.Job(id); held {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	return later, due, nil
}

// stoppedByQuota says whether s failed for the daily quota, or waits for
// a job that did.
func stoppedByQuota(q *app.Queue, s transfer.Snapshot) bool {
	if _, ok := photos.QuotaStopped(s); ok {
		return true
	}
	if s.State != transfer.StateWaiting {
		return false
	}
	for _, n := range s.Needs {
		if ns, ok := q.Job(n); ok && ns.ID != s.ID && stoppedByQuota(q, ns) {
			return true
		}
	}
	return false
}

// sendOn lets a job the quota stopped go again: failed for it, or paused
// before its first byte by the window's hold.
func sendOn(ctx context.Context, q *app.Queue, id string) error {
	s, _ := q.Job(id)
	if s.State == transfer.StatePaused {
		return q.Resume(ctx, id)
	}
	return q.Retry(ctx, id)
}

func soonest(at map[string]time.Time) time.Time {
	var first time.Time
	for _, t := range at {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}

func quotaSentence(n int, words string) string {
	what := "1 upload to Google Photos waits"
	if n != 1 {
		what = fmt.Sprintf("%d uploads to Google Photos wait", n)
	}
	return fmt.Sprintf("%s for its daily quota: %s", what, words)
}

// quotaWaiting says uploads wait for Google Photos' daily quota to reset.
// Main exits with ExitQuota for it: nothing failed, and a resume after
// the reset (or --wait) sends them.
type quotaWaiting struct{ msg string }

func (e *quotaWaiting) Error() string { return e.msg }

// clockShift moves the clock of the commands' queues and of resume's
// wait for a quota's reset: tests reach a reset without waiting a day.
// quotaWait is that wait; tests end it themselves.
var (
	clockShift atomic.Int64
	quotaWait  = time.After
)

func clockNow() time.Time { return time.Now().Add(time.Duration(clockShift.Load())) }

type shiftedClock struct {
	transfer.Clock
	shift time.Duration
}

func (c shiftedClock) Now() time.Time { return c.Clock.Now().Add(c.shift) }

// embeddedOrigins are the origins of the journal's unfinished jobs that go
// to the embedded sandbox's address.
func embeddedOrigins(stateDir, sandboxDir string) []string {
	j, err := transfer.OpenJournal(stateDir)
	if err != nil {
		return nil
	}
	recs, _ := j.List()
	var os []string
	for _, r := range recs {
		if r.State != transfer.StateDone && r.State != transfer.StateCancelled && app.IsEmbeddedAddress(sandboxDir, r.URL) && !slices.Contains(os, app.Origin(r.URL)) {
			os = append(os, app.Origin(r.URL))
		}
	}
	return os
}

func listJobs(env *Env, stateDir string) error {
	j, err := transfer.OpenJournal(stateDir)
	if err != nil {
		return err
	}
	recs, lerr := j.List()
	tw := tabwriter.NewWriter(env.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tTYPE\tCONFIRMED\tFILE\tNOTE")
	n := 0
	for _, r := range recs {
		if r.State == transfer.StateDone || r.State == transfer.StateCancelled {
			continue
		}
		n++
		note := r.Error
		switch {
		case r.State.Unfinished() && r.Type != transfer.Resumable && r.Sent:
			note = "may have arrived; cannot be resumed: needs your decision"
		case r.State == transfer.StateFailed && r.Retryable:
			if at, ok := photos.QuotaStopped(r.Snapshot()); ok && at.After(clockNow()) {
				note = fmt.Sprintf("waits for Google Photos' daily quota; carrier resume sends it after %s", at.Local().Format("15:04 Mon 2 Jan"))
				break
			}
			note = "will be retried by carrier resume: " + note
		case r.State == transfer.StateSignIn:
			note = parkedWords(snapshots([]*transfer.Record{r})[0])
		case r.State == transfer.StateMissing:
			note = ghostWords(r.ID, r.Path)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%s\n", r.ID, r.State, r.Type, compose.HumanSize(r.Confirmed), compose.HumanSize(r.Size), r.Path, note)
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintln(env.Stderr, "no unfinished uploads")
	}
	if lerr != nil {
		return fmt.Errorf("some journal records could not be read: %w", lerr)
	}
	return nil
}

// parseLocate parses resume's flags: with --locate ID, the one argument
// after them is the file's new path; without, none is allowed.
func parseLocate(fs *flag.FlagSet, args []string, locate *string) (string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", &UsageError{Msg: err.Error()}
	}
	rest := fs.Args()
	switch {
	case *locate == "" && len(rest) > 0:
		return "", usagef("unexpected argument %q (flags go before nothing else; see -h)", strings.Join(rest, " "))
	case *locate != "" && len(rest) != 1:
		return "", usagef("--locate takes the job's id and then the file's new path: carrier resume --locate ID PATH")
	case *locate != "" && rest[0] == "":
		return "", usagef("--locate: the file's new path is empty")
	}
	if len(rest) == 1 {
		return rest[0], nil
	}
	return "", nil
}

// ghostWords is what `carrier jobs`, `resume --list` and a resume say of a
// job whose file is no longer where it was.
func ghostWords(id, path string) string {
	return fmt.Sprintf("the file is no longer at %s: if you moved it, run `carrier resume --locate %s NEWPATH`", app.Printable(path), id)
}

// locateError words a refused --locate.
func locateError(id, path string, err error) error {
	switch {
	case errors.Is(err, transfer.ErrNotSameFile):
		return fmt.Errorf("%s is not the file of job %s, which stays where it was: %w", app.Printable(path), id, err)
	case errors.Is(err, transfer.ErrNotMissing):
		return fmt.Errorf("job %s is neither waiting for its file nor stopped because its file changed (see `carrier jobs`): nothing to locate", id)
	case errors.Is(err, transfer.ErrUnknownJob):
		return fmt.Errorf("there is no job %s in the journal (see `carrier jobs`)", id)
	}
	return fmt.Errorf("cannot locate job %s's file at %s: %w", id, app.Printable(path), err)
}
