package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

func init() {
	register(&Command{Name: "accounts", Summary: "list the accounts signed in at an endpoint, the default sender marked", Run: runAccounts})
}

func runAccounts(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "accounts", "[--endpoint URL]")
	endpoint := fs.String("endpoint", "", endpointHelp)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ep, stop, err := endpointArg(ctx, env, *endpoint)
	if err != nil {
		return err
	}
	defer stop()
	signed, err := auth.Accounts(ep)
	if err != nil {
		return err
	}
	if len(signed) == 0 {
		return fmt.Errorf("%w: nobody is signed in at %s (carrier login --endpoint %s)", auth.ErrNotSignedIn, ep, ep)
	}
	for i, a := range signed {
		mark := " "
		if i == 0 {
			mark = "*"
		}
		fmt.Fprintf(env.Stdout, "%s %s\n", mark, a)
	}
	fmt.Fprintf(env.Stdout, "(* the default sender, used last; carrier send --from ADDRESS chooses another)\n")
	return nil
}

// accountRecords are the journal's unfinished jobs bound to account.
func accountRecords(tf *transferFlags, account string) []transfer.Snapshot {
	j, err := transfer.OpenJournal(tf.stateDir)
	if err != nil {
		return nil
	}
	recs, _ := j.List()
	var out []transfer.Snapshot
	for _, s := range snapshots(recs) {
		if s.State != transfer.StateDone && s.State != transfer.StateCancelled && (s.Account == account || s.Account == "" && s.SignInFor == account) {
			out = append(out, s)
		}
	}
	return out
}

// accountWaiting counts what account leaves waiting as a person counts
// it (app.CountWaiting): a message with its Drive links is one message, a
// Photos batch one upload.
func accountWaiting(tf *transferFlags, account string) app.Waiting {
	j, err := transfer.OpenJournal(tf.stateDir)
	if err != nil {
		return app.Waiting{}
	}
	recs, _ := j.List()
	return app.CountWaiting(snapshots(recs), func(s transfer.Snapshot) bool {
		return s.Account == account || s.Account == "" && s.SignInFor == account
	})
}

// waitingWords are "1 message", "2 messages and 1 upload", "3 uploads".
func waitingWords(w app.Waiting) string {
	count := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	switch {
	case w.Messages > 0 && w.Uploads > 0:
		return count(w.Messages, "message", "messages") + " and " + count(w.Uploads, "upload", "uploads")
	case w.Messages > 0:
		return count(w.Messages, "message", "messages")
	}
	return count(w.Uploads, "upload", "uploads")
}

// cancelAccountJobs cancels every unfinished message or upload of account
// in the journal, each with its parts, as carrier cancel does; the files
// already on Google Drive are kept (carrier cancel ID --drive delete
// removes them).
func cancelAccountJobs(ctx context.Context, env *Env, tf *transferFlags, account string) error {
	mine := accountRecords(tf, account)
	if len(mine) == 0 {
		return nil
	}
	q, _, err := tf.idleQueue(ctx, env)
	if err != nil {
		return err
	}
	defer q.Close()
	ds, _ := q.Deliveries()
	jobs, _ := q.History()
	byID := delivery.ByJob(jobs)
	var done []string
	var errs []error
	for _, s := range mine {
		d, ok := app.DeliveryOf(ds, s.ID)
		if !ok || slices.Contains(done, d.ID) {
			continue
		}
		done = append(done, d.ID)
		msg := byID[app.Head(d)]
		acted, err := q.Act(ctx, s.ID, delivery.VerbCancel)
		if errors.Is(err, transfer.ErrBusy) {
			err = fmt.Errorf("job %s is being worked by another Carrier: cancel it there, or stop that one first", msg.ID)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(env.Stderr, "carrier logout: cancelled %s (%s)\n", msg.ID, app.Printable(msg.Label))
		if len(acted.OnDrive) > 0 {
			fmt.Fprintf(env.Stderr, "carrier logout: %d file(s) of it stay on Google Drive (carrier cancel %s --drive delete removes them)\n", len(acted.OnDrive), msg.ID)
		}
	}
	return errors.Join(errs...)
}

// addFrom gives a command that uploads as an account its --from, as
// `carrier send` has it (there it is also the message's From): what says
// what the upload does as the account, e.g. "upload to the Google Drive of".
func (f *uploadFlags) addFrom(fs *flag.FlagSet, what string) {
	fs.StringVar(&f.from, "from", "", what+" this account, one signed in with carrier login (default: the one used last; carrier accounts lists them)")
}

// remember makes the account the work went as the default sender, so the
// next command without --from goes as it too (the last used), as Compose
// offers the sender used last.
func (t *target) remember() {
	if t.account != "" {
		auth.Use(t.base, t.account)
	}
}

// noteAccount tells a Carrier window running on the same data folder that
// address signed in or out at endpoint (app.NoteSignIn): it sends the jobs
// it parked for the account on, and lists the accounts again. A note that
// cannot be written is said, not fatal: the sign-in itself is done.
func noteAccount(env *Env, endpoint, address string, in bool) {
	note := app.NoteSignOut
	if in {
		note = app.NoteSignIn
	}
	if err := note(env.dirs().Data, endpoint, address); err != nil {
		fmt.Fprintf(env.Stderr, "carrier: %v; a Carrier window open now sees it when it starts again\n", err)
	}
}
