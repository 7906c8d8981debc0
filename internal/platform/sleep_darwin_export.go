//go:build darwin && cgo

package platform

import "C"

import (
	"context"
	"sync"
	"time"
)

// The Watches listening for sleep, told by the run loop's callback.
var (
	powerMu   sync.Mutex
	powerFns  = map[int]func(Signal){}
	powerNext int
)

// carrierPowerChanged runs on the run loop's thread. Before a sleep it
// waits for every fn (10 s at most: the system waits 30 s for an answer)
// so that the uploads are held before the machine stops.
//
//export carrierPowerChanged
func carrierPowerChanged(what C.int) {
	sig := Woke
	if what == 1 {
		sig = Sleeping
	}
	powerMu.Lock()
	fns := make([]func(Signal), 0, len(powerFns))
	for _, fn := range powerFns {
		fns = append(fns, fn)
	}
	powerMu.Unlock()
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Add(1)
		go func() { defer wg.Done(); fn(sig) }()
	}
	if sig != Sleeping {
		return
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

func watchSleep(ctx context.Context, fn func(Signal)) error {
	if err := registerPower(); err != nil {
		return err
	}
	powerMu.Lock()
	id := powerNext
	powerNext++
	powerFns[id] = fn
	powerMu.Unlock()
	go func() {
		<-ctx.Done()
		powerMu.Lock()
		delete(powerFns, id)
		powerMu.Unlock()
	}()
	return nil
}
