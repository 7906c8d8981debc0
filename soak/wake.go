package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carrier/transfer"
)

// The engine's clock is a transfer.FakeClock: a suspend moves its wall
// clock and not its monotonic one, exactly what a sleeping laptop shows the
// engine. The latency is measured on the real clock: from the moment the
// machine "wakes" to the first progress event with a higher confirmed
// offset.
const (
	wakeBackoffBase = 50 * time.Second // a backoff that only a wake can cut short
	wakeSleep       = time.Hour        // how long the simulated machine sleeps
)

type wakeScenario struct {
	name     string
	backoff  bool // wake during a long backoff after a 5xx, instead of during a stalled request
	realtime bool // the fake clock runs in real time, so the detector's own period counts
}

var wakeScenarios = []wakeScenario{
	{name: "stalled request, wake at the detector's tick"},
	{name: "long backoff after a 5xx, wake at the detector's tick", backoff: true},
	{name: fmt.Sprintf("stalled request, wake at a random point of the detector's %s period (clock running in real time)", transfer.DefaultWakeCheck), realtime: true},
}

func runWakes(ctx context.Context, c *config, dir string, rep *report) error {
	if c.wakes <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	var problems []string
	for i, sc := range wakeScenarios {
		res, err := wakeScenarioRun(ctx, c, filepath.Join(dir, fmt.Sprint(i)), sc)
		rep.mu.Lock()
		rep.Wakes = append(rep.Wakes, res)
		rep.mu.Unlock()
		if err != nil {
			problems = append(problems, sc.name+": "+err.Error())
		}
		logf("wake (%s): median %s, max %s, %v", sc.name, res.Median, res.Max, res.Samples)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

type timedEvent struct {
	transfer.Event
	at time.Time
}

func wakeScenarioRun(ctx context.Context, c *config, dir string, sc wakeScenario) (wakeResult, error) {
	res := wakeResult{Scenario: sc.name}
	sb, err := openInproc(filepath.Join(dir, "sandbox"), "")
	if err != nil {
		return res, err
	}
	defer sb.close()
	files := filepath.Join(dir, "files")
	os.MkdirAll(files, 0o700)
	clock := transfer.NewFakeClock(time.Now())
	events := make(chan transfer.Event, 4096)
	tev := make(chan timedEvent, 1<<16)
	stop := make(chan struct{})
	fwdDone := make(chan struct{})
	go func() {
		defer close(fwdDone)
		for {
			select {
			case e := <-events:
				// Stamped on arrival, on the real clock: that is what a
				// person watching the progress bar would see.
				tev <- timedEvent{e, time.Now()}
			case <-stop:
				return
			}
		}
	}()
	defer func() { close(stop); <-fwdDone }()
	if sc.realtime {
		// Drive the fake clock in real time, in 10 ms steps, so the wake
		// detector ticks every WakeCheck of real time as it would on a machine.
		tick := make(chan struct{})
		go func() {
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					clock.Advance(10 * time.Millisecond)
				case <-tick:
					return
				}
			}
		}()
		defer close(tick)
	}
	q, err := transfer.New(transfer.Config{
		StateDir: filepath.Join(dir, "state"), Client: &http.Client{Transport: newCountingTransport()}, Auth: transfer.StaticToken(token),
		Workers: 1, Clock: clock, RetryBase: wakeBackoffBase, MaxRetries: 10,
		// A stall timeout the fake clock never reaches: only the wake may
		// end the stalled request.
		StallTimeout: 100 * time.Hour, Events: events,
	})
	if err != nil {
		return res, err
	}
	defer q.Close()

	next := func(what string, timeout time.Duration, ok func(timedEvent) bool) (timedEvent, error) {
		t := time.NewTimer(timeout)
		defer t.Stop()
		for {
			select {
			case e := <-tev:
				if e.Kind == transfer.EventFailed {
					return e, fmt.Errorf("the job failed while waiting for %s: %s", what, e.Message)
				}
				if ok(e) {
					return e, nil
				}
			case <-t.C:
				return timedEvent{}, fmt.Errorf("no %s within %s", what, timeout)
			case <-ctx.Done():
				return timedEvent{}, ctx.Err()
			}
		}
	}
	var problems []string
	for i := range c.wakes {
		lat, err := wakeSample(ctx, sb, q, clock, sc, files, i, c.wakes, next)
		if err != nil {
			problems = append(problems, fmt.Sprintf("sample %d: %v", i, err))
			logf("wake sample %d: %v", i, err)
			break // the queue may be wedged; the next sample would not be independent
		}
		res.Samples = append(res.Samples, lat.latency)
		res.Finished++
		if lat.identical {
			res.Identical++
		} else {
			problems = append(problems, fmt.Sprintf("sample %d: %v", i, lat.why))
		}
		debugf("wake sample %d (%s): %s", i, sc.name, lat.latency)
	}
	res.Median, res.Max = median(res.Samples), 0
	for _, d := range res.Samples {
		res.Max = max(res.Max, d)
	}
	if len(problems) > 0 {
		return res, errors.New(strings.Join(problems, "; "))
	}
	if res.Max >= 2*time.Second {
		return res, fmt.Errorf("wake to next confirmed byte took up to %s (median %s): goal under 2 s", res.Max.Round(time.Millisecond), res.Median.Round(time.Millisecond))
	}
	return res, nil
}

type wakeMeasure struct {
	latency   time.Duration
	identical bool
	why       error
}

func wakeSample(ctx context.Context, sb *inproc, q *transfer.Queue, clock *transfer.FakeClock, sc wakeScenario, files string, i, n int,
	next func(string, time.Duration, func(timedEvent) bool) (timedEvent, error)) (wakeMeasure, error) {
	var m wakeMeasure
	// A cap so the upload is still going when the fault is switched on.
	if err := sb.sb.SetFaults("rate=4MB"); err != nil {
		return m, err
	}
	size := int64(8*quantum + i)
	data := randomBytes(uint64(i)+0x3a6e, uint64(size))
	name := fmt.Sprintf("wake/%02d", i)
	path, err := writeFileData(files, fmt.Sprintf("%02d.bin", i), data)
	if err != nil {
		return m, err
	}
	id, err := q.Add(transfer.Spec{URL: storageURL(sb.base, name), ContentType: "application/octet-stream", Path: path, ChunkSize: quantum})
	if err != nil {
		return m, err
	}
	mine := func(e timedEvent) bool { return e.Job == id }
	if _, err := next("a first confirmed chunk", 20*time.Second, func(e timedEvent) bool {
		return mine(e) && e.Kind == transfer.EventProgress && e.Confirmed >= quantum
	}); err != nil {
		return m, err
	}
	if sc.backoff {
		if err := sb.sb.SetFaults("err5xx=1"); err != nil {
			return m, err
		}
		if _, err := next("a retry with a long backoff", 20*time.Second, func(e timedEvent) bool {
			return mine(e) && e.Kind == transfer.EventRetrying && e.Wait >= wakeBackoffBase
		}); err != nil {
			return m, err
		}
	} else {
		before := sb.sb.Stats().FaultsInjected
		// The chunk in flight goes through; the next request stalls.
		if err := sb.sb.SetFaults("stall=1,stallfor=60s,rate=4MB"); err != nil {
			return m, err
		}
		deadline := time.Now().Add(20 * time.Second)
		for sb.sb.Stats().FaultsInjected == before {
			if time.Now().After(deadline) {
				return m, errors.New("no request stalled within 20 s")
			}
			time.Sleep(2 * time.Millisecond) // the sandbox's counter has no event to wait on
		}
	}
	rec, _ := q.Job(id)
	c0 := rec.Confirmed
	if rec.State == transfer.StateDone {
		return m, errors.New("the upload finished before the fault took hold")
	}
	if err := sb.sb.SetFaults(""); err != nil {
		return m, err
	}
	if !sc.realtime {
		// The detector's timer must be waiting before the clock moves, or
		// the advance would pass it by.
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, due := clock.Timers()
			if n > 0 && due > 0 && due <= transfer.DefaultWakeCheck {
				break
			}
			if time.Now().After(deadline) {
				return m, errors.New("the wake detector's timer never appeared")
			}
			time.Sleep(time.Millisecond) // the fake clock reports timers, not their creation order
		}
	}
	if sc.realtime {
		// Samples follow one another right after the previous wake was
		// noticed, which would lock them to the detector's phase; a
		// stratified delay spreads the wakes over its whole period.
		phase := time.Duration((i*7)%max(1, n)) * transfer.DefaultWakeCheck / time.Duration(max(1, n))
		select {
		case <-time.After(phase):
		case <-ctx.Done():
			return m, ctx.Err()
		}
	}
	t0 := time.Now()
	clock.Suspend(wakeSleep)
	if !sc.realtime {
		clock.Advance(transfer.DefaultWakeCheck) // the detector's tick, the first after the wake
	}
	e, err := next("a higher confirmed offset after the wake", 20*time.Second, func(e timedEvent) bool {
		return mine(e) && e.Kind == transfer.EventProgress && e.Confirmed > c0
	})
	if err != nil {
		return m, err
	}
	m.latency = e.at.Sub(t0)
	if _, err := next("the end of the upload", 30*time.Second, func(e timedEvent) bool {
		return mine(e) && e.Kind == transfer.EventDone
	}); err != nil {
		return m, err
	}
	rec, _ = q.Job(id)
	if err := checkObject(sb.base, name, data, rec.Response.Body); err != nil {
		m.why = err
	} else {
		m.identical = true
	}
	return m, nil
}
