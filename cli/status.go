package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/delivery"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "status",
		Summary: "say where each thing sent stands: a message with its Drive links, a Photos batch, an upload, one line each",
		Run:     runStatus,
	})
}

// runStatus prints one line per delivery, its words from delivery.Status:
// the same phases the window's Transfers rows show, read from the journal
// and the stored deliveries without a queue (the window may hold the
// jobs). It costs one pass over the jobs, however many a batch has.
func runStatus(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "status", "[--all] [--state-dir DIR]")
	var tf transferFlags
	tf.add(fs, env.dirs())
	all := fs.Bool("all", false, "list what was sent, saved, done or cancelled too")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ds, byID, lerr, serr, err := readDeliveries(tf.stateDir)
	if err != nil {
		return err
	}
	slices.SortStableFunc(ds, func(a, b delivery.Delivery) int { return a.Created.Compare(b.Created) })
	tw := tabwriter.NewWriter(env.Stdout, 2, 8, 2, ' ', 0)
	// The standing last: a failure's words are long.
	fmt.Fprintln(tw, "ID\tCONFIRMED\tACCOUNT\tWHAT\tWHERE IT STANDS")
	n := 0
	for _, d := range ds {
		st := delivery.Status(d, byID)
		if !*all && ended(st.Phase) {
			continue
		}
		n++
		account := cmp.Or(d.Account, "(default)")
		what := d.Label
		if what == "" {
			what = jobWhat(byID[headJob(d)])
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\n", headJob(d), compose.HumanSize(st.Confirmed), compose.HumanSize(st.Size),
			app.Printable(account), app.Printable(what), app.Printable(standingWords(st, byID)))
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintln(env.Stderr, "nothing is on its way (carrier status --all lists what was sent too)")
	}
	return errors.Join(lerr, serr)
}

// readDeliveries reads the journal's deliveries without a queue (the
// window may hold the jobs), as `carrier status` and `carrier cancel`
// find them: the stored ones checked against the jobs, and those of jobs
// from before deliveries (delivery.Of), with every job by id. lerr names
// the journal records that could not be read, serr the stored
// deliveries (their jobs are grouped as from before deliveries); err, a
// journal that could not be opened.
func readDeliveries(stateDir string) (ds []delivery.Delivery, byID map[string]transfer.Snapshot, lerr, serr, err error) {
	snaps, lerr, err := readJournal(stateDir)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	byID = make(map[string]transfer.Snapshot, len(snaps))
	for _, s := range snaps {
		byID[s.ID] = s
	}
	var stored []delivery.Delivery
	store, serr := delivery.Open(delivery.Dir(stateDir))
	if serr == nil {
		stored, serr = store.List()
	}
	return delivery.Of(snaps, stored), byID, lerr, serr, nil
}

// ended reports whether a delivery standing at phase p has nothing left
// to do.
func ended(p delivery.Phase) bool {
	switch p {
	case delivery.PhaseSent, delivery.PhaseSaved, delivery.PhaseDone, delivery.PhaseCancelled:
		return true
	}
	return false
}

// headJob is the id `carrier cancel` takes for d: its message or draft,
// else its last member (a Photos batch's last call, an upload).
func headJob(d delivery.Delivery) string { return cmp.Or(app.Head(d), d.ID) }

// destinationWords names where a phase's work goes.
func destinationWords(kind string) string {
	switch kind {
	case delivery.KindDriveUpload, delivery.KindDriveShare:
		return "Google Drive"
	case delivery.KindPhotosUpload, delivery.KindPhotosItems, delivery.KindPhotosAlbum:
		return "Google Photos"
	case delivery.RouteStorage.Kind:
		return "Cloud Storage"
	case delivery.RouteTimeline.Kind, delivery.RouteAttach.Kind:
		return "the timeline"
	}
	return "Gmail"
}

// standingWords says st in the CLI's English: the phases the window's
// rows word, with the advice `carrier upload` gives for a failure.
func standingWords(st delivery.Standing, snaps map[string]transfer.Snapshot) string {
	var member transfer.Snapshot
	if st.Member != nil {
		member = snaps[st.Member.Job]
	}
	switch st.Phase {
	case delivery.PhaseQueued:
		return "queued"
	case delivery.PhaseUploading:
		return fmt.Sprintf("uploading %d of %d files to %s", st.Done, st.Total, destinationWords(st.Destination))
	case delivery.PhaseSharing:
		return "sharing its files on Google Drive"
	case delivery.PhaseSending:
		return "sending to " + destinationWords(st.Destination)
	case delivery.PhaseScheduled:
		return scheduledWords(st.SendAt, st.UploadFrom, time.Now())
	case delivery.PhaseSaving:
		return "saving the draft in Gmail"
	case delivery.PhasePosting:
		return fmt.Sprintf("making the items in Google Photos (%d of %d calls)", st.Done, st.Total)
	case delivery.PhaseQuotaWait:
		return "waiting: Google Photos' quota for today is used up; it resets at " + st.Reset.Local().Format(time.DateTime) + " and `carrier resume` goes on then"
	case delivery.PhasePaused:
		return "paused (carrier resume goes on)"
	case delivery.PhaseHeld:
		return "held: " + cmp.Or(st.Held, "waiting for the network")
	case delivery.PhaseSignIn:
		return parkedWords(member)
	case delivery.PhaseMissing:
		return "waiting: " + ghostWords(member.ID, st.Path)
	case delivery.PhaseBlocked:
		return fmt.Sprintf("waiting: %s was cancelled; carrier cancel %s cancels the rest", jobWhat(member), member.ID)
	case delivery.PhaseFailed:
		return fmt.Sprintf("failed: %s: %s%s", jobWhat(member), cmp.Or(member.Error, "it failed"), adviceFor(st.Failure))
	case delivery.PhaseCancelled:
		return "cancelled"
	case delivery.PhaseSent:
		return "sent"
	case delivery.PhaseSaved:
		return "saved as a draft"
	}
	return "done"
}

// jobWhat names a job for a person: its label, else its file's name.
func jobWhat(s transfer.Snapshot) string {
	if s.Label == "" && s.Path != "" {
		return filepath.Base(s.Path)
	}
	return cmp.Or(s.Label, s.ID)
}

// scheduledWords say when a message held for its time goes, as `carrier
// jobs` and `carrier status` print it: the time, how far off, and what
// stands already: every byte but the last, or nothing yet when the time is
// so far ahead that its upload starts later (from, non-zero).
func scheduledWords(at, from, now time.Time) string {
	when := at.Local().Format(time.DateTime)
	if d := at.Sub(now); d > 0 {
		when += " (in " + waitWords(d) + ")"
	}
	if !from.IsZero() {
		return "sending at " + when + ": its upload starts " + from.Local().Format(time.DateTime) + ", since Google keeps an unfinished upload for a week (carrier cancel undoes it)"
	}
	return "sending at " + when + ": every byte but the last is in Gmail (carrier cancel undoes it)"
}

// waitWords: a wait in round words, "45 s", "12 min", "3 h 5 min", "2 days 4 h".
func waitWords(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%d days %d h", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}
