package cli

import (
	"os"
	"path/filepath"
	"runtime"
)

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
