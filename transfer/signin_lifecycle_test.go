package transfer

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// dyingAuth authorizes its first requests, then says the sign-in ended
// (a refresh answering invalid_grant) for good.
type dyingAuth struct{ left atomic.Int64 }

func (a *dyingAuth) Authorize(ctx context.Context, req *http.Request) error {
	if a.left.Add(-1) < 0 {
		return &SignInError{Account: "zoe@example.com", Err: errors.New("the token endpoint answered invalid_grant")}
	}
	req.Header.Set("Authorization", "Bearer tok")
	return nil
}

func (a *dyingAuth) Refresh(context.Context) error {
	if a.left.Load() < 0 {
		return &SignInError{Account: "zoe@example.com", Err: errors.New("the token endpoint answered invalid_grant")}
	}
	return nil
}

// The child process of TestKilledWhileParkedFinishesAfterASignIn: its
// sign-in dies after the session's start and two chunks, the job parks,
// and the process lives on holding it until it is killed.
func TestParkedKillChild(t *testing.T) {
	state := os.Getenv("CARRIER_PARKED_CHILD_STATE")
	if state == "" {
		t.Skip("run by TestKilledWhileParkedFinishesAfterASignIn as its child process")
	}
	auth := &dyingAuth{}
	auth.left.Store(3)
	q, err := New(Config{StateDir: state, RetryBase: time.Millisecond, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Add(Spec{URL: os.Getenv("CARRIER_PARKED_CHILD_URL"), ContentType: "application/octet-stream",
		Path: os.Getenv("CARRIER_PARKED_CHILD_FILE"), ChunkSize: ChunkQuantum, Account: "zoe@example.com"}); err != nil {
		t.Fatal(err)
	}
	select {} // until the parent kills this process
}

// kill -9 of the process holding a parked job (its sign-in died half way):
// while it lives the job is its own, no other process takes it; once it is
// dead the journal still says the job waits for zoe with its session and
// offset, and zoe's sign-in in another process finishes it on the same
// session, no byte sent twice, no retry spent.
func TestKilledWhileParkedFinishesAfterASignIn(t *testing.T) {
	f := newFake(t)
	f.token = "tok"
	state := t.TempDir()
	path, data := writeFile(t, 4*ChunkQuantum+100)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestParkedKillChild$")
	cmd.Env = append(os.Environ(), "CARRIER_PARKED_CHILD_STATE="+state, "CARRIER_PARKED_CHILD_URL="+f.url(), "CARRIER_PARKED_CHILD_FILE="+path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	j, err := OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	var parked *Record
	deadline := time.Now().Add(30 * time.Second)
	for parked == nil { // polling another process's files: there is no event to wait on
		if recs, _ := j.List(); len(recs) == 1 && recs[0].State == StateSignIn {
			parked = recs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's job never parked; its output:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	auth := &deadableAuth{} // the person has signed in again here
	h := newHarness(t, Config{StateDir: state, Auth: auth})
	if ids, _ := h.q.SignedIn("zoe@example.com"); len(ids) != 0 {
		t.Fatalf("a parked job its live process holds was taken by another: %v", ids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true

	rec, err := j.Load(parked.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != StateSignIn || rec.Session == "" || rec.Session != parked.Session || rec.Confirmed != 2*ChunkQuantum || rec.SignInFor != "zoe@example.com" || rec.Cause != "" {
		t.Fatalf("after the kill: state %s, same session %v, confirmed %d, sign in for %q, cause %q", rec.State, rec.Session == parked.Session, rec.Confirmed, rec.SignInFor, rec.Cause)
	}
	statusBefore := f.count("status")
	ids, err := h.q.SignedIn("zoe@example.com")
	if err != nil || len(ids) != 1 || ids[0] != parked.ID {
		t.Fatalf("SignedIn after the kill: %v %v", ids, err)
	}
	if resourceSHA(t, h.mustDone(parked.ID)) != sha(data) {
		t.Fatal("bytes differ")
	}
	if comp, received, sessions := f.stats(); comp != 1 || sessions != 1 || received != int64(len(data)) {
		t.Errorf("completions %d, sessions %d, bytes received %d of %d: want 1, 1 and no byte twice", comp, sessions, received, len(data))
	}
	if f.count("status") <= statusBefore {
		t.Error("the job went on without asking the session where it stands")
	}
	noRetries(t, h, parked.ID)
	if final, _ := j.Load(parked.ID); final.Session != parked.Session {
		t.Error("the job finished on another session")
	}
}
