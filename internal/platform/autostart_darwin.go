package platform

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// autostartPath is the person's LaunchAgent, which launchd loads at login.
func autostartPath() string {
	return filepath.Join(home(), "Library", "LaunchAgents", "app.carrier.desktop.plist")
}

func enableAutostart(exe string) error {
	if !filepath.IsAbs(exe) {
		return fmt.Errorf("starting at login needs Carrier's full path, not %q", exe)
	}
	var esc strings.Builder
	if err := xml.EscapeText(&esc, []byte(exe)); err != nil {
		return err
	}
	plist := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>app.carrier.desktop</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + esc.String() + `</string>
		<string>` + AutostartFlag + `</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
</dict>
</plist>
`
	path := autostartPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("starting at login: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(plist), 0o644); err != nil {
		return fmt.Errorf("starting at login: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("starting at login: %w", err)
	}
	return nil
}

func disableAutostart() error {
	if err := os.Remove(autostartPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("not starting at login: %w", err)
	}
	return nil
}

func autostartEnabled() (bool, error) {
	_, err := os.Stat(autostartPath())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
