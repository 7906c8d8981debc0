//go:build !linux

package platform

// Notifier is not offered here: Fyne's notifications serve.
type Notifier struct{}

func NewNotifier(app, icon string) (*Notifier, error) { return nil, ErrNoNotifications }
func (n *Notifier) Actions() bool                     { return false }
func (n *Notifier) Notify(title, body string, actions []Action) error {
	return ErrNoNotifications
}
func (n *Notifier) Close() error { return nil }
