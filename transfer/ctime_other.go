//go:build !(linux || openbsd || dragonfly || solaris || illumos || darwin || freebsd || netbsd || windows)

package transfer

import (
	"os"
	"time"
)

// changeTimeOf is not read here: size, modification time and the hash of
// the bytes sent guard the file.
func changeTimeOf(string, os.FileInfo) time.Time { return time.Time{} }
