package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/sandbox"
)

func init() {
	register(&Command{Name: "login", Summary: "sign in to Google or a sandbox; the tokens go to the OS keychain", Run: runLogin})
	register(&Command{Name: "whoami", Summary: "show the account signed in at an endpoint", Run: runWhoami})
	register(&Command{Name: "logout", Summary: "sign out: revoke the sign-in and remove it from the keychain", Run: runLogout})
}

const endpointHelp = "API endpoint: a sandbox's URL (e.g. http://" + app.DefaultSandboxAddr + "), or google (default: the embedded sandbox)"

// endpointArg reads --endpoint. Empty means the embedded sandbox, started
// in-process (until the returned stop) unless a Carrier already serves it.
func endpointArg(ctx context.Context, env *Env, raw string) (string, func() error, error) {
	ep, _, stop, err := endpointAndToken(ctx, env, raw)
	return ep, stop, err
}

// endpointAndToken is endpointArg, with the sandbox's static token when
// Carrier knows it: the embedded sandbox's own (proven), else none.
func endpointAndToken(ctx context.Context, env *Env, raw string) (string, string, func() error, error) {
	none := func() error { return nil }
	switch strings.TrimSpace(raw) {
	case "":
		e, err := app.StartEmbedded(ctx, env.dirs().Sandbox(), nil)
		if err != nil {
			return "", "", none, fmt.Errorf("cannot start the embedded sandbox: %w", err)
		}
		ep, err := auth.CanonicalEndpoint(e.URL)
		if err != nil {
			e.Close()
			return "", "", none, err
		}
		return ep, e.Token, e.Close, nil
	case "google":
		return auth.GoogleEndpoint, "", none, nil
	}
	ep, err := auth.CanonicalEndpoint(raw)
	if err != nil {
		return "", "", none, usagef("--endpoint: %v", err)
	}
	tok, _ := app.VerifiedToken(ctx, env.dirs().Sandbox(), ep, nil)
	return ep, tok, none, nil
}

func runLogin(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "login", "[--endpoint URL | --client-secret FILE] [--account ADDRESS] [--for send,drafts,insert,timeline] [--no-browser]")
	account := fs.String("account", "", "the account to sign in (offered first in the browser); others stay signed in beside it (carrier accounts lists them)")
	endpoint := fs.String("endpoint", "", "sign in to the sandbox at this URL (default: the embedded sandbox)")
	secretFile := fs.String("client-secret", "", "sign in to Google with your own OAuth client: the JSON of a \"Desktop app\" client from Google Cloud Console (see README)")
	noBrowser := fs.Bool("no-browser", false, "print the sign-in address instead of opening a browser")
	kinds := fs.String("for", string(auth.Send), "what Carrier may do, comma-separated: send, drafts, insert, timeline, links (Google Drive links for files too large to attach) (added to what the account granted before)")
	timeout := fs.Duration("timeout", auth.DefaultLoginTimeout, "how long to wait for the browser")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	k, err := auth.ParseKinds(*kinds)
	if err != nil {
		return usagef("--for: %v", err)
	}
	scopes, _ := auth.ScopesFor(k...)

	var cfg *auth.Config
	sandboxToken := "" // a sandbox signs in only who proves to hold its token
	switch {
	case *endpoint != "" && *secretFile != "":
		return usagef("give --endpoint (a sandbox) or --client-secret (Google), not both")
	case *secretFile != "":
		data, err := os.ReadFile(*secretFile)
		if err != nil {
			return fmt.Errorf("cannot read the client secret file: %w (download it from Google Cloud Console, see README)", err)
		}
		if cfg, err = auth.GoogleConfig(data); err != nil {
			return fmt.Errorf("--client-secret %s: %w", *secretFile, err)
		}
	default:
		ep, tok, stop, err := endpointAndToken(ctx, env, *endpoint)
		if err != nil {
			return err
		}
		defer stop()
		if tok == "" {
			tok = os.Getenv("CARRIER_TOKEN")
		}
		sandboxToken = tok
		if ep == auth.GoogleEndpoint {
			return usagef("to sign in to Google, give --client-secret FILE (your OAuth client, see README)")
		}
		if cfg, err = auth.SandboxConfig(ep); err != nil {
			return usagef("--endpoint: %v", err)
		}
	}
	// Asking again for what was granted keeps the new sign-in from losing
	// it: the new tokens replace the old.
	prev, err := auth.Load(cfg.Endpoint)
	if *account != "" {
		prev, err = auth.LoadAccount(cfg.Endpoint, *account)
	}
	if err == nil {
		scopes = slices.Compact(slices.Sorted(slices.Values(append(scopes, prev.Scopes()...))))
	}

	if sandboxToken != "" {
		cfg.AuthParams = func(challenge, redirect, scope string) map[string]string {
			return map[string]string{sandbox.ProofParam: sandbox.ConsentProof(sandboxToken, challenge, redirect, scope)}
		}
	}
	acct, err := auth.Login(ctx, cfg, auth.LoginOptions{Scopes: scopes, NoBrowser: *noBrowser, Out: env.Stdout, Timeout: *timeout, Hint: *account})
	if err != nil {
		if errors.Is(err, auth.ErrTimeout) && !*noBrowser {
			return fmt.Errorf("%w (with --no-browser, Carrier prints the address for you to open)", err)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "Signed in as %s at %s; Carrier may: %s.\n", acct.Address, acct.Endpoint, canList(acct))
	noteAccount(env, acct.Endpoint, acct.Address, true)
	if *account != "" && !strings.EqualFold(acct.Address, *account) {
		fmt.Fprintf(env.Stderr, "carrier login: the browser signed in %s, not %s; %s is now the default sender (carrier send --from chooses)\n", acct.Address, *account, acct.Address)
	}
	if n := len(parkedIn(env.dirs().State)); n > 0 {
		fmt.Fprintf(env.Stdout, "%d upload(s) wait for a sign-in: run `carrier resume` to finish them.\n", n)
	}
	return nil
}

func canList(a *auth.Account) string {
	var can []string
	for _, k := range auth.Kinds {
		if a.Can(k) {
			can = append(can, string(k))
		}
	}
	if len(can) == 0 {
		return "nothing yet (sign in again with --for)"
	}
	return strings.Join(can, ", ")
}

func runWhoami(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "whoami", "[--endpoint URL] [--check]")
	endpoint := fs.String("endpoint", "", endpointHelp)
	check := fs.Bool("check", false, "get a new access token, to make sure the server still accepts the sign-in")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ep, stop, err := endpointArg(ctx, env, *endpoint)
	if err != nil {
		return err
	}
	defer stop()
	acct, err := auth.Load(ep)
	if errors.Is(err, auth.ErrNotSignedIn) {
		return fmt.Errorf("%w (carrier login --endpoint %s)", err, ep)
	}
	if err != nil {
		return err
	}
	others, _ := auth.Accounts(ep)
	fmt.Fprintf(env.Stdout, "%s at %s; Carrier may: %s.\n", acct.Address, acct.Endpoint, canList(acct))
	for _, o := range others {
		if o != acct.Address {
			fmt.Fprintf(env.Stdout, "also signed in: %s (carrier logout --endpoint %s --account %s)\n", o, ep, o)
		}
	}
	if *check {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		tok, err := acct.Refresh(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "The server accepts the sign-in; the new access token is valid until %s.\n", tok.Expiry.Local().Format(time.DateTime))
	}
	return nil
}

func runLogout(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "logout", "[ADDRESS] [--endpoint URL] [--jobs keep|cancel]")
	endpoint := fs.String("endpoint", "", endpointHelp)
	account := fs.String("account", "", "the account to sign out (or give it first; default: the one used last)")
	jobs := fs.String("jobs", "keep", "what becomes of the account's unfinished uploads: keep (they wait until it signs in again; carrier login --account ADDRESS, then carrier resume) or cancel")
	var tf transferFlags
	tf.add(fs, env.dirs())
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		*account, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	choice, err := app.ParseUnfinishedJobs(*jobs)
	if err != nil {
		return usagef("--jobs %v", err)
	}
	ep, stop, err := endpointArg(ctx, env, *endpoint)
	if err != nil {
		return err
	}
	defer stop()
	who := *account
	if who == "" {
		a, err := auth.Load(ep)
		if err != nil {
			return err
		}
		who = a.Address
	}
	signed, err := auth.Accounts(ep)
	if err != nil {
		return err
	}
	if !slices.Contains(signed, who) {
		return fmt.Errorf("%s is not signed in at %s (signed in: %s)", who, ep, orNone(signed))
	}
	if choice == app.CancelJobs {
		if err := cancelAccountJobs(ctx, env, &tf, who); err != nil {
			return fmt.Errorf("%s is still signed in: %w", who, err)
		}
	}
	who, err = auth.Logout(ctx, ep, who)
	if errors.Is(err, auth.ErrNotRevoked) {
		fmt.Fprintf(env.Stderr, "carrier logout: %v\n", err)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Signed out %s at %s.\n", who, ep)
	noteAccount(env, ep, who, false)
	if choice == app.KeepJobs {
		if w := accountWaiting(&tf, who); w.Total() > 0 {
			verb := "waits"
			if w.Total() > 1 {
				verb = "wait"
			}
			fmt.Fprintf(env.Stdout, "%s of %s %s for it: carrier login --account %s, then carrier resume.\n", waitingWords(w), who, verb, who)
		}
	}
	return nil
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "nobody"
	}
	return strings.Join(l, ", ")
}
