package transfer

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// deadableAuth is a sign-in that can die (the refresh answering
// invalid_grant) and come back (the person signed in again).
type deadableAuth struct {
	dead     atomic.Bool
	mu       sync.Mutex
	accounts []string // AccountOf of every request authorized
}

func (a *deadableAuth) Authorize(ctx context.Context, req *http.Request) error {
	a.mu.Lock()
	a.accounts = append(a.accounts, AccountOf(ctx))
	a.mu.Unlock()
	if a.dead.Load() {
		return &SignInError{Account: "zoe@example.com", Err: errors.New("the token endpoint answered invalid_grant")}
	}
	req.Header.Set("Authorization", "Bearer tok")
	return nil
}

func (a *deadableAuth) Refresh(context.Context) error {
	if a.dead.Load() {
		return &SignInError{Account: "zoe@example.com", Err: errors.New("the token endpoint answered invalid_grant")}
	}
	return nil
}

// parkMidUpload starts a 5-chunk upload whose sign-in dies once the second
// chunk is on its way, and waits for the job to park.
func parkMidUpload(t *testing.T, h *harness, f *fakeServer, auth *deadableAuth) (id string, data []byte, parked Event) {
	t.Helper()
	f.token = "tok"
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 2 {
			auth.dead.Store(true) // the next request finds the sign-in gone
		}
		return false
	}
	path, data := writeFile(t, 4*ChunkQuantum+100)
	id = h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: ChunkQuantum, Account: "zoe@example.com"})
	parked = h.await(func(e Event) bool {
		return e.Job == id && (e.Kind == EventSignIn || e.Kind == EventFailed || e.Kind == EventDone)
	})
	if parked.Kind != EventSignIn {
		t.Fatalf("the job did not park: %s", parked)
	}
	return id, data, parked
}

func noRetries(t *testing.T, h *harness, id string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.seen {
		if e.Job == id && e.Kind == EventRetrying {
			t.Errorf("a dead sign-in spent a retry: %s", e)
		}
	}
}

func TestDeadSignInParksAndSignedInFinishesOnTheSameSession(t *testing.T) {
	f := newFake(t)
	auth := &deadableAuth{}
	h := newHarness(t, Config{Auth: auth})
	id, data, parked := parkMidUpload(t, h, f, auth)

	s := parked.Snap
	if s.State != StateSignIn || s.SignInFor != "zoe@example.com" || s.Account != "zoe@example.com" {
		t.Errorf("parked snapshot: state %s, sign in for %q, account %q", s.State, s.SignInFor, s.Account)
	}
	if s.Confirmed != 2*ChunkQuantum {
		t.Errorf("parked at %d, want the 2 chunks confirmed (%d)", s.Confirmed, 2*ChunkQuantum)
	}
	if s.Cause != nil || s.Retryable {
		t.Errorf("a parked job is no failure: cause %v, retryable %v", s.Cause, s.Retryable)
	}
	noRetries(t, h, id)
	rec, err := h.q.Journal().Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != StateSignIn || rec.Session == "" || rec.Confirmed != 2*ChunkQuantum || rec.SignInFor != "zoe@example.com" {
		t.Errorf("journal: state %s, session kept %v, confirmed %d, sign in for %q", rec.State, rec.Session != "", rec.Confirmed, rec.SignInFor)
	}
	if w, err := h.q.Wait(ctxT(t), id); err != nil || w.State != StateSignIn {
		t.Errorf("Wait on a parked job: %v %v", w.State, err)
	}

	// Another account signing in leaves it parked.
	if ids, err := h.q.SignedIn("bob@example.com"); err != nil || len(ids) != 0 {
		t.Fatalf("bob's sign-in sent on %v (%v)", ids, err)
	}
	if snap, _ := h.q.Job(id); snap.State != StateSignIn {
		t.Fatalf("bob's sign-in moved zoe's job to %s", snap.State)
	}

	auth.dead.Store(false)
	statusBefore := f.count("status")
	if ids, err := h.q.SignedIn("zoe@example.com"); err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("SignedIn: %v %v", ids, err)
	}
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	comp, received, sessions := f.stats()
	if comp != 1 || sessions != 1 || received != int64(len(data)) {
		t.Errorf("completions %d, sessions %d, bytes received %d of %d: want 1, 1 and no byte twice", comp, sessions, received, len(data))
	}
	if f.count("status") <= statusBefore {
		t.Error("the job went on without asking the session where it stands")
	}
	noRetries(t, h, id)
	auth.mu.Lock()
	defer auth.mu.Unlock()
	for _, a := range auth.accounts {
		if a != "zoe@example.com" {
			t.Fatalf("a request was authorized for account %q, not the job's", a)
		}
	}
}

func TestParkedJobStaysParkedAcrossARestartUntilASignIn(t *testing.T) {
	f := newFake(t)
	auth := &deadableAuth{}
	dir := t.TempDir()
	h1 := newHarness(t, Config{StateDir: dir, Auth: auth})
	id, data, _ := parkMidUpload(t, h1, f, auth)
	h1.q.Close()

	// The next start tries it once: the sign-in is still dead, so it parks
	// again without a request going out.
	before := len(f.log)
	h2 := newHarness(t, Config{StateDir: dir, Auth: auth})
	ids, err := h2.q.ResumeJournal(false)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ResumeJournal: %v %v", ids, err)
	}
	e := h2.await(func(e Event) bool {
		return e.Job == id && (e.Kind == EventSignIn || e.Kind == EventDone || e.Kind == EventFailed)
	})
	if e.Kind != EventSignIn || e.Snap.SignInFor != "zoe@example.com" || e.Snap.Account != "zoe@example.com" {
		t.Fatalf("after a restart: %s (sign in for %q, account %q)", e, e.Snap.SignInFor, e.Snap.Account)
	}
	f.mu.Lock()
	sent := len(f.log) - before
	f.mu.Unlock()
	if sent != 0 {
		t.Errorf("%d requests went out without a credential", sent)
	}
	noRetries(t, h2, id)

	auth.dead.Store(false)
	if _, err := h2.q.SignedIn("zoe@example.com"); err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, h2.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if comp, received, sessions := f.stats(); comp != 1 || sessions != 1 || received != int64(len(data)) {
		t.Errorf("completions %d, sessions %d, bytes received %d of %d", comp, sessions, received, len(data))
	}
}

func TestParkedJobWhoseSessionIsGoneStartsANewOne(t *testing.T) {
	f := newFake(t)
	auth := &deadableAuth{}
	h := newHarness(t, Config{Auth: auth})
	id, data, _ := parkMidUpload(t, h, f, auth)
	f.mu.Lock()
	for _, s := range f.sessions {
		s.gone = true // expired on the server while the person was away
	}
	f.mu.Unlock()
	auth.dead.Store(false)
	if _, err := h.q.SignedIn("zoe@example.com"); err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if comp, _, sessions := f.stats(); comp != 1 || sessions != 2 {
		t.Errorf("completions %d, sessions %d: want a second session, once", comp, sessions)
	}
}

func TestDependentOfAParkedJobSaysSo(t *testing.T) {
	f := newFake(t)
	auth := &deadableAuth{}
	h := newHarness(t, Config{Auth: auth})
	auth.dead.Store(true)
	path, _ := writeFile(t, 100)
	need := h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path, Label: "the file"})
	msg := h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path, Needs: []string{need}})
	top := h.add(Spec{URL: f.url(), ContentType: "text/plain", Path: path, Needs: []string{msg}})
	// A front end waiting for the message learns it cannot go on alone,
	// also through a job between them (a share).
	if w, err := h.q.Wait(ctxT(t), top); err != nil || w.State != StateWaiting {
		t.Fatalf("Wait on a job whose need's need parked: %s %v", w.State, err)
	}
	h.untilState(need, StateSignIn)
	e := h.await(func(e Event) bool { return e.Job == msg && e.Kind == EventWaiting && e.Snap.Blocked != "" })
	if !strings.Contains(e.Snap.Blocked, "waits for a sign-in") {
		t.Errorf("blocked: %q", e.Snap.Blocked)
	}
	auth.dead.Store(false)
	if _, err := h.q.SignedIn(""); err != nil {
		t.Fatal(err)
	}
	h.mustDone(need)
	h.mustDone(msg)
	h.mustDone(top)
}

func TestCancelAndPauseOfAParkedJob(t *testing.T) {
	f := newFake(t)
	auth := &deadableAuth{}
	h := newHarness(t, Config{Auth: auth})
	id, _, _ := parkMidUpload(t, h, f, auth)
	if err := h.q.Pause(id); err != nil {
		t.Fatalf("pause a parked job: %v", err)
	}
	h.untilState(id, StatePaused)
	// The session's DELETE goes without the dead credential.
	if err := h.q.Cancel(ctxT(t), id); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	h.untilState(id, StateCancelled)
	if f.count("delete") != 1 {
		t.Errorf("%d DELETEs of the session, want 1", f.count("delete"))
	}
}

func TestParkedJobGoesOnAtStartWhenTheSignInWorks(t *testing.T) {
	f := newFake(t)
	auth := &deadableAuth{}
	dir := t.TempDir()
	h1 := newHarness(t, Config{StateDir: dir, Auth: auth})
	id, data, _ := parkMidUpload(t, h1, f, auth)
	h1.q.Close()
	auth.dead.Store(false) // signed in again while Carrier was closed

	h2 := newHarness(t, Config{StateDir: dir, Auth: auth})
	if _, err := h2.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, h2.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if _, received, sessions := f.stats(); sessions != 1 || received != int64(len(data)) {
		t.Errorf("sessions %d, bytes received %d of %d", sessions, received, len(data))
	}
}

// A token that the server refuses (401) and whose refresh answers
// invalid_grant parks the job too: the access token outlived the grant.
func TestRefusedTokenWhoseRefreshIsDeadParks(t *testing.T) {
	f := newFake(t)
	var dead atomic.Bool
	src := TokenFunc(func(_ context.Context, refresh bool) (string, error) {
		if !dead.Load() {
			return "tok", nil
		}
		if refresh {
			return "", &SignInError{Account: "zoe@example.com", Err: errors.New("invalid_grant")}
		}
		return "stale", nil
	})
	f.token = "tok"
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 2 {
			dead.Store(true)
		}
		if kind == "chunk" && r.Header.Get("Authorization") != "Bearer tok" {
			googleError(w, 401, "UNAUTHENTICATED", "authError", "Request had invalid authentication credentials.")
			return true
		}
		return false
	}
	h := newHarness(t, Config{Auth: src})
	path, data := writeFile(t, 4*ChunkQuantum+100)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: ChunkQuantum})
	e := h.await(func(e Event) bool {
		return e.Job == id && (e.Kind == EventSignIn || e.Kind == EventFailed || e.Kind == EventDone)
	})
	if e.Kind != EventSignIn || e.Snap.SignInFor != "zoe@example.com" {
		t.Fatalf("got %s", e)
	}
	noRetries(t, h, id)
	dead.Store(false)
	if _, err := h.q.SignedIn("zoe@example.com"); err != nil {
		t.Fatal(err)
	}
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if _, received, sessions := f.stats(); sessions != 1 || received != int64(len(data)) {
		t.Errorf("sessions %d, bytes received %d of %d", sessions, received, len(data))
	}
}

// hookAuth is an Authorizer whose refusals run a hook first.
type hookAuth struct {
	dead   atomic.Bool
	onDead func()
}

func (a *hookAuth) Authorize(_ context.Context, req *http.Request) error {
	if a.dead.Load() {
		a.onDead()
		return &SignInError{Account: "zoe@example.com", Err: errors.New("invalid_grant")}
	}
	req.Header.Set("Authorization", "Bearer tok")
	return nil
}

func (a *hookAuth) Refresh(context.Context) error { return nil }

// The person signs in again while the job is failing its old sign-in:
// SignedIn finds nothing parked yet, so the job must not park after the
// news, or it would wait for a sign-in that already came.
func TestSignInDuringTheFailingRunSendsTheJobOn(t *testing.T) {
	f := newFake(t)
	f.token = "tok"
	auth := &hookAuth{}
	var h *harness
	auth.onDead = func() {
		auth.dead.Store(false)
		if _, err := h.q.SignedIn("zoe@example.com"); err != nil {
			t.Error(err)
		}
	}
	h = newHarness(t, Config{Auth: auth})
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" && n == 1 {
			auth.dead.Store(true)
		}
		return false
	}
	path, data := writeFile(t, 2*ChunkQuantum+10)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: ChunkQuantum})
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if _, received, sessions := f.stats(); sessions != 1 || received != int64(len(data)) {
		t.Errorf("sessions %d, bytes received %d of %d", sessions, received, len(data))
	}
}

// A parked job on a metered connection says it waits for a sign-in: the
// metered rule is not what holds it, and a front end must not offer
// "Send anyway" for it.
func TestParkedJobIsNotHeldByTheMeteredRule(t *testing.T) {
	f := newFake(t)
	auth := &deadableAuth{}
	h := newHarness(t, Config{Auth: auth, Metered: MeteredPolicy{Pause: true, Over: ChunkQuantum}})
	id, _, _ := parkMidUpload(t, h, f, auth)
	h.q.SetMetered(true)
	if snap, _ := h.q.Job(id); snap.State != StateSignIn || snap.Held != "" {
		t.Errorf("a parked job on a metered connection: state %s, held %q", snap.State, snap.Held)
	}
}

// scopeJudge is an Authorizer that judges a refusal carrying Google's
// ACCESS_TOKEN_SCOPE_INSUFFICIENT one only a new sign-in mends.
type scopeJudge struct{ deadableAuth }

func (*scopeJudge) SignInNeeded(ctx context.Context, job string, refused *APIError) error {
	for _, r := range refused.Reasons {
		if r == "ACCESS_TOKEN_SCOPE_INSUFFICIENT" {
			return &SignInError{Account: AccountOf(ctx), Err: refused}
		}
	}
	return nil
}

// A refusal the Authorizer judges a sign-in's (the credential lacks a
// grant) parks the job, with no retry spent, and the next sign-in of its
// account sends it on; a refusal it does not judge so fails as before.
func TestARefusalTheAuthorizerJudgesASignInsParksTheJob(t *testing.T) {
	f := newFake(t)
	f.token = "tok"
	var refuse atomic.Value
	refuse.Store("ACCESS_TOKEN_SCOPE_INSUFFICIENT")
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		reason := refuse.Load().(string)
		if kind != "start" || reason == "" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":{"code":403,"message":"Request had insufficient authentication scopes.","status":"PERMISSION_DENIED","errors":[{"reason":"insufficientPermissions"}],"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + reason + `"}]}}`))
		return true
	}
	h := newHarness(t, Config{Auth: &scopeJudge{}})
	path, data := writeFile(t, ChunkQuantum+100)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, Account: "zoe@example.com"})
	parked := h.await(func(e Event) bool {
		return e.Job == id && (e.Kind == EventSignIn || e.Kind == EventFailed || e.Kind == EventDone)
	})
	if parked.Kind != EventSignIn || parked.Snap.SignInFor != "zoe@example.com" {
		t.Fatalf("the refused job: %s, for %q; want it parked for zoe@example.com", parked, parked.Snap.SignInFor)
	}
	noRetries(t, h, id)
	refuse.Store("")
	if ids, err := h.q.SignedIn("zoe@example.com"); err != nil || len(ids) != 1 {
		t.Fatalf("SignedIn: %v %v", ids, err)
	}
	if resourceSHA(t, h.mustDone(id)) != sha(data) {
		t.Fatal("bytes differ")
	}

	refuse.Store("SOMETHING_ELSE")
	other := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, Account: "zoe@example.com"})
	if e := h.await(func(e Event) bool {
		return e.Job == other && (e.Kind == EventSignIn || e.Kind == EventFailed || e.Kind == EventDone)
	}); e.Kind != EventFailed {
		t.Fatalf("a refusal the Authorizer did not judge a sign-in's: %s, want failed", e)
	}
}
