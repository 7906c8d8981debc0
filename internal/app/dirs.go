package app

import (
	"os"
	"path/filepath"
	"runtime"
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
		return filepath.Join(os.TempDir(), "carrier-"+rel)
	}
	return filepath.Join(home, rel)
}

func fallbackDir() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "Carrier")
	}
	return filepath.Join(os.TempDir(), "carrier")
}
