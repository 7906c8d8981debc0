//go:build unix

package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeAutostartFile puts an entry file (an XDG desktop entry, a
// LaunchAgent) in place whole: written beside it and renamed over, so a
// session manager reading the folder at that moment sees the old entry or
// the new one.
func writeAutostartFile(path string, data []byte, dirPerm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return fmt.Errorf("starting at login: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("starting at login: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("starting at login: %w", err)
	}
	return nil
}

// disableAutostart removes the entry file; none is no error.
func disableAutostart() error {
	if err := os.Remove(autostartPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("not starting at login: %w", err)
	}
	return nil
}
