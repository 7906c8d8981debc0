package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"
)

// CARRIER_PROFILE=DIR has the process write Go profiles into DIR while it
// runs, for measuring the window at a scale no test holds (docs/
// PERFORMANCE.md): the CPU in slices of profileSlice (cpu-001.pprof,
// cpu-002.pprof, ...: a slice per phase of a long walk, each whole even
// if the process is killed later) and the heap at each slice's end
// (heap-001.pprof, ...). Off unless set; a developer's switch, said
// nowhere to a person. The profiles hold the program's own functions and
// sizes, never a file's bytes, a token or a session URI.
const profileSlice = 20 * time.Second

// startProfiles starts writing profiles into dir; stop ends the slice
// running and writes its files. Errors are said on standard error: a
// profile that cannot be written changes nothing else.
func startProfiles(dir string) (stop func()) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "carrier: CARRIER_PROFILE:", err)
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for n := 1; ; n++ {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%03d.pprof", n)))
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "carrier: CARRIER_PROFILE:", err)
				return
			}
			t := time.NewTimer(profileSlice)
			var last bool
			select {
			case <-t.C:
			case <-done:
				t.Stop()
				last = true
			}
			pprof.StopCPUProfile()
			f.Close()
			writeHeap(filepath.Join(dir, fmt.Sprintf("heap-%03d.pprof", n)))
			if last {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

func writeHeap(path string) {
	runtime.GC() // the heap profile counts what the last collection found live
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "carrier: CARRIER_PROFILE:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "carrier: CARRIER_PROFILE:", err)
	}
}
