package platform

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"time"
)

// ReplaceFile moves the file from over to (the last step of an atomic
// write). On Windows another Carrier reading to at that instant (a
// window and a command share Carrier's files) holds it open without
// FILE_SHARE_DELETE, and the move is refused ("Access denied", or a
// sharing violation) until it lets go: the move is tried again for about
// half a second before the refusal is returned.
func ReplaceFile(from, to string) error {
	for wait := time.Millisecond; ; wait *= 2 {
		err := os.Rename(from, to)
		if err == nil || runtime.GOOS != "windows" || !busy(err) || wait > 256*time.Millisecond {
			return err
		}
		time.Sleep(wait)
	}
}

// busy says whether err is Windows refusing a move because the target is
// open elsewhere: ERROR_ACCESS_DENIED (5) or ERROR_SHARING_VIOLATION (32).
func busy(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && (errno == 5 || errno == 32)
}
