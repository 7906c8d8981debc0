//go:build unix

package transfer

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot lock job: %w", err)
	}
	// flock locks belong to the open file, so a second Lock in this same
	// process conflicts too, as it should.
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("cannot lock job: %w", err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}
