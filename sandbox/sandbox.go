// Package sandbox is Carrier's embedded stand-in for Google's upload
// endpoints: Gmail and Mirror media uploads, Cloud Storage objects, Drive
// files with their sharing (drive.go), Google Photos' library and its
// second resumable dialect (photos.go), their read endpoints, and the resumable upload protocol with the behaviour of
// real Google servers (docs/PROTOCOL.md). It shares no code with package
// transfer on purpose: it is the other side of the wire.
package sandbox

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultAccount is the mailbox address the sandbox answers for.
const DefaultAccount = "you@carrier.sandbox"

// Options configure a sandbox.
type Options struct {
	Dir        string           // data folder (created 0700)
	Token      string           // bearer token API requests must carry; session URIs need none unless SessionNeedsToken
	Account    string           // the mailbox's address; DefaultAccount if empty
	SessionTTL time.Duration    // how long a resumable session lives; 0 means 168h
	Faults     string           // fault spec (see ParseFaults); "" for none
	Logger     *slog.Logger     // nil discards
	Now        func() time.Time // nil means time.Now

	// HeaderTimeout bounds how long a client may take to send its request
	// headers, BodyIdle how long a body may go without a byte; they keep
	// slow or vanished clients from holding connections. 0 means 10s and 2m.
	HeaderTimeout time.Duration
	BodyIdle      time.Duration
	// BodyTimeout bounds how long a small body (metadata, a form, a fault
	// spec) may take in all, from its first read; media bodies instead
	// must keep arriving at 1 KiB/s or faster. 0 means 30s.
	BodyTimeout time.Duration
	// MaxConns caps the connections Serve holds at once; more wait in the
	// kernel's queue. 0 means 256.
	MaxConns int
	// HeavyRequests caps the requests that parse or render whole messages
	// at once (filing an upload, format=full/raw, attachments). 0 means 4.
	HeavyRequests int

	// PublicHosts are the Host values the sandbox answers to besides
	// 127.0.0.1, localhost and [::1] on its own port: "host:port", or
	// "host" for any port. For a sandbox started with --public; a request
	// addressed to any other name gets 421 (DNS rebinding).
	PublicHosts []string

	// OAuth (oauth.go): TokenTTL is how long an access token lives, 0
	// meaning 1h; AutoConsent approves at once every sign-in that carries
	// the proof (ConsentProof), for tests.
	TokenTTL    time.Duration
	AutoConsent bool

	// The lifecycles of sign-ins (lifecycle.go; AuthConfig has the
	// details, SetAuthConfig and PUT /sandbox/v1/auth change them):
	// RefreshTokenTTL 0 is forever, TestingRefreshTTL an External project
	// in "Testing"; RefreshTokenLimit 0 is Google's 100;
	// SessionNeedsToken makes session URIs ask for the account's token.
	RefreshTokenTTL   time.Duration
	RefreshTokenLimit int
	SessionNeedsToken bool

	// Accounts are addresses served beside Account, each with its own
	// mailbox, Drive and quota (accounts.go); a sign-in picks one with
	// login_hint. Accounts added before (POST /sandbox/v1/accounts) are
	// kept in the data folder and come back without being named.
	Accounts []string

	// DriveQuota is the Drive storage quota in bytes (about.get's
	// storageQuota.limit), enforced on uploads; 0 means 15 GiB, negative
	// no limit. SetDriveQuota and PUT /sandbox/v1/drive change it.
	DriveQuota int64

	// NoSync skips fsync: bytes and state reach the disk when the OS
	// writes them back, so a power cut can lose what a crash cannot. For
	// benchmarks that measure the protocol rather than the disk.
	NoSync bool

	// SerializeSessions makes every request to a resumable session wait
	// for the one before it, a status query included, as the sandbox did
	// before issue 33; by default a status query is answered at once from
	// what is stored, and a new chunk or a cancel takes the session over
	// from a request stalled in its body (PROTOCOL.md 4.3.1).
	// SetSerializeSessions and PUT /sandbox/v1/sessions change it.
	SerializeSessions bool
}

// Stats counts what the sandbox saw since it was opened.
type Stats struct {
	Requests          int64 `json:"requests"`
	SessionsCreated   int64 `json:"sessionsCreated"`
	SessionsCompleted int64 `json:"sessionsCompleted"`
	Completions       int64 `json:"completions"`   // resources created by any upload type
	BytesReceived     int64 `json:"bytesReceived"` // media bytes that arrived, re-sent ones included
	BytesStored       int64 `json:"bytesStored"`   // media bytes kept
	FaultsInjected    int64 `json:"faultsInjected"`
}

// Sandbox is an open sandbox store with its HTTP handler.
type Sandbox struct {
	opts    Options
	dir     string
	db      *bolt.DB
	log     *slog.Logger
	now     func() time.Time
	handler http.Handler
	faults  *faultInjector
	scopes  map[string]routeAccess // by ServeMux pattern
	heavy   chan struct{}          // HeavyRequests slots
	pending pendingConsents
	drive   driveState
	photos  photosState
	api     *http.ServeMux

	// root is the sandbox of the default account, which holds every
	// token and serves every request; itself for the root. auth is
	// shared by all the accounts' sandboxes.
	root *Sandbox
	auth *authority

	locksMu   sync.Mutex
	locks     map[string]*sessionMutex // only sessions with a request in flight
	serialize atomic.Bool              // SerializeSessions, read on the root
	holderSeq atomic.Uint64            // orders the requests that take sessions over
	closing   chan struct{}
	closed    sync.Once

	stats struct {
		requests, sessionsCreated, sessionsCompleted, completions atomic.Int64
		bytesReceived, bytesStored, faults                        atomic.Int64
	}
}

// ErrAlreadyRunning says another sandbox holds the data folder.
type ErrAlreadyRunning struct {
	Dir   string
	Where string // "pid N at URL" when known
}

func (e *ErrAlreadyRunning) Error() string {
	if e.Where != "" {
		return fmt.Sprintf("a sandbox already runs on %s (%s); use it, or stop it first", e.Dir, e.Where)
	}
	return fmt.Sprintf("a sandbox already runs on %s; use it, or stop it first", e.Dir)
}

const runningFile = "running"

// Open opens (or creates) the sandbox store in o.Dir. Only one process may
// hold a data folder; a second gets *ErrAlreadyRunning.
func Open(o Options) (*Sandbox, error) {
	s, err := openOne(o)
	if err != nil {
		return nil, err
	}
	s.auth.cfg = AuthConfig{RefreshTokenTTL: o.RefreshTokenTTL, RefreshTokenLimit: o.RefreshTokenLimit, SessionNeedsToken: o.SessionNeedsToken}
	if err := s.openAccounts(o.Accounts); err != nil {
		s.Close()
		if ae, ok := err.(*apiError); ok {
			return nil, fmt.Errorf("sandbox: %s", ae.Message)
		}
		return nil, err
	}
	return s, nil
}

// openOne opens the store of one account.
func openOne(o Options) (*Sandbox, error) {
	if o.Dir == "" {
		return nil, errors.New("sandbox: no data folder given")
	}
	if o.Token == "" {
		return nil, errors.New("sandbox: no access token given")
	}
	if o.Account == "" {
		o.Account = DefaultAccount
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 7 * 24 * time.Hour
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.BodyIdle <= 0 {
		o.BodyIdle = 2 * time.Minute
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 256
	}
	if o.HeavyRequests <= 0 {
		o.HeavyRequests = 4
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	faults, err := ParseFaults(o.Faults)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{o.Dir, filepath.Join(o.Dir, "uploads"), filepath.Join(o.Dir, "blobs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: cannot create its data folder: %w", err)
		}
		os.Chmod(d, 0o700)
	}
	// bbolt's own file lock is the one-process-per-folder guard; a short
	// timeout turns "blocked forever" into a message naming the holder.
	db, err := bolt.Open(filepath.Join(o.Dir, "sandbox.db"), 0o600, &bolt.Options{Timeout: 200 * time.Millisecond, NoSync: o.NoSync})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			where, _ := os.ReadFile(filepath.Join(o.Dir, runningFile))
			return nil, &ErrAlreadyRunning{Dir: o.Dir, Where: strings.TrimSpace(string(where))}
		}
		return nil, fmt.Errorf("sandbox: cannot open its store in %s: %w", o.Dir, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sandbox: cannot prepare its store: %w", err)
	}
	s := &Sandbox{opts: o, dir: o.Dir, db: db, log: o.Logger, now: o.Now, faults: newFaultInjector(faults), closing: make(chan struct{}), locks: map[string]*sessionMutex{},
		heavy: make(chan struct{}, o.HeavyRequests)}
	s.root = s
	s.serialize.Store(o.SerializeSessions)
	s.auth = &authority{root: s, accounts: map[string]*Sandbox{}}
	s.handler = s.routes()
	s.sweep()
	return s, nil
}

// sweep drops what outlived its use: expired sessions with their bytes,
// and the temporary files of simple uploads a crash interrupted.
func (s *Sandbox) sweep() {
	var expired []string
	s.db.View(func(tx *bolt.Tx) error {
		return forEach(tx, bSessions, func(id string, sess *sessionRec) error {
			if s.now().Sub(sess.Created) > s.opts.SessionTTL {
				expired = append(expired, id)
			} else if sess.Done {
				// Filed as a resource; a crash kept the part file's name.
				os.Remove(s.uploadPath(id))
			}
			return nil
		})
	})
	for _, id := range expired {
		s.dropSession(id)
	}
	tmps, _ := filepath.Glob(filepath.Join(s.dir, "uploads", "simple-*.part"))
	for _, p := range tmps {
		os.Remove(p)
	}
	if len(expired)+len(tmps) > 0 {
		s.log.Info("swept", "expiredSessions", len(expired), "tempFiles", len(tmps))
	}
}

// fsync makes a file's bytes durable unless the sandbox runs without.
func (s *Sandbox) fsync(f *os.File) error {
	if s.opts.NoSync {
		return nil
	}
	return f.Sync()
}

// Close releases the store and ends any request the fault injector holds.
func (s *Sandbox) Close() error {
	var err error
	s.closed.Do(func() {
		if s.root == s {
			for _, sub := range s.auth.subs() {
				sub.Close()
			}
		}
		close(s.closing)
		os.Remove(filepath.Join(s.dir, runningFile))
		err = s.db.Close()
	})
	return err
}

// Handler serves the sandbox's HTTP API.
func (s *Sandbox) Handler() http.Handler { return s.handler }

// Account is the mailbox address the sandbox answers for.
func (s *Sandbox) Account() string { return s.opts.Account }

// Token is the static bearer token.
func (s *Sandbox) Token() string { return s.opts.Token }

// Stats returns the counters, of every account.
func (s *Sandbox) Stats() Stats {
	st := s.ownStats()
	if s.root == s {
		for _, sub := range s.auth.subs() {
			o := sub.ownStats()
			st.Requests += o.Requests
			st.SessionsCreated += o.SessionsCreated
			st.SessionsCompleted += o.SessionsCompleted
			st.Completions += o.Completions
			st.BytesReceived += o.BytesReceived
			st.BytesStored += o.BytesStored
			st.FaultsInjected += o.FaultsInjected
		}
	}
	return st
}

func (s *Sandbox) ownStats() Stats {
	return Stats{
		Requests:          s.stats.requests.Load(),
		SessionsCreated:   s.stats.sessionsCreated.Load(),
		SessionsCompleted: s.stats.sessionsCompleted.Load(),
		Completions:       s.stats.completions.Load(),
		BytesReceived:     s.stats.bytesReceived.Load(),
		BytesStored:       s.stats.bytesStored.Load(),
		FaultsInjected:    s.stats.faults.Load(),
	}
}

// SetFaults replaces the fault spec at run time.
func (s *Sandbox) SetFaults(spec string) error {
	f, err := ParseFaults(spec)
	if err != nil {
		return err
	}
	s.faults.set(f)
	return nil
}

// Faults returns the fault spec in force.
func (s *Sandbox) Faults() string { return s.faults.get().String() }

// announce records where this sandbox serves, for a second process that
// finds the folder taken.
func (s *Sandbox) announce(url string) {
	p := filepath.Join(s.dir, runningFile)
	os.WriteFile(p, []byte(fmt.Sprintf("pid %d at %s\n", os.Getpid(), url)), 0o600)
}

// credential is who a request's bearer token says it is.
type credential struct {
	ok, static bool
	scopes     []string // of a token from /token
	account    string   // whose token it is; the static token's is the default account
	sent       bool     // an Authorization header came
}

func (s *Sandbox) credential(r *http.Request) credential {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return credential{sent: r.Header.Get("Authorization") != ""}
	}
	tok = strings.TrimSpace(tok)
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) == 1 {
		return credential{ok: true, static: true, account: s.root.opts.Account, sent: true}
	}
	a, ok := s.accessToken(tok)
	return credential{ok: ok, scopes: a.Scopes, account: a.Account, sent: true}
}

// heavyLock takes one of the HeavyRequests slots, giving up when the
// request ends: what parses or renders a whole message holds one, so
// memory stays bounded however many such requests arrive at once.
func (s *Sandbox) heavyLock(r *http.Request) (release func(), ok bool) {
	select {
	case s.heavy <- struct{}{}:
		return func() { <-s.heavy }, true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return nil, false
}

var errBusy = errorf(http.StatusServiceUnavailable, "backendError", "The sandbox is busy with other large requests; try again.")

var errUnauthenticated = errorf(http.StatusUnauthorized, "required",
	"Request is missing a valid access token. Send 'Authorization: Bearer TOKEN' with the sandbox's token (printed when it starts) or an unexpired access token from its /token endpoint (refresh it if it expired).")

// sessionMutex is a lock that a waiter can give up on; refs counts the
// requests holding or awaiting it, so the map keeps no entry for idle
// sessions (nor for the made-up ids a hostile client may send).
type sessionMutex struct {
	ch     chan struct{}
	refs   int
	holder *sessionHolder // the request holding ch, when it may be superseded (session.go)
}

// sessionEntry finds (or makes) session id's lock and counts one more
// request on it; release uncounts it, dropping the entry with the last.
func (s *Sandbox) sessionEntry(id string) (m *sessionMutex, release func()) {
	s.locksMu.Lock()
	m = s.locks[id]
	if m == nil {
		m = &sessionMutex{ch: make(chan struct{}, 1)}
		s.locks[id] = m
	}
	m.refs++
	s.locksMu.Unlock()
	return m, func() {
		s.locksMu.Lock()
		if m.refs--; m.refs == 0 {
			delete(s.locks, id)
		}
		s.locksMu.Unlock()
	}
}

// sessionLock takes the per-session lock, giving up when the request ends:
// a status query must not wait forever behind a request whose client left.
func (s *Sandbox) sessionLock(r *http.Request, id string) (unlock func(), ok bool) {
	m, release := s.sessionEntry(id)
	select {
	case m.ch <- struct{}{}:
		return func() { <-m.ch; release() }, true
	case <-r.Context().Done():
	case <-s.closing:
	}
	release()
	return nil, false
}
