package platform

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// ReplaceFile moves the file from over to (the last step of an atomic
// write). On Windows another Carrier reading to at that instant (a
// window and a command share Carrier's files) holds it open without
// FILE_SHARE_DELETE, and the move is refused ("Access denied", or a
// sharing violation) until it lets go: the move is tried again for about
// four seconds (busyFor) before the refusal is returned.
func ReplaceFile(from, to string) error {
	for wait := time.Millisecond; ; wait *= 2 {
		err := Rename(from, to)
		if err == nil || runtime.GOOS != "windows" || !busy(err) || wait > busyFor {
			return err
		}
		time.Sleep(wait)
	}
}

// busyFor bounds the waits of a move or a read that another Carrier's
// open file refuses: doubling from 1 ms while the wait is at most this,
// about four seconds in all. Half a second was too little on a loaded
// machine where a reader reads again at once: the window's and a
// command's turns can keep missing each other that long.
const busyFor = 2 * time.Second

// busy says whether err is Windows refusing a move because the target is
// open elsewhere: ERROR_ACCESS_DENIED (5) or ERROR_SHARING_VIOLATION (32).
func busy(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && (errno == 5 || errno == 32)
}

// WriteFile puts data at path for good, the one way Carrier writes a file
// it keeps: a private temporary file beside path (0600, and owner-only on
// Windows) written and synced, moved over path (DurableRename: retried
// while another Carrier reads path on Windows, written through there), and
// the folder synced, all before it returns, so that whatever refers to
// path afterwards finds it whole; a power cut before the end leaves the
// old file or none, never a part. The temporary file is removed on
// failure.
func WriteFile(path string, data []byte) error {
	return writeWhole(path, "."+filepath.Base(path)+".*.tmp", func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteStream puts at path what write writes, the way WriteFile does:
// for a file too big to hold in memory (an attachment saved from the
// Mailbox as it downloads). The temporary file beside path has a short
// name of its own, whatever path's length; a write that fails (cut
// short, cancelled) leaves nothing under path's name.
func WriteStream(path string, write func(io.Writer) error) error {
	return writeWhole(path, ".carrier-*.part", write)
}

func writeWhole(path, pattern string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := CreateTemp(dir, pattern) // CreateTemp makes it 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = SyncFile(f)
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = Private(tmp)
	}
	if err == nil {
		err = DurableRename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// ReadFile reads a file WriteFile keeps, as os.ReadFile does. On Windows
// a reader that opens it at the instant another process moves a new
// version over it is refused (a sharing violation, or access denied),
// and tries again for a little while, as WriteFile's writer does; a
// rename elsewhere replaces the file whole, so a refusal there is one to
// report.
func ReadFile(path string) ([]byte, error) {
	for wait := time.Millisecond; ; wait *= 2 {
		data, err := os.ReadFile(path)
		if err == nil || runtime.GOOS != "windows" || !busy(err) || wait > busyFor {
			return data, err
		}
		time.Sleep(wait)
	}
}
