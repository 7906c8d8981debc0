package main

import (
	"context"
	"fmt"
	"time"
)

// modeResult is everything measured against one sandbox mode.
type modeResult struct {
	mode        mode
	contenders  []contender
	samples     map[string][]sample // by contender id, in round order
	small       map[string][]sample // the 256 KiB upload, by contender id
	conc        []concResult
	sandbox     usage // the sandbox process over the whole mode
	loadBefore  float64
	loadAfter   float64
	start, end  time.Time
	smallFileSz int64
}

// runMode starts a sandbox in mode m and runs the whole comparison on it.
func runMode(ctx context.Context, cfg *config, m mode, tf, small, part *testFile) (*modeResult, error) {
	sb, remove, err := scratchSandbox(ctx, cfg, "sandbox-", m.fsync)
	if err != nil {
		return nil, err
	}
	defer remove()
	mr := &modeResult{mode: m, contenders: contenders(cfg), samples: map[string][]sample{}, small: map[string][]sample{},
		loadBefore: loadAvg(), start: time.Now(), smallFileSz: small.size}
	defer func() {
		t := time.Now()
		mr.sandbox = sb.close()
		mr.end = time.Now()
		logf("sandbox stopped in %s", time.Since(t).Round(time.Millisecond))
	}()
	logf("sandbox %s at %s", m.name, sb.base)

	// The fixed cost of an upload: a file too small for its bytes to
	// matter, so what remains is starting a process, a session, a journal.
	for r := range cfg.smallReps {
		for _, c := range rotate(fixedCostContenders(mr.contenders), r) {
			s, err := upload(ctx, cfg, sb, c, small, fmt.Sprintf("small-%s-%d", c.id, r))
			if err != nil {
				return nil, err
			}
			mr.small[c.id] = append(mr.small[c.id], s)
		}
	}

	for r := range cfg.rounds {
		for _, c := range rotate(mr.contenders, r) {
			s, err := upload(ctx, cfg, sb, c, tf, fmt.Sprintf("%s-%d", c.id, r))
			if err != nil {
				return nil, err
			}
			mr.samples[c.id] = append(mr.samples[c.id], s)
			logf("round %d/%d %-22s %7.1f MB/s  %6.1f MiB RSS  client CPU %5.2fs  sandbox CPU %5.2fs",
				r+1, cfg.rounds, c.id, mbps(tf.size, s.wall), float64(s.maxRSS)/(1<<20), s.cpu().Seconds(), s.sandboxCPU.Seconds())
		}
	}

	if cfg.conc > 0 {
		if mr.conc, err = runConcurrency(ctx, cfg, sb, tf, part); err != nil {
			return nil, err
		}
	}
	mr.loadAfter = loadAvg()
	return mr, nil
}

// fixedCostContenders are one of each kind: chunk size cannot matter for
// a file smaller than any chunk.
func fixedCostContenders(cs []contender) []contender {
	var out []contender
	for _, c := range cs {
		if !c.flag && c.bin == "" {
			out = append(out, c)
		}
	}
	return out
}

// rotate starts the order at a different contender in every round, so
// none always follows the same one (whose leftovers, such as writeback,
// it would inherit).
func rotate(cs []contender, r int) []contender {
	out := make([]contender, 0, len(cs))
	for i := range cs {
		out = append(out, cs[(i+r)%len(cs)])
	}
	return out
}

func mbps(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / 1e6 / d.Seconds()
}
