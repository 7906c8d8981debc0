package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "photos",
		Summary: "post pictures and videos to Google Photos (resumable, in batches, into a new album if asked); prints each file's media item and link",
		Run:     runPhotos,
	})
}

const photosUsage = "[upload] [--album NAME] [--description TEXT] FILE... [--endpoint URL] [transfer flags]"

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
	}
	fs := newFlagSet(env, "photos", photosUsage)
	var uf uploadFlags
	uf.add(fs, env.dirs())
	album := fs.String("album", "", "put the items in a new album of this title, made by Carrier")
	desc := fs.String("description", "", "the description of every item (fewer than 1,000 characters)")
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
	// Refused files are named before any sign-in or byte.
	if _, err := app.CheckPhotos(files); err != nil {
		return err
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
	q, done, err := runQueue(ctx, env, &uf.transferFlags, t.auth)
	if err != nil {
		return err
	}
	defer done()
	q.Bind(t.account)
	p := app.Photos{Root: app.PhotosRoot(t.base), Drive: app.Drive{Root: t.base, Auth: t.auth}}
	b, err := q.PhotosUpload(ctx, p, files, app.PhotosOptions{Album: *album, Description: *desc}, func(s *transfer.Spec) { s.ChunkSize = uf.chunkSize })
	if err != nil {
		return err
	}
	return finishPhotos(ctx, env, q, b)
}

// finishPhotos waits for the batch's steps and prints a line per file: its
// media item's id and link, or why it is not in Photos.
func finishPhotos(ctx context.Context, env *Env, q *app.Queue, b *app.PhotosBatch) error {
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
		calls, err := q.PhotosCalls(b)
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
	res, err := q.PhotosResults(b)
	if err != nil {
		return err
	}
	failed := 0
	var cause error
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
			if r.Cause != nil {
				cause = r.Cause
			}
		}
	}
	if failed == 0 {
		return nil
	}
	switch {
	case errors.Is(cause, transfer.ErrDailyQuota):
		return fmt.Errorf("%d of %d files are not in Google Photos. %s; run `carrier resume` after that", failed, len(res), app.PhotosQuotaWords(time.Now()))
	case cause != nil:
		return fmt.Errorf("%d of %d files are not in Google Photos%s", failed, len(res), advice[cause])
	}
	return fmt.Errorf("%d of %d files are not in Google Photos", failed, len(res))
}
