package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"carrier/transfer"
)

// The concurrency test asks whether the sandbox keeps its throughput when
// many uploads arrive at once: N uploads of size/N bytes each against one
// upload of all the bytes, by the same client, so that the only difference
// is how many sessions the sandbox serves at a time.
//
// The client that measures the sandbox rather than itself is one process
// with Carrier's own queue (transfer.Queue, Workers=N, each job with the
// default 8 MiB chunks): one Go runtime, the engine's per-byte cost the same
// as for one stream, and nothing per upload beyond a journal record and a
// session. N `carrier upload` processes would instead measure N process
// starts, N runtimes and their schedulers fighting over two cores. curl is
// the control: N curl processes (a few MiB of RSS and no work per byte
// beyond the socket) against one.

type concVariant string

const (
	concQueue concVariant = "Carrier's queue, one process, Workers=N"
	concCurl  concVariant = "curl, N processes (control)"
)

type concResult struct {
	variant    concVariant
	n          int
	bytes      int64         // all N uploads together
	oneBytes   int64         // the one stream
	many, one  time.Duration // wall time of N uploads at once, and of one
	manyCPU    time.Duration // the sandbox's CPU for the N uploads
	oneCPU     time.Duration
	sandboxRSS int64 // the sandbox's largest RSS seen during the N uploads
}

// fraction is the N uploads' aggregate throughput over the one stream's.
func (c concResult) fraction() float64 { return mbps(c.bytes, c.many) / mbps(c.oneBytes, c.one) }

func runConcurrency(ctx context.Context, cfg *config, sb *sandboxProc, tf, part *testFile) ([]concResult, error) {
	n := cfg.conc
	var out []concResult
	for r := range cfg.concRounds {
		for _, v := range []concVariant{concQueue, concCurl} {
			res := concResult{variant: v, n: n, bytes: part.size * int64(n), oneBytes: tf.size}
			// Alternate which goes first, so neither always inherits the
			// other's leftovers.
			steps := []bool{true, false}
			if r%2 == 1 {
				steps = []bool{false, true}
			}
			for _, many := range steps {
				cpu0 := sb.cpu()
				stopRSS := watchRSS(sb, &res.sandboxRSS, many)
				var (
					d   time.Duration
					err error
				)
				files, names := []*testFile{tf}, []string{fmt.Sprintf("one-%d", r)}
				if many {
					files, names = make([]*testFile, n), make([]string, n)
					for i := range n {
						files[i], names[i] = part, fmt.Sprintf("many-%d-%d", r, i)
					}
				}
				if v == concQueue {
					d, err = queueUploads(ctx, cfg, sb, files, names, n)
				} else {
					d, err = curlUploads(ctx, cfg, sb, files, names)
				}
				stopRSS()
				if err != nil {
					return nil, fmt.Errorf("concurrency test, %s: %w", v, err)
				}
				cpu := sb.cpu() - cpu0
				for i, name := range names {
					if err := verify(ctx, sb, name, files[i]); err != nil {
						return nil, fmt.Errorf("concurrency test, %s: %w", v, err)
					}
				}
				if err := dropBlobs(sb); err != nil {
					return nil, err
				}
				if many {
					res.many, res.manyCPU = d, cpu
				} else {
					res.one, res.oneCPU = d, cpu
				}
			}
			logf("concurrency %d/%d %s: %d at once %.1f MB/s, one stream %.1f MB/s: %.0f%%", r+1, cfg.concRounds, v, n,
				mbps(res.bytes, res.many), mbps(tf.size, res.one), 100*res.fraction())
			out = append(out, res)
		}
	}
	return out, nil
}

// watchRSS samples the sandbox's RSS while on is true, keeping the peak.
func watchRSS(sb *sandboxProc, peak *int64, on bool) (stop func()) {
	if !on {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if r := sb.rss(); r > *peak {
				*peak = r
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// queueUploads runs the files through one transfer.Queue with the given
// number of workers and waits for all of them.
func queueUploads(ctx context.Context, cfg *config, sb *sandboxProc, files []*testFile, names []string, workers int) (time.Duration, error) {
	state, err := os.MkdirTemp(cfg.work, "queue-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(state)
	ctx, cancel := context.WithTimeout(ctx, cfg.procLimit)
	defer cancel()
	start := time.Now()
	q, err := transfer.New(transfer.Config{StateDir: state, Workers: workers, Auth: transfer.StaticToken(sb.token)})
	if err != nil {
		return 0, err
	}
	defer q.Close()
	ids := make([]string, len(files))
	for i, f := range files {
		if ids[i], err = q.Add(transfer.Spec{URL: objectURL(sb, names[i]), ContentType: "application/octet-stream", Path: f.path}); err != nil {
			return 0, err
		}
	}
	for _, id := range ids {
		rec, err := q.Wait(ctx, id)
		if err != nil {
			return 0, err
		}
		if rec.State != transfer.StateDone {
			return 0, fmt.Errorf("job %s ended %s: %s", id, rec.State, rec.Error)
		}
	}
	return time.Since(start), nil
}

// curlUploads starts a session per file and PUTs each whole with its own
// curl, all at once.
func curlUploads(ctx context.Context, cfg *config, sb *sandboxProc, files []*testFile, names []string) (time.Duration, error) {
	start := time.Now()
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = curlUpload(ctx, cfg, sb, files[i], names[i], false)
		}()
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}
