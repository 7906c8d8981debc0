//go:build darwin && cgo

package platform

// IOKit's system power notifications: kIOMessageSystemWillSleep before a
// sleep (the system waits, up to 30 s, until the app allows it: Carrier
// first holds its uploads and keeps their places, as with logind's delay
// lock on Linux), kIOMessageSystemHasPoweredOn after the wake. The
// notifications arrive on a run loop of their own, on a thread kept for it.
//
// Written against Apple's documentation (IORegisterForSystemPower,
// IOAllowPowerChange); no Mac and no SDK were at hand, so this file has
// not been compiled (docs/PLATFORMS.md).

/*
#cgo LDFLAGS: -framework IOKit -framework CoreFoundation
#include <stdint.h>
#include <CoreFoundation/CoreFoundation.h>
#include <IOKit/pwr_mgt/IOPMLib.h>
#include <IOKit/IOMessage.h>

extern void carrierPowerChanged(int what); // sleep_darwin_export.go: 1 sleeping, 2 woke

static io_connect_t carrierRoot = MACH_PORT_NULL;
static IONotificationPortRef carrierPort = NULL;
static io_object_t carrierNotifier;

static void carrierPowerCallback(void *refcon, io_service_t service, natural_t type, void *arg) {
	switch (type) {
	case kIOMessageCanSystemSleep:
		IOAllowPowerChange(carrierRoot, (long)arg);
		break;
	case kIOMessageSystemWillSleep:
		carrierPowerChanged(1); // returns once the uploads are held
		IOAllowPowerChange(carrierRoot, (long)arg);
		break;
	case kIOMessageSystemHasPoweredOn:
		carrierPowerChanged(2);
		break;
	}
}

static int carrierPowerRegister(void) {
	carrierRoot = IORegisterForSystemPower(NULL, &carrierPort, carrierPowerCallback, &carrierNotifier);
	return carrierRoot == MACH_PORT_NULL ? -1 : 0;
}

static void carrierPowerRun(void) {
	CFRunLoopAddSource(CFRunLoopGetCurrent(), IONotificationPortGetRunLoopSource(carrierPort), kCFRunLoopCommonModes);
	CFRunLoopRun();
}
*/
import "C"

import (
	"errors"
	"runtime"
	"sync"
)

var (
	powerOnce sync.Once
	powerErr  error
)

// registerPower starts the run loop once for the process; every Watch
// adds its fn to the fan-out of sleep_darwin_export.go.
func registerPower() error {
	powerOnce.Do(func() {
		started := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // the run loop is this thread's, for good
			if C.carrierPowerRegister() != 0 {
				started <- errors.New("IORegisterForSystemPower failed")
				return
			}
			started <- nil
			C.carrierPowerRun()
		}()
		powerErr = <-started
	})
	return powerErr
}
