//go:build unix && !darwin

package platform

import (
	"os"
	"path/filepath"
)

// $XDG_DATA_HOME/carrier, ~/.local/share/carrier by default.
func dataDir() string { return filepath.Join(xdg("XDG_DATA_HOME", ".local/share"), "carrier") }

// $XDG_STATE_HOME/carrier, ~/.local/state/carrier by default.
func stateDir() string { return filepath.Join(xdg("XDG_STATE_HOME", ".local/state"), "carrier") }

func xdg(env, rel string) string {
	if d := os.Getenv(env); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home(), rel)
}
