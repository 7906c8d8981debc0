//go:build linux || openbsd || dragonfly || solaris || illumos

package transfer

import (
	"os"
	"syscall"
	"time"
)

// changeTime is the inode's change time: every write moves it, and unlike
// the modification time no ordinary tool can set it back. It catches a
// file rewritten with its size and time kept, even in bytes not yet sent.
func changeTime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
	return time.Time{}
}

// changeTimeOf is changeTime for callers that also know the path, which
// Windows needs (ctime_windows.go).
func changeTimeOf(_ string, fi os.FileInfo) time.Time { return changeTime(fi) }
