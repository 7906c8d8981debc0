//go:build !unix

package app

import "os"

// ownerOf: Windows folders under the profile are private by their ACLs,
// which this check does not read.
func ownerOf(os.FileInfo) (int, bool) { return 0, false }

// processAlive reports whether a process with that id exists: on Windows
// FindProcess opens it, and fails for one that ended.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// storeHeld cannot be asked here without taking the lock (bbolt's
// LockFileEx range is its own business), so the check rests on the running
// file and a live process until the sandbox answers the proof.
func storeHeld(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
