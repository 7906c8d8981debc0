//go:build unix && !darwin

package platform

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The entry goes where $XDG_CONFIG_HOME says, names the executable so a
// session manager runs it (quoted as the Desktop Entry specification
// has it), passes desktop-file-validate, and goes again when turned off;
// an entry the person's desktop switched off reads as off.
func TestAutostartEntry(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	entry := filepath.Join(cfg, "autostart", "carrier.desktop")
	cases := []struct{ exe, exec string }{
		{"/usr/bin/carrier", "Exec=/usr/bin/carrier --autostart"},
		{"/opt/My Apps/carrier", `Exec="/opt/My Apps/carrier" --autostart`},
		{`/home/zoe/a"b$c\d/100%/carrier`, `Exec="/home/zoe/a\\"b\\$c\\\\d/100%%/carrier" --autostart`},
	}
	for _, c := range cases {
		if err := SetAutostart(true, c.exe); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(entry)
		if err != nil {
			t.Fatalf("%s: no entry at $XDG_CONFIG_HOME/autostart: %v", c.exe, err)
		}
		if !strings.Contains(string(data), "\n"+c.exec+"\n") {
			t.Errorf("%s: entry\n%s\nwants the line %s", c.exe, data, c.exec)
		}
		if v, err := exec.LookPath("desktop-file-validate"); err == nil {
			if out, err := exec.Command(v, entry).CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("%s: desktop-file-validate: %v %s", c.exe, err, out)
			}
		}
		if on, err := Autostart(); !on || err != nil {
			t.Fatalf("%s: written, but Autostart says %v, %v", c.exe, on, err)
		}
	}
	if err := os.WriteFile(entry, []byte("[Desktop Entry]\nType=Application\nExec=/usr/bin/carrier --autostart\nX-GNOME-Autostart-enabled=false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if on, _ := Autostart(); on {
		t.Error("an entry the desktop switched off reads as on")
	}
	if err := SetAutostart(false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Fatalf("turned off, the entry is still there: %v", err)
	}
	if on, err := Autostart(); on || err != nil {
		t.Fatalf("turned off: %v, %v", on, err)
	}
	if err := SetAutostart(false, ""); err != nil {
		t.Fatalf("turning off twice: %v", err)
	}
	if err := SetAutostart(true, "carrier"); err == nil || !strings.Contains(err.Error(), "full path") {
		t.Fatalf("a relative path: %v", err)
	}
}

// Without $XDG_CONFIG_HOME (or with a relative one, which the
// specification says to ignore) the entry goes under ~/.config.
func TestAutostartEntryDefaultsToHomeConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "relative/config")
	if err := SetAutostart(true, "/usr/bin/carrier"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "autostart", "carrier.desktop")); err != nil {
		t.Fatal(err)
	}
}
