// Command netbench measures issue 13's figures through a network-fault
// component nobody here wrote: Shopify's toxiproxy, in this process,
// between Carrier's engine (a transfer.Queue with its defaults) and the
// sandbox (`make bench-net`, part of `make bench`).
//
//   - Progress truth: one upload through a slow link (toxiproxy's bandwidth
//     toxic, latency each way) behind a buffering middlebox (toxiproxy's
//     slicer and the queue of its latency toxic in front of the bandwidth
//     limit, plus the kernel's socket buffers on both sides). The engine's
//     Snapshot is sampled every 100 ms beside the truth: the bytes the
//     sandbox received by then and the time the upload really ended.
//   - Flaky link: the same upload undisturbed, and with every connection
//     reset every 4 s (the sandbox's side resets them; toxiproxy passes it
//     on), in alternating rounds.
//
// It writes its section into docs/PERFORMANCE.md between two markers,
// replacing an earlier one, and prints it.
//
// With -blackhole 20s it measures only issue 33's silent blackhole, in a
// private network namespace, and writes that section (blackhole.go).
// With -nm-online 20s or -wifi-switch it measures only what NetworkManager
// tells Carrier (nm_linux.go), and with -reference only the flaky link for
// Carrier beside a paced reference client and curl (reference.go), each
// into its own section. -serialize runs the first three against a sandbox
// that serialises each session's requests (a status query waits behind a
// stalled request), into sections of their own (marks).
package main

import (
	"carrier/bench/internal/mdsection"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"carrier/internal/nettest"
	"carrier/sandbox"
	"carrier/transfer"
)

const token = "netbench-token"

var digits = regexp.MustCompile(`\d+`)

type config struct {
	out       string
	size      int64
	rateKBs   int64
	latencyMs int64
	piece     int
	rounds    int
	every     time.Duration
	warmup    time.Duration
	window    time.Duration
	label     string
	serialize bool // the dead-path cases against a sandbox that serialises session requests
}

func main() {
	c := config{}
	var size string
	flag.StringVar(&c.out, "out", "", "the PERFORMANCE.md to write the section into (e.g. docs/PERFORMANCE.md); empty prints it only")
	flag.StringVar(&size, "size", "24MiB", "file size (MiB or bytes)")
	flag.Int64Var(&c.rateKBs, "rate", 1500, "the link's bandwidth, KB/s (1000 bytes)")
	flag.Int64Var(&c.latencyMs, "latency", 40, "the link's latency each way, ms")
	flag.IntVar(&c.piece, "piece", 1024, "bytes per piece in the middlebox's queue of 1024 pieces (0: 1024 reads of up to 32 KiB)")
	flag.IntVar(&c.rounds, "rounds", 2, "rounds of the flaky-link comparison (undisturbed, then resets)")
	flag.DurationVar(&c.every, "reset-every", 4*time.Second, "the flaky link resets every connection this often")
	flag.DurationVar(&c.warmup, "warmup", 5*time.Second, "the first seconds, left out of the rate and ETA errors")
	flag.DurationVar(&c.window, "window", 3*time.Second, "the true rate is what the sandbox received over this trailing window")
	flag.StringVar(&c.label, "label", "", "a note on what engine was measured (e.g. a commit)")
	var hole time.Duration
	flag.DurationVar(&hole, "blackhole", 0, "measure only the silent blackhole of this length (issue 33; Linux, in a private network namespace) and write its own section")
	var spell time.Duration
	var wifi, ref bool
	var bin string
	flag.DurationVar(&spell, "nm-online", 0, "measure only NetworkManager saying online after an offline spell of this length (issue 33; Linux) and write its own section")
	flag.BoolVar(&wifi, "wifi-switch", false, "measure only a Wi-Fi switch told by NetworkManager (issue 33; Linux) and write its own section")
	flag.StringVar(&bin, "carrier", "", "the carrier binary -nm-online and -wifi-switch run (default: built from this tree)")
	flag.BoolVar(&c.serialize, "serialize", false, "with -blackhole, -nm-online or -wifi-switch: the sandbox serialises each session's requests (a status query waits behind a stalled request, up to its 2-minute body timeout; sandbox.Options.SerializeSessions), and the section is its own")
	flag.BoolVar(&ref, "reference", false, "measure only the flaky link for Carrier beside a paced reference client and curl (issue 33) and write its own section")
	flag.Parse()
	var err error
	if c.size, err = parseSize(size); err != nil || c.size < 1<<20 {
		fmt.Fprintf(os.Stderr, "netbench: -size %q: want at least 1MiB, e.g. 24MiB\n", size)
		os.Exit(2)
	}
	if c.rateKBs <= 0 || c.latencyMs < 0 || c.piece < 0 || c.rounds < 1 || c.every <= 0 {
		fmt.Fprintln(os.Stderr, "netbench: -rate, -rounds and -reset-every must be positive; -latency and -piece cannot be negative")
		os.Exit(2)
	}
	if spell > 0 && wifi {
		fmt.Fprintln(os.Stderr, "netbench: -nm-online and -wifi-switch are measured one at a time")
		os.Exit(2)
	}
	if c.serialize && hole <= 0 && spell <= 0 && !wifi {
		fmt.Fprintln(os.Stderr, "netbench: -serialize goes with -blackhole, -nm-online or -wifi-switch")
		os.Exit(2)
	}
	if spell > 0 || wifi {
		if err := runNM(c, bin, spell, wifi); err != nil {
			fmt.Fprintln(os.Stderr, "netbench:", err)
			os.Exit(1)
		}
		return
	}
	if ref {
		if err := runReference(c); err != nil {
			fmt.Fprintln(os.Stderr, "netbench:", err)
			os.Exit(1)
		}
		return
	}
	if hole > 0 {
		if err := runBlackhole(c, hole); err != nil {
			fmt.Fprintln(os.Stderr, "netbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "netbench:", err)
		os.Exit(1)
	}
}

// writeFile writes the file to upload, size random bytes, in work.
// scratch is a folder of the bench's own holding the file to upload, of
// size bytes; cleanup removes both.
func scratch(size int64) (work, file string, cleanup func(), err error) {
	work, err = os.MkdirTemp("", "carrier-netbench-")
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { os.RemoveAll(work) }
	if file, err = writeFile(work, size); err != nil {
		cleanup()
		return "", "", nil, err
	}
	return work, file, cleanup, nil
}

func writeFile(work string, size int64) (string, error) {
	file := filepath.Join(work, "file")
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(size), 13))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return file, os.WriteFile(file, data, 0o600)
}

// platform names the machine measured on.
func platform() string {
	return fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
}

// label is ", engine: <label>" when one was given.
func label(c config) string {
	if c.label == "" {
		return ""
	}
	return ", engine: " + c.label
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	if v, ok := strings.CutSuffix(s, "MiB"); ok {
		s, mult = v, 1<<20
	}
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
		return 0, errors.New("bad size")
	}
	return n * mult, nil
}

func run(c config) error {
	work, file, cleanup, err := scratch(c.size)
	if err != nil {
		return err
	}
	defer cleanup()

	fmt.Fprintln(os.Stderr, "netbench: progress truth")
	pr, err := upload(c, work, file, "progress", 0)
	if err != nil {
		return err
	}
	if os.Getenv("NETBENCH_DUMP") != "" {
		for _, s := range pr.samples {
			fmt.Fprintf(os.Stderr, "%6.1f recv %9d conf %9d sent %9d written %9d acked %9d rate %8.0f eta %5.1f\n", s.at.Seconds(), s.received, s.snap.Confirmed, s.snap.Sent, s.snap.Written, s.snap.Acked, s.snap.ConfirmedRate, s.snap.ETA.Seconds())
		}
	}
	prog := progressFigures(c, pr)
	var calm, flaky []*result
	for i := range c.rounds {
		fmt.Fprintf(os.Stderr, "netbench: round %d undisturbed\n", i+1)
		a, err := upload(c, work, file, fmt.Sprintf("calm%d", i), 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "netbench: round %d, every connection reset every %s\n", i+1, c.every)
		b, err := upload(c, work, file, fmt.Sprintf("flaky%d", i), c.every)
		if err != nil {
			return err
		}
		calm, flaky = append(calm, a), append(flaky, b)
	}
	md := markdown(c, prog, calm, flaky)
	fmt.Print(md)
	if c.out != "" {
		return writeSection(c.out, md)
	}
	return nil
}

// sample is the engine's view and the truth at one moment.
type sample struct {
	at       time.Duration // since the job was added
	snap     transfer.Snapshot
	received int64 // the sandbox's media bytes received by then
}

type result struct {
	size     int64
	took     time.Duration
	samples  []sample
	wire     int64 // bytes the server read from its connections: what the proxy forwarded upstream
	written  int64 // bytes Carrier wrote to its connections (to the proxy), some lost in the middlebox
	media    int64 // of which file bytes (the sandbox's BytesReceived)
	resets   int   // connections reset
	retries  []transfer.Event
	sessions int64
	objects  int64
}

// upload sends file once through a fresh sandbox and proxy, sampling
// the engine every 100 ms; every > 0 resets every connection that often.
func upload(c config, work, file, name string, every time.Duration) (*result, error) {
	dir := filepath.Join(work, name)
	srv, err := nettest.StartSandbox(sandbox.Options{Dir: filepath.Join(dir, "sandbox"), Token: token, NoSync: true})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	link, err := nettest.NewLink(srv.Addr)
	if err != nil {
		return nil, err
	}
	defer link.Close()
	if err := link.SlowLink(nettest.Slow{RateKBs: c.rateKBs, LatencyMs: c.latencyMs, PieceBytes: c.piece}); err != nil {
		return nil, err
	}
	events := make(chan transfer.Event, 4096)
	var written atomic.Int64
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	client := &http.Client{
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dialer.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &countConn{Conn: c, n: &written}, nil
			},
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		},
		// The engine never follows redirects; its own client says so too.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	q, err := transfer.New(transfer.Config{StateDir: filepath.Join(dir, "state"), Client: client, Auth: transfer.StaticToken(token), Workers: 1, Events: events})
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := &result{}
	done := make(chan struct{})
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for {
			select {
			case e := <-events:
				if e.Kind == transfer.EventRetrying {
					res.retries = append(res.retries, e)
				}
			case <-done:
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var waitResets func() int
	if every > 0 {
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		waitResets = srv.ResetEvery(rctx, every)
		defer func() {
			stop()
			res.resets = waitResets()
		}()
	}
	start := time.Now()
	id, err := q.Add(transfer.Spec{URL: link.URL + "/upload/storage/v1/b/netbench/o?name=" + url.QueryEscape(name), ContentType: "application/octet-stream", Path: file})
	if err != nil {
		return nil, err
	}
	ended := make(chan transfer.Snapshot, 1)
	var werr error
	go func() {
		s, err := q.Wait(ctx, id)
		werr = err
		ended <- s
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var final transfer.Snapshot
loop:
	for {
		select {
		case final = <-ended:
			res.took = time.Since(start)
			break loop
		case <-tick.C:
			recv := srv.SB.Stats().BytesReceived
			if s, ok := q.Job(id); ok {
				res.samples = append(res.samples, sample{at: time.Since(start), snap: s, received: recv})
			}
		}
	}
	close(done)
	<-collected
	if werr != nil {
		return nil, werr
	}
	if final.State != transfer.StateDone {
		return nil, fmt.Errorf("%s: the upload ended %s: %s", name, final.State, final.Error)
	}
	st := srv.SB.Stats()
	res.size, res.wire, res.media, res.written = final.Size, srv.WireBytes(), st.BytesReceived, written.Load()
	res.sessions, res.objects = st.SessionsCreated, st.Completions
	if res.objects != 1 {
		return nil, fmt.Errorf("%s: the sandbox made %d objects for one upload", name, res.objects)
	}
	return res, nil
}

type progress struct {
	res                    *result
	trueRate               float64 // size over the time it took, bytes/s
	rateMed, rateP90       float64 // relative errors
	rateN                  int
	etaMed, etaP90         float64
	etaN                   int
	aheadMax, writtenAhead float64 // seconds of transfer at trueRate
	behindMax              float64 // the sandbox ahead of Sent, seconds of transfer
	firstConfirmed         time.Duration
	firstRate              time.Duration
	firstRateValue         float64
	rateZero, etaZero      int // samples after warm-up that showed none
}

func progressFigures(c config, r *result) progress {
	p := progress{res: r, trueRate: float64(r.size) / r.took.Seconds()}
	var rateErr, etaErr []float64
	for i, s := range r.samples {
		if p.firstConfirmed == 0 && s.snap.Confirmed > 0 {
			p.firstConfirmed = s.at
		}
		if p.firstRate == 0 && s.snap.ConfirmedRate > 0 {
			p.firstRate, p.firstRateValue = s.at, s.snap.ConfirmedRate
		}
		p.aheadMax = max(p.aheadMax, float64(s.snap.Sent-s.received)/p.trueRate)
		p.writtenAhead = max(p.writtenAhead, float64(s.snap.Written-s.received)/p.trueRate)
		p.behindMax = max(p.behindMax, float64(s.received-s.snap.Sent)/p.trueRate)
		if s.at < c.warmup {
			continue
		}
		// The true rate: what reached the sandbox over the trailing window.
		j := i
		for j > 0 && s.at-r.samples[j-1].at <= c.window {
			j--
		}
		if span := (s.at - r.samples[j].at).Seconds(); span >= c.window.Seconds()*0.9 {
			truth := float64(s.received-r.samples[j].received) / span
			if truth > 0 {
				if s.snap.ConfirmedRate == 0 {
					p.rateZero++
				}
				rateErr = append(rateErr, math.Abs(s.snap.ConfirmedRate-truth)/truth)
			}
		}
		// The ETA against the time really left; the last 2 s are left out,
		// where any error is a large share of little.
		if left := r.took - s.at; left >= 2*time.Second {
			if s.snap.ETA == 0 {
				p.etaZero++
			}
			etaErr = append(etaErr, math.Abs((s.snap.ETA-left).Seconds())/left.Seconds())
		}
	}
	p.rateN, p.etaN = len(rateErr), len(etaErr)
	p.rateMed, p.rateP90 = quantile(rateErr, 0.5), quantile(rateErr, 0.9)
	p.etaMed, p.etaP90 = quantile(etaErr, 0.5), quantile(etaErr, 0.9)
	return p
}

func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(math.Round(q*float64(len(s)-1)))]
}

func medianDur(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

const (
	beginMark = "<!-- netbench: begin (go run ./bench/netbench; make bench-net) -->"
	endMark   = "<!-- netbench: end -->"
)

func markdown(c config, p progress, calm, flaky []*result) string {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	w("%s\n## Through toxiproxy: progress truth and a flaky link (issue 13)\n\n", beginMark)
	w("Measured %s on %s/%s, %d CPUs, load average %s", time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadAvg())
	if c.label != "" {
		w(", engine: %s", c.label)
	}
	w(". `go run ./bench/netbench -size %dMiB -rate %d -latency %d -piece %d -rounds %d -reset-every %s`.\n\n", c.size>>20, c.rateKBs, c.latencyMs, c.piece, c.rounds, c.every)
	w("Carrier's engine (a `transfer.Queue` with its defaults, one worker) uploads a %d MiB file to the sandbox's Cloud Storage "+
		"endpoint through Shopify's toxiproxy (`github.com/Shopify/toxiproxy/v2`, run in the harness's process). The link: "+
		"toxiproxy's `bandwidth` toxic at %d KB/s upstream, `latency` %d ms each way. The buffering middlebox: toxiproxy "+
		"reads whatever Carrier writes at once; its `slicer` cuts it into %d-byte pieces and the upstream `latency` toxic "+
		"queues up to 1024 of them (%s) in front of the bandwidth limit, and behind that queue the kernel's socket buffers "+
		"of both loopback connections (autotuned, megabytes) fill too. So bytes leave Carrier, and are acknowledged by TCP, "+
		"long before the sandbox has them. The truth is the sandbox's own count of the media bytes it received "+
		"(`Stats.BytesReceived`, live) and the moment the upload really ended.\n\n",
		c.size>>20, c.rateKBs, c.latencyMs, c.piece, mibs(int64(c.piece)*1024))

	w("### Progress truth\n\n")
	w("The engine's `Snapshot` (`ConfirmedRate`, `ETA`, `Sent`, `Written`, `Confirmed`) sampled every 100 ms, %d samples; "+
		"the upload took %.1f s (%.2f MB/s on average). Rate error: |ConfirmedRate - true| / true, the true rate being what "+
		"the sandbox received over the trailing %s, for samples after the first %s. ETA error: |ETA - time really left| / "+
		"time left, after the first %s and until 2 s before the end. An unknown rate or ETA (0) counts as 100%% off. "+
		"\"Sent\" ahead: (Sent - bytes the sandbox holds) in seconds of transfer at the average rate.\n\n",
		len(p.res.samples), p.res.took.Seconds(), p.trueRate/1e6, c.window, c.warmup, c.warmup)
	w("| figure | measured | goal | |\n|---|---|---|---|\n")
	w("| rate error, median (p90), %d samples | %s (%s) | within 15%% | %s |\n", p.rateN, pct(p.rateMed), pct(p.rateP90), verdict(p.rateMed <= 0.15))
	w("| ETA error, median (p90), %d samples | %s (%s) | within 20%% | %s |\n", p.etaN, pct(p.etaMed), pct(p.etaP90), verdict(p.etaMed <= 0.20))
	w("| \"Sent\" ahead of what the sandbox holds, max | %.1f s | at most 3 s | %s |\n", p.aheadMax, verdict(p.aheadMax <= 3))
	w("| \"Sent\" behind what the sandbox holds, max (no goal: it understates) | %.1f s | | |\n", p.behindMax)
	w("| bytes written to the socket ahead of the sandbox, max (`Written`, not shown as sent) | %.1f s | | |\n", p.writtenAhead)
	w("| first confirmed byte shown | %.1f s | | |\n", p.firstConfirmed.Seconds())
	w("| first rate shown | %.1f s: %.2f MB/s | | |\n", p.firstRate.Seconds(), p.firstRateValue/1e6)
	w("| samples after warm-up with no rate / no ETA | %d / %d | | |\n\n", p.rateZero, p.etaZero)

	w("### Flaky link: every connection reset every %s\n\n", c.every)
	w("The same upload undisturbed, and with every connection the sandbox holds reset (RST) every %s; toxiproxy "+
		"passes the reset on to Carrier and loses what it queued. %d rounds, alternating; medians. Bytes sent: what toxiproxy "+
		"forwarded upstream and the sandbox read (HTTP headers included) over the file's size; beside it what Carrier "+
		"wrote to its connections, which includes what the middlebox held when a reset threw it away: the bytes written into "+
		"the link, whose goal is issue 33's. Carrier writes each chunk's body at the pace the server confirmed the last ones "+
		"at, a little over it (`transfer/pacer.go`), so what waits in the middlebox at a reset is little more than the "+
		"link's own queue; unpaced it was most of a chunk.\n\n", c.every, c.rounds)
	var ct, ft []time.Duration
	var fw, fm, fc []float64
	var waits []time.Duration
	retries, resets := 0, 0
	for i := range calm {
		ct, ft = append(ct, calm[i].took), append(ft, flaky[i].took)
		fw = append(fw, float64(flaky[i].wire)/float64(flaky[i].size))
		fm = append(fm, float64(flaky[i].media)/float64(flaky[i].size))
		fc = append(fc, float64(flaky[i].written)/float64(flaky[i].size))
		retries += len(flaky[i].retries)
		resets += flaky[i].resets
		for _, e := range flaky[i].retries {
			waits = append(waits, e.Wait)
		}
	}
	ratio := medianDur(ft).Seconds() / medianDur(ct).Seconds()
	bratio := quantile(fw, 0.5)
	w("| round | undisturbed | with resets | ratio | bytes sent / file | Carrier wrote / file | retries |\n|---|---|---|---|---|---|---|\n")
	for i := range calm {
		w("| %d | %.1f s | %.1f s | %.2fx | %.3fx | %.3fx | %d |\n", i+1, calm[i].took.Seconds(), flaky[i].took.Seconds(),
			flaky[i].took.Seconds()/calm[i].took.Seconds(), fw[i], fc[i], len(flaky[i].retries))
	}
	w("\n| figure | measured | goal | |\n|---|---|---|---|\n")
	w("| total time, resets / undisturbed (medians) | %.2fx (%.1f s / %.1f s) | at most 1.25x | %s |\n", ratio, medianDur(ft).Seconds(), medianDur(ct).Seconds(), verdict(ratio <= 1.25))
	wratio := quantile(fc, 0.5)
	w("| bytes Carrier wrote into the link / file, median (what the middlebox lost at each reset included; issue 33) | %.3fx | at most 1.05x | %s |\n", wratio, verdict(wratio <= 1.05))
	w("| bytes the sandbox read / file, median | %.3fx (media bytes only: %.3fx) | at most 1.05x | %s |\n\n", bratio, quantile(fm, 0.5), verdict(bratio <= 1.05))
	w("Over the flaky rounds: %d connections reset, %d retries by the engine, waiting a median %s before asking the "+
		"session where it stands (reasons: %s).\n%s\n", resets, retries, medianDur(waits).Round(time.Millisecond), reasons(flaky), endMark)
	return b.String()
}

// countConn counts the bytes written to a connection.
type countConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// SyscallConn keeps the engine's view of the socket (TCP_INFO's acked
// bytes on Linux) through the counter.
func (c *countConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// loadAvg is the machine's load average over 1, 5 and 15 minutes
// (Linux's /proc/loadavg; unknown elsewhere).
// marks are the markers of a case's section: name's own, or with
// -serialize its serialised twin's, so each run replaces its own figures.
func marks(c config, name, flags string) (begin, end string) {
	target := "make bench-net"
	if c.serialize {
		name, flags, target = name+"-serialized", flags+" -serialize", "make bench-net-serialized"
	}
	return fmt.Sprintf("<!-- %s: begin (go run ./bench/netbench %s; %s) -->", name, flags, target), fmt.Sprintf("<!-- %s: end -->", name)
}

// serialNote says what the sandbox does with a session's requests.
func serialNote(c config) string {
	if !c.serialize {
		return ""
	}
	return " The sandbox serialises each session's requests (`-serialize`, sandbox.Options.SerializeSessions): a status " +
		"query or a new chunk waits behind the request that holds the session, however long its body stalls, up to the " +
		"sandbox's 2-minute body timeout."
}

// serialFlag is " -serialize" when it was given, for a section's command.
func serialFlag(c config) string {
	if c.serialize {
		return " -serialize"
	}
	return ""
}

// goal is a figure's goal and verdict cells: against a serialising
// sandbox the issue sets none (it asks how far Carrier degrades), so the
// default's goal is named for comparison and no verdict given.
func goal(c config, want string, ok bool) string {
	if c.serialize {
		return "none (against the default: " + want + ") | "
	}
	return want + " | " + verdict(ok)
}

// titled is a section's title, marked when the sandbox serialises.
func titled(c config, title string) string {
	if c.serialize {
		return title + ", against a serialising server (issue 33)"
	}
	return title + " (issue 33)"
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func mibs(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func reasons(rs []*result) string {
	n := map[string]int{}
	for _, r := range rs {
		for _, e := range r.retries {
			// Offsets vary; the kind of failure is what counts.
			reason, _, _ := strings.Cut(digits.ReplaceAllString(e.Reason, "N"), " to the upload session")
			if len(reason) > 80 {
				reason = reason[:80] + "…"
			}
			n[reason]++
		}
	}
	var out []string
	for k, v := range n {
		out = append(out, fmt.Sprintf("%d× %q", v, k))
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// writeSection puts md into path between the markers, replacing an
// earlier section, or at the end.
func writeSection(path, md string) error { return mdsection.Write(path, md, beginMark, endMark) }
