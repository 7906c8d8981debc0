package transfer

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// recordReader reads the journal's files. The file system, the platform's
// word on which refusals pass (readRefusalPasses) and the clock that times
// the waits are its fields, so a test can refuse reads as Windows does, on
// every system, and go through the waits without waiting.
type recordReader struct {
	read   func(path string) ([]byte, error)
	passes func(error) bool
	clock  Clock
}

func systemRecordReader() recordReader {
	return recordReader{read: os.ReadFile, passes: readRefusalPasses, clock: SystemClock()}
}

// The waits between tries double from the first to the last, as the
// writer's do (platform.DurableRename): 1 ms to 256 ms, 511 ms in all, longer than
// another process takes to move one record into place.
const (
	readFirstWait = time.Millisecond
	readLastWait  = 256 * time.Millisecond
)

// readRecord reads a journal file, trying again while it is refused for a
// reason that passes; a refusal that outlasts the waits is reported with
// how long it lasted, the reason still wrapped (a missing file stays
// fs.ErrNotExist to errors.Is, whatever the platform).
func (rr recordReader) readRecord(path string) ([]byte, error) {
	start := rr.clock.Elapsed()
	for wait := readFirstWait; ; wait *= 2 {
		data, err := rr.read(path)
		if err == nil || !rr.passes(err) {
			return data, err
		}
		if wait > readLastWait {
			return nil, fmt.Errorf("%s stayed locked by another process for %v: %w", path, rr.clock.Elapsed()-start, err)
		}
		<-rr.clock.NewTimer(wait).C()
	}
}

// Windows' numbers for the refusals of a file being moved: the names are
// kept on every system so the predicate below can be tested on each.
const (
	errAccessDenied     = syscall.Errno(5)  // ERROR_ACCESS_DENIED
	errSharingViolation = syscall.Errno(32) // ERROR_SHARING_VIOLATION
)

// sharingViolation reports whether err is Windows' refusal of a file that
// another process holds or is moving over: a sharing violation, or "Access
// denied" while the old version is being deleted. It means this on Windows
// only (elsewhere the same numbers are other errors): only the Windows
// build asks it of a real error.
func sharingViolation(err error) bool {
	var e syscall.Errno
	return errors.As(err, &e) && (e == errAccessDenied || e == errSharingViolation)
}
