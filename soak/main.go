// Command soak is Carrier's reliability soak (make soak, issue 7): the
// engine against the sandbox with fault injection, the real binary killed
// with SIGKILL and resumed, the sandbox restarted under running uploads,
// and the time from a simulated wake to the next confirmed byte. It prints
// a results table and exits non-zero when a goal is missed or an upload is
// lost, doubled or damaged.
//
// Everything talks to 127.0.0.1 only. Every loop is bounded in count and
// every wait in time; -timeout bounds the whole run.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// config holds every knob; the defaults keep a run well under 15 minutes
// on a 2-core machine.
type config struct {
	phases        string
	seed          uint64
	bin           string
	timeout       time.Duration
	jsonOut       string
	keep          bool
	workers       int
	uploads       int    // per fault mix in phase 1
	harshMix      string // the mix of every fault
	ratioMix      string // the setting the 1.1x goal is stated for
	maxSize       int64  // largest file of phase 1 (a few exceed it on purpose: see sizes)
	gmailEvery    int    // every Nth upload of phase 1 goes to Gmail messages.send
	kills         int
	killSize      int64
	killRate      string
	restarts      int
	restartSz     int64
	restartRt     string
	restartFaults string
	wakes         int
	verbose       bool
	// The toxiproxy phase (toxi.go).
	toxiMix   string        // sandbox faults besides toxiproxy's
	toxiRate  int64         // KB/s per connection
	toxiEvery time.Duration // mean gap between the driver's faults
	toxiHoles float64       // share of them that are blackholes (the rest reset every busy connection)
	toxiHole  time.Duration // how long a blackhole lasts
}

func main() {
	var c config
	flag.StringVar(&c.phases, "phases", "uploads,ratio,toxi,kill,restart,wake", "phases to run, comma-separated: uploads (harsh mix), ratio (5% resets + 5% 5xx), toxi (phase 1's uploads through toxiproxy's faults), kill, restart, wake")
	flag.Uint64Var(&c.seed, "seed", 7, "seed of the fault injection and of the file contents, so a run can be repeated")
	flag.StringVar(&c.bin, "bin", "bin/carrier", "the carrier binary for the kill -9 and sandbox restart phases (go build -o bin/carrier .)")
	flag.DurationVar(&c.timeout, "timeout", 14*time.Minute, "bound on the whole run")
	flag.StringVar(&c.jsonOut, "json", "", "also write the results as JSON to this file")
	flag.BoolVar(&c.keep, "keep", false, "keep the scratch folder (sandbox data, journals, files) for inspection")
	flag.IntVar(&c.workers, "workers", 4, "engine workers in phases 1 and 3")
	flag.IntVar(&c.uploads, "uploads", 200, "uploads per fault mix in phase 1")
	flag.StringVar(&c.harshMix, "harsh", "reset=0.05,err5xx=0.05,stall=0.02,stallfor=3s,partial=0.2,dropfinal=0.1,latency=2ms", "the harsh fault mix of phase 1 (seed is added)")
	flag.StringVar(&c.ratioMix, "ratio", "reset=0.05,err5xx=0.05", "the fault mix the bytes-sent goal (at most 1.1x) is measured at (seed is added)")
	flag.Int64Var(&c.maxSize, "max-size", 3<<20, "largest file of phase 1, bytes")
	flag.IntVar(&c.gmailEvery, "gmail-every", 5, "every Nth upload of phase 1 is a message/rfc822 to Gmail messages.send (0: none)")
	flag.IntVar(&c.kills, "kills", 20, "rounds of kill -9 of `carrier upload` then `carrier resume`")
	flag.Int64Var(&c.killSize, "kill-size", 4<<20, "file size of a kill round, bytes (plus a few odd bytes)")
	flag.StringVar(&c.killRate, "kill-rate", "4MB", "the sandbox's bandwidth cap while a kill round uploads, so the kill lands mid-way")
	flag.IntVar(&c.restarts, "restarts", 10, "restarts of the sandbox process under running uploads")
	flag.Int64Var(&c.restartSz, "restart-size", 3<<20, "file size of the uploads of the restart phase, bytes")
	flag.StringVar(&c.restartRt, "restart-rate", "6MB", "the sandbox's bandwidth cap in the restart phase")
	flag.StringVar(&c.restartFaults, "restart-faults", "latency=10ms", "faults besides the cap in the restart phase: a little latency, as any network has")
	flag.IntVar(&c.wakes, "wakes", 10, "wake samples per scenario (a stalled request, a long backoff, a stalled request on a clock running in real time)")
	flag.StringVar(&c.toxiMix, "toxi-sandbox", "err5xx=0.01", "sandbox faults of the toxiproxy phase, besides toxiproxy's (seed is added)")
	flag.Int64Var(&c.toxiRate, "toxi-rate", 8000, "toxiproxy's bandwidth cap per connection in the toxiproxy phase, KB/s")
	flag.DurationVar(&c.toxiEvery, "toxi-every", 700*time.Millisecond, "mean gap between the toxiproxy phase's resets of every busy connection and blackholes")
	flag.Float64Var(&c.toxiHoles, "toxi-holes", 0.25, "share of those faults that are blackholes")
	flag.DurationVar(&c.toxiHole, "toxi-hole", 1500*time.Millisecond, "how long a blackhole of the toxiproxy phase lasts (the engine's stall timeout here is 500 ms)")
	flag.BoolVar(&c.verbose, "v", false, "log each step")
	flag.Parse()
	verbose = verbose || c.verbose

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	os.Exit(run(ctx, &c))
}

func run(ctx context.Context, c *config) int {
	scratch, err := os.MkdirTemp("", "carrier-soak-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 1
	}
	if c.keep {
		fmt.Fprintln(os.Stderr, "soak: scratch folder", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	rep := &report{
		Started: time.Now(),
		Machine: machine(),
		Seed:    c.seed,
		Command: strings.TrimSpace("go run ./soak " + strings.Join(os.Args[1:], " ")),
	}
	want := map[string]bool{}
	for _, p := range strings.Split(c.phases, ",") {
		want[strings.TrimSpace(p)] = true
	}
	phases := []struct {
		name string
		run  func(context.Context, *config, string, *report) error
	}{
		{"uploads", runUploadsHarsh},
		{"ratio", runUploadsRatio},
		{"toxi", runUploadsToxi},
		{"kill", runKills},
		{"restart", runRestarts},
		{"wake", runWakes},
	}
	for _, p := range phases {
		if !want[p.name] {
			continue
		}
		if ctx.Err() != nil {
			rep.fail(p.name, "not run: the run's time bound (-timeout) was reached first")
			continue
		}
		dir := filepath.Join(scratch, p.name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			rep.fail(p.name, err.Error())
			continue
		}
		logf("phase %s: start", p.name)
		start := time.Now()
		if err := p.run(ctx, c, dir, rep); err != nil {
			rep.fail(p.name, err.Error())
		}
		logf("phase %s: %s", p.name, time.Since(start).Round(time.Millisecond))
	}
	rep.Elapsed = time.Since(rep.Started).Round(time.Second).String()
	rep.print(os.Stdout)
	if c.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		os.MkdirAll(filepath.Dir(c.jsonOut), 0o755)
		if err := os.WriteFile(c.jsonOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
		}
	}
	if len(rep.Failures) > 0 {
		return 1
	}
	return 0
}

var verbose = os.Getenv("SOAK_VERBOSE") != ""

// logf goes to stderr so that stdout holds only the results.
func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s soak: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, a...))
}

func debugf(format string, a ...any) {
	if verbose {
		logf(format, a...)
	}
}

func machine() string {
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				var kb int64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
				mem = fmt.Sprintf(", %.1f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%s/%s, %d CPUs (%s)%s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), model, mem, runtime.Version())
}
