//go:build linux

// Command scale measures what a whole camera roll costs Carrier (issue 29,
// `make bench-scale`): `carrier photos --album A FILES...` of 200, 2,000 and
// 20,000 small distinct generated pictures to a sandbox run as a process
// of its own, each from a fresh state folder, then the same folder posted
// again from the same state folder, then `carrier jobs --all` over the
// journal the run left. Wall time, CPU (user+sys) and peak RSS come from
// the kernel (wait4's rusage) for the carrier process alone; requests per
// file from the sandbox's own count of Photos requests; the journal's
// size from the disk. The window's start-up over as many finished jobs is
// read from the ui package's measurement (TestMeasureStartWith2000Photos,
// CARRIER_MEASURE=n). The figures go into docs/PERFORMANCE.md between the
// markers below, the goals of issue 29 beside them.
//
// The sandbox's daily Photos quota is lifted (0: no limit), so 20,000
// pictures fit in one run: what is measured is Carrier's cost per file,
// not the quota's plan.
//
// It runs on Linux, whose kernel gives the figures it reports (wait4's
// ru_maxrss, a file's blocks); elsewhere it says so.
package main

import (
	"bufio"
	"bytes"
	"carrier/bench/internal/mdsection"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	beginMark = "<!-- scale: begin (go run ./bench/scale; make bench-scale) -->"
	endMark   = "<!-- scale: end -->"
	// The goals of issue 29.
	goalCPURatio = 1.2      // CPU per file at the largest count within this of the smallest's
	goalRSSDelta = 16 << 20 // peak RSS at the largest count within this of the smallest's
	goalRSSMax   = 64 << 20 // and under this at 20,000 files
)

type config struct {
	out     string
	work    string
	counts  []int
	bin     string
	ui      bool
	label   string
	keep    bool
	timeout time.Duration
}

// run is one `carrier` process measured.
type run struct {
	wall      time.Duration
	user, sys time.Duration
	maxRSS    int64
	requests  int64 // Photos requests the sandbox counted during it
	stderr    string
}

func (r run) cpu() time.Duration { return r.user + r.sys }

// result is one count's measurements.
type result struct {
	n        int
	first    run
	second   run
	jobs     run   // carrier jobs --all over the journal afterwards
	journal  int64 // bytes of the state folder's jobs/ after the first run
	records  int   // job records in jobs/ after the first run
	journal2 int64 // after the second run: the folder's bytes but the archive's
	records2 int   // its records
	archive  int64 // the archive's bytes (jobs/archive.jsonl)
	items    int   // media items in the album after the first run
	uiStart  time.Duration
	uiRows   string
}

func main() {
	cfg := &config{}
	var counts string
	flag.StringVar(&cfg.out, "out", "docs/PERFORMANCE.md", "the file whose scale section is replaced (empty: print only)")
	flag.StringVar(&cfg.work, "work", "", "scratch folder: pictures, state folders, the sandbox's data (default: a new one in /dev/shm, where the disk's fsyncs do not hide Carrier's own cost; give one on a disk to measure the disk too)")
	flag.StringVar(&counts, "counts", "200,2000,20000", "the numbers of pictures, comma-separated")
	flag.StringVar(&cfg.bin, "bin", "", "a carrier binary to measure (default: built from this tree)")
	flag.BoolVar(&cfg.ui, "ui", true, "measure the window's start-up over the largest count's finished jobs (go test ./ui/)")
	flag.StringVar(&cfg.label, "label", "", "what was measured, for the report (default: the tree's commit)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the scratch folder")
	flag.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, "limit on each carrier process")
	flag.Parse()
	for _, c := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "scale: -counts: %q is not a positive number\n", c)
			os.Exit(2)
		}
		cfg.counts = append(cfg.counts, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func measure(ctx context.Context, cfg *config) error {
	if cfg.work == "" {
		dir, err := os.MkdirTemp(memoryDir(), "carrier-scale-")
		if err != nil {
			return err
		}
		cfg.work = dir
	}
	if !cfg.keep {
		defer os.RemoveAll(cfg.work)
	}
	if cfg.label == "" {
		out, _ := exec.CommandContext(ctx, "git", "log", "-1", "--format=%h").Output()
		cfg.label = strings.TrimSpace(string(out))
	}
	if cfg.bin == "" {
		cfg.bin = filepath.Join(cfg.work, "carrier")
		logf("building carrier")
		cmd := exec.CommandContext(ctx, goTool(), "build", "-o", cfg.bin, ".")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	sb, err := startSandbox(ctx, cfg.bin, filepath.Join(cfg.work, "sandbox"))
	if err != nil {
		return err
	}
	defer sb.stop()
	if err := sb.call(ctx, http.MethodPut, "/sandbox/v1/photos", `{"requestsPerDay": 0, "uploadsPerMinute": 0}`, nil); err != nil {
		return fmt.Errorf("lifting the Photos quota: %w", err)
	}
	started := time.Now()
	var results []*result
	for _, n := range cfg.counts {
		r, err := measureCount(ctx, cfg, sb, n)
		if err != nil {
			return fmt.Errorf("%d pictures: %w", n, err)
		}
		results = append(results, r)
	}
	if cfg.ui {
		last := results[len(results)-1]
		if d, rows, err := uiStart(ctx, last.n); err != nil {
			logf("the window's start-up was not measured: %v", err)
		} else {
			last.uiStart, last.uiRows = d, rows
			logf("the window started over %d jobs in %v (%s)", last.n, d, rows)
		}
		if d, rows, err := uiStart(ctx, 0); err == nil {
			results[0].uiStart, results[0].uiRows = d, rows // the empty journal, for comparison
			logf("and over none in %v", d)
		}
	}
	md := report(cfg, results, started)
	fmt.Print(md)
	if cfg.out == "" {
		return nil
	}
	return mdsection.Write(cfg.out, md, beginMark, endMark)
}

// measureCount runs the first post of n pictures, the second post of the
// same folder and `carrier jobs --all`.
func measureCount(ctx context.Context, cfg *config, sb *sandbox, n int) (*result, error) {
	pics := filepath.Join(cfg.work, fmt.Sprintf("pictures-%d", n))
	names, err := makePictures(pics, n)
	if err != nil {
		return nil, err
	}
	state := filepath.Join(cfg.work, fmt.Sprintf("state-%d", n))
	album := fmt.Sprintf("scale %d %s", n, time.Now().Format("150405"))
	args := append([]string{"photos", "--album", album, "--endpoint", sb.base, "--state-dir", state}, names...)
	res := &result{n: n}
	logf("%d pictures: first post", n)
	if res.first, err = sb.measured(ctx, cfg, pics, args); err != nil {
		return nil, err
	}
	logf("  %v wall, %v CPU, %.1f MiB peak, %d requests", res.first.wall.Round(time.Millisecond), res.first.cpu().Round(time.Millisecond), mib(res.first.maxRSS), res.first.requests)
	res.journal, res.records = folderSize(filepath.Join(state, "jobs"))
	if res.items, err = sb.albumItems(ctx, album); err != nil {
		return nil, err
	}
	if res.items != n {
		return nil, fmt.Errorf("the album holds %d items, not %d", res.items, n)
	}
	logf("%d pictures: jobs --all", n)
	if res.jobs, err = sb.measured(ctx, cfg, pics, []string{"jobs", "--all", "--state-dir", state}); err != nil {
		return nil, err
	}
	logf("%d pictures: second post of the same folder", n)
	if res.second, err = sb.measured(ctx, cfg, pics, args); err != nil {
		return nil, err
	}
	res.journal2, res.records2 = folderSize(filepath.Join(state, "jobs"))
	if fi, err := os.Stat(filepath.Join(state, "jobs", "archive.jsonl")); err == nil {
		res.archive = diskSize(fi)
		res.journal2 -= res.archive
	}
	if !cfg.keep {
		os.RemoveAll(state)
		os.RemoveAll(pics)
	}
	return res, nil
}

// makePictures writes n distinct 8x8 PNGs (about 100 bytes each) into
// dir and returns their names, relative to dir so that 20,000 of them fit
// on one command line.
func makePictures(dir string, n int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	names := make([]string, n)
	var buf bytes.Buffer
	for i := range n {
		img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
		for p := range 64 {
			// The index spread over the pixels' colours: every picture's
			// bytes differ, so Photos makes an item of each.
			img.Set(p%8, p/8, color.NRGBA{uint8(i), uint8(i >> 8), uint8(i >> 16 * p), 255})
		}
		buf.Reset()
		if err := png.Encode(&buf, img); err != nil {
			return nil, err
		}
		names[i] = fmt.Sprintf("%05d.png", i)
		if err := os.WriteFile(filepath.Join(dir, names[i]), buf.Bytes(), 0o600); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// folderSize is the disk space the regular files in dir take (a record
// of 1 KB takes a block of 4 KB, and each job has a lock and a progress
// file beside it) and the number of job records (*.json) among them.
func folderSize(dir string) (size int64, records int) {
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			size += diskSize(fi)
			if strings.HasSuffix(d.Name(), ".json") {
				records++
			}
		}
		return nil
	})
	return size, records
}

// sandbox is `carrier sandbox` run as a process of its own, so that its
// CPU and memory are not the client's.
type sandbox struct {
	cmd   *exec.Cmd
	base  string
	token string
}

func startSandbox(ctx context.Context, bin, dir string) (*sandbox, error) {
	var tok [16]byte
	rand.Read(tok[:])
	s := &sandbox{token: hex.EncodeToString(tok[:])}
	tokFile := dir + ".token"
	if err := os.WriteFile(tokFile, []byte(s.token), 0o600); err != nil {
		return nil, err
	}
	// --fsync=false: the sandbox's disk is not what is measured; the
	// client's journal keeps its own fsyncs.
	s.cmd = exec.Command(bin, "sandbox", "--addr", "127.0.0.1:0", "--data", dir, "--token-file", tokFile, "--quiet", "--fsync=false")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- strings.TrimSpace(sc.Text())
		}
		close(line)
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		if strings.HasPrefix(l, "http://127.0.0.1:") {
			s.base = l
			return s, nil
		}
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	s.stop()
	return nil, errors.New("the sandbox did not print its URL")
}

func (s *sandbox) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

func (s *sandbox) call(ctx context.Context, method, path, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %.300s", method, path, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// requests is the sandbox's count of today's Photos requests.
func (s *sandbox) requests(ctx context.Context) (int64, error) {
	var st struct {
		RequestsToday int64 `json:"requestsToday"`
	}
	err := s.call(ctx, http.MethodGet, "/sandbox/v1/photos", "", &st)
	return st.RequestsToday, err
}

// albumItems is the number of items of the album of that title, as the
// Photos API's album says (mediaItemsCount), read after the measured run:
// these requests are not the client's. The album is listed, not searched
// page by page: 200 pages of 100 items took the sandbox minutes.
func (s *sandbox) albumItems(ctx context.Context, title string) (int, error) {
	for page := ""; ; {
		var albums struct {
			Albums []struct {
				Title string `json:"title"`
				Count string `json:"mediaItemsCount"`
			} `json:"albums"`
			NextPageToken string `json:"nextPageToken"`
		}
		if err := s.call(ctx, http.MethodGet, "/v1/albums?pageSize=50&pageToken="+page, "", &albums); err != nil {
			return 0, err
		}
		for _, a := range albums.Albums {
			if a.Title == title {
				return strconv.Atoi(a.Count)
			}
		}
		if page = albums.NextPageToken; page == "" {
			return 0, fmt.Errorf("no album %q", title)
		}
	}
}

// measured runs carrier with args in dir and takes its rusage and the
// Photos requests the sandbox counted meanwhile.
func (s *sandbox) measured(ctx context.Context, cfg *config, dir string, args []string) (run, error) {
	before, err := s.requests(ctx)
	if err != nil {
		return run{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CARRIER_TOKEN="+s.token)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if v := os.Getenv("SCALE_GODEBUG"); v != "" {
		// For a look at what the heap does (SCALE_GODEBUG=gctrace=1): the
		// carrier process alone, its standard error shown as it comes.
		cmd.Env = append(cmd.Env, "GODEBUG="+v)
		cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	began := time.Now()
	err = cmd.Run()
	r := run{wall: time.Since(began), stderr: stderr.String()}
	if ps := cmd.ProcessState; ps != nil {
		r.user, r.sys = ps.UserTime(), ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.maxRSS = ru.Maxrss << 10 // Linux gives KiB
		}
	}
	if err != nil {
		return r, fmt.Errorf("carrier %s: %w: %s", args[0], err, tail(r.stderr, 5))
	}
	after, err := s.requests(ctx)
	r.requests = after - before
	return r, err
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

var uiLine = regexp.MustCompile(`the window started over (\d+) jobs in (\S+): (.*)`)

// uiStart runs the ui package's start-up measurement over n finished
// Photos jobs (the fastest of its tries).
func uiStart(ctx context.Context, n int) (time.Duration, string, error) {
	count := strconv.Itoa(max(n, 1))
	if n == 0 {
		count = "1"
	}
	cmd := exec.CommandContext(ctx, goTool(), "test", "-count=1", "-run", "^TestMeasureStartWith2000Photos$", "-v", "./ui/")
	cmd.Env = append(os.Environ(), "CARRIER_MEASURE="+count)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, "", fmt.Errorf("%w: %s", err, tail(string(out), 5))
	}
	var best time.Duration
	rows := ""
	for _, m := range uiLine.FindAllStringSubmatch(string(out), -1) {
		d, err := time.ParseDuration(m[2])
		if err != nil {
			continue
		}
		if best == 0 || d < best {
			best, rows = d, m[3]
		}
	}
	if best == 0 {
		return 0, "", fmt.Errorf("no measurement in: %s", tail(string(out), 5))
	}
	return best, rows, nil
}

// memoryDir is /dev/shm where the system has it (a file system in
// memory), else the temporary folder.
func memoryDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return ""
}

func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func perFile(d time.Duration, n int) string {
	return fmt.Sprintf("%.2f ms", d.Seconds()*1000/float64(n))
}

func report(cfg *config, rs []*result, started time.Time) string {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	w("%s\n## A camera roll: 200 to 20,000 pictures (issue 29)\n\n", beginMark)
	load, _ := os.ReadFile("/proc/loadavg")
	w("Measured %s UTC on %s/%s, %d CPUs (load average at the end: %s), build %s. `go run ./bench/scale` (`make bench-scale`): "+
		"`carrier photos --album A FILES...` of distinct 8x8 PNGs (about 100 bytes each) to `carrier sandbox --fsync=false` run as a process of its own, "+
		"its daily Photos quota lifted; each count from a fresh state folder, in %s. Wall, CPU (user+sys) and peak RSS are the carrier process's own "+
		"(wait4's rusage); requests are the Photos requests the sandbox counted during the run; the journal is the disk space of the state folder's `jobs/` after it (its blocks: each job's record, lock and progress files take a block each). "+
		"Every album held as many items as files were posted (its `mediaItemsCount` through the Photos API).\n\n",
		started.UTC().Format("2006-01-02 15:04"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "), cfg.label, where(cfg.work))
	w("| pictures | wall | CPU | CPU per file | peak RSS | journal | records | requests per file | `jobs --all` CPU |\n")
	w("|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rs {
		w("| %d | %.1f s | %.2f s | %s | %.1f MiB | %.1f MiB | %d | %.2f | %.2f s |\n", r.n, r.first.wall.Seconds(), r.first.cpu().Seconds(),
			perFile(r.first.cpu(), r.n), mib(r.first.maxRSS), mib(r.journal), r.records, float64(r.first.requests)/float64(r.n), r.jobs.cpu().Seconds())
	}
	w("\nThe same folder posted again from the same state folder. Its start moves the first post's finished jobs to the journal's archive " +
		"(where there is one: `jobs/archive.jsonl`), so the folder a start reads holds the second post's records only; the archive is read by " +
		"`carrier jobs --all` and the history, not by a queue's start:\n\n")
	w("| pictures | wall | CPU | peak RSS | requests | journal folder after | records in it | archive |\n|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rs {
		w("| %d | %.1f s | %.2f s | %.1f MiB | %d | %.1f MiB | %d | %.1f MiB |\n", r.n, r.second.wall.Seconds(), r.second.cpu().Seconds(), mib(r.second.maxRSS),
			r.second.requests, mib(r.journal2), r.records2, mib(r.archive))
	}
	first, last := rs[0], rs[len(rs)-1]
	cpuRatio := (last.first.cpu().Seconds() / float64(last.n)) / (first.first.cpu().Seconds() / float64(first.n))
	rssDelta := last.first.maxRSS - first.first.maxRSS
	w("\nGoals (issue 29), %d against %d pictures:\n\n", last.n, first.n)
	w("| goal | measured | met |\n|---|--:|:-:|\n")
	w("| CPU per file within %.1fx | %.2fx | %s |\n", goalCPURatio, cpuRatio, yes(cpuRatio <= goalCPURatio))
	w("| peak RSS within %d MiB | %+.1f MiB | %s |\n", goalRSSDelta>>20, mib(rssDelta), yes(rssDelta <= goalRSSDelta))
	w("| peak RSS under %d MiB at %d | %.1f MiB | %s |\n", goalRSSMax>>20, last.n, mib(last.first.maxRSS), yes(last.first.maxRSS < goalRSSMax))
	w("| second post of an unchanged folder: no upload request | %d requests for %d files | %s |\n", last.second.requests, last.n, yes(last.second.requests*2 < last.first.requests && last.second.requests <= int64(last.n/100)+2))
	if last.uiStart > 0 {
		w("\nThe window's start-up (`CARRIER_MEASURE=%d go test -run TestMeasureStartWith2000Photos -v ./ui/`, the ui over a fake "+
			"uploader holding that many finished Photos jobs and their calls; the faster of two tries): %v over %d pictures (%s)", last.n, last.uiStart.Round(time.Millisecond), last.n, last.uiRows)
		if first.uiStart > 0 {
			w(", %v over one", first.uiStart.Round(time.Millisecond))
		}
		w(". Reading the journal itself is `carrier jobs --all` above.\n")
	}
	w("\n%s\n", endMark)
	return b.String()
}

// where says what kind of folder dir is in.
func where(dir string) string {
	if strings.HasPrefix(dir, "/dev/shm/") {
		return "/dev/shm (in memory: the disk's fsyncs do not hide Carrier's own cost; wall time on a disk is longer)"
	}
	return filepath.Dir(dir)
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// diskSize is the space a file takes on the disk: its blocks, not its
// length.
func diskSize(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
