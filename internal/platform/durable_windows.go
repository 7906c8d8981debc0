package platform

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernel32 (private_windows.go) is a KnownDLL, always the system's own.
var procMoveFileExW = kernel32.NewProc("MoveFileExW")

const (
	movefileReplaceExisting = 0x1
	movefileWriteThrough    = 0x8
)

// DurableRename moves a file already flushed (File.Sync is
// FlushFileBuffers) to its name with MOVEFILE_WRITE_THROUGH, which returns
// only once the move is on the disk: Windows' durable rename, as it has no
// folder to sync.
func DurableRename(from, to string) error {
	h := stepStarts()
	err := durableRename(from, to)
	h.end(DiskStep{Op: "rename", Path: from, To: to}, err)
	return err
}

func durableRename(from, to string) error {
	f, err := syscall.UTF16PtrFromString(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := syscall.UTF16PtrFromString(to)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	// Another process reading the file at this instant (the window and
	// carrier resume share Carrier's files) holds it open without
	// FILE_SHARE_DELETE, and the move is refused: wait a little for it.
	for wait := time.Millisecond; ; wait *= 2 {
		r, _, e := procMoveFileExW.Call(uintptr(unsafe.Pointer(f)), uintptr(unsafe.Pointer(t)), movefileReplaceExisting|movefileWriteThrough)
		if r != 0 {
			return nil
		}
		if !busy(e) || wait > busyFor {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: e}
		}
		time.Sleep(wait)
	}
}

// SyncDir does nothing: Windows refuses FlushFileBuffers on a folder
// ("Access denied", on Windows 11 as under Wine), and the write-through
// rename already made the move durable.
func SyncDir(string) error { return nil }
