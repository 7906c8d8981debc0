package sandbox

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The lifecycles of Google's refresh tokens (PROTOCOL.md 9), which the
// sandbox plays so that a client's handling of a dead sign-in can be
// tested: a lifetime (an External project in "Testing" gets 7 days), a
// password change (every token with a Gmail scope ends), and a cap on live
// refresh tokens per client and account (the oldest ends). Six months
// unused is the lifetime rule with another number.

// TestingRefreshTTL is the lifetime Google gives refresh tokens of an
// External project whose publishing status is "Testing".
const TestingRefreshTTL = 7 * 24 * time.Hour

// DefaultRefreshTokenLimit is Google's cap on live refresh tokens per
// OAuth client and account.
const DefaultRefreshTokenLimit = 100

// AuthConfig is what the sandbox does with sign-ins, settable at run time
// (SetAuthConfig, PUT /sandbox/v1/auth).
type AuthConfig struct {
	// RefreshTokenTTL is how long a refresh token lives from its consent;
	// 0 is forever (a project in production). It applies to tokens
	// issued after it is set, as a project's status does.
	RefreshTokenTTL time.Duration
	// RefreshTokenLimit caps the live refresh tokens of the client and
	// one account; issuing one more ends the oldest. 0 means 100.
	RefreshTokenLimit int
	// SessionNeedsToken makes every request to a session URI carry a
	// live access token of the account that started the session (the
	// static token stands for the default account). Off, the URI alone
	// authorises, which only Cloud Storage documents.
	SessionNeedsToken bool
	// SignInAccount is whom a sign-in without login_hint signs in as;
	// "" is the default account.
	SignInAccount string
}

// oauthDB is where tokens live: the default account's store, whichever
// account's sandbox asks.
func (s *Sandbox) oauthDB() *bolt.DB { return s.root.db }

// canonAccount is the account a record names, "" being the default one
// (records from before the sandbox had several accounts).
func (s *Sandbox) canonAccount(a string) string {
	if a == "" {
		return s.root.opts.Account
	}
	return a
}

func (s *Sandbox) sameAccount(a, b string) bool {
	return strings.EqualFold(s.canonAccount(a), s.canonAccount(b))
}

func (s *Sandbox) forEachGrant(tx *bolt.Tx, fn func(key string, g *grantRec)) error {
	c := tx.Bucket(bOAuth).Cursor()
	for k, _ := c.Seek([]byte("r:")); k != nil && strings.HasPrefix(string(k), "r:"); k, _ = c.Next() {
		var g grantRec
		if getJSON(tx, bOAuth, string(k), &g) == nil {
			fn(string(k), &g)
		}
	}
	return nil
}

// putGrant stores a new refresh token, with the lifetime in force, and
// ends the account's oldest live ones beyond the limit.
func (s *Sandbox) putGrant(tx *bolt.Tx, key string, scopes []string, account string) error {
	cfg := s.AuthConfig()
	now := s.now()
	g := grantRec{Scopes: scopes, Created: now, Account: account, Seq: nextSeq(tx)}
	if cfg.RefreshTokenTTL > 0 {
		g.Expires = now.Add(cfg.RefreshTokenTTL)
	}
	if err := putJSON(tx, bOAuth, key, &g); err != nil {
		return err
	}
	type live struct {
		key     string
		created time.Time
		seq     uint64
	}
	var all []live
	s.forEachGrant(tx, func(k string, o *grantRec) {
		if s.sameAccount(o.Account, account) && !o.expired(now) {
			all = append(all, live{k, o.Created, o.Seq})
		}
	})
	limit := cfg.RefreshTokenLimit
	if limit <= 0 {
		limit = DefaultRefreshTokenLimit
	}
	if len(all) <= limit {
		return nil
	}
	slices.SortFunc(all, func(a, b live) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, o := range all[:len(all)-limit] {
		revokeGrant(tx, o.key)
	}
	return nil
}

// isGmailScope says whether a scope opens any part of Gmail: those are
// the tokens a password change ends.
func isGmailScope(sc string) bool {
	for _, short := range scopesGmailAny {
		if sc == fullScope(short) {
			return true
		}
	}
	return false
}

// ChangePassword plays a password change of an account: every refresh
// and access token of it that carries a Gmail scope ends; its other
// tokens and other accounts' stay. It returns how many tokens ended.
func (s *Sandbox) ChangePassword(account string) (int, error) {
	sub := s.root.accountSandbox(strings.TrimSpace(account))
	if sub == nil {
		return 0, errNoAccount(account, s.root.auth.addresses())
	}
	account = sub.opts.Account
	n := 0
	err := s.oauthDB().Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bOAuth)
		var grants []string
		s.forEachGrant(tx, func(k string, g *grantRec) {
			if s.sameAccount(g.Account, account) && slices.ContainsFunc(g.Scopes, isGmailScope) {
				grants = append(grants, k)
			}
		})
		for _, k := range grants {
			n += 1 + countAccess(tx, k)
			revokeGrant(tx, k)
		}
		var drop [][]byte
		c := b.Cursor()
		for k, _ := c.Seek([]byte("a:")); k != nil && strings.HasPrefix(string(k), "a:"); k, _ = c.Next() {
			var a accessRec
			if getJSON(tx, bOAuth, string(k), &a) == nil && s.sameAccount(a.Account, account) && slices.ContainsFunc(a.Scopes, isGmailScope) {
				drop = append(drop, slices.Clone(k))
			}
		}
		for _, k := range drop {
			b.Delete(k)
		}
		n += len(drop)
		return nil
	})
	return n, err
}

func countAccess(tx *bolt.Tx, grant string) int {
	n := 0
	c := tx.Bucket(bOAuth).Cursor()
	for k, v := c.Seek([]byte("a:")); k != nil && strings.HasPrefix(string(k), "a:"); k, v = c.Next() {
		var a accessRec
		if json.Unmarshal(v, &a) == nil && a.Grant == grant {
			n++
		}
	}
	return n
}

// AuthConfig returns the sign-in rules in force.
func (s *Sandbox) AuthConfig() AuthConfig {
	a := s.root.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

// SetAuthConfig replaces the sign-in rules. A SignInAccount the sandbox
// does not have is refused.
func (s *Sandbox) SetAuthConfig(c AuthConfig) error {
	c.SignInAccount = strings.ToLower(strings.TrimSpace(c.SignInAccount))
	if c.SignInAccount != "" && s.root.accountSandbox(c.SignInAccount) == nil {
		return errNoAccount(c.SignInAccount, s.root.auth.addresses())
	}
	if c.RefreshTokenTTL < 0 || c.RefreshTokenLimit < 0 {
		return badRequest("refreshTokenTTL and refreshTokenLimit cannot be negative.")
	}
	a := s.root.auth
	a.mu.Lock()
	a.cfg = c
	a.mu.Unlock()
	return nil
}

type authConfigJSON struct {
	RefreshTokenTTL   string `json:"refreshTokenTTL"` // a Go duration, "0" for none
	RefreshTokenLimit int    `json:"refreshTokenLimit"`
	SessionNeedsToken bool   `json:"sessionNeedsToken"`
	SignInAccount     string `json:"signInAccount"`
}

func (c AuthConfig) toJSON(def string) authConfigJSON {
	lim := c.RefreshTokenLimit
	if lim == 0 {
		lim = DefaultRefreshTokenLimit
	}
	acct := c.SignInAccount
	if acct == "" {
		acct = def
	}
	return authConfigJSON{RefreshTokenTTL: c.RefreshTokenTTL.String(), RefreshTokenLimit: lim, SessionNeedsToken: c.SessionNeedsToken, SignInAccount: acct}
}

// serveAuthControl reads and sets the sign-in rules: PUT /sandbox/v1/auth
// with any of {"refreshTokenTTL":"168h","refreshTokenLimit":100,
// "sessionNeedsToken":true,"signInAccount":"a@b"}; a field left out stays.
func (s *Sandbox) serveAuthControl(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		in, ok := controlFields(w, r, `{"refreshTokenTTL": "168h", "refreshTokenLimit": 100, "sessionNeedsToken": true, "signInAccount": "you@carrier.sandbox"}`)
		if !ok {
			return
		}
		c := s.AuthConfig()
		for k, v := range in {
			var err error
			switch k {
			case "refreshTokenTTL":
				c.RefreshTokenTTL, err = parseLifetime(v)
			case "refreshTokenLimit":
				err = json.Unmarshal(v, &c.RefreshTokenLimit)
			case "sessionNeedsToken":
				err = json.Unmarshal(v, &c.SessionNeedsToken)
			case "signInAccount":
				err = json.Unmarshal(v, &c.SignInAccount)
			default:
				writeError(w, badRequest("Unknown field %q: the sign-in controls are refreshTokenTTL, refreshTokenLimit, sessionNeedsToken and signInAccount.", k))
				return
			}
			if err != nil {
				writeError(w, badRequest("%s: %v", k, err))
				return
			}
		}
		if err := s.SetAuthConfig(c); err != nil {
			writeError(w, apiErrorOr(err, badRequest("%v", err)))
			return
		}
		s.log.Info("sign-in rules changed", "refreshTokenTTL", c.RefreshTokenTTL, "refreshTokenLimit", c.RefreshTokenLimit, "sessionNeedsToken", c.SessionNeedsToken)
	}
	writeJSON(w, http.StatusOK, s.AuthConfig().toJSON(s.root.opts.Account))
}

// parseLifetime takes a Go duration ("168h", "30s") or a number of
// seconds; 0 or "" is no expiry.
func parseLifetime(v json.RawMessage) (time.Duration, error) {
	var secs float64
	if json.Unmarshal(v, &secs) == nil {
		if secs < 0 {
			return 0, badRequest("a lifetime cannot be negative")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	var str string
	if err := json.Unmarshal(v, &str); err != nil {
		return 0, badRequest(`a lifetime is a duration such as "168h" or "30s", or a number of seconds`)
	}
	if str == "" || str == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(str)
	if err != nil || d < 0 {
		return 0, badRequest(`a lifetime is a duration such as "168h" or "30s", or a number of seconds; not %q`, str)
	}
	return d, nil
}
