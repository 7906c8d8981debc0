package platform

import "errors"

// AutostartFlag is the argument Carrier is started with at login: it
// starts in the tray, the window hidden, and resumes unfinished uploads.
const AutostartFlag = "--autostart"

// ErrAutostartUnsupported is what SetAutostart says where Carrier does not
// know how this system starts programs at login.
var ErrAutostartUnsupported = errors.New("starting at login is not supported on this system")

// SetAutostart makes the system start exe (Carrier's executable, an
// absolute path) with AutostartFlag when the person logs in, or stops it:
// on Linux and the BSDs an XDG autostart entry
// ($XDG_CONFIG_HOME/autostart/carrier.desktop), on Windows the HKCU Run
// key, on macOS a LaunchAgent. Turning it off when it is off is no error.
func SetAutostart(on bool, exe string) error {
	if on {
		return enableAutostart(exe)
	}
	return disableAutostart()
}

// Autostart reports whether the system starts Carrier at login, as the
// system's own entry says (the person may have removed or disabled it
// in their desktop's settings since Carrier wrote it).
func Autostart() (bool, error) { return autostartEnabled() }
