package platform

import "errors"

// "Make Carrier my mail app": the system opens mail links (mailto:) and
// programs' "Send by email" with Carrier from now on. On Linux and the
// BSDs the desktop's default for x-scheme-handler/mailto, by xdg-mime
// (gio where xdg-mime is missing), naming Carrier's desktop entry; on
// Windows the person's own mail client (HKCU\Software\Clients\Mail),
// which programs' Simple MAPI "Send by email" follows: mail links are
// Windows' to give, only in its Settings (Default apps), since Windows 8
// keeps an app from naming itself there.

// ErrMailAppUnsupported says Carrier cannot make itself the mail app on
// this system.
var ErrMailAppUnsupported = errors.New("Carrier cannot make itself the mail app on this system")

// MailApp is what MakeMailApp changed.
type MailApp struct {
	// Before is the mail app before, as the system names it (a desktop
	// entry, a Clients\Mail name); "" when there was none.
	Before string
	// Already: Carrier was the mail app before; nothing changed.
	Already bool
	// LinksInSettings: mail links still open with what the system had;
	// the person chooses Carrier for them in the system's settings
	// (Windows' Settings > Apps > Default apps).
	LinksInSettings bool
}

// MakeMailApp makes Carrier the person's mail app and says what it
// changed. appID names its desktop entry on Linux (appID.desktop, as the
// .deb installs it); on Windows Carrier's Clients\Mail name is the
// .msi's.
func MakeMailApp(appID string) (MailApp, error) { return makeMailApp(appID) }

// CanMakeMailApp says whether MakeMailApp is done on this system (and,
// on Linux, whether the desktop's tool for it is installed).
func CanMakeMailApp() bool { return canMakeMailApp() }
