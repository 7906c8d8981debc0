package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "cancel",
		Summary: "cancel a job, or a message and its Drive links (keeping or deleting its Drive files)",
		Run:     runCancel,
	})
	register(&Command{
		Name:    "jobs",
		Summary: "list the journal's jobs by id: each message with its Drive uploads and shares",
		Run:     runJobs,
	})
}

// interactive reports whether r is a person at a terminal, who can be
// asked; tests replace it.
var interactive = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func runCancel(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cancel", "ID [--drive keep|delete] [--state-dir DIR] [--endpoint URL (the server a token is for)]")
	var tf transferFlags
	tf.add(fs, env.dirs())
	drive := fs.String("drive", "", "what becomes of the files the message already put on Google Drive: keep or delete (default: asked on a terminal, kept otherwise)")
	endpoint := fs.String("endpoint", "", "the server --token, --token-file or CARRIER_TOKEN is for; jobs on other servers use their own sign-ins")
	// The id goes first, as people write it; flags may follow.
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if id == "" {
		// Or after the flags.
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return &UsageError{Msg: err.Error()}
		}
		if fs.NArg() > 0 {
			id, args = fs.Arg(0), fs.Args()[1:]
		} else {
			args = nil
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case id == "":
		return usagef("say which job: carrier cancel ID (carrier jobs lists them)")
	case *drive != "" && *drive != "keep" && *drive != "delete":
		return usagef("--drive is keep or delete, not %q", *drive)
	}
	if *endpoint != "" {
		base, err := normalizeEndpoint(*endpoint)
		if err != nil {
			return err
		}
		tf.tokenFor = base
	}
	// The delivery is found as `carrier status` finds it, from the
	// journal and the stored deliveries alone: the embedded sandbox its
	// jobs are on is started before the queue opens.
	ds, byID, lerr, _, err := readDeliveries(tf.stateDir)
	if err != nil {
		return err
	}
	d, ok := app.DeliveryNamed(ds, id)
	if !ok {
		if lerr != nil {
			return errors.Join(fmt.Errorf("job %q: %w", id, transfer.ErrUnknownJob), fmt.Errorf("some journal records could not be read: %w", lerr))
		}
		return fmt.Errorf("no job %q in the journal (%s): carrier jobs lists them", id, tf.stateDir)
	}
	msg := byID[app.Head(d)]
	if msg.ID != id && d.ID != id {
		fmt.Fprintf(env.Stderr, "carrier cancel: job %s is part of %s (%s): cancelling the whole %s\n", id, msg.ID, app.Printable(msg.Label), wholeWord(d.Kind))
	}
	if err := app.Ended(d, byID); err != nil {
		return err
	}
	wasCancelled := msg.State == transfer.StateCancelled
	if wasCancelled && *drive != "delete" {
		return fmt.Errorf("job %s was already cancelled (to delete its files from Google Drive: carrier cancel %s --drive delete)", msg.ID, msg.ID)
	}
	// Jobs on the embedded sandbox need it serving to hear of the cancel
	// (their sessions are deleted) and to delete the files. Which jobs
	// those are is read before it starts: starting may move it.
	var origins []string
	for _, m := range d.Members {
		j := byID[m.Job]
		if o := app.Origin(j.URL); app.IsEmbeddedAddress(tf.sandboxDir, j.URL) && !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	stop, err := tf.serveEmbedded(ctx, origins, "the job is on")
	if err != nil {
		return err
	}
	defer stop()
	q, cfg, err := tf.idleQueue(ctx, env)
	if err != nil {
		return err
	}
	defer q.Close()
	acted, err := q.Act(ctx, id, delivery.VerbCancel)
	files := acted.OnDrive
	if errors.Is(err, transfer.ErrBusy) {
		return fmt.Errorf("job %s is being worked by another Carrier (the desktop app, or a carrier send or resume still running): cancel it there, or stop that one first", msg.ID)
	}
	if err != nil && (len(files) == 0 || errors.Is(err, app.ErrAlreadySent)) {
		return err
	}
	if err != nil { // a part could not be cancelled; the files are still the person's to decide on
		fmt.Fprintf(env.Stderr, "carrier cancel: %s\n", app.PrintableLines(err.Error()))
	}
	if !wasCancelled {
		fmt.Fprintf(env.Stderr, "carrier cancel: cancelled %s (%s)\n", msg.ID, app.Printable(msg.Label))
	}
	if len(files) == 0 {
		if wasCancelled {
			fmt.Fprintln(env.Stderr, "carrier cancel: none of its files is on Google Drive")
		}
		return err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = app.Printable(f.Name)
	}
	on := fmt.Sprintf("%d file(s) already on your Google Drive: %s", len(files), strings.Join(names, ", "))
	remove := *drive == "delete"
	if *drive == "" {
		if !interactive(env.Stdin) {
			fmt.Fprintf(env.Stderr, "carrier cancel: %s. Kept there (not asked: no terminal); to delete them: carrier cancel %s --drive delete\n", on, msg.ID)
			return err
		}
		fmt.Fprintf(env.Stderr, "%s.\nDelete them from Google Drive? [y/N] ", on)
		line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		answer := strings.ToLower(strings.TrimSpace(line))
		remove = answer == "y" || answer == "yes"
	}
	if !remove {
		fmt.Fprintf(env.Stderr, "carrier cancel: kept on Google Drive: %s\n", strings.Join(names, ", "))
		return err
	}
	gone, derr := app.DeleteFiles(ctx, cfg.Auth, nil, files)
	for _, f := range gone {
		fmt.Fprintf(env.Stderr, "carrier cancel: deleted from Google Drive: %s\n", app.Printable(f.Name))
	}
	if derr != nil {
		return errors.Join(err, fmt.Errorf("could not delete from Google Drive: %w (run carrier cancel %s --drive delete again)", derr, msg.ID))
	}
	return err
}

// wholeWord is what cancelling a delivery of kind k cancels all of.
func wholeWord(k delivery.Kind) string {
	switch k {
	case delivery.KindPhotos:
		return "batch"
	case delivery.KindUpload:
		return "upload"
	}
	return "message"
}

// snapshots are the journal's records as the queue shows jobs.
// readJournal opens the journal in stateDir and reads every job's
// snapshot, finished ones too, without a queue (the window may hold the
// jobs): what `carrier jobs` and `carrier status` list. lerr names the
// records that could not be read (the rest are there); err, a journal
// that could not be opened.
func readJournal(stateDir string) (jobs []transfer.Snapshot, lerr, err error) {
	j, err := transfer.OpenJournal(stateDir)
	if err != nil {
		return nil, nil, err
	}
	recs, lerr := j.List()
	return snapshots(recs), lerr, nil
}

func snapshots(recs []*transfer.Record) []transfer.Snapshot {
	out := make([]transfer.Snapshot, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.Snapshot())
	}
	return out
}

func runJobs(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "jobs", "[--all] [--state-dir DIR]")
	var tf transferFlags
	tf.add(fs, env.dirs())
	all := fs.Bool("all", false, "list finished and cancelled jobs too")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	jobs, lerr, err := readJournal(tf.stateDir)
	if err != nil {
		return err
	}
	graphs := app.NewGraphs(jobs)
	part := map[string]bool{}
	for _, s := range jobs {
		for _, n := range s.Needs {
			part[n] = true
		}
	}
	open := func(s transfer.Snapshot) bool { return s.State.Unfinished() || s.State == transfer.StateFailed }
	tw := tabwriter.NewWriter(env.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tCONFIRMED\tACCOUNT\tWHAT")
	n := 0
	for _, s := range jobs {
		if part[s.ID] {
			continue // under its message
		}
		g, _ := graphs.Of(s.ID)
		show := *all || open(g.Msg)
		for _, p := range g.Parts {
			show = show || open(p)
		}
		if !show {
			continue
		}
		n++
		line := func(indent string, s transfer.Snapshot) {
			what := s.Label
			if what == "" {
				what = s.Path
			}
			switch {
			case s.State == transfer.StateSignIn:
				what += " · " + parkedWords(s)
			case s.State == transfer.StateScheduled && !s.SendAt.IsZero():
				what += " · " + scheduledWords(s.SendAt, s.UploadFrom, time.Now())
			case s.State == transfer.StateMissing:
				what += " · " + ghostWords(s.ID, s.Path)
			case s.Error != "":
				what += " · " + s.Error
			}
			// A job of no account goes as the server's default one.
			account := cmp.Or(s.Account, "(default)")
			fmt.Fprintf(tw, "%s%s\t%s\t%s/%s\t%s\t%s\n", indent, s.ID, s.State, compose.HumanSize(s.Confirmed), compose.HumanSize(s.Size), app.Printable(account), app.Printable(what))
		}
		line("", g.Msg)
		for _, p := range g.Parts {
			line("  ", p)
		}
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintln(env.Stderr, "no unfinished jobs (carrier jobs --all lists the finished ones too)")
	}
	if lerr != nil {
		return fmt.Errorf("some journal records could not be read: %w", lerr)
	}
	return nil
}

// idleQueue opens the journal's queue, with the configuration it was
// opened with, for a command that runs nothing (cancels): its events only
// need room.
func (tf *transferFlags) idleQueue(ctx context.Context, env *Env) (*app.Queue, transfer.Config, error) {
	events := make(chan transfer.Event, 64)
	cfg, err := tf.config(ctx, env, events, nil)
	if err != nil {
		return nil, cfg, err
	}
	q, err := app.OpenQueue(cfg, app.NewSpool(app.SpoolDir(tf.stateDir)))
	if err != nil {
		return nil, cfg, err
	}
	go func() {
		for range events {
		}
	}()
	return q, cfg, nil
}
