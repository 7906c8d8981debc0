package main

import "time"

// writeDiscussion explains the figures goal by goal, with this run's
// numbers. The causes and fixes it names were found by profiling (perf on
// `carrier upload` and on the sandbox) and by measuring candidate builds
// with -variant when the harness was written; the figures it quotes are
// always this run's.
func (r *report) writeDiscussion(w func(string, ...any), size int64) {
	p := r.probes
	w("## Discussion\n\n")

	for _, mr := range r.modes {
		curl, car, off := mr.summaryOf("curl", size), mr.summaryOf("carrier", size), mr.summaryOf("official", size)
		if curl.n == 0 || car.n == 0 || off.n == 0 {
			continue
		}
		w("**%s sandbox:** Carrier %.2f× curl (goal %.1f×, %s), %.2f× the official client (goal %.1f×, %s).\n",
			shortMode(mr.mode), car.mbps/curl.mbps, goalVsCurl, verdict(car.mbps/curl.mbps >= goalVsCurl),
			car.mbps/off.mbps, goalVsOfficial, verdict(car.mbps/off.mbps >= goalVsOfficial))
	}
	for _, mr := range r.modes {
		curl, car, off := mr.summaryOf("curl", size), mr.summaryOf("carrier", size), mr.summaryOf("official", size)
		if curl.n > 0 && off.n > 0 && car.mbps/curl.mbps >= goalVsCurl && off.mbps > curl.mbps && car.mbps/off.mbps < goalVsCurl {
			w("\nWith the %s sandbox the goal against curl is met only because curl was slower than the official\n", shortMode(mr.mode))
			w("client there (below): against what the sandbox really takes, Carrier is at %.2f×.\n", car.mbps/off.mbps)
		}
	}
	w("\n")

	ref := r.modes[len(r.modes)-1] // --fsync=false when measured: the protocol without the disk
	for _, mr := range r.modes {
		if !mr.mode.fsync {
			ref = mr
		}
	}
	curl, car, off := ref.summaryOf("curl", size), ref.summaryOf("carrier", size), ref.summaryOf("official", size)
	if curl.n == 0 || car.n == 0 || off.n == 0 {
		return
	}
	busy := func(s summary) float64 { return 100 * s.sandboxCPU.Seconds() / s.wall.Seconds() }
	best := ref.fastestReference(size)
	w("### The wire's limit is the sandbox's CPU\n\n")
	w("With `%s`, curl's one request took %s s and cost the sandbox %s s of CPU (%.0f%% of one core) but\n", shortMode(ref.mode), secs(curl.wall), secs(curl.sandboxCPU), busy(curl))
	w("curl itself only %s s. The sandbox computes md5 and crc32c of every byte it stores (for the Object\n", secs(curl.cpu))
	w("resource's `md5Hash` and `crc32c`): %s s of CPU for this file on its own (%.0f MB/s; md5 has no\n", secs(p.md5crc), mbps(size, p.md5crc))
	w("hardware help, crc32c has SSE4.2); the rest is reading the socket and writing the file. One upload\n")
	w("is one goroutine in the sandbox, so one core: that is the ceiling every contender shares, about\n")
	w("%.0f MB/s here (%s).", best.mbps, best.c.id)
	if best.c.kind == kindOfficial {
		w(" The official client beat curl (%.2f×): curl is not quite the wire's limit. Its loop makes a\n", off.mbps/curl.mbps)
		w("`poll` and three `rt_sigaction` calls around each 64 KiB `sendto` (strace, when this harness was\n")
		w("written), where the official client writes each 16 MiB chunk from memory as fast as the socket\n")
		w("takes it")
		if busy(off) > busy(curl) {
			w(": the sandbox was busy %.0f%% of curl's upload against %.0f%% of the official client's", busy(curl), busy(off))
		}
		w(".")
	}
	w("\n\n")

	gap := car.wall - best.wall
	w("### Where Carrier's time goes\n\n")
	w("Carrier took %s s to %s's %s s (%+.2f s) and used %s s of CPU, where the official client used %s s\n", secs(car.wall), best.c.id, secs(best.wall), gap.Seconds(), secs(car.cpu), secs(off.cpu))
	w("and curl %s s. Its own work per byte is the SHA-256 it keeps for the journal (%s s for %s alone, %.0f MB/s\n", secs(curl.cpu), secs(p.sha256), human(size), mbps(size, p.sha256))
	w("with SHA-NI), computed as the bytes go out: on the client's core, while the sandbox works on the other.\n")
	if a, b, ok := ref.chunkFit(size); ok {
		n := requests(size, defaultChunk)
		w("Each chunk is a round trip during which no byte moves: the engine waits for the 308 and records the\n")
		w("offset (a progress file, made durable at most once a second); the sandbox opens the part file, restores\n")
		w("its hash state and (durable) fsyncs the chunk and commits its bbolt state. Over Carrier's chunk sizes the\n")
		w("time fits %s s + %s ms per request: %d requests at the default %s cost %s s.", secs(a), ms(b), n, human(defaultChunk), secs(b*time.Duration(n)))
		for _, mr := range r.modes {
			if mr.mode.fsync {
				if _, bd, ok := mr.chunkFit(size); ok {
					w(" With the durable sandbox a request costs %s ms\n(the chunk's fsync and bbolt's).", ms(bd))
				}
			}
		}
		w("\n\n")
	}
	w("### What changed after the first measurement\n\n")
	w("The first run of this harness (1 GiB, 5 rounds) found Carrier at 0.71× curl with the durable sandbox and\n")
	w("0.88× with `--fsync=false` (0.81× and 0.79× the official client). A profile showed why: before its first\n")
	w("request the engine read the whole file to compute its SHA-256 (56%% of its CPU; nothing was sent\n")
	w("meanwhile), and it fsync'd its journal after every 8 MiB chunk. Three changes followed:\n\n")
	w("1. **No pass before the first byte.** The engine hashes the bytes as the transport reads them and keeps\n")
	w("   the hash state (of the prefix sent so far) in the journal with each confirmed offset; on a resume it\n")
	w("   hashes that prefix of the file again and refuses the job if it differs, so the server never holds\n")
	w("   bytes that are not the file's. Size and modification time are checked before every request, as\n")
	w("   before. Jobs from `compose` pass the SHA-256 the spool was written with and are not hashed again.\n")
	w("2. **No fsync per chunk for progress.** A resumed job asks the server where it stands before sending,\n")
	w("   so the journal's offset only informs a person: it goes to a progress file beside the record (no\n")
	w("   fsync), and the record itself is made durable at most once a second and at every change of state.\n")
	w("3. **16 MiB chunks by default**, as the official client: half the round trips, no memory cost (chunks\n")
	w("   stream from the file); a crash re-sends at most 16 MiB.\n\n")
	w("### Memory\n\n")
	var lo, hi summary
	for _, mr := range r.modes {
		for _, s := range mr.summaries(size) {
			if !s.c.measured() || s.n == 0 {
				continue
			}
			if lo.n == 0 || s.peakRSS < lo.peakRSS {
				lo = s
			}
			if s.peakRSS > hi.peakRSS {
				hi = s
			}
		}
	}
	small := summarize(contender{}, ref.small["carrier"], 1)
	w("Carrier's peak RSS was %s–%s MiB from %s to %s chunks: memory does not grow with the chunk, since\n", mib(lo.peakRSS), mib(hi.peakRSS), human(minChunk(ref)), human(maxChunk(ref)))
	w("each chunk streams from the file in 256 KiB pieces, sent by the kernel from the page cache on Linux (`transfer/bulkconn.go`,\n")
	if small.n > 0 {
		w("no whole-chunk buffer). Most of it is the program, not the upload: a %s upload peaks at %s MiB,\n", human(ref.smallFileSz), mib(small.peakRSS))
	} else {
		w("no whole-chunk buffer). Most of it is the program, not the upload:\n")
	}
	w("and during a 1 GiB upload about 15 MiB of the RSS were pages of the 36 MB binary itself and 2–3 MiB\n")
	w("its shared libraries (the desktop app's Fyne, OpenGL and X11 come with every command) against about\n")
	w("6 MiB of heap and stacks (`/proc/PID/smaps`, when this harness was written). The official client\n")
	w("holds its 16 MiB chunk in memory: %s MiB. Goal %s with room to spare.\n\n", mib(off.peakRSS), verdict(hi.peakRSS <= goalRSS))
	w("Peak RSS is the kernel's `ru_maxrss` of each process, read through a launcher (`bench/launch.go`):\n")
	w("a child started by a Go program with vfork inherits its parent's RSS as the floor of its own\n")
	w("`ru_maxrss` (the kernel copies the shared memory's high-water mark at exec), so read directly it would\n")
	w("report the harness's size for every contender. The launchers' own RSS, %s MiB at most in this\n", mib(launchFloor.Load()))
	w("run, is the floor below which nothing could be told apart.\n\n")

	if r.cfg.conc > 0 {
		w("### Concurrency\n\n")
		for _, mr := range r.modes {
			for _, cs := range mr.concSummaries() {
				if cs.variant == concQueue {
					w("- %s sandbox: %d uploads at once ran at %.0f%% of one stream (%.0f against %.0f MB/s), goal %s.\n", shortMode(mr.mode), cs.n, 100*cs.fraction, cs.manyMBps, cs.oneMBps, verdict(cs.fraction >= goalConc))
				}
			}
		}
		w("\nOne upload is one goroutine in the sandbox (md5 is sequential), so one stream keeps one core busy\n")
		w("while the other serves the client; %d sessions spread over both, which is why the aggregate can\n", r.cfg.conc)
		w("exceed one stream. What could make it fall behind is shared: bbolt's single writer (a commit per\n")
		w("chunk, fsync'd when durable), the per-session locks, and for the durable sandbox the disk, which\n")
		w("takes %d files' fsyncs at once. The sandbox's RSS stays small (table above): each request\n", r.cfg.conc)
		w("streams through a pooled 64 KiB buffer.\n\n")
	}
}

func minChunk(mr *modeResult) int64 {
	m := int64(0)
	for _, c := range mr.contenders {
		if c.measured() && (m == 0 || c.chunk < m) {
			m = c.chunk
		}
	}
	return m
}

func maxChunk(mr *modeResult) int64 {
	m := int64(0)
	for _, c := range mr.contenders {
		if c.measured() && c.chunk > m {
			m = c.chunk
		}
	}
	return m
}
