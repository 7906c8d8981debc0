//go:build unix && !darwin

package platform

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// autostartPath is where the XDG Autostart specification has a person's
// entries: $XDG_CONFIG_HOME/autostart, ~/.config/autostart by default.
func autostartPath() string {
	return filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "autostart", "carrier.desktop")
}

func enableAutostart(exe string) error {
	if !filepath.IsAbs(exe) {
		return fmt.Errorf("starting at login needs Carrier's full path, not %q", exe)
	}
	if strings.ContainsAny(exe, "\n\r") {
		return fmt.Errorf("starting at login: a desktop entry cannot name %q, which holds a line break", exe)
	}
	entry := strings.Join([]string{
		"[Desktop Entry]",
		"Type=Application",
		"Name=Carrier",
		"Comment=Resumes unfinished uploads after you log in",
		"Exec=" + execQuote(exe) + " " + AutostartFlag,
		"Icon=app.carrier.desktop",
		"Terminal=false",
		"X-GNOME-Autostart-enabled=true",
		"",
	}, "\n")
	return writeAutostartFile(autostartPath(), []byte(entry), 0o700)
}

// autostartEnabled reads the entry as a session manager does: present,
// and neither Hidden nor switched off by GNOME's key (which desktops'
// settings write to turn an entry off without deleting it).
func autostartEnabled() (bool, error) {
	data, err := os.ReadFile(autostartPath())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		switch strings.TrimSpace(k) {
		case "Hidden":
			if strings.TrimSpace(v) == "true" {
				return false, nil
			}
		case "X-GNOME-Autostart-enabled":
			if strings.TrimSpace(v) == "false" {
				return false, nil
			}
		}
	}
	return true, nil
}

// execQuote writes a path as one argument of a desktop entry's Exec key:
// quoted when it holds a character the specification reserves, with
// '"', '`', '$' and '\' escaped inside the quotes, and then, as every
// string value, '\' escaped once more; '%' is doubled either way, since
// it starts a field code.
func execQuote(path string) string {
	path = strings.ReplaceAll(path, "%", "%%")
	if !strings.ContainsAny(path, " \t\"'\\><~|&;$*?#()`") {
		return path
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range path {
		switch r {
		case '"', '`', '$':
			b.WriteString(`\\`)
			b.WriteRune(r)
		case '\\':
			b.WriteString(`\\\\`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
