//go:build !linux

package main

import (
	"os"
	"os/exec"
	"time"
)

// The harness is written for Linux, where the figures in docs/ come from
// (rusage in KiB, /proc). Elsewhere it builds and runs, without peak RSS
// and the sandbox's CPU time.

func killWithParent(*exec.Cmd) {}

func maxRSS(*os.ProcessState) int64 { return 0 }

func procCPU(int) time.Duration { return 0 }

func procRSS(int) int64 { return 0 }

func procHWM(int) int64 { return 0 }
