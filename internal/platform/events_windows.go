package platform

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// On Windows the power manager calls back on suspend and resume
// (PowerRegisterSuspendResumeNotification, the service-friendly form of
// WM_POWERBROADCAST), and the IP helper on any change of an interface
// (NotifyIpInterfaceChange): after a burst of changes settles, the
// interfaces are read to tell online from offline (netstate.go).
var (
	powrprof                  = syscall.NewLazyDLL("powrprof.dll")
	procRegisterSuspendResume = powrprof.NewProc("PowerRegisterSuspendResumeNotification")
	iphlpapi                  = syscall.NewLazyDLL("iphlpapi.dll")
	procNotifyIPChange        = iphlpapi.NewProc("NotifyIpInterfaceChange")
)

const (
	deviceNotifyCallback = 2    // DEVICE_NOTIFY_CALLBACK
	pbtSuspend           = 0x4  // PBT_APMSUSPEND
	pbtResumeSuspend     = 0x7  // PBT_APMRESUMESUSPEND
	pbtResumeAutomatic   = 0x12 // PBT_APMRESUMEAUTOMATIC
	afUnspec             = 0
)

type deviceNotifySubscribeParameters struct {
	callback uintptr
	context  uintptr
}

// The callbacks are process-wide (syscall.NewCallback makes a limited
// number), so one pair serves every Watch; each Watch adds its fn.
var (
	winMu     sync.Mutex
	winFns    = map[int]func(Signal){}
	winNext   int
	winOnce   sync.Once
	winErr    error
	powerCb   = syscall.NewCallback(powerCallback)
	networkCb = syscall.NewCallback(networkCallback)
)

func powerCallback(_ uintptr, typ uint32, _ uintptr) uintptr {
	switch typ {
	case pbtSuspend:
		tell(Sleeping)
	case pbtResumeSuspend, pbtResumeAutomatic:
		tell(Woke)
	}
	return 0
}

var winLink = newLinkWatch(systemInterfaces, 500*time.Millisecond, tell)

func networkCallback(_, _ uintptr, _ uint32) uintptr {
	winLink.poke()
	return 0
}

func tell(s Signal) {
	winMu.Lock()
	fns := make([]func(Signal), 0, len(winFns))
	for _, fn := range winFns {
		fns = append(fns, fn)
	}
	winMu.Unlock()
	for _, fn := range fns {
		go fn(s) // never block the system's callback thread
	}
}

func register() error {
	if err := procRegisterSuspendResume.Find(); err != nil {
		return fmt.Errorf("%w: %v", ErrNoSignals, err)
	}
	params := &deviceNotifySubscribeParameters{callback: powerCb}
	var handle uintptr
	if r, _, _ := procRegisterSuspendResume.Call(deviceNotifyCallback, uintptr(unsafe.Pointer(params)), uintptr(unsafe.Pointer(&handle))); r != 0 {
		return fmt.Errorf("%w: PowerRegisterSuspendResumeNotification: error %d", ErrNoSignals, r)
	}
	if procNotifyIPChange.Find() == nil {
		var nh uintptr
		procNotifyIPChange.Call(afUnspec, networkCb, 0, 0, uintptr(unsafe.Pointer(&nh)))
		winLink.start() // each watch is told below if it is offline
	}
	// Registered for the life of the process: the callbacks cannot be
	// freed, and later Watches reuse them.
	return nil
}

func watch(ctx context.Context, fn func(Signal)) error {
	winOnce.Do(func() { winErr = register() })
	if winErr != nil {
		return winErr
	}
	// A machine offline when the watch starts is held at once (linkWatch's
	// start). Told under winMu, so that a change read meanwhile reaches fn
	// after it, not before.
	winMu.Lock()
	id := winNext
	winNext++
	winFns[id] = fn
	if winLink.offline() {
		fn(NetworkDown)
	}
	winMu.Unlock()
	go func() {
		<-ctx.Done()
		winMu.Lock()
		delete(winFns, id)
		winMu.Unlock()
	}()
	return nil
}
