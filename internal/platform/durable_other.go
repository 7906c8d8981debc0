//go:build !windows

package platform

import (
	"errors"
	"fmt"
	"os"
)

// DurableRename moves a file already synced to its name: rename(2), durable
// once the folder is synced (SyncDir).
func DurableRename(from, to string) error { return Rename(from, to) }

// SyncDir makes a rename in dir durable: until the folder is synced, a
// power cut may undo it.
func SyncDir(dir string) error {
	h := stepStarts()
	err := syncDir(dir)
	h.end(DiskStep{Op: "syncdir", Path: dir}, err)
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil // some systems cannot open folders; the rename stands
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("cannot sync the folder %s: %w", dir, err)
	}
	return nil
}
