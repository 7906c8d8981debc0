package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Goals from issue 16 besides the per-target multiples in cpuTargets.
const (
	goalCompose = 300 * time.Millisecond // CPU to compose a message with the attachment
	goalIdle    = 0.05                   // points of a core above a bare Fyne window
)

// The CPU part's section sits between these lines, so that a run of the
// CPU part alone (-cpu-only) replaces it in a page the whole run wrote.
const (
	cpuBegin = "<!-- bench: CPU part, written by -cpu-only as well -->\n"
	cpuEnd   = "<!-- bench: end of the CPU part -->\n"
)

// cpuSection writes the CPU part as markdown, between its markers.
func (c *cpuResult) section(cfg *config) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("%s## CPU per GiB, composing, and at rest (issue 16)\n\n", cpuBegin)
	w("Measured %s (load average %.2f before, %.2f after, %s).\n\n", c.start.UTC().Format("2006-01-02 15:04 MST"), c.loadBefore, c.loadAfter, c.end.Sub(c.start).Round(time.Second))
	w("| goal | measured | |\n|---|---|---|\n")
	for _, t := range cpuTargets {
		cu, ca := c.cpuPerGiB(t, "curl"), c.cpuPerGiB(t, "carrier")
		ratio := ca / cu
		w("| Carrier's CPU per GiB ≤ %.1f× curl's, %s (Carrier verifies %s) | %.2f× (%.2f vs %.2f CPU-s/GiB) | %s |\n",
			t.goal, t.label, sumName[t.verifies], ratio, ca, cu, verdict(ratio <= t.goal))
	}
	cw, co := cpuMedian(c.compose.with), cpuMedian(c.compose.without)
	w("| composing a message with a %s attachment < %.1f CPU-s | %.3f CPU-s (%.3f without the attachment) | %s |\n",
		human(c.compose.attach), goalCompose.Seconds(), cw.Seconds(), co.Seconds(), verdict(cw < goalCompose))
	if len(c.idle.intervals) > 0 {
		wall, app, bare := c.idle.totals()
		d := pct(app, wall) - pct(bare, wall)
		w("| the desktop app at rest within %.2f points of a bare Fyne window | %+.3f points (%.3f%% vs %.3f%% of a core) | %s |\n",
			goalIdle, d, pct(app, wall), pct(bare, wall), verdict(d <= goalIdle))
	}
	w("\n")

	w("### CPU per GiB uploaded\n\n")
	w("The same %s file (the page's test file) to the same sandbox (`carrier sandbox --fsync=false`, a process of\n", human(c.size))
	w("its own: a client's CPU does not depend on the server's disk), by three clients in turn, %d rounds in an\n", c.rounds)
	w("order that rotates, medians. Each client is a process of its own, and its CPU is the kernel's count of\n")
	w("its user and system time (`wait4`'s rusage through the launcher), divided by the GiB sent:\n\n")
	w("- **curl**: the harness starts the session (for Drive with the file's name as metadata), then\n")
	w("  `curl -sS -T FILE -X PUT SESSION_URI`: no checksum, the least any client can spend.\n")
	w("- **carrier**: `carrier upload` with its defaults, which must report `verified (crc32c)` for Storage\n")
	w("  (it computes the file's CRC32C as the bytes go out, sends it with the last bytes, compares the server's)\n")
	w("  and `verified (sha256)` for Drive (`--url .../upload/drive/v3/files?fields=%s`, compared with\n", driveFields)
	w("  Drive's `sha256Checksum`); the run stops if it does not. Its journal's source check is a SHA-256 of every\n")
	w("  byte on both targets.\n")
	w("- **official**: the official Go client with its defaults (`bench/gclient`, `google.golang.org/api/storage/v1`;\n")
	w("  `bench/gdrive`, `google.golang.org/api/drive/v3`, `Files.Create(...).Media(f)`), 16 MiB chunks; it checks no sum.\n\n")
	if len(cfg.variants) > 0 {
		var vs []string
		for _, v := range cfg.variants {
			vs = append(vs, "`"+v.name+"`")
		}
		w("Candidate builds of carrier (`-variant NAME=PATH`: %s) run as carrier does, verification included;\n", strings.Join(vs, ", "))
		w("they show what a proposed change would do and are not judged against the goals.\n\n")
	}
	w("| target | client | CPU-s per GiB | user (s) | sys (s) | × curl | goal | MB/s (wall) |\n|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, t := range cpuTargets {
		cu := c.cpuPerGiB(t, "curl")
		for _, cl := range c.clients {
			s := summarize(contender{}, c.perGiB[t.id][cl], c.size)
			goal := ""
			if strings.HasPrefix(cl, "variant-") {
				goal = "(candidate)"
			}
			if cl == "carrier" {
				goal = fmt.Sprintf("≤ %.1f×", t.goal)
			}
			w("| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %.0f (%.0f–%.0f) |\n", t.label, cl, perGiB(s.cpu, c.size),
				perGiB(s.user, c.size), perGiB(s.cpu-s.user, c.size), perGiB(s.cpu, c.size)/cu, goal, s.mbps, s.mbpsMin, s.mbpsMax)
		}
	}
	w("\nCPU-seconds hardly depend on what else the machine runs; wall-clock speed does. This machine's two\n")
	w("cores are shared with other jobs (see the load averages), and client and sandbox each want one, so the\n")
	w("MB/s column is low and scattered and says nothing about the goals: read it as \"the bytes moved\".\n\n")
	w("What the sums cost on their own, as CPU of the harness's process hashing %s from memory: SHA-256 %.2f s per\n", human(c.size), perGiB(c.sha256, c.size))
	w("GiB, CRC32C %.2f s per GiB.", perGiB(c.crc32c, c.size))
	for _, t := range cpuTargets {
		cu, ca := c.cpuPerGiB(t, "curl"), c.cpuPerGiB(t, "carrier")
		w(" %s: Carrier spent %.2f CPU-s/GiB more than curl, where the goal allows %.2f more", t.label, ca-cu, (t.goal-1)*cu)
		if t.verifies != "sha256" {
			// The journal's source check hashes every byte with SHA-256
			// even where the target verifies another sum.
			w("; the SHA-256, which this target does not check, costs %.2f by itself", perGiB(c.sha256, c.size))
		} else {
			w("; the SHA-256 it verifies costs %.2f by itself", perGiB(c.sha256, c.size))
		}
		w(".")
	}
	w("\n\n")

	w("### Composing\n\n")
	w("`carrier compose --to ... --subject ... --body ... --attach F --out M.eml`, a process of its own, with a\n")
	w("pseudo-random attachment of %s (the message: %s), and the same message without it, alternating,\n", human(c.compose.attach), human(c.compose.msgSize))
	w("%d times each; medians of user+system time. The message without the attachment is the process's fixed cost\n", len(c.compose.with))
	w("(a Go runtime, the command's start, a small spool file).\n\n")
	w("| message | size | CPU (s) | user (s) | sys (s) |\n|---|--:|--:|--:|--:|\n")
	for _, row := range []struct {
		name string
		size int64
		us   []usage
	}{{"with a " + human(c.compose.attach) + " attachment", c.compose.msgSize, c.compose.with}, {"without", c.compose.bareSize, c.compose.without}} {
		s := summarize(contender{}, samplesOf(row.us), 1)
		w("| %s | %s | %.3f | %.3f | %.3f |\n", row.name, human(row.size), s.cpu.Seconds(), s.user.Seconds(), (s.cpu - s.user).Seconds())
	}
	w("\n")

	if len(c.idle.intervals) > 0 {
		wall, app, bare := c.idle.totals()
		w("### At rest\n\n")
		w("The desktop app (the same `carrier` binary, no command: its window over a scratch home folder, so an\n")
		w("empty journal and a fresh embedded sandbox) and a bare Fyne window (`bench/barefyne`: one label in a\n")
		w("window of the app's size, built with cgo as the app) run side by side on an X server of their own (Xvfb),\n")
		w("untouched. Once both windows show and %s have passed (startup is not rest), each process's\n", c.idle.settle)
		w("utime+stime is read from `/proc/PID/stat` around %d intervals of %s. One tick of that count (10 ms) is\n", len(c.idle.intervals), c.idle.intervals[0].wall.Round(time.Second))
		w("0.03 points of a 30 s interval, so the verdict is on the sum of the intervals.\n\n")
		w("| interval | wall (s) | app CPU (s) | app (%% of a core) | bare Fyne CPU (s) | bare Fyne (%% of a core) | difference (points) |\n|---|--:|--:|--:|--:|--:|--:|\n")
		for i, iv := range c.idle.intervals {
			w("| %d | %.1f | %.2f | %.3f | %.2f | %.3f | %+.3f |\n", i+1, iv.wall.Seconds(), iv.app.Seconds(), pct(iv.app, iv.wall), iv.bare.Seconds(), pct(iv.bare, iv.wall), pct(iv.app, iv.wall)-pct(iv.bare, iv.wall))
		}
		w("| all | %.1f | %.2f | %.3f | %.2f | %.3f | %+.3f |\n\n", wall.Seconds(), app.Seconds(), pct(app, wall), bare.Seconds(), pct(bare, wall), pct(app, wall)-pct(bare, wall))
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, iv := range c.idle.intervals {
			d := pct(iv.app, iv.wall) - pct(iv.bare, iv.wall)
			lo, hi = math.Min(lo, d), math.Max(hi, d)
		}
		if hi-lo > goalIdle {
			w("The single intervals' differences range from %+.3f to %+.3f points, wider than the goal: one tick more\n", lo, hi)
			w("or less is 0.03 points, and on a loaded machine a process's wake-ups cost more or less from one interval to the next.\n")
			w("Read the sum as \"no more than Fyne's own\", not as a figure to the hundredth.\n\n")
		}
	}
	w("Run this part alone with `make bench-cpu` (`go run ./bench -cpu-only -out docs`): it replaces this section of\n")
	w("the page and leaves the rest as the last whole run wrote it. The run that wrote it: `-size %s -cpu-rounds %d\n", sizeFlag(c.size), c.rounds)
	w("-compose-attach %s -compose-reps %d -idle-for %s -idle-rounds %d`.\n\n%s", sizeFlag(c.compose.attach), cfg.composeReps, cfg.idleFor, cfg.idleRounds, cpuEnd)
	return b.String()
}

// sumName is how the report names a sum.
var sumName = map[string]string{"crc32c": "CRC32C", "sha256": "SHA-256", "md5": "MD5"}

// cpuPerGiB is a client's median CPU-seconds per GiB on target t.
func (c *cpuResult) cpuPerGiB(t cpuTarget, client string) float64 {
	return perGiB(summarize(contender{}, c.perGiB[t.id][client], c.size).cpu, c.size)
}

func samplesOf(us []usage) []sample {
	var ss []sample
	for _, u := range us {
		ss = append(ss, sample{usage: u})
	}
	return ss
}
