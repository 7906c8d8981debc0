package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Several Google accounts side by side. Each account other than the
// default one is a whole sandbox of its own in DIR/accounts/ADDRESS (its
// mailbox, Drive, quota, sessions), so every API keeps the one-account
// code it has; the default account's sandbox (the root) holds the tokens
// of all of them, serves every request, and hands each to the sandbox of
// the account its token names. A session URI needs no token, so its
// request goes to whichever sandbox holds the session.

// authority is what the sandboxes of one data folder share.
type authority struct {
	root     *Sandbox
	mu       sync.Mutex
	cfg      AuthConfig
	accounts map[string]*Sandbox // other than the root's, by lower-case address
}

const accountsDir = "accounts"

// validAddress keeps an address usable as a folder name on every system
// Carrier runs on.
func validAddress(a string) bool {
	local, domain, ok := strings.Cut(a, "@")
	if !ok || local == "" || domain == "" || len(a) > 254 || strings.Contains(a, "..") ||
		strings.HasPrefix(a, ".") || strings.HasSuffix(a, ".") || !strings.Contains(domain, ".") {
		return false
	}
	for _, c := range a {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("._+-@", c)) {
			return false
		}
	}
	return strings.Count(a, "@") == 1
}

func errNoAccount(a string, have []string) *apiError {
	return notFound("The sandbox has no account %q; its accounts are %s. Add one with carrier sandbox --account or POST /sandbox/v1/accounts.", a, strings.Join(have, ", "))
}

// openAccounts opens the accounts a previous run added and those the
// options name.
func (s *Sandbox) openAccounts(extra []string) error {
	ents, _ := os.ReadDir(filepath.Join(s.dir, accountsDir))
	for _, e := range ents {
		if e.IsDir() && validAddress(e.Name()) {
			extra = append(extra, e.Name())
		}
	}
	for _, a := range extra {
		if _, err := s.AddAccount(a); err != nil {
			return err
		}
	}
	return nil
}

// AddAccount adds an account with an empty mailbox and Drive, or finds
// the one of that address. It reports whether it was new.
func (s *Sandbox) AddAccount(address string) (bool, error) {
	root := s.root
	a := strings.ToLower(strings.TrimSpace(address))
	if !validAddress(a) {
		return false, badRequest("%q is not an address the sandbox can keep: use letters, digits and . _ + - around one @, with a dot in the domain.", address)
	}
	if a == strings.ToLower(root.opts.Account) {
		return false, nil
	}
	root.auth.mu.Lock()
	defer root.auth.mu.Unlock()
	if root.auth.accounts[a] != nil {
		return false, nil
	}
	o := root.opts
	o.Dir = filepath.Join(root.dir, accountsDir, a)
	o.Account = a
	o.Faults = ""
	o.Accounts = nil
	sub, err := openOne(o)
	if err != nil {
		return false, fmt.Errorf("sandbox: cannot open the account %s: %w", a, err)
	}
	// One fault spec for the whole server: a fault test need not know
	// which account its upload went to.
	sub.root, sub.auth, sub.faults = root, root.auth, root.faults
	root.auth.accounts[a] = sub
	return true, nil
}

// Accounts lists the addresses the sandbox answers for, the default first.
func (s *Sandbox) Accounts() []string { return s.root.auth.addresses() }

func (a *authority) addresses() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.accounts)+1)
	for k := range a.accounts {
		out = append(out, k)
	}
	slices.Sort(out)
	return append([]string{a.root.opts.Account}, out...)
}

func (a *authority) subs() []*Sandbox {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*Sandbox, 0, len(a.accounts))
	for _, sub := range a.accounts {
		out = append(out, sub)
	}
	return out
}

// accountSandbox is the sandbox of an address, nil if there is none.
func (s *Sandbox) accountSandbox(address string) *Sandbox {
	root := s.root
	if strings.EqualFold(address, root.opts.Account) {
		return root
	}
	root.auth.mu.Lock()
	defer root.auth.mu.Unlock()
	return root.auth.accounts[strings.ToLower(address)]
}

// signInAccount is whom a sign-in is for: the login_hint when given (as
// Google's account chooser preselects it), else the sign-in default.
func (s *Sandbox) signInAccount(hint string) (string, bool) {
	if hint == "" {
		hint = s.AuthConfig().SignInAccount
	}
	if hint == "" {
		return s.root.opts.Account, true
	}
	sub := s.accountSandbox(strings.TrimSpace(hint))
	if sub == nil {
		return "", false
	}
	return sub.opts.Account, true
}

// holding is the account sandbox whose store has key in bucket, the root
// when none has.
func (s *Sandbox) holding(bucket []byte, key string) *Sandbox {
	subs := s.auth.subs()
	if len(subs) == 0 || key == "" {
		return s
	}
	for _, c := range append([]*Sandbox{s}, subs...) {
		found := false
		c.db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucket); b != nil {
				found = b.Get([]byte(key)) != nil
			}
			return nil
		})
		if found {
			return c
		}
	}
	return s
}

// serveAccounts lists the accounts (GET) or adds one (POST
// {"email":"ADDRESS"}).
func (s *Sandbox) serveAccounts(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, ok := controlBody(w, r)
		if !ok {
			return
		}
		var in struct {
			Email string `json:"email"`
		}
		if err := json.Unmarshal(body, &in); err != nil || in.Email == "" {
			writeError(w, badRequest(`The body must be JSON such as {"email": "work@carrier.sandbox"}.`))
			return
		}
		added, err := s.AddAccount(in.Email)
		if err != nil {
			writeError(w, apiErrorOr(err, errorf(500, "backendError", "%v", err)))
			return
		}
		if added {
			s.log.Info("account added", "account", strings.ToLower(in.Email))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"accounts": s.Accounts(), "default": s.root.opts.Account})
}

// servePasswordChange plays a password change: POST
// /sandbox/v1/accounts/ADDRESS/password.
func (s *Sandbox) servePasswordChange(w http.ResponseWriter, r *http.Request) {
	n, err := s.ChangePassword(r.PathValue("account"))
	if err != nil {
		writeError(w, apiErrorOr(err, errorf(500, "backendError", "%v", err)))
		return
	}
	s.log.Info("password changed", "tokensRevoked", n)
	writeJSON(w, http.StatusOK, map[string]any{"tokensRevoked": n})
}
