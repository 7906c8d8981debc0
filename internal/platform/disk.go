package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
)

// DiskStep is one step a write Carrier keeps takes on the disk, as a
// power-cut test records it (internal/crashdisk): the steps of the state
// folder's writers (WriteFile, the journal, the spool, the delivery store)
// all go through the functions below, so one recorder sees a whole send.
type DiskStep struct {
	Op   string   // "mkdir", "create", "sync", "chmod", "rename", "remove", "syncdir"
	Path string   // the file (the folder, for syncdir; from, for rename)
	To   string   // a rename's new name
	File *os.File // create and sync: the open file, to read what it holds
	Mode os.FileMode
}

// DiskHook hears the steps: Before as one starts, After once it is done
// (err: how it went), in the writer's goroutine. A recorder holds a lock
// from Before to After, so that the order it notes is the order the
// steps took (a folder's sync covers only the renames noted before it).
type DiskHook struct {
	Before func()
	After  func(DiskStep, error)
}

// diskHook, when set, hears every step. Unset (always, outside tests) it
// costs one atomic load per step.
var diskHook atomic.Pointer[DiskHook]

// SetDiskHook has h hear every step from now on, until restore is called.
// For tests; h must be safe for concurrent use.
func SetDiskHook(h *DiskHook) (restore func()) {
	old := diskHook.Swap(h)
	return func() { diskHook.Store(old) }
}

// stepStarts tells the hook, if any, that a step starts; its end tells it
// the step is done.
func stepStarts() *DiskHook {
	h := diskHook.Load()
	if h != nil {
		h.Before()
	}
	return h
}

func (h *DiskHook) end(s DiskStep, err error) {
	if h != nil {
		h.After(s, err)
	}
}

// CreateTemp is os.CreateTemp (a new private file, 0600), a step a
// power-cut test sees.
func CreateTemp(dir, pattern string) (*os.File, error) {
	h := stepStarts()
	f, err := os.CreateTemp(dir, pattern)
	s := DiskStep{Op: "create", File: f}
	if f != nil {
		s.Path = f.Name()
	}
	h.end(s, err)
	return f, err
}

// SyncFile is f.Sync: what f holds, and its mode, are on the disk once it
// returns (not its name: see SyncDir).
func SyncFile(f *os.File) error {
	h := stepStarts()
	err := f.Sync()
	h.end(DiskStep{Op: "sync", Path: f.Name(), File: f}, err)
	return err
}

// Chmod is os.Chmod, a step a power-cut test sees.
func Chmod(path string, mode os.FileMode) error {
	h := stepStarts()
	err := os.Chmod(path, mode)
	h.end(DiskStep{Op: "chmod", Path: path, Mode: mode}, err)
	return err
}

// Rename is os.Rename, not made durable (see DurableRename), a step a
// power-cut test sees.
func Rename(from, to string) error {
	h := stepStarts()
	err := os.Rename(from, to)
	h.end(DiskStep{Op: "rename", Path: from, To: to}, err)
	return err
}

// Remove is os.Remove, durable once the folder is synced, a step a
// power-cut test sees.
func Remove(path string) error {
	h := stepStarts()
	err := os.Remove(path)
	h.end(DiskStep{Op: "remove", Path: path}, err)
	return err
}

// MkdirAll is os.MkdirAll, durable: each folder it makes is synced into
// its parent (SyncDir) before it returns, so that what is written into
// it and synced afterwards cannot be taken away by a power cut with the
// folder's own name. Each folder made is a step a power-cut test sees.
func MkdirAll(path string, perm os.FileMode) error {
	var missing []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		h := stepStarts()
		err := os.Mkdir(missing[i], perm)
		h.end(DiskStep{Op: "mkdir", Path: missing[i]}, err)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return os.MkdirAll(path, perm) // the error os.MkdirAll gives
		}
		if err == nil {
			if err := SyncDir(filepath.Dir(missing[i])); err != nil {
				return err
			}
		}
	}
	return os.MkdirAll(path, perm) // a file in the way is refused here
}
