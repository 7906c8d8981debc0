package main

import (
	"os"
	"os/exec"
	"sync/atomic"
)

// restarting is set by Settings' Restart now (ui.Deps.Restart): once the
// window has closed as Quit closes it, and the journal, the sandbox and
// the keychain are let go, main starts Carrier's window again.
var restarting atomic.Bool

// restartCommand is the window started again: the same program, no
// arguments (a restart asked for in the window shows the window, even
// after a start at login in the tray), the same environment.
func restartCommand(exe string) *exec.Cmd {
	cmd := exec.Command(exe)
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd
}

// relaunch starts Carrier's window again, not waiting for it.
func relaunch() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return restartCommand(exe).Start()
}
