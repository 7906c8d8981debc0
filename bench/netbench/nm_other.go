//go:build !linux

package main

import (
	"errors"
	"time"
)

// runNM: NetworkManager, a private network namespace and policy routing
// are Linux's.
func runNM(config, string, time.Duration, bool) error {
	return errors.New("-nm-online and -wifi-switch are measured on Linux only (NetworkManager, a private network namespace)")
}
