package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// usage is what one process cost, from the kernel's accounting.
type usage struct {
	wall   time.Duration
	user   time.Duration
	sys    time.Duration
	maxRSS int64 // bytes
}

func (u usage) cpu() time.Duration { return u.user + u.sys }

// procResult is a finished process.
type procResult struct {
	usage
	stdout, stderr []byte
}

// limitedBuffer keeps the first max bytes written to it: progress lines
// must not grow without bound, and the start of an error is what matters.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// runProc runs a program to its end under a time limit and reports its
// wall time (from fork to exit, as a person would wait), CPU and peak RSS,
// as the launcher (launch.go) saw them.
func runProc(ctx context.Context, limit time.Duration, env []string, name string, args ...string) (procResult, error) {
	return runProcHow(ctx, limit, true, env, name, args...)
}

// runProcHow is runProc, optionally without the launcher: for the many
// processes of the concurrency test, whose own usage is not reported and
// which must not bring a launcher each to the two cores.
func runProcHow(ctx context.Context, limit time.Duration, viaLauncher bool, env []string, name string, args ...string) (procResult, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, stderr := &limitedBuffer{max: 1 << 20}, &limitedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	killWithParent(cmd)
	report := func() (launchReport, error) { return launchReport{}, nil }
	if viaLauncher {
		var err error
		if report, err = launched(cmd); err != nil {
			return procResult{}, err
		}
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	rep, rerr := report()
	if !viaLauncher {
		rep.Wall = wall
	}
	res := procResult{stdout: stdout.Bytes(), stderr: stderr.Bytes(),
		usage: usage{wall: rep.Wall, user: rep.User, sys: rep.Sys, maxRSS: rep.MaxRSS}}
	noteFloor(rep.Floor)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.wall = wall
		return res, fmt.Errorf("%s did not finish within %s", name, limit)
	case err != nil:
		return res, fmt.Errorf("%s: %w: %s", name, err, firstLines(res.stderr, 5))
	case rerr != nil:
		return res, rerr
	case rep.Err != "":
		return res, fmt.Errorf("%s: %s", name, rep.Err)
	}
	return res, nil
}

// launchFloor is the largest RSS a launcher had when it started a program:
// no peak RSS reported can be told apart below it.
var launchFloor atomic.Int64

func noteFloor(n int64) {
	for {
		old := launchFloor.Load()
		if n <= old || launchFloor.CompareAndSwap(old, n) {
			return
		}
	}
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// sandboxProc is `carrier sandbox` running as a process of its own, so
// that its CPU is told apart from the client's and neither shares a Go
// runtime (scheduler, GC) with the other.
type sandboxProc struct {
	cmd    *exec.Cmd
	base   string
	token  string
	dir    string
	stderr *limitedBuffer
	exited chan struct{}
}

// scratchSandbox starts a sandbox (fsync as given) with a token of its own
// in a new folder under the work folder, named from prefix; remove deletes
// the folder, once the sandbox is stopped.
func scratchSandbox(ctx context.Context, cfg *config, prefix string, fsync bool) (sb *sandboxProc, remove func(), err error) {
	dir, err := os.MkdirTemp(cfg.work, prefix)
	if err != nil {
		return nil, nil, err
	}
	var tok [16]byte
	rand.Read(tok[:])
	sb, err = startSandbox(ctx, cfg.carrierBin, dir, hex.EncodeToString(tok[:]), fsync)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return sb, func() { os.RemoveAll(dir) }, nil
}

func startSandbox(ctx context.Context, bin, dir, token string, fsync bool) (*sandboxProc, error) {
	args := []string{"sandbox", "--addr", "127.0.0.1:0", "--data", dir, "--token", token, "--quiet"}
	if !fsync {
		args = append(args, "--fsync=false")
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &sandboxProc{cmd: cmd, token: token, dir: dir, stderr: &limitedBuffer{max: 64 << 10}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	killWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
		close(lines)
		io.Copy(io.Discard, stdout) // the pipe must not fill up
	}()
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	select {
	case line, ok := <-lines:
		if ok && strings.HasPrefix(line, "http://127.0.0.1:") {
			s.base = line
			return s, nil
		}
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	s.stop()
	return nil, fmt.Errorf("the sandbox did not print its URL: %s", firstLines(s.stderr.Bytes(), 5))
}

// cpu is the sandbox's CPU time so far; the difference around an upload
// is what serving it cost.
func (s *sandboxProc) cpu() time.Duration { return procCPU(s.cmd.Process.Pid) }

// rss is the sandbox's resident memory now.
func (s *sandboxProc) rss() int64 { return procRSS(s.cmd.Process.Pid) }

// close stops the sandbox once the client has dropped its idle
// connections: a connection the client dialled but never used looks new
// to the server, and a graceful stop waits seconds for new connections.
func (s *sandboxProc) close() usage {
	client.CloseIdleConnections()
	return s.stop()
}

// stop ends the sandbox as Ctrl-C would, and kills it if it lingers. Its
// peak RSS is read from /proc before (VmHWM of the memory it has had since
// exec): its rusage would not be below the harness's own RSS (launch.go).
func (s *sandboxProc) stop() usage {
	u := usage{maxRSS: procHWM(s.cmd.Process.Pid)}
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt)
	}
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	if ps := s.cmd.ProcessState; ps != nil {
		u.user, u.sys = ps.UserTime(), ps.SystemTime()
	}
	return u
}

// loadAvg is the 1-minute load average, or -1 where unknown.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// machine describes where the figures come from.
type machine struct {
	cpus      int
	cpuModel  string
	cpuFlags  string // the ones that decide hashing speed
	goVersion string
	kernel    string
	memory    string
	curl      string
	date      time.Time
}

func describeMachine(ctx context.Context) machine {
	m := machine{cpus: runtime.NumCPU(), goVersion: runtime.Version(), date: time.Now()}
	if out, err := exec.CommandContext(ctx, "nproc").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			m.cpus = n
		}
	}
	if out, err := exec.CommandContext(ctx, "go", "version").Output(); err == nil {
		m.goVersion = strings.TrimSpace(strings.TrimPrefix(string(out), "go version "))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "model name":
				if m.cpuModel == "" {
					m.cpuModel = strings.TrimSpace(v)
				}
			case "flags":
				if m.cpuFlags == "" {
					var have []string
					for _, f := range strings.Fields(v) {
						switch f {
						case "sha_ni", "avx2", "sse4_2", "aes":
							have = append(have, f)
						}
					}
					m.cpuFlags = strings.Join(have, " ")
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
					m.memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	if out, err := exec.CommandContext(ctx, "curl", "--version").Output(); err == nil {
		m.curl = strings.Join(strings.Fields(firstLines(out, 1))[:min(2, len(strings.Fields(firstLines(out, 1))))], " ")
	}
	return m
}

// waitQuiet waits, if asked, for the machine to calm down before the
// measurement: another job's CPU would be measured as ours. It gives up
// after cfg.waitMax and says so in the report.
func waitQuiet(ctx context.Context, cfg *config) string {
	if cfg.waitLoad <= 0 && cfg.waitFile == "" {
		return ""
	}
	start := time.Now()
	deadline := start.Add(cfg.waitMax)
	for {
		_, ferr := os.Stat(cfg.waitFile)
		fileOK := cfg.waitFile == "" || ferr == nil
		load := loadAvg()
		loadOK := cfg.waitLoad <= 0 || (load >= 0 && load < cfg.waitLoad)
		if fileOK && loadOK {
			return fmt.Sprintf("waited %s for a quiet machine (load average %.2f at the start)", time.Since(start).Round(time.Second), load)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			why := []string{}
			if !fileOK {
				why = append(why, cfg.waitFile+" never appeared")
			}
			if !loadOK {
				why = append(why, fmt.Sprintf("the load average was still %.2f (wanted below %.2f)", load, cfg.waitLoad))
			}
			return fmt.Sprintf("the machine did not get quiet within %s (%s); measured anyway", cfg.waitMax, strings.Join(why, "; "))
		}
		logf("waiting for a quiet machine: load %.2f, %s", load, map[bool]string{true: "file ready", false: "waiting for " + cfg.waitFile}[fileOK])
		select {
		case <-ctx.Done():
		case <-time.After(30 * time.Second):
		}
	}
}
