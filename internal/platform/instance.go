package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"sync"
)

// One window per person: the first Carrier to open a window claims it
// (ClaimInstance); a later `carrier FILE...`, `carrier mailto:...` or plain
// `carrier` hands what it was given to that window (HandOver) and exits.
// On Linux this is the freedesktop Application interface on the session
// bus, GApplication's way (instance_linux.go); on Windows a named pipe
// of the person's own (instance_windows.go); on macOS a socket in the
// private data folder (instance_sock.go); elsewhere it is not done yet
// and every launch opens its own window (instance_other.go).

// ErrRunning says another Carrier on the same folders holds the window:
// hand what this one was given over to it.
var ErrRunning = errors.New("a Carrier window is already open")

// ErrNoSingleInstance says this system has no hand-over yet: the window
// opens on its own.
var ErrNoSingleInstance = errors.New("handing files to an open Carrier window is not done on this system yet")

// InstanceName is the well-known name the window claims: the app id and,
// after it, a digest of the data folder. Two Carriers on different
// folders (a person's other profile, a test's scratch folders) keep
// different journals and accounts, so files meant for one never go to the
// other's window; the same person on the same folders gets one window.
func InstanceName(appID, dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(filepath.Clean(dataDir)))
	return appID + ".d" + hex.EncodeToString(sum[:8])
}

// instancePath is the object the interface lives at: the app id as a
// path, as GApplication names it.
func instancePath(appID string) string {
	return "/" + strings.NewReplacer(".", "/", "-", "_").Replace(appID)
}

// Instance is the window's claim. What other launches hand over waits
// until Serve gives it somewhere to go (the window is built after the
// claim), then goes there in the order it came.
type Instance struct {
	close   func() error
	mu      sync.Mutex
	serve   func(items []string)
	pending [][]string
}

// Serve has every hand-over call open: items are the other launch's
// arguments as URIs (file: URIs, mailto: URLs); none means only "come to
// the front". Hand-overs that came before are given at once.
func (i *Instance) Serve(open func(items []string)) {
	i.mu.Lock()
	i.serve = open
	pending := i.pending
	i.pending = nil
	i.mu.Unlock()
	for _, p := range pending {
		open(p)
	}
}

// handed is a hand-over, from the bus's goroutine.
func (i *Instance) handed(items []string) {
	i.mu.Lock()
	serve := i.serve
	if serve == nil {
		i.pending = append(i.pending, items)
	}
	i.mu.Unlock()
	if serve != nil {
		serve(items)
	}
}

// Close lets the claim go: the next Carrier opens a window of its own.
func (i *Instance) Close() error {
	if i == nil || i.close == nil {
		return nil
	}
	return i.close()
}
