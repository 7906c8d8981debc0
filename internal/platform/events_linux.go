package platform

import (
	"context"
	"fmt"
	"os"

	"github.com/godbus/dbus/v5"
)

// On Linux the system bus carries both: logind's PrepareForSleep (true
// before a sleep, false after the wake) and NetworkManager's StateChanged.
// Only signals from the services' own bus names count (the bus daemon
// matches a sender given by well-known name against its owner), so another
// process on the bus cannot pose as them.
const (
	logindName = "org.freedesktop.login1"
	logindPath = "/org/freedesktop/login1"
	logindIf   = "org.freedesktop.login1.Manager"
	nmName     = "org.freedesktop.NetworkManager"
	nmPath     = "/org/freedesktop/NetworkManager"
	nmIf       = "org.freedesktop.NetworkManager"

	nmConnectedSite = 60 // NM_STATE_CONNECTED_SITE: a network, if not the internet
	nmDisconnected  = 20 // NM_STATE_DISCONNECTED
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
				sig, ok := read(s)
				if !ok {
					continue
				}
				fn(sig) // before the sleep: done with the uploads' places kept
				switch sig {
				case Sleeping:
					lock.Close() // now the machine may sleep
				case Woke:
					lock = inhibit(ctx, conn) // for the next sleep
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
