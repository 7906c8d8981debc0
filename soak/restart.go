package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"carrier/transfer"
)

// runRestarts: the sandbox runs as its own process (`carrier sandbox`) and
// is stopped and started again on the same folder and address while the
// engine uploads to it, alternately with SIGTERM (a clean stop) and
// SIGKILL (a crash). The engine must ride through the refused connections
// with its backoff; every upload must end byte-identical, created once.
func runRestarts(ctx context.Context, c *config, dir string, rep *report) error {
	if c.restarts <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	bin, err := carrierBinary(c)
	if err != nil {
		return err
	}
	spec := fmt.Sprintf("seed=%d,rate=%s", c.seed, c.restartRt)
	if c.restartFaults != "" {
		spec += "," + c.restartFaults
	}
	sbx := &child{bin: bin, dir: filepath.Join(dir, "sandbox"), faults: spec}
	if err := sbx.start(ctx); err != nil {
		return err
	}
	running := true
	defer func() {
		if running {
			sbx.kill(syscall.SIGTERM)
		}
	}()
	files := filepath.Join(dir, "files")
	os.MkdirAll(files, 0o700)
	ct := newCountingTransport()
	dr, events, stopDrain := startDrain()
	defer stopDrain()
	// A longer backoff base than phase 1: the sandbox is down for up to two
	// seconds, and the ten waits of MaxRetries must outlast that many times
	// over (0.1 s * 2^10 alone is 100 s).
	q, err := transfer.New(transfer.Config{
		StateDir: filepath.Join(dir, "state"), Client: &http.Client{Transport: ct}, Auth: transfer.StaticToken(token),
		Workers: c.workers, RetryBase: 100 * time.Millisecond, MaxRetries: 10, StallTimeout: 2 * time.Second, Events: events,
	})
	if err != nil {
		return err
	}
	defer q.Close()

	res := &restartResult{Rate: c.restartRt}
	rep.mu.Lock()
	rep.Restarts = res
	rep.mu.Unlock()
	r := rand.New(rand.NewPCG(c.seed, 0x2e57a27))
	var jobs []job
	add := func(n int) error {
		for range n {
			i := len(jobs)
			size := c.restartSz + int64(r.IntN(quantum))
			data := randomBytes(c.seed*7919+uint64(i), uint64(size))
			name := fmt.Sprintf("restart/%03d", i)
			path, err := writeFileData(files, fmt.Sprintf("%03d.bin", i), data)
			if err != nil {
				return err
			}
			chunk := int64(quantum) * int64(1+i%2)
			id, err := q.Add(transfer.Spec{URL: storageURL(sbx.base, name), ContentType: "application/octet-stream", Path: path, ChunkSize: chunk, Label: name})
			if err != nil {
				return err
			}
			jobs = append(jobs, job{id: id, name: name, path: path, size: size})
			res.BytesNeeded += size
		}
		return nil
	}
	confirmedSum := func() (sum int64, unfinished int) {
		for _, rec := range q.Jobs() {
			sum += rec.Confirmed
			if rec.State.Unfinished() {
				unfinished++
			}
		}
		return sum, unfinished
	}
	start := time.Now()
	minDown, maxDown := time.Duration(1<<62), time.Duration(0)
	for i := range c.restarts {
		// Keep uploads running, so each restart lands mid-upload.
		// New uploads join at every restart too, so some start on a
		// sandbox that has been restarted before.
		sum, unfinished := confirmedSum()
		if err := add(max(2, c.workers-unfinished)); err != nil {
			return err
		}
		// Wait for a confirmed chunk since the last restart: the engine has
		// reconnected and is moving again.
		deadline := time.Now().Add(60 * time.Second)
		for {
			now, _ := confirmedSum()
			if now >= sum+quantum {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("restart %d: no confirmed progress within 60 s of the sandbox coming back; sandbox stderr: %s", i, lastLines(sbx.stderr.String(), 3))
			}
			time.Sleep(10 * time.Millisecond) // polling the queue's records: progress events may be dropped by design
		}
		sig := syscall.SIGTERM
		if i%2 == 1 {
			sig = syscall.SIGKILL
		}
		if err := sbx.kill(sig); err != nil {
			return fmt.Errorf("restart %d: %w", i, err)
		}
		down := time.Duration(300+r.IntN(1700)) * time.Millisecond
		t0 := time.Now()
		time.Sleep(down) // the outage itself: the engine meets refused connections meanwhile
		// The address must be free again before starting; it always is on
		// Linux (listeners use SO_REUSEADDR), but wait a bounded while if not.
		for k := 0; k < 50 && !addrFree(sbx.addr); k++ {
			time.Sleep(100 * time.Millisecond)
		}
		if err := sbx.start(ctx); err != nil {
			running = false
			return fmt.Errorf("restart %d: %w", i, err)
		}
		d := time.Since(t0)
		minDown, maxDown = min(minDown, d), max(maxDown, d)
		res.Restarts++
		if sig == syscall.SIGKILL {
			res.Crashed++
		} else {
			res.Graceful++
		}
		debugf("restart %d (%s): down %s, %d jobs so far", i, sig, d.Round(time.Millisecond), len(jobs))
	}
	if res.Restarts > 0 {
		res.Downtime = fmt.Sprintf("%.1f..%.1f s", minDown.Seconds(), maxDown.Seconds())
	}
	res.Uploads = len(jobs)
	var problems []string
	answers := map[string][]byte{}
	var finished []job
	for _, j := range jobs {
		rec, err := q.Wait(ctx, j.id)
		if err != nil || rec.State != transfer.StateDone {
			problems = append(problems, fmt.Sprintf("%s: %s %s %v", j.name, rec.State, rec.Error, err))
			continue
		}
		res.Finished++
		finished = append(finished, j)
		answers[j.id] = rec.Response.Body
	}
	res.Seconds = time.Since(start).Seconds()
	q.Close()
	res.ClientBytes = ct.media.Load()
	for _, j := range finished {
		data, err := os.ReadFile(j.path)
		if err != nil {
			return err
		}
		switch err := checkObject(sbx.base, j.name, data, answers[j.id]); {
		case err == nil:
			res.Identical++
		case errors.Is(err, errDuplicate):
			res.Duplicates++
			problems = append(problems, j.name+": "+err.Error())
		case len(answers[j.id]) == 0:
			rec, _ := q.Job(j.id)
			status := 0
			if rec.Response != nil {
				status = rec.Response.Status
			}
			problems = append(problems, fmt.Sprintf("%s: the engine recorded the job done on a %d answer with an empty body; the object is not there (%v)", j.name, status, err))
		default:
			problems = append(problems, j.name+": "+err.Error())
		}
	}
	// The sandbox's counters restart with it; its store does not: count
	// the completed sessions there, over all its lives.
	running = false
	if err := sbx.kill(syscall.SIGTERM); err != nil {
		problems = append(problems, err.Error())
	}
	created, done, err := storeSessions(sbx.dir)
	if err != nil {
		return err
	}
	dups := 0
	for k, n := range done {
		res.SessionsDone += n
		if n > 1 {
			dups += n - 1
			problems = append(problems, fmt.Sprintf("%d completed sessions for %s", n, k))
		}
	}
	for _, j := range jobs {
		if done["storage.objects.insert "+j.name] == 0 {
			problems = append(problems, fmt.Sprintf("%s: no completed session in the sandbox's store", j.name))
			if rec, _ := q.Job(j.id); rec.State == transfer.StateDone {
				res.DoneNotStored++
			}
		}
	}
	res.Duplicates = max(res.Duplicates, dups)
	dr.mu.Lock()
	res.RetryEvents = dr.retries
	for k, n := range dr.reasons {
		debugf("  retry x%d: %s", n, k)
	}
	dr.mu.Unlock()
	logf("restart: %+v; sessions in the store %d", *res, created)
	if res.Finished != res.Uploads || res.Identical != res.Uploads || res.Duplicates != 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
