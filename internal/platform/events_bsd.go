//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// On macOS and the BSDs the kernel's routing socket tells of every change
// of interfaces and addresses (a cable, a Wi-Fi join, a VPN); after a
// burst settles the interfaces are read to tell online from offline
// (netstate.go). It needs no cgo. Sleep and wake come from IOKit on macOS
// when the binary is built with cgo (sleep_darwin.go); without it, and on
// the BSDs, the engine's clock comparison notices a wake.
func watch(ctx context.Context, fn func(Signal)) error {
	netErr := watchRoutes(ctx, fn)
	sleepErr := watchSleep(ctx, fn)
	if netErr != nil && sleepErr != nil {
		return fmt.Errorf("%w: %v; %v", ErrNoSignals, netErr, sleepErr)
	}
	return nil
}

// Routing message types, at byte 3 of every message's header (after the
// 16-bit length and the version) on all of these systems.
func routeChange(msg []byte) bool {
	if len(msg) < 4 {
		return false
	}
	switch msg[3] {
	case syscall.RTM_IFINFO, syscall.RTM_NEWADDR, syscall.RTM_DELADDR:
		return true
	}
	return false
}

func watchRoutes(ctx context.Context, fn func(Signal)) error {
	fd, err := syscall.Socket(syscall.AF_ROUTE, syscall.SOCK_RAW, syscall.AF_UNSPEC)
	if err != nil {
		return fmt.Errorf("routing socket: %v", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil { // so that Close ends a Read
		syscall.Close(fd)
		return fmt.Errorf("routing socket: %v", err)
	}
	f := os.NewFile(uintptr(fd), "routing socket")
	link := newLinkWatch(systemInterfaces, 500*time.Millisecond, func(sig Signal) {
		if ctx.Err() == nil {
			fn(sig)
		}
	})
	if link.start() { // the socket is open: a change from here on is read
		fn(NetworkDown)
	}
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrClosed) && ctx.Err() == nil {
					time.Sleep(time.Second) // ENOBUFS after a burst: messages were lost, read on
					link.poke()
					continue
				}
				return
			}
			if routeChange(buf[:n]) {
				link.poke()
			}
		}
	}()
	return nil
}
