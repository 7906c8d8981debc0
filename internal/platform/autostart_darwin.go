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
	return writeAutostartFile(autostartPath(), []byte(plist), 0o755)
}

func autostartEnabled() (bool, error) {
	_, err := os.Stat(autostartPath())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
