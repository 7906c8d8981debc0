//go:build !windows

package platform

import "os"

func private(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	mode := os.FileMode(0o600)
	if fi.IsDir() {
		mode = 0o700
	}
	return os.Chmod(path, mode)
}
