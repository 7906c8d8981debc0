package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "resume",
		Summary: "finish (or list) every unfinished upload of the journal (exit 4: some wait for a sign-in)",
		Run:     runResume,
	})
}

func runResume(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "resume", "[--state-dir DIR] [--list] [--endpoint URL (the server a token is for)]")
	var tf transferFlags
	tf.add(fs, env.dirs())
	list := fs.Bool("list", false, "list the unfinished and failed jobs instead of resuming them")
	endpoint := fs.String("endpoint", "", "the server --token, --token-file or CARRIER_TOKEN is for; jobs on other servers use their own sign-ins")
	if err := parseFlags(fs, args); err != nil {
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
	ids, skipped := q.ResumeJournal(true)
	if len(ids) == 0 && skipped == nil {
		fmt.Fprintln(env.Stderr, "carrier resume: no unfinished uploads")
		return nil
	}
	var failed []error
	var parked signInNeeded
	// A Photos batch's call may find items whose upload expired (a day
	// asleep): the uploads and call that make them again are queued as it
	// ends, and waited for here like the rest.
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	for k := 0; k < len(ids); k++ {
		id := ids[k]
		err := finishJob(ctx, env, q, id, false)
		if err == nil {
			more, merr := q.PhotosMore(id)
			if merr != nil {
				failed = append(failed, merr)
			}
			for _, m := range more {
				if !seen[m] {
					seen[m] = true
					ids = append(ids, m)
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted; unfinished jobs stay in the journal: run `carrier resume` again")
			}
			if sn := (*signInNeeded)(nil); errors.As(err, &sn) {
				parked.merge(sn)
				continue
			}
			failed = append(failed, err)
		}
	}
	if skipped != nil {
		failed = append(failed, fmt.Errorf("some jobs were not resumed: %w", skipped))
	}
	switch {
	case len(failed) > 0 && parked.accounts != nil:
		// Something failed for good: that is the status, and the words
		// still name whom to sign in as.
		return fmt.Errorf("%w\n%s", errors.Join(failed...), parked.Error())
	case len(failed) > 0:
		return errors.Join(failed...)
	case parked.accounts != nil:
		return &parked
	}
	return nil
}

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
			note = "will be retried by carrier resume: " + note
		case r.State == transfer.StateSignIn:
			note = parkedWords(snapshots([]*transfer.Record{r})[0])
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
