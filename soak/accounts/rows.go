package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"carrier/sandbox"
	"carrier/transfer"
)

const work = "work@example.com"

// row is one run of the Show, as the table reports it.
type row struct {
	Name              string
	SessionNeedsToken bool
	Size              int64
	ParkedAt          int64  // confirmed bytes in the journal when it parked
	ParkedState       string // the record's state then
	ParkedCause       string // the record's failure cause then ("" for none)
	ExitAtPark        int    // `carrier drive upload`'s status (4: sign-in needed)
	NamesAccount      bool   // its words name the account and `carrier login`
	Retries           int    // retry lines the CLI printed over the whole row
	KilledWhileParked bool   // kill row: the resume holding the parked job was killed with SIGKILL
	LoginSays         bool   // `carrier login` said uploads wait for it
	ResumeExit        int
	Sessions          int64 // sessions the sandbox started for the file
	SameSession       bool  // the journal's session at the end is the one it parked with
	WireBytes         int64 // body bytes the sandbox read for the file's session
	TCPBytes          int64 // every byte into the sandbox from the first upload on (the kill row: both files')
	Identical         bool  // Drive's size and SHA-256 are the file's
	Other             *other
	Seconds           float64
}

// other is the kill row's second account's file.
type other struct {
	Size        int64
	KilledAt    int64 // confirmed when its first process was killed
	AtParkKill  int64 // confirmed when the resume holding both was killed
	WireBytes   int64
	Verified    string
	SameSession bool
}

func (r *row) ratio() float64 { return float64(r.WireBytes) / float64(r.Size) }

// tcpRatio is every byte into the sandbox over the files' bytes.
func (r *row) tcpRatio() float64 {
	size := r.Size
	if r.Other != nil {
		size += r.Other.Size
	}
	return float64(r.TCPBytes) / float64(size)
}

// started is where every row stands when its sign-in is about to end: the
// person signed in as the sandbox's default account, whose `carrier drive
// upload` of the big file has -revoke-at of it confirmed.
type started struct {
	me      *person
	home    string
	refresh string // the default account's refresh token, to revoke
	sum     string // the big file's SHA-256
	before  sandbox.Stats
	tcp     int64 // the sandbox's byte count before the upload
	up      *proc
	rec     *transfer.Record // the big file's job at that point
	at      int64            // the bytes it waited for
}

// begin brings a row on the sandbox b to where its sign-in ends: the
// rows differ only in how it ends and what follows. An upload that does
// not get there is killed.
func begin(ctx context.Context, c *config, dir string, b *box) (*started, error) {
	s := &started{me: newPerson(c.bin, dir, b), home: sandbox.DefaultAccount}
	if _, err := s.me.login(ctx, s.home); err != nil {
		return nil, err
	}
	s.refresh = b.lastRefresh()
	path := filepath.Join(dir, "big.bin")
	var err error
	if s.sum, err = sparseFile(path, c.size, 20); err != nil {
		return nil, err
	}
	s.before, s.tcp = b.sb.Stats(), b.tcp.Load()
	if s.up, err = s.me.start("drive", "upload", "--endpoint", b.base, "--file", path); err != nil {
		return nil, err
	}
	s.at = int64(float64(c.size) * c.revokeAt)
	s.rec, err = s.me.await(ctx, s.up, "", 5*time.Minute, fmt.Sprintf("%d bytes confirmed", s.at), func(rec *transfer.Record) bool { return rec.Confirmed >= s.at })
	if err != nil {
		s.up.kill()
		return nil, err
	}
	return s, nil
}

// expiryTTL is the refresh tokens' lifetime in the expiry row, and
// expiryJump how far the sandbox's clock moves mid-upload: past the
// token's end, within the session's week.
const (
	expiryTTL  = 24 * time.Hour
	expiryJump = 25 * time.Hour
)

// runOne: one account, the 2 GiB file; at revokeAt its refresh token is
// revoked, or in the expiry row ("Testing" mode with a short lifetime) the
// sandbox's clock jumps past the token's end. Sign-in again, resume.
func runOne(ctx context.Context, c *config, dir string, mode string) (*row, error) {
	needsToken, refreshTTL := mode == "on", time.Duration(0)
	name := "revoked mid-upload, session-needs-token " + mode
	if mode == "expiry" {
		refreshTTL = expiryTTL
		name = fmt.Sprintf("refresh token expired mid-upload (lifetime %s, clock moved %s), session-needs-token off", expiryTTL, expiryJump)
	}
	r := &row{Name: name, SessionNeedsToken: needsToken, Size: c.size}
	b, err := openBox(filepath.Join(dir, "sandbox"), needsToken, c.tokenTTL, refreshTTL, nil)
	if err != nil {
		return nil, err
	}
	defer b.close()
	s, err := begin(ctx, c, dir, b)
	if err != nil {
		return r, err
	}
	me, home, up, at := s.me, s.home, s.up, s.at
	if mode == "expiry" {
		b.skew.Store(int64(expiryJump))
	} else if err := b.revoke(s.refresh); err != nil {
		up.kill()
		return r, err
	}
	logf("%s: the sign-in ended at %d bytes confirmed", r.Name, at)
	code, err := up.wait(ctx, 2*time.Minute)
	if err != nil {
		return r, fmt.Errorf("carrier drive upload after the revocation: %w", err)
	}
	parked, err := me.record("")
	if err != nil {
		return r, err
	}
	r.ExitAtPark, r.ParkedAt, r.ParkedState, r.ParkedCause = code, parked.Confirmed, string(parked.State), parked.Cause
	r.NamesAccount = strings.Contains(up.errOut.String(), "Sign in to "+home+" again to continue: run `carrier login --endpoint "+b.base+"`")
	r.Retries = up.retries()
	if parked.State != transfer.StateSignIn {
		return r, fmt.Errorf("the job is %s (exit %d), not parked: %s", parked.State, code, lastLines(up.errOut.String(), 2))
	}
	out, err := me.login(ctx, home)
	if err != nil {
		return r, err
	}
	r.LoginSays = strings.Contains(out, "1 upload(s) wait for a sign-in")
	res, err := me.start("resume")
	if err != nil {
		return r, err
	}
	r.ResumeExit, err = res.wait(ctx, 5*time.Minute)
	if err != nil {
		return r, fmt.Errorf("carrier resume: %w", err)
	}
	r.Retries += res.retries()
	final, err := me.record(parked.ID)
	if err != nil {
		return r, err
	}
	after := b.sb.Stats()
	r.TCPBytes = b.tcp.Load() - s.tcp
	r.Sessions = after.SessionsCreated - s.before.SessionsCreated
	r.SameSession = final.Session == parked.Session && parked.Session != ""
	r.WireBytes = b.sessionBytes(final.Session)
	if err := r.identical(b, res.out.String(), s.sum); err != nil {
		return r, err
	}
	return r, r.check(final)
}

// identical reads the File the resume printed back from Drive.
func (r *row) identical(b *box, out, sum string) error {
	var f struct{ ID string }
	if err := json.Unmarshal([]byte(out), &f); err != nil || f.ID == "" {
		return fmt.Errorf("carrier resume printed no File: %q", lastLines(out, 2))
	}
	size, sha, err := b.driveFile(f.ID)
	if err != nil {
		return err
	}
	r.Identical = size == r.Size && sha == sum
	return nil
}

// check says what of the Show this row missed.
func (r *row) check(final *transfer.Record) error {
	var miss []string
	add := func(ok bool, what string) {
		if !ok {
			miss = append(miss, what)
		}
	}
	add(r.ParkedState == string(transfer.StateSignIn) && r.ParkedCause == "", fmt.Sprintf("the job was %s (cause %q) after the revocation, not parked", r.ParkedState, r.ParkedCause))
	add(r.ParkedAt > 0 && r.ParkedAt < r.Size, fmt.Sprintf("parked at %d of %d bytes", r.ParkedAt, r.Size))
	add(r.ExitAtPark == 4 && r.NamesAccount, fmt.Sprintf("the upload exited %d (want 4) or did not name the account and `carrier login`", r.ExitAtPark))
	add(r.Retries == 0, fmt.Sprintf("%d retries spent", r.Retries))
	add(r.LoginSays, "`carrier login` did not say an upload waits for it")
	add(r.ResumeExit == 0 && final.State == transfer.StateDone, fmt.Sprintf("resume exited %d, the job is %s", r.ResumeExit, final.State))
	add(r.Sessions == 1 && r.SameSession, fmt.Sprintf("%d sessions, same session %v", r.Sessions, r.SameSession))
	add(r.Identical, "Drive's copy is not the file (size or SHA-256)")
	add(r.ratio() <= 1.01 && r.tcpRatio() <= 1.01, fmt.Sprintf("%.4fx the file's bytes to its session, %.4fx in all into the sandbox", r.ratio(), r.tcpRatio()))
	if len(miss) > 0 {
		return errors.New(strings.Join(miss, "; "))
	}
	return nil
}

// runKill: two accounts. The default account's 2 GiB upload parks as in
// runOne (its process exits 4). The other account's file is queued and
// its process killed part way, so one `carrier resume` holds both: it
// parks the first again (the sign-in is still dead) and sends the second;
// that resume is killed with SIGKILL while the first is parked. Then
// `carrier login` and `carrier resume` finish both.
func runKill(ctx context.Context, c *config, dir string) (*row, error) {
	r := &row{Name: "revoked, then kill -9 of the resume holding it parked (two accounts, session-needs-token on)", SessionNeedsToken: true, Size: c.size, Other: &other{Size: c.otherSize}}
	b, err := openBox(filepath.Join(dir, "sandbox"), true, c.tokenTTL, 0, []string{work})
	if err != nil {
		return nil, err
	}
	defer b.close()
	otherPath := filepath.Join(dir, "other.bin")
	if _, err := sparseFile(otherPath, c.otherSize, 21); err != nil {
		return r, err
	}
	s, err := begin(ctx, c, dir, b)
	if err != nil {
		return r, err
	}
	me, home, up, at, bigID := s.me, s.home, s.up, s.at, s.rec.ID
	if err := b.revoke(s.refresh); err != nil {
		up.kill()
		return r, err
	}
	logf("kill: revoked %s's refresh token at %d bytes confirmed", home, at)
	if r.ExitAtPark, err = up.wait(ctx, 2*time.Minute); err != nil {
		return r, fmt.Errorf("carrier drive upload after the revocation: %w", err)
	}
	parked, err := me.record(bigID)
	if err != nil {
		return r, err
	}
	r.ParkedAt, r.ParkedState, r.ParkedCause = parked.Confirmed, string(parked.State), parked.Cause
	r.NamesAccount = strings.Contains(up.errOut.String(), "Sign in to "+home+" again to continue")
	r.Retries = up.retries()
	if parked.State != transfer.StateSignIn {
		return r, fmt.Errorf("the job is %s (exit %d), not parked: %s", parked.State, r.ExitAtPark, lastLines(up.errOut.String(), 2))
	}

	// The second account signs in (and so becomes the default sender) and
	// queues its file; that process is killed once some of it is confirmed.
	if _, err := me.login(ctx, work); err != nil {
		return r, err
	}
	up2, err := me.start("drive", "upload", "--endpoint", b.base, "--file", otherPath)
	if err != nil {
		return r, err
	}
	isOther := func(rec *transfer.Record) bool { return rec.Path == otherPath }
	var otherID string
	if _, err := me.await(ctx, up2, bigID, time.Minute, "the other file's job", func(*transfer.Record) bool {
		otherID = findJob(me, isOther)
		return otherID != ""
	}); err != nil {
		up2.kill()
		return r, err
	}
	orec, err := me.await(ctx, up2, otherID, 2*time.Minute, "the other file's first bytes", func(rec *transfer.Record) bool { return rec.Confirmed >= 32<<20 })
	if err != nil {
		up2.kill()
		return r, err
	}
	up2.kill()
	r.Retries += up2.retries()
	if orec.Account != work {
		return r, fmt.Errorf("the other file's job is bound to %q, want %s", orec.Account, work)
	}
	if orec, err = me.record(otherID); err != nil {
		return r, err
	}
	r.Other.KilledAt = orec.Confirmed

	// One resume holds both: the parked job is tried once and parks again,
	// the other goes on. Killed while the one is parked and the other sends.
	res, err := me.start("resume")
	if err != nil {
		return r, err
	}
	var parkedAgain bool
	orec, err = me.await(ctx, res, otherID, 3*time.Minute, "the other file sending while the first is parked", func(rec *transfer.Record) bool {
		if p, err := me.record(bigID); err == nil && p.State == transfer.StateSignIn && p.Updated.After(parked.Updated) {
			parkedAgain = true
		}
		return parkedAgain && rec.State == transfer.StateRunning && rec.Confirmed > r.Other.KilledAt
	})
	if err != nil {
		res.kill()
		return r, err
	}
	if !res.running() {
		return r, errors.New("the resume ended before it could be killed while the job was parked")
	}
	res.kill()
	r.KilledWhileParked = true
	r.Other.AtParkKill = orec.Confirmed
	r.Retries += res.retries()
	if p, err := me.record(bigID); err != nil || p.State != transfer.StateSignIn || p.Session != parked.Session {
		return r, fmt.Errorf("after the kill the parked job is not parked with its session: %v", err)
	}
	logf("kill: killed the resume with %s parked at %d and %s's file at %d", home, parked.Confirmed, work, orec.Confirmed)

	out, err := me.login(ctx, home)
	if err != nil {
		return r, err
	}
	r.LoginSays = strings.Contains(out, "upload(s) wait for a sign-in")
	res2, err := me.start("resume")
	if err != nil {
		return r, err
	}
	r.ResumeExit, err = res2.wait(ctx, 5*time.Minute)
	if err != nil {
		return r, fmt.Errorf("carrier resume: %w", err)
	}
	r.Retries += res2.retries()
	final, err := me.record(bigID)
	if err != nil {
		return r, err
	}
	ofinal, err := me.record(otherID)
	if err != nil {
		return r, err
	}
	after := b.sb.Stats()
	r.TCPBytes = b.tcp.Load() - s.tcp
	r.Sessions = after.SessionsCreated - s.before.SessionsCreated - 1 // the other file's session
	r.SameSession = final.Session == parked.Session && parked.Session != ""
	r.WireBytes = b.sessionBytes(final.Session)
	r.Other.WireBytes = b.sessionBytes(ofinal.Session)
	r.Other.Verified = ofinal.Verified
	r.Other.SameSession = ofinal.Session == orec.Session
	var f struct{ ID string }
	if final.Response != nil {
		json.Unmarshal(final.Response.Body, &f)
	}
	size, sha, err := b.driveFile(f.ID)
	if err != nil {
		return r, err
	}
	r.Identical = size == r.Size && sha == s.sum
	err = r.check(final)
	if ofinal.State != transfer.StateDone || ofinal.Verified == "" || !r.Other.SameSession || float64(r.Other.WireBytes) > 1.01*float64(r.Other.Size) {
		err = errors.Join(err, fmt.Errorf("%s's file: %s, verified %q, same session %v, %d bytes on the wire for %d", work, ofinal.State, ofinal.Verified, r.Other.SameSession, r.Other.WireBytes, r.Other.Size))
	}
	return r, err
}

func findJob(p *person, match func(*transfer.Record) bool) string {
	j, err := transfer.OpenJournal(p.state)
	if err != nil {
		return ""
	}
	recs, _ := j.List()
	for _, rec := range recs {
		if match(rec) {
			return rec.ID
		}
	}
	return ""
}
