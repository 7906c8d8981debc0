//go:build !unix && !windows

package platform

func enableAutostart(string) error    { return ErrAutostartUnsupported }
func disableAutostart() error         { return nil }
func autostartEnabled() (bool, error) { return false, nil }
