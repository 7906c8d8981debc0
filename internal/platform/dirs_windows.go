package platform

import (
	"os"
	"path/filepath"
)

// %LOCALAPPDATA%\Carrier: the local profile, since large blobs have no
// business roaming between machines at every sign-in.
func dataDir() string { return filepath.Join(localAppData(), "Carrier") }

// %LOCALAPPDATA%\Carrier\state.
func stateDir() string { return filepath.Join(dataDir(), "state") }

func localAppData() string {
	if d := os.Getenv("LOCALAPPDATA"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home(), "AppData", "Local")
}
