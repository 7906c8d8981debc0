package cli

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"carrier/internal/app"
	"carrier/transfer"
)

// ExitSignIn is the exit status when uploads wait for a person to sign in
// again (their sign-in was revoked, expired or is missing): nothing failed,
// and `carrier login` then `carrier resume` finishes them.
const ExitSignIn = 4

// ExitQuota is the exit status when uploads wait for Google Photos' daily
// quota to reset: nothing failed, and `carrier resume` after the reset
// (or `carrier resume --wait`) sends them.
const ExitQuota = 5

// signInNeeded says which jobs wait for which account's sign-in. Main
// exits with ExitSignIn for it.
type signInNeeded struct {
	accounts []string            // in the order met
	jobs     map[string][]string // account -> job ids
	login    map[string]string   // account -> the command that signs it in
}

func (e *signInNeeded) add(s transfer.Snapshot) {
	acct := cmp.Or(s.SignInFor, s.Account, app.Origin(s.URL))
	if e.jobs == nil {
		e.jobs, e.login = map[string][]string{}, map[string]string{}
	}
	if _, ok := e.jobs[acct]; !ok {
		e.accounts = append(e.accounts, acct)
		e.login[acct] = loginCommand(s.URL)
	}
	e.jobs[acct] = append(e.jobs[acct], s.ID)
}

func (e *signInNeeded) merge(o *signInNeeded) {
	for _, a := range o.accounts {
		if _, ok := e.jobs[a]; !ok {
			if e.jobs == nil {
				e.jobs, e.login = map[string][]string{}, map[string]string{}
			}
			e.accounts = append(e.accounts, a)
			e.login[a] = o.login[a]
		}
		e.jobs[a] = append(e.jobs[a], o.jobs[a]...)
	}
}

func (e *signInNeeded) Error() string {
	var b strings.Builder
	for i, a := range e.accounts {
		if i > 0 {
			b.WriteString("\n")
		}
		ids := e.jobs[a]
		what := "1 upload waits"
		if len(ids) > 1 {
			what = fmt.Sprintf("%d uploads wait", len(ids))
		}
		fmt.Fprintf(&b, "%s for %s to sign in again (job %s); its session is kept. Sign in to %s again to continue: run `%s`, then `carrier resume`",
			what, a, strings.Join(ids, ", "), a, e.login[a])
	}
	return b.String()
}

// loginCommand is the `carrier login` that signs in where a job goes.
func loginCommand(jobURL string) string {
	u, err := url.Parse(jobURL)
	if err == nil && (u.Hostname() == "googleapis.com" || strings.HasSuffix(u.Hostname(), ".googleapis.com")) {
		return "carrier login --client-secret FILE"
	}
	if o := app.Origin(jobURL); o != "" {
		return "carrier login --endpoint " + o
	}
	return "carrier login"
}

// parkedWords is what `carrier jobs` and `resume --list` add to a parked
// job's line.
func parkedWords(s transfer.Snapshot) string {
	acct := cmp.Or(s.SignInFor, s.Account, app.Origin(s.URL))
	return fmt.Sprintf("sign in to %s again to continue (`%s`, then `carrier resume`)", acct, loginCommand(s.URL))
}

// parkedIn lists the journal's jobs that wait for a sign-in, for `carrier
// login` to say what its sign-in lets go on.
func parkedIn(stateDir string) []transfer.Snapshot {
	j, err := transfer.OpenJournal(stateDir)
	if err != nil {
		return nil
	}
	recs, _ := j.List()
	var out []transfer.Snapshot
	for _, s := range snapshots(recs) {
		if s.State == transfer.StateSignIn {
			out = append(out, s)
		}
	}
	return slices.Clip(out)
}
