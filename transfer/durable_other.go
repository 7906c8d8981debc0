//go:build !windows

package transfer

import (
	"errors"
	"fmt"
	"os"
)

// readRecord reads a journal file: a rename replaces it whole, so a
// reader sees the old version or the new.
func readRecord(path string) ([]byte, error) { return os.ReadFile(path) }

// durableRename is rename(2): durable once the folder is synced.
func durableRename(from, to string) error { return os.Rename(from, to) }

// syncDir makes a rename in dir durable: until the folder is synced, a
// power cut may undo it.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil // some systems cannot open folders; the rename stands
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("cannot sync the upload journal folder: %w", err)
	}
	return nil
}
