package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// idleResult is the desktop app's CPU at rest and a bare Fyne window's,
// measured over the same intervals.
type idleResult struct {
	intervals []idleInterval
	settle    time.Duration
}

// idleInterval is one stretch of rest: each process's CPU over the same
// wall time.
type idleInterval struct {
	wall      time.Duration
	app, bare time.Duration
}

// pct is a process's CPU as a percentage of one core.
func pct(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return 100 * cpu.Seconds() / wall.Seconds()
}

// totals are the intervals summed: one tick of the kernel's accounting
// (10 ms) is 0.03 points of a 30 s interval, too coarse for a goal of
// 0.05 points on its own, so the verdict is on the sum.
func (r idleResult) totals() (wall, app, bare time.Duration) {
	for _, iv := range r.intervals {
		wall, app, bare = wall+iv.wall, app+iv.app, bare+iv.bare
	}
	return
}

// runIdle starts an X server of its own (Xvfb), the desktop app (the
// same binary as every other figure, with no command: its window, over
// a scratch home folder, so an empty journal and a fresh embedded
// sandbox) and the bare Fyne window side by side, waits until both windows
// show and startup is over, then reads each process's utime+stime
// (/proc/PID/stat) around cfg.idleRounds intervals of cfg.idleFor.
func runIdle(ctx context.Context, cfg *config) (idleResult, error) {
	res := idleResult{settle: cfg.idleSettle}
	for _, tool := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			return res, fmt.Errorf("%s is not installed; the idle figure needs it (make deps-test installs it, or give -idle-for 0)", tool)
		}
	}
	home, err := os.MkdirTemp(cfg.work, "home-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(home)
	xvfb, display, err := startXvfb(ctx)
	if err != nil {
		return res, err
	}
	defer xvfb.end()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "DISPLAY=" + display,
		"XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
	}
	logf("idle: X server at %s; the desktop app and a bare Fyne window", display)
	app, err := startIdleProc(ctx, env, cfg.carrierBin)
	if err != nil {
		return res, err
	}
	defer app.end()
	bare, err := startIdleProc(ctx, env, cfg.bareBin)
	if err != nil {
		return res, err
	}
	defer bare.end()
	for _, w := range []struct {
		title string
		p     *idleProc
	}{{"Carrier", app}, {"Bare Fyne", bare}} {
		err := waitFor(ctx, 2*time.Minute, w.title+"'s window", func() bool { return !w.p.alive() || hasWindow(ctx, env, w.title) })
		if err == nil && !w.p.alive() {
			err = fmt.Errorf("%s exited before its window showed", w.title)
		}
		if err != nil {
			return res, fmt.Errorf("%w (%s)", err, firstLines(w.p.out.Bytes(), 5))
		}
	}
	// Startup (fonts, the first frames, the embedded sandbox opening its
	// store) is not rest; it is over well within the settling time.
	if err := pause(ctx, cfg.idleSettle); err != nil {
		return res, err
	}
	for i := range cfg.idleRounds {
		a0, b0, t0 := procCPU(app.pid()), procCPU(bare.pid()), time.Now()
		if err := pause(ctx, cfg.idleFor); err != nil {
			return res, err
		}
		a1, b1, t1 := procCPU(app.pid()), procCPU(bare.pid()), time.Now()
		if !app.alive() || !bare.alive() {
			return res, fmt.Errorf("a window exited while at rest: %s %s", firstLines(app.out.Bytes(), 3), firstLines(bare.out.Bytes(), 3))
		}
		iv := idleInterval{wall: t1.Sub(t0), app: a1 - a0, bare: b1 - b0}
		res.intervals = append(res.intervals, iv)
		logf("idle %d/%d: app %.2f%%, bare Fyne %.2f%% of a core over %s", i+1, cfg.idleRounds, pct(iv.app, iv.wall), pct(iv.bare, iv.wall), iv.wall.Round(time.Millisecond))
	}
	return res, nil
}

// pause waits d, or until the run is stopped: measuring rest is waiting.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// waitFor polls cond until it holds or the deadline passes: an X server
// and another program's window say nothing when they are ready.
func waitFor(ctx context.Context, limit time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %s", what, limit)
		}
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func hasWindow(ctx context.Context, env []string, title string) bool {
	cmd := exec.CommandContext(ctx, "xdotool", "search", "--onlyvisible", "--name", "^"+title+"$")
	cmd.Env = env
	out, _ := cmd.Output()
	return len(strings.TrimSpace(string(out))) > 0
}

// startXvfb starts an X server on a display it picks itself (-displayfd:
// it writes the number once it accepts connections), so that other X
// servers starting on the machine meanwhile cannot take the same one.
func startXvfb(ctx context.Context) (*idleProc, string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	p := &idleProc{cmd: exec.CommandContext(ctx, "Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp"),
		out: &limitedBuffer{max: 64 << 10}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.ExtraFiles = []*os.File{w}
	killWithParent(p.cmd)
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		return nil, "", fmt.Errorf("Xvfb: %w", err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case n := <-got:
		if n != "" {
			return p, ":" + n, nil
		}
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	p.end()
	return nil, "", fmt.Errorf("the X server did not start: %s", firstLines(p.out.Bytes(), 5))
}

// idleProc is a program started for the idle figure, ended with it.
type idleProc struct {
	cmd    *exec.Cmd
	out    *limitedBuffer
	exited chan struct{}
}

func startIdleProc(ctx context.Context, env []string, name string, args ...string) (*idleProc, error) {
	p := &idleProc{cmd: exec.CommandContext(ctx, name, args...), out: &limitedBuffer{max: 64 << 10}, exited: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	killWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *idleProc) pid() int { return p.cmd.Process.Pid }

func (p *idleProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// end asks the program to stop, as a person closing it would, and kills
// it if it lingers.
func (p *idleProc) end() {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}
