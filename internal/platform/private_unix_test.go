//go:build !windows

package platform

import (
	"fmt"
	"os"
	"testing"
)

func ownerOnly(t *testing.T, path string) (bool, string) {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()&0o077 == 0, fmt.Sprintf("mode %v", fi.Mode().Perm())
}
