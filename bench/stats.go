package main

import (
	"math"
	"time"
)

// summary condenses one contender's rounds.
type summary struct {
	c          contender
	n          int
	wall       time.Duration // median
	mbps       float64       // median of the rounds' MB/s
	mbpsMin    float64
	mbpsMax    float64
	peakRSS    int64         // the largest of the rounds: the promise is about the worst
	cpu        time.Duration // client user+system, median
	user       time.Duration // median
	sandboxCPU time.Duration // median
}

func summarize(c contender, ss []sample, size int64) summary {
	s := summary{c: c, n: len(ss), mbpsMin: math.Inf(1)}
	var walls, cpus, users, sbs []time.Duration
	var rates []float64
	for _, x := range ss {
		walls, cpus, users, sbs = append(walls, x.wall), append(cpus, x.cpu()), append(users, x.user), append(sbs, x.sandboxCPU)
		r := mbps(size, x.wall)
		rates = append(rates, r)
		s.mbpsMin, s.mbpsMax = math.Min(s.mbpsMin, r), math.Max(s.mbpsMax, r)
		s.peakRSS = max(s.peakRSS, x.maxRSS)
	}
	s.wall, s.mbps, s.cpu, s.user, s.sandboxCPU = medianDur(walls), median(rates), medianDur(cpus), medianDur(users), medianDur(sbs)
	if len(ss) == 0 {
		s.mbpsMin = 0
	}
	return s
}

// summaries returns every contender's summary, in the contenders' order.
func (mr *modeResult) summaries(size int64) []summary {
	var out []summary
	for _, c := range mr.contenders {
		out = append(out, summarize(c, mr.samples[c.id], size))
	}
	return out
}

func (mr *modeResult) summaryOf(id string, size int64) summary {
	for _, c := range mr.contenders {
		if c.id == id {
			return summarize(c, mr.samples[id], size)
		}
	}
	return summary{}
}

// chunkFit fits Carrier's median times to a + b*requests over its chunk
// sizes: b is what one more chunk costs end to end (a round trip, the
// sandbox's per-chunk work, the journal), a the rest.
func (mr *modeResult) chunkFit(size int64) (a, b time.Duration, ok bool) {
	var xs, ys []float64
	for _, s := range mr.summaries(size) {
		if !s.c.measured() || s.n == 0 {
			continue
		}
		xs = append(xs, float64(requests(size, s.c.chunk)))
		ys = append(ys, s.wall.Seconds())
	}
	if len(xs) < 2 {
		return 0, 0, false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0, 0, false
	}
	slope := sxy / sxx
	return time.Duration((my - slope*mx) * float64(time.Second)), time.Duration(slope * float64(time.Second)), true
}

// requests is how many chunk requests an upload of size bytes takes.
func requests(size, chunk int64) int64 {
	if chunk <= 0 {
		return 1
	}
	return (size + chunk - 1) / chunk
}

// concSummary is the concurrency test's rounds of one variant.
type concSummary struct {
	variant              concVariant
	n                    int
	rounds               int
	manyMBps, oneMBps    float64 // medians
	fraction             float64 // median of the rounds' N-at-once over one-stream
	manyCPU, oneCPU      time.Duration
	sandboxRSS           int64
	fractionMin, fracMax float64
}

func (mr *modeResult) concSummaries() []concSummary {
	var out []concSummary
	for _, v := range []concVariant{concQueue, concCurl} {
		cs := concSummary{variant: v, fractionMin: math.Inf(1)}
		var many, one, frac []float64
		var mcpu, ocpu []time.Duration
		for _, r := range mr.conc {
			if r.variant != v {
				continue
			}
			cs.n, cs.rounds = r.n, cs.rounds+1
			many, one = append(many, mbps(r.bytes, r.many)), append(one, mbps(r.oneBytes, r.one))
			frac = append(frac, r.fraction())
			cs.fractionMin, cs.fracMax = math.Min(cs.fractionMin, r.fraction()), math.Max(cs.fracMax, r.fraction())
			mcpu, ocpu = append(mcpu, r.manyCPU), append(ocpu, r.oneCPU)
			cs.sandboxRSS = max(cs.sandboxRSS, r.sandboxRSS)
		}
		if cs.rounds == 0 {
			continue
		}
		cs.manyMBps, cs.oneMBps, cs.fraction = median(many), median(one), median(frac)
		cs.manyCPU, cs.oneCPU = medianDur(mcpu), medianDur(ocpu)
		out = append(out, cs)
	}
	return out
}

// fastestReference is the faster of curl and the official client: the
// nearer measure of what the sandbox can take, which the report holds
// Carrier against when explaining the gap.
func (mr *modeResult) fastestReference(size int64) summary {
	curl, off := mr.summaryOf("curl", size), mr.summaryOf("official", size)
	if off.n > 0 && (curl.n == 0 || off.wall < curl.wall) {
		return off
	}
	return curl
}
