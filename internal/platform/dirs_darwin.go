package platform

import "path/filepath"

// ~/Library/Application Support/Carrier, as Apple's guidelines have it.
func dataDir() string { return filepath.Join(home(), "Library", "Application Support", "Carrier") }

// The journal beside the data: macOS has no separate place for state.
func stateDir() string { return filepath.Join(dataDir(), "state") }
