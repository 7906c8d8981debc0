package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"carrier/internal/platform"
)

// Dirs are the folders Carrier keeps its files in.
type Dirs struct {
	Data  string // kept for good: the embedded sandbox's store
	State string // the upload journal and the spool
}

// DefaultDirs are the person's own folders, as each system has them.
func DefaultDirs() Dirs { return Dirs{Data: DataDir(), State: StateDir()} }

// Sandbox is the embedded sandbox's data folder.
func (d Dirs) Sandbox() string { return filepath.Join(d.Data, "sandbox") }

// Spool is where built messages wait until their upload ends.
func (d Dirs) Spool() string { return SpoolDir(d.State) }

// SpoolDir is the spool beside the journal of stateDir: whoever shares a
// journal shares its spool, so one sweep sees every job that needs a file.
func SpoolDir(stateDir string) string { return filepath.Join(stateDir, "spool") }

// DataDir is where Carrier keeps what it owns for good (the embedded
// sandbox's store): $XDG_DATA_HOME/carrier on Linux, %LOCALAPPDATA%\Carrier
// on Windows, ~/Library/Application Support/Carrier on macOS.
func DataDir() string { return platform.DataDir() }

// StateDir is where the upload journal lives: $XDG_STATE_HOME/carrier on
// Linux, beside the data elsewhere.
func StateDir() string { return platform.StateDir() }

// ErrNotPrivate says a folder Carrier keeps its files in could belong to,
// or be changed by, someone else.
var ErrNotPrivate = errors.New("the folder is not private to you")

// PrivateDir makes sure dir exists as a folder only this user can reach:
// created 0700 if missing; an existing one must be a real folder (not a
// link) owned by this user, and loses any access for group and others. A
// folder in the temporary folder is checked from its top below it, since
// another user may have made that top before Carrier did.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	if tmp := filepath.Clean(os.TempDir()); strings.HasPrefix(filepath.Clean(dir), tmp+string(filepath.Separator)) {
		rel, _ := filepath.Rel(tmp, dir)
		top := filepath.Join(tmp, strings.Split(rel, string(filepath.Separator))[0])
		if top != filepath.Clean(dir) {
			if err := checkPrivate(top); err != nil {
				return err
			}
		}
	}
	return checkPrivate(dir)
}

func checkPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("cannot check %s: %w", dir, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("%w: %s is a link or not a folder; Carrier keeps messages and upload addresses there. Remove it, or choose another folder", ErrNotPrivate, dir)
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to another user (uid %d), who could read or change what Carrier keeps there. Remove it, or choose another folder", ErrNotPrivate, dir, uid)
	}
	// Mode 0700, or an owner-only access list where mode bits mean nothing.
	if err := platform.Private(dir); err != nil {
		return fmt.Errorf("%w: %s is open to other users (mode %o) and cannot be made private: %v", ErrNotPrivate, dir, fi.Mode().Perm(), err)
	}
	return nil
}
