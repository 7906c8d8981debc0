//go:build !unix && !windows

package platform

import "path/filepath"

func dataDir() string  { return filepath.Join(home(), ".carrier") }
func stateDir() string { return filepath.Join(dataDir(), "state") }
