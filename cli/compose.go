package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"carrier/compose"
	"carrier/internal/platform"
)

func init() {
	register(&Command{Name: "compose", Summary: "write a message to an .eml file, checked against its method's limit", Run: runCompose})
}

func runCompose(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "compose", "--to ADDR ... [--cc] [--bcc] [--from] [--subject] (--body TEXT | --body-file F) [--html-file F] [--attach FILE]... [--as send|draft|insert|import] --out FILE.eml")
	var mf messageFlags
	mf.register(fs)
	out := fs.String("out", "", "where to write the message (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out FILE.eml is required")
	}
	msg, method, err := mf.message(env)
	if err != nil {
		return err
	}
	dir := filepath.Dir(*out)
	sp, err := compose.Build(ctx, msg, method, dir)
	if err != nil {
		return err
	}
	if err := os.Rename(sp.Path, *out); err != nil {
		os.Remove(sp.Path)
		return fmt.Errorf("cannot write %s: %w", *out, err)
	}
	platform.Private(*out) // a message is private: mode 0600, or an owner-only access list on Windows
	fmt.Fprintf(env.Stderr, "wrote %s: %s (%d bytes), sha256 %s; within the %s limit of %s\n",
		*out, compose.HumanSize(sp.Size), sp.Size, sp.SHA256, method, compose.HumanSize(method.Limit()))
	return nil
}
