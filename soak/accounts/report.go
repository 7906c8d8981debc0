package main

import (
	"fmt"
	"io"
	"time"
)

type report struct {
	Started  time.Time
	Elapsed  string
	Machine  string
	Command  string
	Rows     []*row
	Failures []string
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func mark(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// print writes the results as Markdown, ready for docs/RELIABILITY.md.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "- machine: %s\n- command: `%s`\n- wall time %s, started %s\n\n", r.Machine, r.Command, r.Elapsed, r.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "| row | file | parked at (journal) | state, cause | exit | names the account | retries spent | killed -9 while parked | login says it waits | resume exit | sessions | same session | to its session / file | all bytes into the sandbox / files | Drive's SHA-256 and size match | time |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.Rows {
		cause := x.ParkedCause
		if cause == "" {
			cause = "none"
		}
		killed := "-"
		if x.Other != nil {
			killed = mark(x.KilledWhileParked)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s, %s | %d | %s | %d | %s | %s | %d | %d | %s | %.4fx (%d B) | %.4fx | %s | %.0f s |\n",
			x.Name, mib(x.Size), mib(x.ParkedAt), x.ParkedState, cause, x.ExitAtPark, mark(x.NamesAccount), x.Retries, killed,
			mark(x.LoginSays), x.ResumeExit, x.Sessions, mark(x.SameSession), x.ratio(), x.WireBytes, x.tcpRatio(), mark(x.Identical), x.Seconds)
	}
	fmt.Fprintln(w)
	for _, x := range r.Rows {
		if o := x.Other; o != nil {
			fmt.Fprintf(w, "The kill row's other account (%s): %s, its first process killed at %s confirmed, the resume killed at %s; finished on the same session %s, verified (%s), %.4fx on the wire.\n\n",
				work, mib(o.Size), mib(o.KilledAt), mib(o.AtParkKill), mark(o.SameSession), o.Verified, float64(o.WireBytes)/float64(o.Size))
		}
	}
	if len(r.Failures) > 0 {
		fmt.Fprintf(w, "Failures:\n\n")
		for _, f := range r.Failures {
			fmt.Fprintf(w, "- %s\n", f)
		}
		fmt.Fprintln(w)
	}
}
