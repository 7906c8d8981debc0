//go:build !windows

package transfer

import (
	"errors"
	"fmt"
	"os"
)

// readRefusalPasses: never here. A rename replaces a journal file whole,
// so a reader sees the old version or the new; a refusal is one to report.
func readRefusalPasses(error) bool { return false }

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
