package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/app/photos"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "photos",
		Summary: "post pictures and videos to Google Photos (resumable, in batches, into an album if asked); prints each file's media item and link; `photos albums` lists Carrier's albums",
		Run:     runPhotos,
	})
}

const photosUsage = "[upload] [--album NAME] [--description TEXT] [--else-drive] [--from ADDRESS] FILE|FOLDER... [--endpoint URL] [transfer flags]\n       carrier photos albums [--endpoint URL]"

// parseInterspersed reads flags wherever they stand among the arguments,
// as people type them after the files.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &UsageError{Msg: err.Error()}
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runPhotos(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "upload" {
		args = args[1:]
	} else if len(args) > 0 && args[0] == "albums" {
		return runPhotosAlbums(ctx, env, args[1:])
	}
	fs := newFlagSet(env, "photos", photosUsage)
	var uf uploadFlags
	uf.add(fs, env.dirs())
	uf.addFrom(fs, "post to the Google Photos library of")
	album := fs.String("album", "", "put the items in the album of this title that Carrier made, or in a new one of it")
	desc := fs.String("description", "", "the description of every item (fewer than 1,000 characters)")
	elseDrive := fs.Bool("else-drive", false, "send each file Google Photos refuses (sound, another type, too large) to Google Drive instead, not shared")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usagef("name the pictures and videos to post: carrier photos %s", photosUsage)
	}
	if _, err := uf.check(); err != nil {
		return err
	}
	if files, err = photosFolders(env, files, *elseDrive); err != nil {
		return err
	}
	// Refused files are named before any sign-in or byte, unless they
	// are to go to Drive.
	var toDrive []string
	if *elseDrive {
		var err error
		if files, toDrive, _, err = photos.SplitPhotos(files); err != nil {
			return err
		}
	} else if _, err := photos.CheckPhotos(files); err != nil {
		return err
	}
	tok, err := uf.givenToken(env)
	if err != nil {
		return err
	}
	kind := auth.Photos
	if len(files) == 0 {
		kind = auth.Links
	}
	t, err := uf.resolve(ctx, tok, kind)
	if err != nil {
		return err
	}
	defer t.close()
	if len(files) > 0 {
		if err := app.MayDrive(ctx, len(toDrive), t.may); err != nil {
			return err
		}
	}
	q, done, err := runQueue(ctx, env, &uf.transferFlags, t.auth)
	if err != nil {
		return err
	}
	defer done()
	q.Bind(t.account)
	p := photos.Photos{Root: photos.PhotosRoot(t.base), Drive: app.Drive{Root: t.base, Auth: t.auth}}
	settings := func(s *transfer.Spec) { s.ChunkSize = uf.chunkSize }
	var driveJobs [][]string
	for _, f := range toDrive {
		jobs, err := q.DriveUpload(ctx, p.Drive, f, message.ShareRecipients, nil, 0, settings)
		if err != nil {
			return err
		}
		driveJobs = append(driveJobs, jobs)
	}
	if len(files) == 0 {
		if err := finishElseDrive(ctx, env, q, toDrive, driveJobs); err != nil {
			return err
		}
		t.remember()
		return nil
	}
	// What is new, and what it needs of the day's quota, is said before
	// the first byte (stdout: the progress printer owns stderr).
	announce := func(b *photos.PhotosBatch) {
		for _, line := range photosAnnounce(b, clockNow()) {
			fmt.Fprintln(env.Stdout, line)
		}
	}
	b, err := photos.Of(q).PhotosUpload(ctx, p, files, photos.PhotosOptions{Album: *album, Description: *desc, Announce: announce}, settings)
	if err != nil {
		return err
	}
	err = errors.Join(finishPhotos(ctx, env, q, b), finishElseDrive(ctx, env, q, toDrive, driveJobs))
	if err == nil {
		t.remember()
	}
	if b.AlbumID != "" {
		// Stdout, not stderr: the progress printer owns stderr until the
		// queue closes.
		how := "added to the album Carrier made before"
		if b.AlbumMade {
			how = "a new album"
		}
		fmt.Fprintf(env.Stdout, "album %s: %s %s (%s)\n", app.Printable(b.AlbumTitle), b.AlbumID, app.Printable(b.AlbumURL), how)
	}
	return err
}

// photosFolders gives, for each folder named, the files under it
// (photos.WalkMedia: in name order, hidden ones left out), and keeps the
// files named as they are. A file found in a folder that Photos refuses
// by its type or size (a sidecar, a note) is skipped, and said, unless
// --else-drive sends those to Drive; a file named is refused as before.
func photosFolders(env *Env, args []string, elseDrive bool) ([]string, error) {
	var out, skipped []string
	for _, a := range args {
		if fi, err := os.Stat(a); err != nil || !fi.IsDir() {
			out = append(out, a)
			continue
		}
		found, problems := photos.WalkMedia([]string{a})
		if len(problems) > 0 {
			return nil, errors.Join(problems...)
		}
		for _, f := range found {
			if !elseDrive {
				if _, err := compose.CheckPhotos(f); errors.Is(err, compose.ErrNotForPhotos) {
					skipped = append(skipped, app.Printable(filepath.Base(f)))
					continue
				}
			}
			out = append(out, f)
		}
	}
	if len(skipped) > 0 {
		names := strings.Join(skipped[:min(5, len(skipped))], ", ")
		if len(skipped) > 5 {
			names += fmt.Sprintf(" and %s more", app.Thousands(len(skipped)-5))
		}
		fmt.Fprintf(env.Stderr, "carrier photos: skipping what Google Photos does not take in the folders: %s\n", names)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no picture or video in %s", strings.Join(args, ", "))
	}
	return out, nil
}

// photosAnnounce says what a batch holds before it goes: the files
// already there and the new ones, and what the new ones need of Google
// Photos' daily quota and when they will be in ("1,214 already in the
// album, 37 new" / "37 files need 38 of Google Photos' 10,000 requests a
// day").
func photosAnnounce(b *photos.PhotosBatch, now time.Time) []string {
	where := "in Google Photos"
	if b.AlbumTitle != "" {
		where = "in the album " + app.Printable(b.AlbumTitle)
	}
	if b.Plan.Files == 0 {
		all := "the file is"
		if b.Already != 1 {
			all = "all " + app.Thousands(b.Already) + " files are"
		}
		return []string{fmt.Sprintf("Nothing new to send: %s already %s.", all, where)}
	}
	var lines []string
	if b.Already > 0 {
		lines = append(lines, fmt.Sprintf("%s already %s, %s new.", app.Thousands(b.Already), where, app.Thousands(b.Plan.Files)))
	}
	pl := b.Plan
	files := "1 file needs"
	if pl.Files != 1 {
		files = app.Thousands(pl.Files) + " files need"
	}
	line := fmt.Sprintf("%s %s of Google Photos' %s requests a day", files, app.Thousands(pl.Requests), app.Thousands(pl.Quota))
	if pl.Days > 1 {
		line += fmt.Sprintf(": about %d days at Google Photos' daily limit: %s today, the rest after midnight Pacific (%s here)",
			pl.Days, app.Thousands(pl.Today), pl.Reset.Local().Format("15:04 Mon 2 Jan"))
	}
	return append(lines, line+".")
}

// runPhotosAlbums lists the albums Carrier made: the ones --album can
// name to add to.
func runPhotosAlbums(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "photos albums", "[--endpoint URL]")
	var uf uploadFlags
	uf.add(fs, env.dirs())
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("carrier photos albums takes no arguments, not %q", fs.Arg(0))
	}
	tok, err := uf.givenToken(env)
	if err != nil {
		return err
	}
	t, err := uf.resolve(ctx, tok, auth.Photos)
	if err != nil {
		return err
	}
	defer t.close()
	p := photos.Photos{Root: photos.PhotosRoot(t.base), Drive: app.Drive{Root: t.base, Auth: t.auth}}
	albums, err := p.Albums(transfer.WithAccount(ctx, t.account))
	if err != nil {
		return err
	}
	if len(albums) == 0 {
		fmt.Fprintln(env.Stderr, "carrier photos: Carrier has made no album in this Google Photos")
		return nil
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TITLE\tITEMS\tLINK")
	for _, a := range albums {
		fmt.Fprintf(w, "%s\t%d\t%s\n", app.Printable(a.Title), a.Items, app.Printable(a.ProductURL))
	}
	return w.Flush()
}

// finishElseDrive waits for the files Photos refused to be in Drive and
// prints a line for each: its Drive file's id and link.
func finishElseDrive(ctx context.Context, env *Env, q *app.Queue, paths []string, jobs [][]string) error {
	var errs []error
	for i, js := range jobs {
		name := app.Printable(filepath.Base(paths[i]))
		s, err := q.Wait(ctx, js[0])
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted; the uploads are kept in the journal: run `carrier resume` to finish them")
			}
			return err
		}
		var f struct {
			ID          string `json:"id"`
			WebViewLink string `json:"webViewLink"`
		}
		if s.State == transfer.StateDone && s.Response != nil {
			json.Unmarshal(s.Response.Body, &f)
		}
		if f.ID == "" {
			errs = append(errs, fmt.Errorf("%s is not in Google Drive: %s", name, app.Printable(s.Error)))
			fmt.Fprintf(env.Stdout, "%s: not in Google Drive: %s\n", name, app.Printable(s.Error))
			continue
		}
		fmt.Fprintf(env.Stdout, "%s: not for Google Photos; in Google Drive: %s %s\n", name, f.ID, app.Printable(f.WebViewLink))
	}
	return errors.Join(errs...)
}

// finishPhotos waits for the batch's steps and prints a line per file: its
// media item's id and link, or why it is not in Photos.
func finishPhotos(ctx context.Context, env *Env, q *app.Queue, b *photos.PhotosBatch) error {
	stopped := false
	wait := func(id string) bool {
		s, err := q.Wait(ctx, id)
		if err != nil {
			stopped = true
			return false
		}
		if s.State != transfer.StateDone {
			stopped = true
		}
		return s.State == transfer.StateDone
	}
	if b.Album != "" {
		wait(b.Album)
	}
	for _, id := range b.Uploads {
		if ctx.Err() != nil {
			break
		}
		wait(id)
	}
	// The calls wait on every upload: one that failed leaves them waiting,
	// so they are waited for only when all went up.
	for waited := map[string]bool{}; !stopped && ctx.Err() == nil; {
		calls, err := photos.Of(q).PhotosCalls(b)
		if err != nil {
			return err
		}
		more := false
		for _, id := range calls {
			if waited[id] {
				continue
			}
			waited[id], more = true, true
			wait(id)
		}
		if !more {
			break
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; the batch is kept in the journal: run `carrier resume` to finish it")
	}
	res, err := photos.Of(q).PhotosResults(b)
	if err != nil {
		return err
	}
	failed := 0
	var cause *transfer.Failure
	quotaOnly := true // every file not in Photos waits for the daily quota
	for _, r := range res {
		name := app.Printable(filepath.Base(r.Path))
		switch {
		case r.ID != "":
			fmt.Fprintf(env.Stdout, "%s: %s %s\n", name, r.ID, app.Printable(r.ProductURL))
		default:
			failed++
			why := r.Error
			if why == "" {
				why = fmt.Sprintf("waits at its %s step (%s)", r.Step, r.State)
			}
			fmt.Fprintf(env.Stdout, "%s: not in Google Photos: %s\n", name, app.Printable(why))
			if r.Failure != nil {
				cause = r.Failure
			}
			// A file whose upload went up waits for the batch's call,
			// which waits for the others: no cause of its own.
			quotaOnly = quotaOnly && (r.Failure == nil && r.State == transfer.StateWaiting || r.Failure != nil && r.Failure.Code == transfer.FailDailyQuota)
		}
	}
	if failed == 0 {
		return nil
	}
	switch {
	case cause != nil && cause.Code == transfer.FailDailyQuota && quotaOnly:
		// Nothing failed: the files wait in the journal for the reset.
		return &quotaWaiting{fmt.Sprintf("%d of %d files are not in Google Photos yet. %s; run `carrier resume` after that, or `carrier resume --wait` to wait for it", failed, len(res), photos.PhotosQuotaWords(clockNow()))}
	case cause != nil && cause.Code == transfer.FailDailyQuota:
		return fmt.Errorf("%d of %d files are not in Google Photos. %s; run `carrier resume` after that", failed, len(res), photos.PhotosQuotaWords(clockNow()))
	case cause != nil:
		return fmt.Errorf("%d of %d files are not in Google Photos%s", failed, len(res), adviceFor(cause))
	}
	return fmt.Errorf("%d of %d files are not in Google Photos", failed, len(res))
}
