//go:build unix && !darwin

package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const carrierID = "app.carrier.desktop"

// scratchDesktop gives the test XDG folders of its own, with a mail app
// that was the mailto default before and, when withCarrier, Carrier's
// desktop entry as the .deb installs it (appID.desktop).
func scratchDesktop(t *testing.T, withCarrier bool) (config string, tool string) {
	t.Helper()
	tool, err := mimeTool()
	if err != nil {
		t.Skip(err)
	}
	root := t.TempDir()
	config = filepath.Join(root, "config")
	data := filepath.Join(root, "data")
	apps := filepath.Join(data, "applications")
	if err := os.MkdirAll(apps, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("XDG_DATA_DIRS", filepath.Join(root, "system"))
	t.Setenv("XDG_CONFIG_DIRS", filepath.Join(root, "system-config"))
	t.Setenv("XDG_CURRENT_DESKTOP", "")
	t.Setenv("HOME", root)
	entry := func(name, title string) {
		body := "[Desktop Entry]\nType=Application\nName=" + title + "\nExec=true %U\nMimeType=x-scheme-handler/mailto;\n"
		if err := os.WriteFile(filepath.Join(apps, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entry("other-mail.desktop", "Other Mail")
	if withCarrier {
		entry(carrierID+".desktop", "Carrier")
	}
	if strings.HasSuffix(tool, "gio") {
		_, err = runMime(tool, "mime", mailtoType, "other-mail.desktop")
	} else {
		_, err = runMime(tool, "default", "other-mail.desktop", mailtoType)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, err := mailtoDefault(tool); err != nil || got != "other-mail.desktop" {
		t.Fatalf("the scratch desktop's mail app is %q (%v), want other-mail.desktop", got, err)
	}
	return config, tool
}

// Make Carrier my mail app: the desktop's mailto default becomes
// Carrier's entry, in the person's mimeapps.list, and the answer names
// the app that had it; asked again, nothing changes and it says so.
func TestMakeMailAppSetsTheMailtoDefault(t *testing.T) {
	config, tool := scratchDesktop(t, true)
	got, err := MakeMailApp(carrierID)
	if err != nil {
		t.Fatal(err)
	}
	if got != (MailApp{Before: "other-mail.desktop"}) {
		t.Errorf("MakeMailApp said %+v, want Before other-mail.desktop", got)
	}
	if now, err := mailtoDefault(tool); err != nil || now != carrierID+".desktop" {
		t.Errorf("mail links now open with %q (%v), want Carrier", now, err)
	}
	list, err := os.ReadFile(filepath.Join(config, "mimeapps.list"))
	if err != nil || !strings.Contains(string(list), "x-scheme-handler/mailto="+carrierID+".desktop") {
		t.Errorf("the person's mimeapps.list (%v):\n%s", err, list)
	}
	again, err := MakeMailApp(carrierID)
	if err != nil || !again.Already {
		t.Errorf("asked again: %+v, %v; want Already", again, err)
	}
}

// Without Carrier's desktop entry the desktop cannot name it: an error
// in words, and the mail app stays what it was.
func TestMakeMailAppWithoutTheDesktopEntry(t *testing.T) {
	_, tool := scratchDesktop(t, false)
	if got, err := MakeMailApp(carrierID); err == nil {
		t.Fatalf("made Carrier the mail app without its desktop entry: %+v", got)
	} else {
		t.Log(err)
	}
	if now, err := mailtoDefault(tool); err != nil || now != "other-mail.desktop" {
		t.Errorf("mail links now open with %q (%v), want other-mail.desktop as before", now, err)
	}
}
