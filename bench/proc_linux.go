package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killWithParent makes the kernel kill a child when the harness dies, so a
// harness stopped by force leaves no sandbox or upload behind.
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// maxRSS is a finished process's peak resident set size in bytes: wait4's
// ru_maxrss, which Linux gives in KiB.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times; 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// procCPU reads a live process's user+system time (all its threads).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; fields after it are
	// counted from its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	return time.Duration(ut+st) * time.Second / clockTicks
}

// procRSS reads a live process's resident set size.
func procRSS(pid int) int64 { return procStatus(pid, "VmRSS:") }

// procHWM reads a live process's peak resident set size since its exec.
func procHWM(pid int) int64 { return procStatus(pid, "VmHWM:") }

// procStatus reads one "... kB" line of /proc/PID/status, in bytes.
func procStatus(pid int, key string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
