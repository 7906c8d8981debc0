package transfer

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernel32 is loaded by name: it is a KnownDLL, always the system's own.
var kernel32 = syscall.NewLazyDLL("kernel32.dll")

var procMoveFileExW = kernel32.NewProc("MoveFileExW")

const (
	movefileReplaceExisting = 0x1
	movefileWriteThrough    = 0x8
)

// durableRename moves a file already flushed (File.Sync is
// FlushFileBuffers) over the record with MOVEFILE_WRITE_THROUGH, which
// returns only once the move is on the disk: Windows' durable rename, as
// it has no folder to sync.
func durableRename(from, to string) error {
	f, err := syscall.UTF16PtrFromString(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := syscall.UTF16PtrFromString(to)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	// Another process reading the record at this instant (the window and
	// carrier resume share the journal) holds it open without
	// FILE_SHARE_DELETE, and the move is refused: wait a little for it.
	for wait := time.Millisecond; ; wait *= 2 {
		r, _, e := procMoveFileExW.Call(uintptr(unsafe.Pointer(f)), uintptr(unsafe.Pointer(t)), movefileReplaceExisting|movefileWriteThrough)
		if r != 0 {
			return nil
		}
		if (e != errAccessDenied && e != errSharingViolation) || wait > 256*time.Millisecond {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: e}
		}
		time.Sleep(wait)
	}
}

const (
	errAccessDenied     = syscall.Errno(5)  // ERROR_ACCESS_DENIED
	errSharingViolation = syscall.Errno(32) // ERROR_SHARING_VIOLATION
)

// syncDir does nothing: Windows refuses FlushFileBuffers on a folder
// ("Access denied", on Windows 11 as under Wine), and the write-through
// rename already made the move durable.
func syncDir(string) error { return nil }

// readRecord reads a journal file. A reader that opens it while another
// process moves a new version over it is refused for that instant
// (a sharing violation, or "Access denied" while the old one is deleted):
// it tries again for a little while, as the writer does.
func readRecord(path string) ([]byte, error) {
	for wait := time.Millisecond; ; wait *= 2 {
		data, err := os.ReadFile(path)
		var e syscall.Errno
		if err == nil || !errors.As(err, &e) || (e != errAccessDenied && e != errSharingViolation) || wait > 256*time.Millisecond {
			return data, err
		}
		time.Sleep(wait)
	}
}
