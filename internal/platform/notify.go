package platform

import "errors"

// ErrNoNotifications is what NewNotifier says where the desktop offers no
// notification service Carrier can speak to directly: the caller falls
// back to Fyne's notifications, which have no actions.
var ErrNoNotifications = errors.New("no desktop notification service")

// Action is a button on a notification: Do runs, on a goroutine of the
// notifier's, when the person presses it. The action keyed "default" is
// the notification itself clicked and has no button.
type Action struct {
	Key   string
	Label string
	Do    func()
}

// DefaultAction is Action.Key for a click on the notification itself.
const DefaultAction = "default"
