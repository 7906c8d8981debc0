// Command bench measures Carrier's uploads against the alternatives on one
// machine, in one run, and writes docs/PERFORMANCE.md and
// docs/performance.png (`make bench`).
//
// It uploads the same file to the embedded sandbox's Cloud Storage endpoint,
// run as a process of its own, with: a plain `curl -T` PUT to a session the
// harness starts (the wire's limit), `carrier upload` with its defaults and
// with other chunk sizes, and the official Go client (bench/gclient). Every
// contender is a separate process, so its wall time, CPU time and peak RSS
// come from the kernel (wait4's rusage). The contenders take turns within
// each round, in an order that rotates from round to round, so that drift
// (another job on the machine, the page cache, the disk's writeback) falls
// on all of them alike; the report gives medians. The whole comparison runs
// twice: against the sandbox as it ships (every chunk fsync'd) and with
// --fsync=false, which measures the protocol and the CPU rather than the
// disk. A concurrency test then pits 64 simultaneous uploads against one
// stream of the same total bytes.
//
// Everything talks to 127.0.0.1 only. Each process runs under a time limit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	out        string
	work       string
	size       int64
	rounds     int
	chunks     []int64
	modes      []mode
	conc       int
	concRounds int
	smallReps  int
	carrierBin string
	gclientBin string
	procLimit  time.Duration
	waitLoad   float64
	waitFile   string
	waitMax    time.Duration
	clean      bool
	timeout    time.Duration
	variants   []variant

	// The CPU part (cpu.go).
	cpuOnly       bool
	photosOnly    bool // the Photos part alone (photos.go)
	cpuRounds     int
	composeAttach int64
	composeReps   int
	idleFor       time.Duration
	idleRounds    int
	idleSettle    time.Duration
	gdriveBin     string
	bareBin       string
}

// variant is a candidate build of carrier, measured with its defaults
// beside the one under test: how a proposed change is judged.
type variant struct{ name, path string }

// mode is one way of running the sandbox.
type mode struct {
	name  string // as in the report
	fsync bool
}

var (
	modeDurable = mode{name: "durable (default: fsync every chunk)", fsync: true}
	modeNoSync  = mode{name: "--fsync=false (protocol and CPU, not the disk)", fsync: false}
)

func main() {
	if os.Getenv(launchEnv) == "1" {
		os.Exit(launch(os.Args[1:]))
	}
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	cfg := &config{}
	size := fs.String("size", "1GiB", "size of the test file (B, KiB, MiB, GiB)")
	chunks := fs.String("chunks", "1,8,64,256", "chunk sizes in MiB (comma-separated) for carrier upload's --chunk-size, besides its default (16 MiB)")
	modes := fs.String("modes", "durable,nofsync", "sandbox modes to measure: durable (fsync every chunk), nofsync (--fsync=false)")
	fs.StringVar(&cfg.out, "out", "", "folder for PERFORMANCE.md and performance.png (e.g. docs); empty prints the report only")
	fs.StringVar(&cfg.work, "work", filepath.Join(os.TempDir(), "carrier-bench"), "scratch folder: the test file (kept and reused between runs), binaries, the sandbox's data")
	fs.IntVar(&cfg.rounds, "rounds", 5, "rounds of the sequential comparison; the report gives medians")
	fs.IntVar(&cfg.conc, "conc", 64, "uploads at once in the concurrency test (0 skips it)")
	fs.IntVar(&cfg.concRounds, "conc-rounds", 3, "rounds of the concurrency test")
	fs.IntVar(&cfg.smallReps, "small-reps", 5, "uploads of a 256 KiB file per contender, to measure the fixed cost of one upload (0 skips)")
	fs.StringVar(&cfg.carrierBin, "carrier", "", "carrier binary to measure (default: build bin/carrier)")
	fs.StringVar(&cfg.gclientBin, "gclient", "", "official-client uploader (default: build ./bench/gclient)")
	fs.DurationVar(&cfg.procLimit, "proc-timeout", 10*time.Minute, "time limit of each process the harness starts")
	fs.Float64Var(&cfg.waitLoad, "wait-load", 0, "before measuring, wait until the 1-minute load average is below this (0: do not wait)")
	fs.StringVar(&cfg.waitFile, "wait-file", "", "before measuring, also wait until this file exists")
	fs.DurationVar(&cfg.waitMax, "wait-max", 40*time.Minute, "measure anyway after waiting this long for -wait-load / -wait-file")
	fs.DurationVar(&cfg.timeout, "timeout", 3*time.Hour, "give up on the whole run after this long (waiting for a quiet machine included)")
	fs.BoolVar(&cfg.clean, "clean", false, "delete the scratch folder (test file included) at the end")
	fs.Func("variant", "NAME=PATH: also measure this carrier binary with its defaults, e.g. a build with a proposed change (repeatable; not in the chart or the goals)", func(v string) error {
		name, path, ok := strings.Cut(v, "=")
		if !ok || name == "" || path == "" || strings.ContainsAny(name, " /") {
			return errors.New("want NAME=PATH, NAME without spaces or slashes")
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		cfg.variants = append(cfg.variants, variant{name, abs})
		return nil
	})
	fs.BoolVar(&cfg.cpuOnly, "cpu-only", false, "run only the CPU part (CPU per GiB beside curl and the official client, composing, the app at rest) and replace its section of -out's PERFORMANCE.md")
	fs.BoolVar(&cfg.photosOnly, "photos-only", false, "run only the Photos part (a video to Google Photos beside the same file to Cloud Storage, -cpu-rounds rounds) and replace its section of -out's PERFORMANCE.md")
	fs.IntVar(&cfg.cpuRounds, "cpu-rounds", 3, "rounds of the CPU part's uploads; 0 skips the CPU part")
	composeAttach := fs.String("compose-attach", "25MiB", "size of the attachment of the message the CPU part composes")
	fs.IntVar(&cfg.composeReps, "compose-reps", 5, "messages composed with the attachment, and as many without")
	fs.DurationVar(&cfg.idleFor, "idle-for", 30*time.Second, "length of one interval at rest of the desktop app and a bare Fyne window (0 skips them; they need Xvfb and xdotool)")
	fs.IntVar(&cfg.idleRounds, "idle-rounds", 3, "intervals at rest; the verdict is on their sum")
	fs.DurationVar(&cfg.idleSettle, "idle-settle", 10*time.Second, "time the windows are given after they show, before rest is measured")
	fs.StringVar(&cfg.gdriveBin, "gdrive", "", "official-client Drive uploader (default: build ./bench/gdrive)")
	fs.StringVar(&cfg.bareBin, "barefyne", "", "bare Fyne window (default: build ./bench/barefyne with -tags barefyne)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if cfg.composeAttach, err = parseSize(*composeAttach); err != nil || cfg.composeAttach < 1 {
		return nil, fmt.Errorf("-compose-attach %q: want a size, e.g. 25MiB", *composeAttach)
	}
	switch {
	case cfg.cpuRounds < 0 || cfg.composeReps < 1 || cfg.idleRounds < 1:
		return nil, errors.New("-cpu-rounds cannot be negative, -compose-reps and -idle-rounds must be at least 1")
	case cfg.idleFor < 0 || cfg.idleSettle < 0:
		return nil, errors.New("-idle-for and -idle-settle cannot be negative")
	case cfg.cpuOnly && cfg.photosOnly:
		return nil, errors.New("-cpu-only and -photos-only each run one part: give one")
	case (cfg.cpuOnly || cfg.photosOnly) && cfg.cpuRounds == 0:
		return nil, errors.New("-cpu-only or -photos-only with -cpu-rounds 0 measures nothing")
	}
	if cfg.size, err = parseSize(*size); err != nil || cfg.size < 1<<20 {
		return nil, fmt.Errorf("-size %q: want at least 1MiB, e.g. 64MiB or 1GiB", *size)
	}
	for _, c := range strings.Split(*chunks, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-chunks: %q is not a whole number of MiB", c)
		}
		if n<<20 == defaultChunk {
			continue // the default contender already runs with it
		}
		cfg.chunks = append(cfg.chunks, n<<20)
	}
	for _, m := range strings.Split(*modes, ",") {
		switch strings.TrimSpace(m) {
		case "durable":
			cfg.modes = append(cfg.modes, modeDurable)
		case "nofsync":
			cfg.modes = append(cfg.modes, modeNoSync)
		case "":
		default:
			return nil, fmt.Errorf("-modes: unknown mode %q (durable, nofsync)", m)
		}
	}
	switch {
	case len(cfg.modes) == 0:
		return nil, errors.New("-modes: name at least one")
	case cfg.rounds < 1:
		return nil, errors.New("-rounds must be at least 1")
	case cfg.conc < 0 || cfg.concRounds < 1:
		return nil, errors.New("-conc cannot be negative and -conc-rounds must be at least 1")
	case cfg.conc > 0 && !cfg.cpuOnly && cfg.size/int64(cfg.conc) < 256<<10:
		return nil, fmt.Errorf("-size %s is too small to split into %d uploads of at least 256 KiB", *size, cfg.conc)
	}
	return cfg, nil
}

// parseSize reads 1GiB, 64MiB, 512KiB, 100MB or plain bytes.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

func run(ctx context.Context, cfg *config) error {
	work, err := filepath.Abs(cfg.work)
	if err != nil {
		return err
	}
	cfg.work = work
	if err := os.MkdirAll(cfg.work, 0o700); err != nil {
		return err
	}
	if cfg.clean {
		defer os.RemoveAll(cfg.work)
	}
	if err := checkTools(); err != nil {
		return err
	}
	if err := buildBinaries(ctx, cfg); err != nil {
		return err
	}
	tf, err := prepareFile(cfg.work, cfg.size)
	if err != nil {
		return err
	}
	logf("test file %s (%s), md5 %s", tf.path, human(tf.size), tf.md5)
	if cfg.cpuOnly {
		return runCPUOnly(ctx, cfg, tf)
	}
	if cfg.photosOnly {
		return runPhotosOnly(ctx, cfg, tf)
	}
	small, err := prepareSlice(tf, cfg.work, "small", 256<<10)
	if err != nil {
		return err
	}
	var part *testFile
	if cfg.conc > 0 {
		if part, err = prepareSlice(tf, cfg.work, fmt.Sprintf("part%d", cfg.conc), cfg.size/int64(cfg.conc)); err != nil {
			return err
		}
	}

	rep := &report{cfg: cfg, file: tf}
	rep.waited = waitQuiet(ctx, cfg)
	started := time.Now()
	rep.machine = describeMachine(ctx)
	rep.probes, err = runProbes(ctx, cfg, tf)
	if err != nil {
		return err
	}
	for _, m := range cfg.modes {
		mr, err := runMode(ctx, cfg, m, tf, small, part)
		if err != nil {
			return fmt.Errorf("sandbox %s: %w", m.name, err)
		}
		rep.modes = append(rep.modes, mr)
	}
	if cfg.cpuRounds > 0 {
		if rep.cpu, err = runCPU(ctx, cfg, tf); err != nil {
			return fmt.Errorf("CPU part: %w", err)
		}
		if rep.photos, err = runPhotos(ctx, cfg, tf); err != nil {
			return fmt.Errorf("Photos part: %w", err)
		}
	}
	rep.duration = time.Since(started)
	md := rep.markdown()
	if cfg.out == "" {
		fmt.Print(md)
		return nil
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	png, err := rep.chart()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.out, "performance.png"), png, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.out, "PERFORMANCE.md"), []byte(md), 0o644); err != nil {
		return err
	}
	logf("wrote %s and %s in %s", filepath.Join(cfg.out, "PERFORMANCE.md"), filepath.Join(cfg.out, "performance.png"), rep.duration.Round(time.Second))
	return nil
}

// runCPUOnly measures the CPU part alone and puts its section into the
// page the last whole run wrote.
func runCPUOnly(ctx context.Context, cfg *config, tf *testFile) error {
	waited := waitQuiet(ctx, cfg)
	if waited != "" {
		logf("%s", waited)
	}
	res, err := runCPU(ctx, cfg, tf)
	if err != nil {
		return fmt.Errorf("CPU part: %w", err)
	}
	return writePart(cfg, "CPU", res.section(cfg), cpuBegin, cpuEnd)
}

func checkTools() error {
	if _, err := exec.LookPath("curl"); err != nil {
		return errors.New("curl is not installed; it is the reference for the wire's limit (apt-get install curl, or make deps-test)")
	}
	return nil
}

// buildBinaries builds bin/carrier and the official-client uploader unless
// given, and copies carrier into the scratch folder: someone rebuilding
// bin/carrier during the run must not change what is measured.
func buildBinaries(ctx context.Context, cfg *config) error {
	var root string
	if cfg.carrierBin == "" || cfg.gclientBin == "" {
		var err error
		if root, err = moduleRoot(ctx); err != nil {
			return err
		}
	}
	if cfg.carrierBin == "" {
		logf("building bin/carrier")
		bin := filepath.Join(root, "bin", "carrier")
		if err := goBuild(ctx, root, bin, "."); err != nil {
			return err
		}
		snap := filepath.Join(cfg.work, "carrier")
		if err := copyFile(bin, snap, 0o755); err != nil {
			return err
		}
		cfg.carrierBin = snap
	}
	if cfg.gclientBin == "" {
		logf("building bench/gclient")
		cfg.gclientBin = filepath.Join(cfg.work, "gclient")
		if err := goBuild(ctx, root, cfg.gclientBin, "./bench/gclient"); err != nil {
			return err
		}
	}
	for _, p := range []*string{&cfg.carrierBin, &cfg.gclientBin} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	return nil
}

func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// moduleRoot is the repository's root, so the harness builds the same
// things from any folder inside it.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, goTool(), "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the harness inside the carrier repository (go env GOMOD found no go.mod), or give -carrier and -gclient")
	}
	return filepath.Dir(gomod), nil
}

func goBuild(ctx context.Context, dir, out, pkg string, flags ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), append(append([]string{"build", "-o", out}, flags...), pkg)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -o %s %s: %w", out, pkg, err)
	}
	return nil
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}
