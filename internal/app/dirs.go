package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Dirs are the folders Carrier keeps its files in.
type Dirs struct {
	Data  string // kept for good: the embedded sandbox's store
	State string // the upload journal and the spool
}

// DefaultDirs are the person's own folders: XDG's on Linux.
func DefaultDirs() Dirs { return Dirs{Data: DataDir(), State: StateDir()} }

// Sandbox is the embedded sandbox's data folder.
func (d Dirs) Sandbox() string { return filepath.Join(d.Data, "sandbox") }

// Spool is where built messages wait until their upload ends.
func (d Dirs) Spool() string { return SpoolDir(d.State) }

// SpoolDir is the spool beside the journal of stateDir: whoever shares a
// journal shares its spool, so one sweep sees every job that needs a file.
func SpoolDir(stateDir string) string { return filepath.Join(stateDir, "spool") }

// DataDir is where Carrier keeps what it owns for good (the embedded
// sandbox's store): $XDG_DATA_HOME/carrier, ~/.local/share/carrier on Linux.
func DataDir() string {
	if runtime.GOOS == "linux" || runtime.GOOS == "freebsd" {
		return filepath.Join(xdg("XDG_DATA_HOME", ".local/share"), "carrier")
	}
	return fallbackDir()
}

// StateDir is where the upload journal lives: $XDG_STATE_HOME/carrier,
// ~/.local/state/carrier on Linux.
func StateDir() string {
	if runtime.GOOS == "linux" || runtime.GOOS == "freebsd" {
		return filepath.Join(xdg("XDG_STATE_HOME", ".local/state"), "carrier")
	}
	return filepath.Join(fallbackDir(), "state")
}

func xdg(env, rel string) string {
	if d := os.Getenv(env); filepath.IsAbs(d) {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(tempRoot(), rel)
	}
	return filepath.Join(home, rel)
}

func fallbackDir() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "Carrier")
	}
	return tempRoot()
}

// tempRoot is the last resort when the system names no home: a folder of
// this user's own in the temporary folder, which anyone may write, so
// PrivateDir checks it belongs to this user before anything goes in.
func tempRoot() string {
	return filepath.Join(os.TempDir(), "carrier-"+strconv.Itoa(os.Getuid()))
}

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
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%w: %s is open to other users (mode %o) and cannot be made private: %v", ErrNotPrivate, dir, fi.Mode().Perm(), err)
		}
	}
	return nil
}
