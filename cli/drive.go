package cli

import (
	"context"

	"carrier/auth"
	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/transfer"
)

func init() {
	register(&Command{
		Name:    "drive",
		Summary: "upload a file alone to Google Drive (resumable, never twice), optionally shared; prints the File with its link",
		Run:     runDrive,
	})
}

func runDrive(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "upload" {
		return usagef("usage: carrier drive upload --file F [--share-with ADDR]... [--anyone] [--link-expiry 30d] [--from ADDRESS] [--endpoint URL] [transfer flags]")
	}
	fs := newFlagSet(env, "drive upload", "--file F [--share-with ADDR]... [--anyone] [--link-expiry 30d] [--from ADDRESS] [--endpoint URL] [transfer flags]")
	var uf uploadFlags
	uf.add(fs, env.dirs())
	uf.addFrom(fs, "upload to the Google Drive of")
	file := fs.String("file", "", "the file to upload; it must not change until the upload ends")
	var with stringList
	fs.Var(&with, "share-with", "give this address read access, without a notification email (repeatable; also comma-separated)")
	anyone := fs.Bool("anyone", false, "let anyone with the link open the file")
	expiry := fs.String("link-expiry", "", "the addresses' access ends after this long, e.g. 30d (at most 365d)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if _, err := uf.check(); err != nil {
		return err
	}
	if *file == "" {
		return usagef("--file is required")
	}
	share := message.ShareRecipients
	var who []string
	for _, w := range with {
		addrs, problems := compose.ParseAddresses("--share-with", []string{w})
		if len(problems) > 0 {
			return usagef("%s: %s", problems[0].Field, problems[0].Message)
		}
		for _, a := range addrs {
			who = append(who, a.Address)
		}
	}
	switch {
	case *anyone && len(who) > 0:
		return usagef("give --anyone or --share-with, not both")
	case *anyone:
		share = message.ShareAnyone
	}
	var lf linkFlags
	lf.expiry, lf.share, lf.links, lf.over = *expiry, "recipients", "auto", "25MB"
	if *anyone {
		lf.share = "anyone"
	}
	lopts, err := lf.options()
	if err != nil {
		return err
	}
	if lopts.Expiry > 0 && len(who) == 0 && !*anyone {
		return usagef("--link-expiry applies to --share-with addresses")
	}
	tok, err := uf.givenToken(env)
	if err != nil {
		return err
	}
	t, err := uf.resolve(ctx, tok, auth.Links)
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
	jobs, err := q.DriveUpload(ctx, app.Drive{Root: t.base, Auth: t.auth}, *file, share, who, lopts.Expiry, func(s *transfer.Spec) { s.ChunkSize = uf.chunkSize })
	if err != nil {
		return err
	}
	for _, id := range jobs[1:] { // the shares; then the File, printed
		if rec, err := q.Wait(ctx, id); err != nil || rec.State != transfer.StateDone {
			return finishJob(ctx, env, q, id, true)
		}
	}
	if err := finishJob(ctx, env, q, jobs[0], true); err != nil { // the File, with its webViewLink
		return err
	}
	t.remember()
	return nil
}
