package platform

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows/registry"
)

// runKey is the per-user key whose values Windows runs at logon; a test
// points it at a scratch key.
var runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

const runValue = "Carrier"

func enableAutostart(exe string) error {
	if !filepath.IsAbs(exe) {
		return fmt.Errorf("starting at login needs Carrier's full path, not %q", exe)
	}
	if strings.Contains(exe, `"`) {
		return fmt.Errorf("starting at login: %q cannot be quoted for Windows", exe)
	}
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("starting at login: %w", err)
	}
	defer k.Close()
	// Quoted: the path usually holds spaces (C:\Program Files\...).
	if err := k.SetStringValue(runValue, `"`+exe+`" `+AutostartFlag); err != nil {
		return fmt.Errorf("starting at login: %w", err)
	}
	return nil
}

func disableAutostart() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("not starting at login: %w", err)
	}
	defer k.Close()
	if err := k.DeleteValue(runValue); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return fmt.Errorf("not starting at login: %w", err)
	}
	return nil
}

func autostartEnabled() (bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer k.Close()
	v, _, err := k.GetStringValue(runValue)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	return err == nil && v != "", err
}
