package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"carrier/auth"
	"carrier/internal/platform"
	"carrier/transfer"
)

// The keychain cannot be watched (go-keyring reads and writes, nothing
// more), and asking it again and again wakes the system's keychain
// service. So every Carrier that signs an account in or out also writes
// the time of it to a small file in Carrier's data folder, the accounts
// stamp, and a window watches that folder: `carrier login` in a terminal
// while the window runs sends the window's parked jobs on.
const accountsStampName = "accounts-changed"

// stampPoll is how often the stamp is read where the folder cannot be
// watched (a system out of watches): reading a small file is cheap.
const stampPoll = 5 * time.Second

// stampLockWait is how long a note waits for another Carrier's.
const stampLockWait = 5 * time.Second

// stampTimes are an account's last sign-in and sign-out, in Unix
// nanoseconds, by any Carrier.
type stampTimes struct {
	In  int64 `json:"in,omitempty"`
	Out int64 `json:"out,omitempty"`
}

// accountsStamp is the stamp's content: for each API endpoint
// (auth.CanonicalEndpoint) each account's times. It holds no secret.
type accountsStamp struct {
	Endpoints map[string]map[string]stampTimes `json:"endpoints"`
}

func readStamp(dir string) accountsStamp {
	var st accountsStamp
	data, err := os.ReadFile(filepath.Join(dir, accountsStampName))
	if err == nil {
		json.Unmarshal(data, &st) // a torn or foreign file counts as empty
	}
	if st.Endpoints == nil {
		st.Endpoints = map[string]map[string]stampTimes{}
	}
	return st
}

// NoteSignIn records in the accounts stamp of the data folder dir that
// address signed in at endpoint now, for a window watching dir to hear
// (Google.Watch). A folder that does not exist yet has no window to
// tell, and is not made.
func NoteSignIn(dir, endpoint, address string) error {
	_, err := noteAccount(dir, endpoint, address, true)
	return err
}

// NoteSignOut is NoteSignIn for a sign-out.
func NoteSignOut(dir, endpoint, address string) error {
	_, err := noteAccount(dir, endpoint, address, false)
	return err
}

// noteAccount writes the stamp again with address's sign-in or sign-out
// time, atomically (a new file renamed over the old), and returns the
// account's times as written. The read and the write hold the stamp's
// lock, so two Carriers noting at the same instant both keep their note.
// A lock that cannot be had within stampLockWait (a Carrier hung holding
// it) does not stop the note: written without it, it may then lose the
// other, as it did before there was a lock.
func noteAccount(dir, endpoint, address string, in bool) (stampTimes, error) {
	base, err := auth.CanonicalEndpoint(endpoint)
	if err != nil {
		return stampTimes{}, err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if errors.Is(err, fs.ErrNotExist) {
			return stampTimes{}, nil
		}
		return stampTimes{}, fmt.Errorf("cannot note the sign-in for other Carrier windows in %s: %w", dir, err)
	}
	if release, err := transfer.LockFile(filepath.Join(dir, accountsStampName+".lock"), stampLockWait); err == nil {
		defer release()
	}
	st := readStamp(dir)
	accts := st.Endpoints[base]
	if accts == nil {
		accts = map[string]stampTimes{}
		st.Endpoints[base] = accts
	}
	t := accts[address]
	// Later than anything noted before, whatever the clock did: a window
	// compares times, not clocks.
	now := max(time.Now().UnixNano(), t.In+1, t.Out+1)
	if in {
		t.In = now
	} else {
		t.Out = now
	}
	accts[address] = t
	data, err := json.Marshal(st)
	if err != nil {
		return stampTimes{}, err
	}
	if err := platform.WriteFile(filepath.Join(dir, accountsStampName), data); err != nil {
		return stampTimes{}, fmt.Errorf("cannot note the sign-in for other Carrier windows: %w", err)
	}
	return t, nil
}

// OnAccountsChanged has f told when Watch hears that an account signed in
// or out elsewhere (`carrier login`, `carrier logout`, another window),
// once the accounts were read again and parked jobs of an account signed
// in sent on: the Account screen and Compose's From list again.
func (g *Google) OnAccountsChanged(f func()) {
	g.mu.Lock()
	g.changed = append(g.changed, f)
	g.mu.Unlock()
}

// Watch has g write its own sign-ins and sign-outs to the accounts stamp
// in the data folder dir, and hear those of other Carriers there until
// ctx ends: an account signed in elsewhere is told as g's own sign-ins
// are (OnSignIn: the queue sends its parked jobs on), one signed out is
// looked up again (its jobs park on their next request), and
// OnAccountsChanged's functions are called. The folder is watched by the
// system (inotify, ReadDirectoryChangesW, kqueue), and the stamp is read
// every few seconds as well (alone where the folder cannot be watched).
func (g *Google) Watch(ctx context.Context, dir string) {
	g.useStamp(dir)
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(dir); err != nil {
			w.Close()
		}
	}
	if err != nil {
		tick := time.NewTicker(stampPoll)
		go func() {
			defer tick.Stop()
			g.pollStamp(ctx, tick.C)
		}()
		return
	}
	go func() {
		defer w.Close()
		// The system's word is read at once, and the stamp every
		// stampPoll as well: a word lost bounds the wait at stampPoll (a
		// sign-in elsewhere was once not acted on for 30 s under Wine,
		// the cause not found).
		tick := time.NewTicker(stampPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				g.stampChanged()
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				// Any change in the folder: the stamp arrives by a
				// rename, which systems name differently; reading it
				// again costs little and changes nothing when it did
				// not change.
				g.stampChanged()
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				g.stampChanged() // events were lost: read it anyway
			}
		}
	}()
}

// useStamp has g note its sign-ins in dir's stamp and take what it says
// now as seen.
func (g *Google) useStamp(dir string) {
	g.stampMu.Lock()
	defer g.stampMu.Unlock()
	g.mu.Lock()
	g.stampDir = dir
	g.seen = maps.Clone(readStamp(dir).Endpoints[g.stampKey()])
	g.mu.Unlock()
}

// pollStamp reads the stamp at each tick until ctx ends.
func (g *Google) pollStamp(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			g.stampChanged()
		}
	}
}

func (g *Google) stampKey() string {
	base, err := auth.CanonicalEndpoint(g.endpoint)
	if err != nil {
		return g.endpoint
	}
	return base
}

// stampChanged acts on what the stamp says changed since g read it last.
func (g *Google) stampChanged() {
	dir, unlock := g.lockStamp()
	defer unlock()
	if dir == "" {
		return
	}
	now := readStamp(dir).Endpoints[g.stampKey()]
	g.mu.Lock()
	var in []string
	changed := false
	for addr, t := range now {
		was := g.seen[addr]
		switch {
		case t.In > was.In && t.In > t.Out:
			in = append(in, addr)
			changed = true
		case t.Out > was.Out:
			changed = true
		}
	}
	g.seen = maps.Clone(now)
	hooks := slices.Clone(g.changed)
	g.mu.Unlock()
	if !changed {
		return
	}
	g.reload()
	slices.Sort(in)
	for _, addr := range in {
		g.tellSignedIn(addr)
	}
	for _, f := range hooks {
		f()
	}
}

// reload reads the default account from the keychain again, and has
// every request look its credential up again.
func (g *Google) reload() {
	acct, err := auth.Load(g.endpoint)
	g.mu.Lock()
	g.acct = nil
	if err == nil {
		g.acct = acct
	}
	g.mu.Unlock()
	g.resetCreds()
}

// lockStamp takes the stamp's lock, so that reading or writing the stamp
// and remembering what it says are one step, and returns the folder g
// watches; "" (and no lock taken) when it watches none.
func (g *Google) lockStamp() (dir string, unlock func()) {
	g.mu.Lock()
	dir = g.stampDir
	g.mu.Unlock()
	if dir == "" {
		return "", func() {}
	}
	g.stampMu.Lock()
	return dir, g.stampMu.Unlock
}

// noteAccount writes g's own sign-in or sign-out to the stamp, if g
// watches one, and remembers it as seen: g hears only other Carriers'.
func (g *Google) noteAccount(address string, in bool) {
	// Written and remembered as one step, so that the watch reading the
	// stamp meanwhile does not take g's own note for another's.
	dir, unlock := g.lockStamp()
	defer unlock()
	if dir == "" {
		return
	}
	t, err := noteAccount(dir, g.endpoint, address, in)
	if err != nil {
		return // other windows then learn of it at their next start
	}
	g.mu.Lock()
	if g.seen == nil {
		g.seen = map[string]stampTimes{}
	}
	g.seen[address] = t
	g.mu.Unlock()
}
