package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Why a launcher: on Linux, a child's ru_maxrss is never below the RSS its
// parent had when it started it. Go starts children with vfork (clone with
// CLONE_VM), so at exec the kernel records the high-water mark of the
// memory the child shared with its parent into the child's own maxrss
// (exec_mmap's setmax_mm_hiwater_rss): a harness holding 100 MiB would see
// /bin/true peak at 100 MiB. So each measured program is started by a
// fresh copy of this binary, whose RSS is a few MiB: it runs the program,
// reads the program's rusage from wait4 (ProcessState.SysUsage), and hands
// it back on file descriptor 3. The small floor that remains is measured
// and reported (the launcher's own peak RSS before it starts the program).

// launchEnv makes this binary act as the launcher.
const launchEnv = "CARRIER_BENCH_LAUNCH"

// launchReport is what the launcher says about the program it ran.
type launchReport struct {
	Wall   time.Duration `json:"wall"`
	User   time.Duration `json:"user"`
	Sys    time.Duration `json:"sys"`
	MaxRSS int64         `json:"maxRSS"` // bytes
	Floor  int64         `json:"floor"`  // the launcher's peak RSS when it started the program
	Code   int           `json:"code"`
	Err    string        `json:"err,omitempty"`
}

// launch runs args as a program with this process's standard streams and
// environment (without launchEnv), writes a launchReport to fd 3, and
// returns the exit code to leave with.
func launch(args []string) int {
	out := os.NewFile(3, "report")
	rep := launchReport{Code: 1}
	defer func() {
		if out != nil {
			json.NewEncoder(out).Encode(rep)
			out.Close()
		}
	}()
	if len(args) == 0 {
		rep.Err = "launcher: no program given"
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, launchEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	killWithParent(cmd)
	// Stopping the launcher stops the program: the harness's time limit
	// and Ctrl-C reach it through here.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	rep.Floor = procHWM(os.Getpid())
	start := time.Now()
	if err := cmd.Start(); err != nil {
		rep.Err = err.Error()
		return 127
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	rep.Wall = time.Since(start)
	ps := cmd.ProcessState
	rep.User, rep.Sys, rep.MaxRSS = ps.UserTime(), ps.SystemTime(), maxRSS(ps)
	rep.Code = ps.ExitCode()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		rep.Err = err.Error()
	}
	if rep.Code < 0 {
		rep.Err = ps.String() // killed by a signal
		rep.Code = 1
	}
	return rep.Code
}

// launched starts cmd's program through the launcher: cmd.Path and
// cmd.Args are rewritten, and the returned function, called after
// cmd.Wait, gives the program's own usage.
func launched(cmd *exec.Cmd) (report func() (launchReport, error), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Args = append([]string{self}, append([]string{cmd.Path}, cmd.Args[1:]...)...)
	cmd.Path = self
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, launchEnv+"=1")
	cmd.ExtraFiles = []*os.File{w}
	got := make(chan launchReport, 1)
	go func() {
		var rep launchReport
		if err := json.NewDecoder(r).Decode(&rep); err != nil {
			rep.Err = "launcher: no report: " + err.Error()
			rep.Code = -1
		}
		r.Close()
		got <- rep
	}()
	return func() (launchReport, error) {
		w.Close() // the launcher holds its own copy; ours must go for EOF
		select {
		case rep := <-got:
			if rep.Code == -1 {
				return rep, errors.New(rep.Err)
			}
			return rep, nil
		case <-time.After(10 * time.Second):
			return launchReport{}, fmt.Errorf("launcher: no report")
		}
	}, nil
}
