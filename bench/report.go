package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// report is one run of the harness, written out as docs/PERFORMANCE.md.
type report struct {
	cfg      *config
	file     *testFile
	machine  machine
	waited   string
	probes   probes
	modes    []*modeResult
	cpu      *cpuResult    // nil when -cpu-rounds 0
	photos   *photosResult // nil when -cpu-rounds 0
	duration time.Duration
}

// Goals from issue 7.
const (
	goalVsCurl     = 0.9
	goalVsOfficial = 1.0
	goalRSS        = 48 << 20
	goalConc       = 0.8
)

func mib(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
}

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}

// shortMode names a mode in tables.
func shortMode(m mode) string {
	if m.fsync {
		return "durable"
	}
	return "--fsync=false"
}

func (r *report) markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	size := r.file.size
	m := r.machine

	w("# Carrier: performance\n\n")
	w("Measured by `make bench` (the harness in `bench/`) on %s, in one run of %s. This page is written by\n", m.date.Format("2006-01-02"), r.duration.Round(time.Second))
	w("the harness: change the harness, not the page, and run it again.\n\n")

	r.writeGoals(w)
	if r.cpu != nil {
		w("%s\n", r.cpu.section(r.cfg))
	}
	if r.photos != nil {
		w("%s\n", r.photos.section())
	}
	r.writeMethod(w)
	r.writeMachine(w)
	for _, mr := range r.modes {
		r.writeMode(w, mr)
	}
	w("![Throughput and peak RSS against chunk size](performance.png)\n\n")
	w("*Throughput (top) and peak RSS (bottom) of `carrier upload` against its chunk size, for both sandbox\n")
	w("modes; curl (one request, no chunks) as dashed lines, the official client (16 MiB chunks) as squares,\n")
	w("the 48 MiB goal as a red line.*\n\n")
	r.writeFixed(w)
	r.writeConcurrency(w)
	r.writeBreakdown(w, size)
	r.writeDiscussion(w, size)
	w("## How to reproduce\n\n")
	w("```sh\nmake bench      # builds bin/carrier and bench/gclient, runs the harness, writes docs/PERFORMANCE.md and docs/performance.png\n")
	w("go run ./bench -size 64MiB -rounds 1 -conc-rounds 1   # a quick run that prints the report instead\n")
	w("go run ./bench -h                                     # every flag\n```\n\n")
	w("The run that wrote this page: `go run ./bench -out docs -size %s -rounds %d -conc %d -conc-rounds %d`", sizeFlag(size), r.cfg.rounds, r.cfg.conc, r.cfg.concRounds)
	if r.cfg.waitLoad > 0 || r.cfg.waitFile != "" {
		w(" with `-wait-load %.1f`", r.cfg.waitLoad)
		if r.cfg.waitFile != "" {
			w(" and `-wait-file %s`", r.cfg.waitFile)
		}
	}
	w(".\nThe test file (pseudo-random, the same bytes every run) stays in `%s` and is reused;\n`-clean` deletes it. `make bench` also runs the Go micro-benchmarks (`go test -bench`).\n", r.cfg.work)
	return b.String()
}

func (r *report) writeGoals(w func(string, ...any)) {
	size := r.file.size
	w("## Goals (issue 7)\n\n")
	w("| goal | sandbox | measured | |\n|---|---|---|---|\n")
	for _, mr := range r.modes {
		curl, car, off := mr.summaryOf("curl", size), mr.summaryOf("carrier", size), mr.summaryOf("official", size)
		vc, vo := car.mbps/curl.mbps, car.mbps/off.mbps
		w("| Carrier ≥ %.1f× curl, %s file | %s | %.2f× (%.0f vs %.0f MB/s) | %s |\n", goalVsCurl, human(size), shortMode(mr.mode), vc, car.mbps, curl.mbps, verdict(vc >= goalVsCurl))
		w("| Carrier ≥ %.1f× the official client | %s | %.2f× (%.0f vs %.0f MB/s) | %s |\n", goalVsOfficial, shortMode(mr.mode), vo, car.mbps, off.mbps, verdict(vo >= goalVsOfficial))
	}
	for _, mr := range r.modes {
		var worst summary
		for _, s := range mr.summaries(size) {
			if s.c.measured() && s.peakRSS >= worst.peakRSS {
				worst = s
			}
		}
		w("| Carrier's peak RSS ≤ %d MiB at any chunk size | %s | %s MiB at most (%s) | %s |\n", goalRSS>>20, shortMode(mr.mode), mib(worst.peakRSS), human(worst.c.chunk)+" chunks", verdict(worst.peakRSS <= goalRSS))
	}
	for _, mr := range r.modes {
		for _, cs := range mr.concSummaries() {
			if cs.variant != concQueue {
				continue
			}
			w("| %d uploads at once ≥ %.0f%% of one stream | %s | %.0f%% (%.0f vs %.0f MB/s) | %s |\n", cs.n, 100*goalConc, shortMode(mr.mode), 100*cs.fraction, cs.manyMBps, cs.oneMBps, verdict(cs.fraction >= goalConc))
		}
	}
	w("\nThroughput is the median of the rounds; \"Carrier\" is `carrier upload` with its defaults. Why each goal\nis met or missed, with the fix, is under [Discussion](#discussion).\n\n")
}

func (r *report) writeMethod(w func(string, ...any)) {
	size := r.file.size
	w("## What was measured\n\n")
	w("One file of %s (pseudo-random bytes, so nothing can compress it; in the page cache before the first\n", human(size))
	w("upload) goes to the sandbox's Cloud Storage endpoint, `POST /upload/storage/v1/b/bench/o?uploadType=resumable`,\n")
	w("by each contender in turn, every one a process of its own:\n\n")
	w("- **curl**: the harness starts a session, then `curl -sS -T FILE -X PUT SESSION_URI` sends the whole\n")
	w("  file in one request: it reads the file and writes the socket and does nothing else, the reference\n")
	w("  for the wire's limit on this machine (its send loop is not free, though: see [Discussion](#discussion)).\n")
	w("  Its time includes the session start, as every other contender starts its own.\n")
	w("- **carrier**: `bin/carrier upload --url ... --file F --content-type application/octet-stream --state-dir TMP`\n")
	w("  (token in `CARRIER_TOKEN`), with its default " + human(defaultChunk) + " chunks and with `--chunk-size` ")
	var cs []string
	for _, c := range r.cfg.chunks {
		cs = append(cs, human(c))
	}
	w("%s; a fresh journal\n  folder each time, on the same disk as the data.\n", strings.Join(cs, ", "))
	w("- **official**: `bench/gclient`, the official Go client (`google.golang.org/api/storage/v1` v0.310.0) with\n")
	w("  its defaults: `Objects.Insert(...).Media(f)`, 16 MiB chunks, each sent as `POST` with `X-GUploader-No-308`.\n\n")
	w("The sandbox is `bin/carrier sandbox --addr 127.0.0.1:0 --data TMP --token T --quiet`, a process of its\n")
	w("own, once as it ships (**durable**: every chunk fsync'd before it is acknowledged, its bbolt state too)\n")
	w("and once with `--fsync=false` (bytes reach the disk when the kernel writes them back: the protocol and\n")
	w("the CPU are measured, not this machine's disk). Everything talks over 127.0.0.1.\n\n")
	w("Each of %d rounds runs every contender once, in an order that rotates from round to round, so that\n", r.cfg.rounds)
	w("drift falls on all alike. A contender's time is its process's wall time, from fork to exit, as a\n")
	w("person would wait for it; throughput is bytes over that time (MB = 10^6 bytes, MiB = 2^20). Peak RSS\n")
	w("and CPU time come from the kernel (`wait4`'s rusage: `ru_maxrss`, `ru_utime`, `ru_stime`, through a\n")
	w("small launcher, see [Memory](#memory)); the sandbox's CPU from `/proc/PID/stat` around each upload,\n")
	w("its peak RSS from `/proc/PID/status` (`VmHWM`). After each upload the harness checks the object (size,\n")
	w("and `md5Hash` against the file's), then deletes the stored bytes from the sandbox's folder, outside\n")
	w("the measured time: kept, they would fill the disk and, with `--fsync=false`, leave gigabytes of dirty\n")
	w("pages whose writeback would slow down whoever came next.\n\n")
}

func (r *report) writeMachine(w func(string, ...any)) {
	m := r.machine
	w("## Machine\n\n")
	w("| | |\n|---|---|\n")
	w("| CPUs (`nproc`) | %d |\n| CPU | %s (%s) |\n| memory | %s |\n| kernel | Linux %s |\n| Go | %s |\n| curl | %s |\n| date | %s |\n",
		m.cpus, m.cpuModel, m.cpuFlags, m.memory, m.kernel, m.goVersion, m.curl, m.date.Format("2006-01-02 15:04 MST"))
	for _, mr := range r.modes {
		w("| load average, %s | %.2f before, %.2f after (%s) |\n", shortMode(mr.mode), mr.loadBefore, mr.loadAfter, mr.end.Sub(mr.start).Round(time.Second))
	}
	if r.waited != "" {
		w("| before measuring | %s |\n", r.waited)
	}
	w("\nThe machine's two cores are shared: the client and the sandbox each want one, so every figure\n")
	w("below is also a measure of CPU, and the load averages say how much else was running.\n\n")
}

func (r *report) writeMode(w func(string, ...any), mr *modeResult) {
	size := r.file.size
	ss := mr.summaries(size)
	curl, off := mr.summaryOf("curl", size), mr.summaryOf("official", size)
	w("## Results: %s sandbox\n\n", shortMode(mr.mode))
	w("%s file, %d rounds, medians (MB/s range over the rounds in brackets).\n\n", human(size), r.cfg.rounds)
	w("| contender | chunks | time (s) | MB/s | MiB/s | × curl | × official | peak RSS (MiB) | client CPU (s) | sandbox CPU (s) |\n")
	w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range ss {
		w("| %s | %d | %s | %.0f (%.0f–%.0f) | %.0f | %.2f | %.2f | %s | %s | %s |\n", s.c.label, requests(size, s.c.chunk), secs(s.wall),
			s.mbps, s.mbpsMin, s.mbpsMax, s.mbps*1e6/(1<<20), s.mbps/curl.mbps, s.mbps/off.mbps, mib(s.peakRSS), secs(s.cpu), secs(s.sandboxCPU))
	}
	var unsteady []string
	for _, s := range ss {
		if s.n > 1 && s.mbpsMax-s.mbpsMin > 0.25*s.mbps {
			unsteady = append(unsteady, s.c.id)
		}
	}
	if len(unsteady) > 0 {
		w("\nSome rounds were disturbed (a range wider than a quarter of the median: %s): the machine is shared,\n", strings.Join(unsteady, ", "))
		w("and a round in which another job took CPU is slow for whoever ran then. The medians keep such a round\n")
		w("from moving the figures; the order's rotation spreads them over the contenders.\n")
	}
	w("\nThe sandbox's own peak RSS over this whole mode (the concurrency test included): %s MiB.\n\n", mib(mr.sandbox.maxRSS))
}

func (r *report) writeFixed(w func(string, ...any)) {
	if r.cfg.smallReps == 0 {
		return
	}
	w("## The fixed cost of one upload\n\n")
	w("A %s file, %d times per contender: what an upload costs besides its bytes (a process, a session,\n", human(r.modes[0].smallFileSz), r.cfg.smallReps)
	w("for Carrier a journal, for the official client one multipart request, as the file is under its chunk size).\n\n")
	w("| contender | sandbox | time (ms) | client CPU (ms) | peak RSS (MiB) |\n|---|---|--:|--:|--:|\n")
	for _, mr := range r.modes {
		for _, c := range fixedCostContenders(mr.contenders) {
			s := summarize(c, mr.small[c.id], mr.smallFileSz)
			w("| %s | %s | %s | %s | %s |\n", c.id, shortMode(mr.mode), ms(s.wall), ms(s.cpu), mib(s.peakRSS))
		}
	}
	w("\n")
}

func (r *report) writeConcurrency(w func(string, ...any)) {
	if r.cfg.conc == 0 {
		return
	}
	n := r.cfg.conc
	w("## Concurrency: %d uploads at once against one stream\n\n", n)
	w("%d uploads of %s each (%s in all), all started at once, against one upload of %s, by the same\n", n, human(r.file.size/int64(n)), human(r.file.size/int64(n)*int64(n)), human(r.file.size))
	w("client; the fraction is the %d uploads' aggregate throughput (all bytes over the time from the first\n", n)
	w("start to the last answer) over the one stream's. The client that measures the sandbox rather than\n")
	w("itself is **one process with Carrier's queue** (`transfer.Queue`, Workers=%d, default %s chunks, in\n", n, human(defaultChunk))
	w("the harness's process): one Go runtime whose per-byte work is the same as for one stream, and\n")
	w("nothing per upload beyond a journal record and a session. %d `carrier upload` processes would\n", n)
	w("instead measure %d process starts and %d Go runtimes fighting over two cores. %d curl processes\n", n, n, n)
	w("against one curl are the control: the least client there is. %d rounds, medians; the goal is judged\non the queue.\n\n", r.cfg.concRounds)
	w("| sandbox | client | %d at once (MB/s) | one stream (MB/s) | fraction (range) | sandbox CPU, %d / one (s) | sandbox peak RSS (MiB) |\n", n, n)
	w("|---|---|--:|--:|--:|--:|--:|\n")
	for _, mr := range r.modes {
		for _, cs := range mr.concSummaries() {
			w("| %s | %s | %.0f | %.0f | %.0f%% (%.0f–%.0f%%) | %s / %s | %s |\n", shortMode(mr.mode), strings.ReplaceAll(string(cs.variant), "N", fmt.Sprint(n)),
				cs.manyMBps, cs.oneMBps, 100*cs.fraction, 100*cs.fractionMin, 100*cs.fracMax, secs(cs.manyCPU), secs(cs.oneCPU), mib(cs.sandboxRSS))
		}
	}
	w("\n")
}

func (r *report) writeBreakdown(w func(string, ...any), size int64) {
	p := r.probes
	w("## Where the time goes\n\n")
	w("Costs measured one at a time, in the harness's process, on the same machine:\n\n")
	w("| cost | measured | for a %s upload |\n|---|--:|--:|\n", human(size))
	w("| SHA-256 of the file: Carrier hashes the bytes as they go out (a whole pass only on a resume) | %.0f MB/s | %s s of CPU |\n", mbps(size, p.sha256), secs(p.sha256))
	w("| md5 + crc32c of the file, the sandbox's work on every byte it stores | %.0f MB/s | %s s |\n", mbps(size, p.md5crc), secs(p.md5crc))
	w("| one durable journal write (`transfer.Journal.Save`: temporary file, fsync, rename, fsync of the folder): for progress at most once a second, a progress file without fsync in between | %s ms | |\n", ms(p.journal))
	w("| write + fsync of a 1 MiB / 8 MiB chunk to a new file, the durable sandbox's work per chunk | %s / %s ms | |\n", ms(p.fsyncSmall), ms(p.fsyncLarge))
	w("\n")
	for _, mr := range r.modes {
		car := mr.summaryOf("carrier", size)
		ref := mr.fastestReference(size)
		if car.n == 0 || ref.n == 0 {
			continue
		}
		gap := car.wall - ref.wall
		w("**%s sandbox.** Carrier (default) took %s s against %s s for the faster of the others (%s): %+.2f s.\n",
			shortMode(mr.mode), secs(car.wall), secs(ref.wall), ref.c.id, gap.Seconds())
		var fixedGap time.Duration
		if r.cfg.smallReps > 0 {
			fixedGap = summarize(contender{}, mr.small["carrier"], 1).wall - summarize(contender{}, mr.small[ref.c.id], 1).wall
		}
		w("Hashing the file (%s s of CPU, measured alone) now overlaps the sandbox's work; the fixed cost of an upload\n", secs(p.sha256))
		w("(process, journal, session: the 256 KiB upload) for %+.2f s against %s's.", fixedGap.Seconds(), ref.c.id)
		if a, b, ok := mr.chunkFit(size); ok {
			n := requests(size, defaultChunk)
			chunks := b * time.Duration(n)
			if ref.c.kind == kindOfficial {
				chunks -= b * time.Duration(requests(size, officialChunk)) // it pays for its own
			}
			w(" Carrier's time over its chunk sizes fits %s s + %s ms per chunk,\n", secs(a), ms(b))
			w("so its %d chunks at %s cost %s s", n, human(defaultChunk), secs(b*time.Duration(n)))
			if ref.c.kind == kindOfficial {
				w(", %s s more than the official client's %d chunks", secs(chunks), requests(size, officialChunk))
			}
			rest := gap - p.sha256 - fixedGap - chunks
			w(". That leaves %+.2f s unexplained", rest.Seconds())
			if math.Abs(rest.Seconds()) < 0.1*gap.Seconds() || math.Abs(rest.Seconds()) < 0.1 {
				w(": the pass and the chunks are the whole story")
			}
			w(".\n")
		} else {
			w("\n")
		}
		w("CPU: Carrier used %s s (user %s s), %s %s s; the sandbox used %s s serving Carrier and %s s serving %s.\n\n",
			secs(car.cpu), secs(car.user), ref.c.id, secs(ref.cpu), secs(car.sandboxCPU), secs(ref.sandboxCPU), ref.c.id)
	}
}
