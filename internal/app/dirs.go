package app

import (
	"path/filepath"

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
