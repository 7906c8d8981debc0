package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"carrier/auth"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// Add queues spec as transfer.Queue.Add does, binding a job that names no
// account to the account of the first job it needs that names one (a
// Drive share, a Photos batchCreate or a message waiting for its links
// goes as the account whose uploads it follows, whoever queued it), else
// to the queue's (Bind).
//
// A job belongs to the delivery of the first job it needs that has one
// (delivery.go), else to spec.Owner's; a job that has none becomes an
// upload delivery of its own (`carrier upload`, a timeline post).
func (q *Queue) Add(spec transfer.Spec) (string, error) {
	for _, n := range spec.Needs {
		if spec.Account != "" && spec.Owner != "" {
			break
		}
		if s, ok := q.Job(n); ok {
			spec.Account = cmp.Or(spec.Account, s.Account)
			spec.Owner = cmp.Or(spec.Owner, s.Owner)
		}
	}
	if spec.Account == "" {
		q.accountMu.Lock()
		spec.Account = q.account
		q.accountMu.Unlock()
	}
	if spec.Owner != "" {
		return q.Queue.Add(spec)
	}
	d, err := q.BeginDelivery(delivery.KindOf(spec.URL), spec.Label, spec.Account)
	if err != nil {
		return "", err
	}
	spec.Owner = d.ID
	id, err := q.Queue.Add(spec)
	return id, errors.Join(err, q.EndDelivery(d))
}

// Bind makes account the one every job queued from now on without an
// account goes as: a command sends as one account from start to end.
func (q *Queue) Bind(account string) {
	q.accountMu.Lock()
	q.account = account
	q.accountMu.Unlock()
}

// UnfinishedJobs is what signing an account out does with its jobs that
// are not done.
type UnfinishedJobs int

const (
	// KeepJobs parks them until the account signs in again; nothing goes
	// as the account meanwhile.
	KeepJobs UnfinishedJobs = iota
	// CancelJobs stops them for good.
	CancelJobs
)

// ParseUnfinishedJobs reads "keep" or "cancel".
func ParseUnfinishedJobs(s string) (UnfinishedJobs, error) {
	switch s {
	case "keep":
		return KeepJobs, nil
	case "cancel":
		return CancelJobs, nil
	}
	return 0, fmt.Errorf("%q: say keep (they wait for the account to sign in again) or cancel (they stop for good)", s)
}

// unfinished reports whether a job's work is still to do.
func unfinished(s transfer.Snapshot) bool {
	return s.State != transfer.StateDone && s.State != transfer.StateCancelled
}

// AccountJobs lists the unfinished jobs of the queue bound to account.
func AccountJobs(q *Queue, account string) []transfer.Snapshot {
	var out []transfer.Snapshot
	for _, s := range q.Jobs() {
		if unfinished(s) && (s.Account == account || s.Account == "" && s.SignInFor == account) {
			out = append(out, s)
		}
	}
	return out
}

// Waiting is what unfinished jobs come to for a person: messages, each
// with the Drive uploads and shares its links need, and other uploads (a
// Photos batch with its files and calls, a timeline post, a file), each
// counted once however many jobs it takes.
type Waiting struct{ Messages, Uploads int }

// Total is how many deliveries wait.
func (w Waiting) Total() int { return w.Messages + w.Uploads }

// CountWaiting counts the deliveries among jobs (a queue's, finished ones
// too: delivery.Of groups them by the delivery each names, or for jobs
// from before deliveries by what they need) that have a job not done nor
// cancelled for which mine is true.
func CountWaiting(jobs []transfer.Snapshot, mine func(transfer.Snapshot) bool) Waiting {
	byID := make(map[string]transfer.Snapshot, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
	}
	var w Waiting
	for _, d := range delivery.Of(jobs, nil) {
		if !slices.ContainsFunc(d.Members, func(m delivery.Member) bool { j := byID[m.Job]; return unfinished(j) && mine(j) }) {
			continue
		}
		switch d.Kind {
		case delivery.KindMessage, delivery.KindDraft:
			w.Messages++
		default:
			w.Uploads++
		}
	}
	return w
}

// AccountWaiting counts the deliveries of account's unfinished jobs in q
// (those AccountJobs lists): what signing it out leaves waiting.
func AccountWaiting(q *Queue, account string) Waiting {
	return CountWaiting(q.Jobs(), func(s transfer.Snapshot) bool {
		return s.Account == account || s.Account == "" && s.SignInFor == account
	})
}

// Accounts lists the accounts signed in, the default (last used) first.
func (g *Google) Accounts() []string {
	as, _ := auth.Accounts(g.endpoint)
	return as
}

// Endpoint is the API the accounts are signed in at.
func (g *Google) Endpoint() string { return g.endpoint }

// Use makes address the default sender, remembered for the next start.
func (g *Google) Use(address string) error {
	if err := auth.Use(g.endpoint, address); err != nil {
		return err
	}
	acct, err := auth.LoadAccount(g.endpoint, address)
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.acct = acct
	g.mu.Unlock()
	return nil
}

// AddAccount signs another account in beside those signed in, offering
// hint first in the browser (login_hint; "" lets the person choose), for
// sending and drafts and the kinds of work also names (what the account's
// waiting jobs need: NeededKinds). With no client file, the default
// account's client is used again.
func (g *Google) AddAccount(ctx context.Context, clientSecret []byte, hint string, also ...auth.Kind) (string, error) {
	defer g.resetCreds()
	var cfg *auth.Config
	var err error
	g.mu.Lock()
	acct := g.acct
	g.mu.Unlock()
	switch {
	case clientSecret == nil && acct != nil:
		cfg, err = acct.Config()
	case clientSecret == nil:
		// Every account signed out: the client they signed in with
		// was kept, so no file is asked for again.
		if cfg, err = auth.Client(g.endpoint); errors.Is(err, auth.ErrNoClient) {
			cfg, err = g.config(nil)
		}
	default:
		cfg, err = g.config(clientSecret)
	}
	if err != nil {
		return "", err
	}
	scopes, err := auth.ScopesFor(append(slices.Clone(windowKinds), also...)...)
	if err != nil {
		return "", err
	}
	added, err := g.login(ctx, cfg, auth.LoginOptions{Scopes: scopes, Hint: hint})
	if err != nil {
		return "", err
	}
	return g.becameSignedIn(added), nil
}

// SignOutAccount signs address out: its tokens are revoked and leave the
// keychain; its unfinished jobs in q (nil: none to mind) are cancelled or
// kept parked for a later sign-in, as jobs says. No other account's jobs
// or tokens are touched. It returns the jobs it cancelled.
func (g *Google) SignOutAccount(ctx context.Context, address string, q *Queue, jobs UnfinishedJobs) ([]string, error) {
	if !slices.Contains(g.Accounts(), address) {
		return nil, fmt.Errorf("%s is not signed in here", address)
	}
	if jobs == KeepJobs && g.creds != nil {
		// Before the tokens go, so no request slips out between.
		g.creds.SignedOut(address)
	}
	var cancelled []string
	var errs []error
	if q != nil && jobs == CancelJobs {
		for _, s := range AccountJobs(q, address) {
			if err := q.Cancel(ctx, s.ID); err != nil {
				errs = append(errs, fmt.Errorf("job %s: %w", s.ID, err))
				continue
			}
			cancelled = append(cancelled, s.ID)
		}
	}
	_, err := auth.Logout(ctx, g.endpoint, address)
	if errors.Is(err, auth.ErrNotRevoked) {
		err = nil // signed out here; Google will let the grant lapse
	}
	if err != nil {
		return cancelled, errors.Join(append(errs, err)...)
	}
	g.resetCreds()
	g.noteAccount(address, false)
	g.mu.Lock()
	if g.acct != nil && g.acct.Address == address {
		g.acct = nil
		if next, err := auth.Load(g.endpoint); err == nil {
			g.acct = next
		}
	}
	g.mu.Unlock()
	return cancelled, errors.Join(errs...)
}

// For is the authorizer of requests made as address outside the queue
// (Drive's and Photos' own calls): nil when g has no credentials.
func (g *Google) For(address string) transfer.Authorizer {
	if g.creds == nil {
		return nil
	}
	return g.creds.For(address)
}

// WindowAccounts are g's accounts as the window's Account screen and
// Compose use them, with the queue whose jobs a sign-out minds.
type WindowAccounts struct {
	G *Google
	Q *Queue
}

func (w WindowAccounts) List() []string                         { return w.G.Accounts() }
func (w WindowAccounts) Use(address string) error               { return w.G.Use(address) }
func (w WindowAccounts) For(address string) transfer.Authorizer { return w.G.For(address) }

// Add signs an account in; signing in one whose jobs wait (hint) asks
// for what they need too, Drive's for a message whose file is there.
func (w WindowAccounts) Add(ctx context.Context, clientSecret []byte, hint string) (string, error) {
	return w.G.AddAccount(ctx, clientSecret, hint, NeededKinds(w.Q, hint)...)
}

// HasClient reports whether a client is kept to sign in with, with every
// account signed out (auth.Client).
func (w WindowAccounts) HasClient() bool {
	_, err := auth.Client(w.G.endpoint)
	return err == nil
}

// AlsoAsked are the kinds of work signing address in asks for because its
// waiting jobs need them (AlsoAsked), for the window to say why.
func (w WindowAccounts) AlsoAsked(address string) []auth.Kind { return AlsoAsked(w.Q, address) }

func (w WindowAccounts) SignOut(ctx context.Context, address string, jobs UnfinishedJobs) error {
	_, err := w.G.SignOutAccount(ctx, address, w.Q, jobs)
	return err
}

// OnChange has f told when an account signed in or out elsewhere
// (Google.OnAccountsChanged): the screens that list accounts read them
// again.
func (w WindowAccounts) OnChange(f func()) { w.G.OnAccountsChanged(f) }

// Unfinished counts what waits for address: messages and other uploads,
// a message with its Drive parts once.
func (w WindowAccounts) Unfinished(address string) Waiting {
	if w.Q == nil {
		return Waiting{}
	}
	return AccountWaiting(w.Q, address)
}
