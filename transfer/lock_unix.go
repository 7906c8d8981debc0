//go:build unix

package transfer

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
)

// lockFile takes the flock of the file at path, made if missing, and
// returns its release. The lock is held by a bare descriptor, not an
// os.File: a queue holds one for every job not ended, and an os.File (its
// poller state, its name, its finalizer) was about 200 bytes of each of a
// camera roll's 20,400 queued jobs (issue 29).
func lockFile(path string) (func(), error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot lock job: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	// flock locks belong to the open file, so a second Lock in this same
	// process conflicts too, as it should.
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("cannot lock job: %w", err)
	}
	// Closing releases the lock; once only, since a descriptor closed
	// twice may by then be another file's.
	var closed atomic.Bool
	return func() {
		if closed.CompareAndSwap(false, true) {
			syscall.Close(fd)
		}
	}, nil
}
