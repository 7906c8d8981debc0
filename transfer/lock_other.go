//go:build !unix && !windows

package transfer

import "sync"

// Without flock, jobs are locked within this process only; two processes
// sharing a journal on such a system could work the same job. The session
// protocol keeps that from corrupting an upload (each asks the session
// where it stands), but it wastes bandwidth.
var (
	localLocksMu sync.Mutex
	localLocks   = map[string]bool{}
)

func lockFile(path string) (func(), error) {
	localLocksMu.Lock()
	defer localLocksMu.Unlock()
	if localLocks[path] {
		return nil, ErrBusy
	}
	localLocks[path] = true
	return func() {
		localLocksMu.Lock()
		delete(localLocks, path)
		localLocksMu.Unlock()
	}, nil
}
