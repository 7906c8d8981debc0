package platform

import (
	"fmt"
	"slices"
	"sync"

	"github.com/godbus/dbus/v5"
)

const (
	notifyName  = "org.freedesktop.Notifications"
	notifyPath  = "/org/freedesktop/Notifications"
	notifyIface = "org.freedesktop.Notifications"
)

// Notifier sends notifications with actions through the desktop's
// notification service (the freedesktop.org Desktop Notifications
// specification, over the session bus) and runs an action when the
// service says it was invoked. Fyne's own notifications carry no actions.
type Notifier struct {
	conn    *dbus.Conn
	app     string
	icon    string
	actions bool // the service shows actions (its capabilities say so)
	signals chan *dbus.Signal
	done    chan struct{}

	mu      sync.Mutex
	pending map[uint32][]Action // shown, neither closed nor acted on yet
}

// NewNotifier connects to the session bus (a connection of its own, so
// its signals are its own) and asks the service what it can show. app is
// the name the service shows; icon an icon theme name. Close it when done.
func NewNotifier(app, icon string) (*Notifier, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoNotifications, err)
	}
	var caps []string
	// The service may be started by the bus on this first call (D-Bus
	// activation), so the call, not a look for its name, says whether
	// there is one.
	if err := conn.Object(notifyName, notifyPath).Call(notifyIface+".GetCapabilities", 0).Store(&caps); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %v", ErrNoNotifications, err)
	}
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(notifyIface)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %v", ErrNoNotifications, err)
	}
	n := &Notifier{
		conn: conn, app: app, icon: icon, actions: slices.Contains(caps, "actions"),
		signals: make(chan *dbus.Signal, 64), done: make(chan struct{}), pending: map[uint32][]Action{},
	}
	conn.Signal(n.signals)
	go n.follow()
	return n, nil
}

// Actions reports whether the service shows actions; without them a
// notification is only words.
func (n *Notifier) Actions() bool { return n.actions }

// Notify shows a notification with actions (those the service can show).
func (n *Notifier) Notify(title, body string, actions []Action) error {
	var keys []string
	if n.actions {
		for _, a := range actions {
			keys = append(keys, a.Key, a.Label)
		}
	}
	hints := map[string]dbus.Variant{
		// The desktop finds the app's name and icon from its entry.
		"desktop-entry": dbus.MakeVariant(n.icon),
	}
	n.mu.Lock() // held over the call, so an action invoked at once finds its notification
	defer n.mu.Unlock()
	var id uint32
	call := n.conn.Object(notifyName, notifyPath).Call(notifyIface+".Notify", 0,
		n.app, uint32(0), n.icon, title, body, keys, hints, int32(-1))
	if err := call.Store(&id); err != nil {
		return fmt.Errorf("the desktop's notification service: %w", err)
	}
	if n.actions && len(actions) > 0 {
		n.pending[id] = actions
	}
	return nil
}

// follow runs the actions the service says were invoked, and forgets
// notifications once closed.
func (n *Notifier) follow() {
	defer close(n.done)
	for sig := range n.signals {
		if sig.Path != notifyPath {
			continue
		}
		switch sig.Name {
		case notifyIface + ".ActionInvoked":
			var id uint32
			var key string
			if dbus.Store(sig.Body, &id, &key) != nil {
				continue
			}
			n.mu.Lock()
			actions := n.pending[id]
			delete(n.pending, id) // one answer per notification
			n.mu.Unlock()
			for _, a := range actions {
				if a.Key == key && a.Do != nil {
					a.Do()
				}
			}
		case notifyIface + ".NotificationClosed":
			var id uint32
			if len(sig.Body) > 0 {
				if v, ok := sig.Body[0].(uint32); ok {
					id = v
				}
			}
			// Its buttons can no longer be pressed.
			n.mu.Lock()
			delete(n.pending, id)
			n.mu.Unlock()
		}
	}
}

// Close ends the connection; actions invoked afterwards do nothing.
func (n *Notifier) Close() error {
	err := n.conn.Close()
	<-n.done
	return err
}
