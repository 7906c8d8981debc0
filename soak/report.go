package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// report is everything a run measured; it becomes the results table of
// docs/RELIABILITY.md and, with -json, a file.
type report struct {
	mu       sync.Mutex
	Started  time.Time
	Elapsed  string
	Machine  string
	Seed     uint64
	Command  string
	Mixes    []mixResult
	Kills    *killResult
	Restarts *restartResult
	Wakes    []wakeResult
	Failures []string
}

// mixResult is phase 1 for one fault mix.
type mixResult struct {
	Name          string
	Faults        string
	Uploads       int
	Gmail         int // of Uploads, messages to Gmail messages.send
	Finished      int
	Failed        int
	Identical     int // read back byte for byte, and md5Hash (storage) matching
	Duplicates    int // resources created beyond one per upload
	BytesNeeded   int64
	ServerBytes   int64 // the sandbox's BytesReceived
	ClientBytes   int64 // session request body bytes the engine handed to the transport
	Sessions      int64
	SessionsDone  int64
	Completions   int64
	Injected      int64
	Requests      int64
	Seconds       float64
	FailureReason map[string]int
}

func (m mixResult) serverRatio() float64 { return ratio(m.ServerBytes, m.BytesNeeded) }
func (m mixResult) clientRatio() float64 { return ratio(m.ClientBytes, m.BytesNeeded) }

type killResult struct {
	Rounds          int
	Resumed         int // resume exited 0 with the object
	Identical       int
	SameSession     int // no session created by the resume, and the journal's is unchanged
	Duplicates      int
	ChunkSize       int64
	KillAtMin       int64 // confirmed offset (journal) at the kill
	KillAtMax       int64
	ResentMax       int64 // bytes the sandbox received beyond the file's size, per round
	ResentTotal     int64
	ResentOverChunk int // rounds that re-sent more than one chunk
	Size            int64
	Rate            string
}

type restartResult struct {
	Restarts     int
	Graceful     int // SIGTERM
	Crashed      int // SIGKILL
	Uploads      int
	Finished     int
	Identical    int
	Duplicates   int
	Downtime     string // range of the time the sandbox was down
	RetryEvents  int    // engine retrying events, most of them refused connections
	BytesNeeded  int64
	ClientBytes  int64
	Seconds      float64
	Rate         string
	SessionsDone int // completed sessions in the sandbox's store, over all its lives
	// DoneNotStored counts jobs the engine recorded done that the sandbox
	// never completed: uploads lost while reported sent.
	DoneNotStored int
}

type wakeResult struct {
	Scenario  string
	Samples   []time.Duration
	Median    time.Duration
	Max       time.Duration
	Finished  int
	Identical int
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (r *report) fail(phase, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Failures = append(r.Failures, phase+": "+msg)
	logf("FAIL %s: %s", phase, msg)
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func yes(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

// print writes the results as Markdown, ready for docs/RELIABILITY.md.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "## Results\n\n")
	fmt.Fprintf(w, "- machine: %s\n- command: `%s`\n- seed: %d, wall time %s, started %s\n\n", r.Machine, r.Command, r.Seed, r.Elapsed, r.Started.UTC().Format(time.RFC3339))
	if len(r.Mixes) > 0 {
		fmt.Fprintf(w, "### Uploads through the engine under faults\n\n")
		fmt.Fprintf(w, "| mix | faults | uploads (Gmail) | finished | byte-identical | duplicates | bytes needed | sandbox received / needed | engine sent / needed | sessions created / completed | completions | faults injected | requests | time |\n")
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, m := range r.Mixes {
			fmt.Fprintf(w, "| %s | `%s` | %d (%d) | %d | %d | %d | %s | %.3fx | %.3fx | %d / %d | %d | %d | %d | %.0f s |\n",
				m.Name, m.Faults, m.Uploads, m.Gmail, m.Finished, m.Identical, m.Duplicates, mib(m.BytesNeeded),
				m.serverRatio(), m.clientRatio(), m.Sessions, m.SessionsDone, m.Completions, m.Injected, m.Requests, m.Seconds)
		}
		fmt.Fprintln(w)
		for _, m := range r.Mixes {
			if len(m.FailureReason) > 0 {
				fmt.Fprintf(w, "Failures in %s:\n\n", m.Name)
				keys := make([]string, 0, len(m.FailureReason))
				for k := range m.FailureReason {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Fprintf(w, "- %d x %s\n", m.FailureReason[k], k)
				}
				fmt.Fprintln(w)
			}
		}
	}
	if k := r.Kills; k != nil {
		fmt.Fprintf(w, "### kill -9 of `carrier upload`, then `carrier resume`\n\n")
		fmt.Fprintf(w, "| rounds | resumed | byte-identical | same session (no new one) | duplicates | killed at (confirmed) | re-sent per round, max | re-sent, total | rounds re-sending > 1 chunk (%s) |\n", mib(k.ChunkSize))
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(w, "| %d | %d | %d | %d | %d | %s .. %s of %s | %d B | %d B | %d |\n\n",
			k.Rounds, k.Resumed, k.Identical, k.SameSession, k.Duplicates, mib(k.KillAtMin), mib(k.KillAtMax), mib(k.Size), k.ResentMax, k.ResentTotal, k.ResentOverChunk)
	}
	if s := r.Restarts; s != nil {
		fmt.Fprintf(w, "### Sandbox restarts under running uploads\n\n")
		fmt.Fprintf(w, "| restarts (SIGTERM / SIGKILL) | down for | uploads | done (engine) | byte-identical | done but never completed (lost) | duplicates | completed sessions in the store | engine retry events | engine sent / needed | time |\n")
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(w, "| %d (%d / %d) | %s | %d | %d | %d | %d | %d | %d | %d | %.3fx | %.0f s |\n\n",
			s.Restarts, s.Graceful, s.Crashed, s.Downtime, s.Uploads, s.Finished, s.Identical, s.DoneNotStored, s.Duplicates, s.SessionsDone, s.RetryEvents, ratio(s.ClientBytes, s.BytesNeeded), s.Seconds)
	}
	if len(r.Wakes) > 0 {
		fmt.Fprintf(w, "### Simulated wake to the next confirmed byte\n\n")
		fmt.Fprintf(w, "| scenario | samples | median | max | finished / byte-identical | all samples |\n|---|---|---|---|---|---|\n")
		for _, x := range r.Wakes {
			var all []string
			for _, d := range x.Samples {
				all = append(all, dur(d))
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %d / %d | %s |\n", x.Scenario, len(x.Samples), dur(x.Median), dur(x.Max), x.Finished, x.Identical, strings.Join(all, " "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "### Goals\n\n")
	for _, g := range r.goals() {
		fmt.Fprintf(w, "- %s\n", g)
	}
	fmt.Fprintln(w)
	if len(r.Failures) > 0 {
		fmt.Fprintf(w, "### Failures\n\n")
		for _, f := range r.Failures {
			fmt.Fprintf(w, "- %s\n", f)
		}
		fmt.Fprintln(w)
	}
}

func (r *report) goals() []string {
	var out []string
	for _, m := range r.Mixes {
		out = append(out, fmt.Sprintf("%s: every upload finished byte-identical: %s (%d of %d); no duplicate: %s (%d)",
			m.Name, yes(m.Finished == m.Uploads && m.Identical == m.Uploads), m.Identical, m.Uploads, yes(m.Duplicates == 0), m.Duplicates))
		if m.Name == "ratio" {
			out = append(out, fmt.Sprintf("bytes sent / needed at `%s` at most 1.1x, as the sandbox counts them: %s (sandbox received %.3fx; the engine handed %.3fx to its transport)",
				m.Faults, yes(m.serverRatio() <= 1.1), m.serverRatio(), m.clientRatio()))
		}
	}
	if k := r.Kills; k != nil {
		ok := k.Resumed == k.Rounds && k.Identical == k.Rounds && k.SameSession == k.Rounds && k.Duplicates == 0 && k.ResentOverChunk == 0
		out = append(out, fmt.Sprintf("kill -9: %d rounds resumed on the same session, byte-identical, no duplicate, at most one chunk re-sent: %s", k.Rounds, yes(ok)))
	}
	if s := r.Restarts; s != nil {
		ok := s.Finished == s.Uploads && s.Identical == s.Uploads && s.Duplicates == 0
		out = append(out, fmt.Sprintf("sandbox restarts: %d restarts, every upload finished byte-identical with no duplicate: %s (%d of %d identical, %d recorded done but never completed, %d duplicates)",
			s.Restarts, yes(ok), s.Identical, s.Uploads, s.DoneNotStored, s.Duplicates))
	}
	for _, x := range r.Wakes {
		ok := len(x.Samples) > 0 && x.Max < 2*time.Second
		out = append(out, fmt.Sprintf("wake to next confirmed byte under 2 s (%s): %s (median %s, max %s)", x.Scenario, yes(ok), dur(x.Median), dur(x.Max)))
	}
	return out
}

// dur rounds a latency to what is worth reading: 0.1 ms below a second,
// 1 ms above.
func dur(d time.Duration) string {
	if d >= time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Microsecond).String()
}
