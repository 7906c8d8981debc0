package platform

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"
)

// On Linux the system bus carries both: logind's PrepareForSleep (true
// before a sleep, false after the wake) and NetworkManager's StateChanged,
// and NetworkManager's properties Metered and PrimaryConnection (followed
// through PropertiesChanged). Only signals from the services' own bus
// names count: the bus daemon matches a sender given by well-known name
// against its owner for broadcasts, and a signal sent to Carrier directly
// (which no match rule filters) is checked against the name's owner here,
// so another process on the bus cannot pose as them.
const (
	logindName = "org.freedesktop.login1"
	logindPath = "/org/freedesktop/login1"
	logindIf   = "org.freedesktop.login1.Manager"
	nmName     = "org.freedesktop.NetworkManager"
	nmPath     = "/org/freedesktop/NetworkManager"
	nmIf       = "org.freedesktop.NetworkManager"

	propsIf = "org.freedesktop.DBus.Properties"

	nmConnectedSite   = 60  // NM_STATE_CONNECTED_SITE: a network, if not the internet
	nmDisconnected    = 20  // NM_STATE_DISCONNECTED
	nmMeteredYes      = 1   // NM_METERED_YES
	nmMeteredGuessYes = 3   // NM_METERED_GUESS_YES: NetworkManager's guess, e.g. a phone's hotspot
	nmNoConnection    = "/" // PrimaryConnection when there is none
)

func watch(ctx context.Context, fn func(Signal)) error {
	conn, err := dbus.ConnectSystemBus(dbus.WithContext(ctx)) // honours DBUS_SYSTEM_BUS_ADDRESS
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoSignals, err)
	}
	present := 0
	for _, name := range []string{logindName, nmName} {
		var has bool
		if conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has) == nil && has {
			present++
		}
	}
	if present == 0 {
		conn.Close()
		return fmt.Errorf("%w: neither logind nor NetworkManager is on the system bus", ErrNoSignals)
	}
	matches := [][]dbus.MatchOption{
		{dbus.WithMatchSender(logindName), dbus.WithMatchObjectPath(logindPath), dbus.WithMatchInterface(logindIf), dbus.WithMatchMember("PrepareForSleep")},
		{dbus.WithMatchSender(nmName), dbus.WithMatchObjectPath(nmPath), dbus.WithMatchInterface(nmIf), dbus.WithMatchMember("StateChanged")},
		// The standard signal, and NetworkManager's own older one (still
		// sent by some versions, and by python-dbusmock's template): both
		// are read, and only a change of value is told.
		{dbus.WithMatchSender(nmName), dbus.WithMatchObjectPath(nmPath), dbus.WithMatchInterface(propsIf), dbus.WithMatchMember("PropertiesChanged"), dbus.WithMatchArg(0, nmIf)},
		{dbus.WithMatchSender(nmName), dbus.WithMatchObjectPath(nmPath), dbus.WithMatchInterface(nmIf), dbus.WithMatchMember("PropertiesChanged")},
	}
	for _, m := range matches {
		if err := conn.AddMatchSignalContext(ctx, m...); err != nil {
			conn.Close()
			return fmt.Errorf("%w: %v", ErrNoSignals, err)
		}
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)
	lock := inhibit(ctx, conn)
	if offline(conn) {
		fn(NetworkDown)
	}
	nm := readNM(conn)
	if nm.metered {
		fn(Metered)
	}
	owners := &owners{conn: conn, names: map[string]string{}}
	go func() {
		defer conn.Close()
		defer func() { lock.Close() }()
		for {
			select {
			case <-ctx.Done():
				return
			case s, ok := <-ch:
				if !ok {
					return
				}
				if !owners.from(ctx, s) {
					continue
				}
				for _, sig := range nm.read(s) {
					fn(sig) // before the sleep: done with the uploads' places kept
					switch sig {
					case Sleeping:
						lock.Close() // now the machine may sleep
					case Woke:
						lock = inhibit(ctx, conn) // for the next sleep
					}
				}
			}
		}
	}()
	return nil
}

// inhibit takes logind's delay lock on sleep, so that a sleep waits (a few
// seconds at most, as logind allows) until Carrier has stopped its requests
// and kept the uploads' places. Closing the file lets the sleep go on.
func inhibit(ctx context.Context, conn *dbus.Conn) *os.File {
	var fd dbus.UnixFD
	err := conn.Object(logindName, logindPath).CallWithContext(ctx, logindIf+".Inhibit", 0,
		"sleep", "Carrier", "Keeping the uploads' places before the machine sleeps", "delay").Store(&fd)
	if err != nil || fd < 0 {
		return nil // no logind, or no permission: sleep does not wait, and a resume asks the server anyway
	}
	return os.NewFile(uintptr(fd), "logind inhibitor")
}

// offline reports whether NetworkManager says there is no network now.
func offline(conn *dbus.Conn) bool {
	v, err := conn.Object(nmName, nmPath).GetProperty(nmIf + ".State")
	if err != nil {
		return false // no NetworkManager: take the network as there
	}
	st, ok := v.Value().(uint32)
	return ok && st <= nmDisconnected && st != 0 // 0: NM_STATE_UNKNOWN
}

// nmState is what Carrier knows of NetworkManager's properties, so that
// only a change is told (both PropertiesChanged signals carry the same
// change, and NetworkManager repeats values that did not change).
type nmState struct {
	metered bool
	primary dbus.ObjectPath
}

// readNM reads the properties as they are when Carrier starts.
func readNM(conn *dbus.Conn) *nmState {
	st := &nmState{primary: nmNoConnection}
	obj := conn.Object(nmName, nmPath)
	if v, err := obj.GetProperty(nmIf + ".Metered"); err == nil {
		st.metered = isMetered(v)
	}
	if v, err := obj.GetProperty(nmIf + ".PrimaryConnection"); err == nil {
		if p, ok := v.Value().(dbus.ObjectPath); ok {
			st.primary = p
		}
	}
	return st
}

func isMetered(v dbus.Variant) bool {
	m, ok := v.Value().(uint32)
	return ok && (m == nmMeteredYes || m == nmMeteredGuessYes)
}

// changed turns changed properties into Signals. A primary connection
// going away ("/") is not told: StateChanged says whether the network went
// with it, and a new one coming is.
func (st *nmState) changed(props map[string]dbus.Variant) []Signal {
	var out []Signal
	if v, ok := props["Metered"]; ok {
		if m := isMetered(v); m != st.metered {
			st.metered = m
			if m {
				out = append(out, Metered)
			} else {
				out = append(out, NotMetered)
			}
		}
	}
	if v, ok := props["PrimaryConnection"]; ok {
		if p, ok := v.Value().(dbus.ObjectPath); ok && p != st.primary {
			st.primary = p
			if p != nmNoConnection {
				out = append(out, PrimaryChanged)
			}
		}
	}
	return out
}

// read turns a bus signal into Signals.
func (st *nmState) read(s *dbus.Signal) []Signal {
	switch s.Name {
	case propsIf + ".PropertiesChanged":
		if len(s.Body) >= 2 && s.Path == nmPath {
			if iface, _ := s.Body[0].(string); iface == nmIf {
				props, _ := s.Body[1].(map[string]dbus.Variant)
				return st.changed(props)
			}
		}
		return nil
	case nmIf + ".PropertiesChanged":
		if len(s.Body) == 1 && s.Path == nmPath {
			props, _ := s.Body[0].(map[string]dbus.Variant)
			return st.changed(props)
		}
		return nil
	}
	if sig, ok := read(s); ok {
		return []Signal{sig}
	}
	return nil
}

// owners checks that a signal comes from the service it names: its
// sender must be the unique name that owns the service's well-known name
// now. The owner is asked again when a sender differs (the service may
// have restarted under a new unique name).
type owners struct {
	conn  *dbus.Conn
	names map[string]string // well-known name → unique name
}

func (o *owners) from(ctx context.Context, s *dbus.Signal) bool {
	var name string
	switch {
	case strings.HasPrefix(s.Name, logindIf+"."):
		name = logindName
	case strings.HasPrefix(s.Name, nmIf+"."), s.Name == propsIf+".PropertiesChanged":
		name = nmName
	default:
		return false
	}
	if s.Sender != "" && s.Sender == o.names[name] {
		return true
	}
	var owner string
	if o.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, name).Store(&owner) != nil {
		return false
	}
	o.names[name] = owner
	return s.Sender == owner
}

// read turns a bus signal into a Signal.
func read(s *dbus.Signal) (Signal, bool) {
	if len(s.Body) != 1 {
		return 0, false
	}
	switch s.Name {
	case logindIf + ".PrepareForSleep":
		if sleeping, ok := s.Body[0].(bool); ok {
			if sleeping {
				return Sleeping, true
			}
			return Woke, true
		}
	case nmIf + ".StateChanged":
		if st, ok := s.Body[0].(uint32); ok {
			switch {
			case st >= nmConnectedSite:
				return NetworkUp, true
			case st <= nmDisconnected:
				return NetworkDown, true
			}
		}
	}
	return 0, false
}
