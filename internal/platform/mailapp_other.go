//go:build !(unix && !darwin) && !windows

package platform

// macOS chooses the mail app in Mail's own settings (Launch Services,
// which needs cgo): not done here.
func makeMailApp(string) (MailApp, error) { return MailApp{}, ErrMailAppUnsupported }

func canMakeMailApp() bool { return false }
