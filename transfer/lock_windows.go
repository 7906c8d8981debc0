package transfer

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

var (
	procLockFileEx   = kernel32.NewProc("LockFileEx")
	procUnlockFileEx = kernel32.NewProc("UnlockFileEx")
)

const (
	lockfileFailImmediately = 0x1
	lockfileExclusiveLock   = 0x2
	errLockViolation        = syscall.Errno(33) // ERROR_LOCK_VIOLATION
)

// lockFile takes LockFileEx's exclusive lock on the first byte of the job's
// lock file, without waiting. Such locks belong to the handle, so a second
// Lock in this same process conflicts too, as flock's do; the system drops
// them when the process dies, however it dies.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot lock job: %w", err)
	}
	h := f.Fd()
	var ol syscall.Overlapped // offset 0
	r, _, e := procLockFileEx.Call(h, lockfileExclusiveLock|lockfileFailImmediately, 0, 1, 0, uintptr(unsafe.Pointer(&ol)))
	if r == 0 {
		f.Close()
		if errors.Is(e, errLockViolation) || errors.Is(e, syscall.ERROR_IO_PENDING) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("cannot lock job: %w", e)
	}
	return func() {
		var ol syscall.Overlapped
		procUnlockFileEx.Call(h, 0, 1, 0, uintptr(unsafe.Pointer(&ol)))
		f.Close()
	}, nil
}
