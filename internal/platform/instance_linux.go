package platform

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"
)

const appIface = "org.freedesktop.Application"

// ClaimInstance takes the window's name on the session bus, serving the
// freedesktop Application interface (Activate, Open, ActivateAction) at
// the app id's path. ErrRunning when another process holds the name; any
// other error (no session bus) means no hand-over: open the window alone.
// The session bus is the person's own; a call from another user (a bus
// opened to others) is refused all the same.
func ClaimInstance(appID, dataDir string) (*Instance, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, err
	}
	inst := &Instance{close: conn.Close}
	srv := &appServer{conn: conn, inst: inst}
	if err := conn.Export(srv, dbus.ObjectPath(instancePath(appID)), appIface); err != nil {
		conn.Close()
		return nil, err
	}
	reply, err := conn.RequestName(InstanceName(appID, dataDir), dbus.NameFlagDoNotQueue)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		conn.Close()
		return nil, ErrRunning
	}
	return inst, nil
}

// appServer answers org.freedesktop.Application.
type appServer struct {
	conn *dbus.Conn
	inst *Instance
}

// sameUser refuses a caller that is not this process's user.
func (s *appServer) sameUser(sender dbus.Sender) *dbus.Error {
	var uid uint32
	if err := s.conn.BusObject().Call("org.freedesktop.DBus.GetConnectionUnixUser", 0, string(sender)).Store(&uid); err != nil {
		return dbus.MakeFailedError(err)
	}
	if int(uid) != os.Getuid() {
		return dbus.NewError("org.freedesktop.DBus.Error.AccessDenied", []any{"only the same user may hand files to Carrier"})
	}
	return nil
}

func (s *appServer) Activate(sender dbus.Sender, _ map[string]dbus.Variant) *dbus.Error {
	if err := s.sameUser(sender); err != nil {
		return err
	}
	s.inst.handed(nil)
	return nil
}

func (s *appServer) Open(sender dbus.Sender, uris []string, _ string, _ map[string]dbus.Variant) *dbus.Error {
	if err := s.sameUser(sender); err != nil {
		return err
	}
	s.inst.handed(append([]string(nil), uris...))
	return nil
}

func (s *appServer) ActivateAction(sender dbus.Sender, _ string, _ []dbus.Variant, _ map[string]dbus.Variant) *dbus.Error {
	if err := s.sameUser(sender); err != nil {
		return err
	}
	s.inst.handed(nil)
	return nil
}

// HandOver gives items (file: URIs, mailto: URLs; none: only come to the
// front) to the window that claimed the name, and returns once it has
// taken them. An error means no window took them: open one.
func HandOver(appID, dataDir string, items []string) error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	name := InstanceName(appID, dataDir)
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err != nil {
		return err
	}
	if !has {
		return fmt.Errorf("no Carrier window holds %s", name)
	}
	// The desktop's token lets the window come to the front (focus
	// stealing prevention lets a launched program's window through).
	data := map[string]dbus.Variant{}
	for _, env := range []struct{ key, name string }{{"desktop-startup-id", "DESKTOP_STARTUP_ID"}, {"activation-token", "XDG_ACTIVATION_TOKEN"}} {
		if v := os.Getenv(env.name); v != "" {
			data[env.key] = dbus.MakeVariant(v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	obj := conn.Object(name, dbus.ObjectPath(instancePath(appID)))
	if len(items) == 0 {
		return obj.CallWithContext(ctx, appIface+".Activate", 0, data).Err
	}
	return obj.CallWithContext(ctx, appIface+".Open", 0, items, "", data).Err
}
