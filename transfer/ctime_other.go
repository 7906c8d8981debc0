//go:build !linux && !darwin && !windows

package transfer

import (
	"os"
	"time"
)

// changeTime is not read here: size, modification time and the hash of
// the bytes sent guard the file.
func changeTime(os.FileInfo) time.Time { return time.Time{} }

func changeTimeOf(string, os.FileInfo) time.Time { return time.Time{} }
