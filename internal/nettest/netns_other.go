//go:build !linux

package nettest

import "errors"

// RunInPrivateNetwork: only Linux gives a private network namespace.
func RunInPrivateNetwork(...string) error { return ErrNoNamespaces }

// SetLoopback: only in a private network namespace, only on Linux.
func SetLoopback(bool) error {
	return errors.New("nettest: the loopback is only taken down in a private network namespace, on Linux")
}
