package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// composeResult is what `carrier compose` cost, with an attachment and
// without: the difference is the attachment's own cost, the rest is a
// process, its runtime and a small message.
type composeResult struct {
	attach   int64 // bytes of the attachment
	msgSize  int64 // bytes of the message written with it
	with     []usage
	without  []usage
	bareSize int64
}

// runCompose writes the same message cfg.composeReps times with a
// pseudo-random attachment of cfg.composeAttach bytes, and as often
// without it, alternating, each a `carrier compose` process of its own.
func runCompose(ctx context.Context, cfg *config) (composeResult, error) {
	res := composeResult{attach: cfg.composeAttach}
	att, err := prepareFile(cfg.work, cfg.composeAttach)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp(cfg.work, "compose-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	logf("compose: a message with a %s attachment, %d times", human(cfg.composeAttach), cfg.composeReps)
	for i := range cfg.composeReps {
		for _, withAttachment := range []bool{i%2 == 0, i%2 != 0} {
			out := filepath.Join(dir, fmt.Sprintf("m%d-%t.eml", i, withAttachment))
			args := []string{"compose", "--to", "zoe@example.com", "--subject", "The figures", "--body", "Attached: the figures of the week.", "--out", out}
			if withAttachment {
				args = append(args, "--attach", att.path)
			}
			pr, err := runProc(ctx, cfg.procLimit, nil, cfg.carrierBin, args...)
			if err != nil {
				return res, err
			}
			fi, err := os.Stat(out)
			if err != nil {
				return res, fmt.Errorf("carrier compose wrote no message: %w", err)
			}
			if withAttachment {
				// base64 makes 4 bytes of 3; a message smaller than that did
				// not carry the whole attachment.
				if fi.Size() < att.size*4/3 {
					return res, fmt.Errorf("the message (%d bytes) cannot hold the %d-byte attachment", fi.Size(), att.size)
				}
				res.with, res.msgSize = append(res.with, pr.usage), fi.Size()
			} else {
				res.without, res.bareSize = append(res.without, pr.usage), fi.Size()
			}
			os.Remove(out)
		}
	}
	return res, nil
}

// cpuMedian is the median user+system time of processes.
func cpuMedian(us []usage) time.Duration {
	var ds []time.Duration
	for _, u := range us {
		ds = append(ds, u.cpu())
	}
	return medianDur(ds)
}
