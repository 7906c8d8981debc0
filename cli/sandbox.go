package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carrier/internal/app"
	"carrier/sandbox"
)

func init() {
	register(&Command{Name: "sandbox", Summary: "run the embedded Google sandbox in the foreground", Run: runSandbox})
}

func runSandbox(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "sandbox", "[--addr HOST:PORT] [--data DIR] [--token-file F] [--print-token] [--session-ttl 168h] [--faults SPEC] [--auto-consent] [--token-ttl 1h] [--refresh-token-ttl 168h] [--refresh-token-limit 100] [--session-needs-token] [--account ADDR]...")
	addr := fs.String("addr", app.DefaultSandboxAddr, "address to listen on (loopback only unless --public)")
	public := fs.Bool("public", false, "allow a non-loopback --addr (the sandbox has no TLS: anyone on the network can reach it)")
	var hosts stringList
	fs.Var(&hosts, "host", "with --public: a name clients reach the sandbox by (repeatable; --addr's own host is always one); requests naming any other host are refused")
	dir := fs.String("data", env.dirs().Sandbox(), "data folder (one sandbox per folder)")
	token := fs.String("token", "", "bearer token API requests must carry; visible to other users in the process list, prefer --token-file (default: the data folder's own, made and printed on first use, kept in DIR/token)")
	tokenFile := fs.String("token-file", "", "read the bearer token API requests must carry from this file")
	printToken := fs.Bool("print-token", false, "print the data folder's token even if it was made before")
	ttl := fs.Duration("session-ttl", 7*24*time.Hour, "how long a resumable upload session lives")
	autoConsent := fs.Bool("auto-consent", false, "approve every OAuth sign-in at once, without showing the consent page (for tests)")
	tokenTTL := fs.Duration("token-ttl", time.Hour, "how long an OAuth access token from carrier login lives")
	refreshTTL := fs.Duration("refresh-token-ttl", 0, "how long a refresh token lives from its sign-in, as Google's 7 days (168h) for a project in \"Testing\"; 0 is forever")
	refreshLimit := fs.Int("refresh-token-limit", sandbox.DefaultRefreshTokenLimit, "live refresh tokens per account; one more ends the oldest, as Google does")
	sessionNeedsToken := fs.Bool("session-needs-token", false, "make requests to an upload session URI carry the account's access token (only Cloud Storage documents that the URI alone is enough)")
	var accounts stringList
	fs.Var(&accounts, "account", "another Google account served beside the default one, with its own mailbox and Drive (repeatable); a sign-in picks it with login_hint")
	faults := fs.String("faults", "", "fault spec, e.g. seed=7,reset=0.05,err5xx=0.05,stall=0.02,partial=0.2,dropfinal=0.1,latency=20ms,rate=20MB")
	quiet := fs.Bool("quiet", false, "log only warnings and errors")
	serialize := fs.Bool("serialize-sessions", false, "make every request to an upload session wait for the one before it, a status query included, however long that one's body stalls (by default a status query is answered at once and a new chunk or a cancel takes the session over)")
	fsync := fs.Bool("fsync", true, "make every stored chunk durable before answering; false for benchmarks of the protocol rather than the disk")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(hosts) > 0 && !*public {
		return usagef("--host names a public sandbox's addresses: give --public too")
	}
	if !*public && !sandbox.IsLoopback(*addr) {
		return usagef("--addr %s is not a loopback address; the sandbox has no TLS and its data would be open to the network. Add --public if that is really wanted", *addr)
	}
	if *ttl <= 0 {
		return usagef("--session-ttl must be positive")
	}
	if *tokenTTL <= 0 {
		return usagef("--token-ttl must be positive")
	}
	if *refreshTTL < 0 {
		return usagef("--refresh-token-ttl cannot be negative")
	}
	if *refreshLimit <= 0 {
		return usagef("--refresh-token-limit must be positive")
	}
	if _, err := sandbox.ParseFaults(*faults); err != nil {
		return usagef("--faults: %v", err)
	}
	switch {
	case *tokenFile != "" && *token != "":
		return usagef("give --token-file or --token, not both")
	case *tokenFile != "":
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("cannot read --token-file: %w", err)
		}
		if *token = strings.TrimSpace(string(b)); *token == "" {
			return usagef("--token-file %s is empty", *tokenFile)
		}
	case *token != "":
		fmt.Fprintln(env.Stderr, "carrier: warning: --token is visible to every user of this computer in the process list; use --token-file FILE instead")
	}
	if err := app.PrivateDir(*dir); err != nil {
		return err
	}
	show, folders := false, *token == ""
	if *token == "" {
		// The folder's token stays the same across runs, so the desktop
		// app and the CLI can use this sandbox without being told it. It
		// is printed once, when made (a terminal's scrollback and a CI
		// log are not private), or when asked for.
		t, made, err := app.NewSandboxToken(*dir)
		if err != nil {
			return err
		}
		*token, show = t, made || *printToken
	}
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	var publicHosts []string
	if *public {
		publicHosts = append([]string{*addr}, hosts...)
	}
	sb, err := sandbox.Open(sandbox.Options{Dir: *dir, Token: *token, SessionTTL: *ttl, Faults: *faults, Logger: logger, AutoConsent: *autoConsent, TokenTTL: *tokenTTL, NoSync: !*fsync, PublicHosts: publicHosts,
		RefreshTokenTTL: *refreshTTL, RefreshTokenLimit: *refreshLimit, SessionNeedsToken: *sessionNeedsToken, Accounts: accounts, SerializeSessions: *serialize})
	if err != nil {
		var running *sandbox.ErrAlreadyRunning
		if errors.As(err, &running) {
			return err
		}
		return fmt.Errorf("%w", err)
	}
	defer sb.Close()
	ln, err := sandbox.Listen(*addr)
	if err != nil {
		return fmt.Errorf("%w (is another program using the port? pick one with --addr 127.0.0.1:PORT, or :0 for any)", err)
	}
	fmt.Fprintln(env.Stdout, sandbox.URL(ln))
	if show {
		fmt.Fprintf(env.Stdout, "token: %s\n", *token)
	} else if folders {
		fmt.Fprintf(env.Stderr, "The token is the one made before, in %s (--print-token prints it).\n", filepath.Join(*dir, "token"))
	}
	logger.Info("sandbox ready", "url", sandbox.URL(ln), "data", *dir, "account", sb.Account(), "accounts", len(sb.Accounts()), "faults", sb.Faults())
	return sb.Serve(ctx, ln)
}
