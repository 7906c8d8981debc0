package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"carrier/transfer"
)

// Engine settings for the fault phases: short waits so 200 uploads finish
// in minutes, and enough tries that a run of faults (p = 0.1 to 0.3 per
// request here) cannot exhaust them: 11 failures in a row without progress
// is about 1e-6 at the harsh mix's rates.
const (
	soakRetryBase  = 10 * time.Millisecond
	soakMaxRetries = 10
	soakStall      = 500 * time.Millisecond
)

func runUploadsHarsh(ctx context.Context, c *config, dir string, rep *report) error {
	return runMix(ctx, c, dir, rep, "harsh", c.harshMix, c.seed, nil)
}

func runUploadsRatio(ctx context.Context, c *config, dir string, rep *report) error {
	return runMix(ctx, c, dir, rep, "ratio", c.ratioMix, c.seed+1, nil)
}

// job is one upload of the soak and what it must end as.
type job struct {
	id    string
	name  string // object name, or the Subject of a message
	path  string
	size  int64
	gmail bool
}

// drain reads the engine's events so it never waits for room (only
// progress events are dropped when the channel is full), and counts the
// retries with their reasons.
type drain struct {
	mu      sync.Mutex
	retries int
	reasons map[string]int
	done    chan struct{}
}

var digits = regexp.MustCompile(`\d+`)

// startDrain makes the engine's event channel and drains it until
// stopDrain, which waits for the drain to end.
func startDrain() (d *drain, events chan transfer.Event, stopDrain func()) {
	events = make(chan transfer.Event, 4096)
	stop := make(chan struct{})
	d = &drain{reasons: map[string]int{}, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for {
			select {
			case e := <-events:
				if e.Kind == transfer.EventRetrying {
					d.mu.Lock()
					d.retries++
					// Numbers (offsets, ports) vary; the kind of failure is what counts.
					d.reasons[digits.ReplaceAllString(e.Reason, "N")]++
					d.mu.Unlock()
				}
			case <-stop:
				return
			}
		}
	}()
	return d, events, func() { close(stop); <-d.done }
}

// front is what stands between the engine and the sandbox in a mix: it
// is given the sandbox's host:port and returns the base URL the engine
// uploads to, a description of its faults, a count of the faults it
// injected so far, and how to stop it.
type front func(ctx context.Context, sbAddr string) (base, faults string, injected func() int64, stop func(), err error)

func runMix(ctx context.Context, c *config, dir string, rep *report, name, faults string, seed uint64, fr front) error {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	spec := fmt.Sprintf("seed=%d,%s", seed, faults)
	var public []string
	if fr != nil {
		// Requests come addressed to the front's port.
		public = []string{"127.0.0.1"}
	}
	sb, err := openInproc(filepath.Join(dir, "sandbox"), spec, public...)
	if err != nil {
		return err
	}
	sbOpen := true
	defer func() {
		if sbOpen {
			sb.close()
		}
	}()
	base := sb.base
	injected := func() int64 { return 0 }
	if fr != nil {
		var frFaults string
		var stop func()
		base, frFaults, injected, stop, err = fr(ctx, sb.addr)
		if err != nil {
			return err
		}
		defer stop()
		spec = frFaults + "; sandbox: " + spec
	}
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o700); err != nil {
		return err
	}
	ct := newCountingTransport()
	dr, events, stopDrain := startDrain()
	defer stopDrain()
	q, err := transfer.New(transfer.Config{
		StateDir: filepath.Join(dir, "state"), Client: &http.Client{Transport: ct}, Auth: transfer.StaticToken(token),
		Workers: c.workers, RetryBase: soakRetryBase, MaxRetries: soakMaxRetries, StallTimeout: soakStall, Events: events,
	})
	if err != nil {
		return err
	}
	qOpen := true
	defer func() {
		if qOpen {
			q.Close()
		}
	}()

	res := mixResult{Name: name, Faults: spec, Uploads: c.uploads, FailureReason: map[string]int{}}
	r := rand.New(rand.NewPCG(seed, 0xf11e5))
	var jobs []job
	start := time.Now() // the engine starts on each job as it is added
	for i := range c.uploads {
		size := uploadSize(r, i, c.maxSize)
		j := job{size: size}
		var data []byte
		var s transfer.Spec
		if c.gmailEvery > 0 && i%c.gmailEvery == c.gmailEvery-1 {
			j.gmail = true
			j.name = fmt.Sprintf("soak-%s-%03d", name, i)
			data = rfc822(seed*1000+uint64(i), j.name, size)
			s = transfer.Spec{URL: gmailSendURL(base), ContentType: "message/rfc822", ChunkSize: chunkFor(i)}
			res.Gmail++
		} else {
			j.name = fmt.Sprintf("%s/%03d obj", name, i)
			data = randomBytes(seed*1000+uint64(i), uint64(size))
			s = transfer.Spec{URL: storageURL(base, j.name), ContentType: "application/octet-stream", ChunkSize: chunkFor(i)}
		}
		j.size = int64(len(data))
		if j.path, err = writeFileData(files, fmt.Sprintf("%03d.bin", i), data); err != nil {
			return err
		}
		s.Path, s.Label = j.path, j.name
		res.BytesNeeded += j.size
		jobs = append(jobs, j)
		id, err := q.Add(s)
		if err != nil {
			return fmt.Errorf("add %s: %w", j.name, err)
		}
		jobs[len(jobs)-1].id = id
	}
	var finished []job
	answers := map[string][]byte{}
	for _, j := range jobs {
		rec, err := q.Wait(ctx, j.id)
		if err != nil {
			res.Failed++
			res.FailureReason["not finished in time: "+string(rec.State)]++
			continue
		}
		if rec.State != transfer.StateDone {
			res.Failed++
			res.FailureReason[digits.ReplaceAllString(rec.Error, "N")]++
			continue
		}
		res.Finished++
		finished = append(finished, j)
		answers[j.id] = rec.Response.Body
	}
	res.Seconds = time.Since(start).Seconds()
	// Stop the engine before reading the counters, so nothing moves under them.
	q.Close()
	qOpen = false

	dups := 0
	gmailDone := 0
	for _, j := range finished {
		data, err := os.ReadFile(j.path)
		if err != nil {
			return err
		}
		if j.gmail {
			gmailDone++
			err = checkMessage(sb.base, data, answers[j.id])
		} else {
			err = checkObject(sb.base, j.name, data, answers[j.id])
		}
		switch {
		case err == nil:
			res.Identical++
		case errors.Is(err, errDuplicate):
			dups++
			res.FailureReason["duplicate: "+err.Error()]++
		default:
			res.FailureReason["not identical: "+err.Error()]++
		}
	}
	if n, err := messagesTotal(sb.base); err != nil {
		return err
	} else if n > gmailDone {
		res.FailureReason[fmt.Sprintf("duplicate: %d messages in the mailbox for %d sends finished", n, gmailDone)]++
		dups = max(dups, n-gmailDone)
	}
	st := sb.sb.Stats()
	res.ServerBytes, res.ClientBytes = st.BytesReceived, ct.media.Load()
	res.Sessions, res.SessionsDone, res.Completions = st.SessionsCreated, st.SessionsCompleted, st.Completions
	res.Injected, res.Requests = st.FaultsInjected+injected(), st.Requests
	// A job that failed may still have completed on the server (that is
	// what a failure after a dropped final answer would be), so the
	// completions may exceed the finished jobs by at most the failed ones;
	// beyond that they are duplicates.
	if extra := int(st.Completions) - res.Finished - res.Failed; extra > 0 {
		dups = max(dups, extra)
		res.FailureReason[fmt.Sprintf("duplicate: %d completions for %d uploads finished and %d failed", st.Completions, res.Finished, res.Failed)]++
	}
	sb.close()
	sbOpen = false
	_, done, err := storeSessions(sb.dir)
	if err != nil {
		return err
	}
	storeDups := 0
	for k, n := range done {
		if !strings.HasPrefix(k, "gmail.") && n > 1 {
			storeDups += n - 1
			res.FailureReason[fmt.Sprintf("duplicate: %d completed sessions for %s", n, k)]++
		}
	}
	res.Duplicates = max(dups, storeDups)
	dr.mu.Lock()
	retries := dr.retries
	reasons := dr.reasons
	dr.mu.Unlock()
	logf("%s: %d uploads, %d finished, %d identical, %d duplicates, %d retries; sandbox %+v; client sent %d", name, res.Uploads, res.Finished, res.Identical, res.Duplicates, retries, st, res.ClientBytes)
	for k, n := range reasons {
		debugf("  retry x%d: %s", n, k)
	}
	rep.mu.Lock()
	rep.Mixes = append(rep.Mixes, res)
	rep.mu.Unlock()
	if res.Finished != res.Uploads || res.Identical != res.Finished || res.Duplicates != 0 {
		return fmt.Errorf("%d of %d finished, %d byte-identical, %d duplicates (reasons in the table)", res.Finished, res.Uploads, res.Identical, res.Duplicates)
	}
	// The goal is stated on what the server received; what the engine
	// handed to its transport is reported beside it (it includes bytes
	// that were still in socket buffers when a 5xx came back).
	if name == "ratio" && res.serverRatio() > 1.1 {
		return fmt.Errorf("bytes sent / needed above 1.1x: sandbox %.3fx (engine %.3fx)", res.serverRatio(), res.clientRatio())
	}
	return nil
}
