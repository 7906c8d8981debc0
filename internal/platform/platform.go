// Package platform is what differs by operating system outside the upload
// engine (whose own such files are transfer/*_windows.go and the like):
// where Carrier keeps its files, how a file is made private to the
// person who runs it, how a file written is put in place durably, the
// system's sleep and network signals, starting at login, and
// notifications with actions. One file per system; nothing
// else asks which system it runs on. The standard library, godbus (the
// buses of Linux) and x/sys's registry (Windows) only.
package platform

import (
	"os"
	"path/filepath"
	"strconv"
)

// DataDir is where Carrier keeps what it owns for good (the embedded
// sandbox's store, large blobs): on the local disk, never a roaming
// profile.
func DataDir() string { return dataDir() }

// StateDir is where the upload journal lives.
func StateDir() string { return stateDir() }

// Private makes path, a file or a folder, readable and writable by its
// owner alone: mode 0600 or 0700 on Unix; on Windows, which ignores mode
// bits, an access list granting only the owner full control, not inherited
// from the parent folder, and inherited by whatever a folder will hold.
func Private(path string) error { return private(path) }

// MkdirPrivate makes the folder path (and its parents, as os.MkdirAll
// does) and makes it private.
func MkdirPrivate(path string) error {
	if err := MkdirAll(path, 0o700); err != nil {
		return err
	}
	return Private(path)
}

// home is the user's home folder, or the temporary folder when there is
// none (a service account).
func home() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	// One per user: the temporary folder is everyone's, and whoever makes
	// a folder there first owns it (internal/app's PrivateDir checks).
	return filepath.Join(os.TempDir(), "carrier-"+strconv.Itoa(os.Getuid()))
}
