package transfer

import (
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

// readRefusalPasses: a reader that opens a journal file while another
// process moves a new version over it is refused for that instant (see
// sharingViolation), and tries again for a little while, as the writer
// does (durableRename).
func readRefusalPasses(err error) bool { return sharingViolation(err) }

// syncDir does nothing: Windows refuses FlushFileBuffers on a folder
// ("Access denied", on Windows 11 as under Wine), and the write-through
// rename already made the move durable.
func syncDir(string) error { return nil }
