package main

// The silent blackhole (issue 33): every packet between the engine and
// the sandbox dropped for a while, nothing reset, mid-upload. Toxiproxy
// cannot make it: it ends each TCP connection in its own process, whose
// kernel acknowledges every byte before its blackhole (the timeout toxic)
// swallows them, and behind it a connection the engine reset is still
// open to the server, whose kernel delivers its bytes late when the path
// is back. So the engine talks to the sandbox directly, the link's speed
// the sandbox's own (its rate fault: it reads bodies that fast), and the
// path is cut under both: netbench re-runs itself in a private network
// namespace and takes the loopback down (nettest.SetLoopback). The engine
// is a transfer.Queue with its own client and defaults, as the app runs
// it. Each round uploads the file undisturbed, then again with the outage
// after the first confirmation; the time lost is the second's time less
// the first's and the outage.

import (
	"carrier/bench/internal/mdsection"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"carrier/internal/nettest"
	"carrier/sandbox"
	"carrier/transfer"
)

type holeResult struct {
	took    time.Duration
	found   time.Duration // the outage's start to the engine's first retry
	flowing time.Duration // the path back to the sandbox's next byte
	reasons []string
}

func runBlackhole(c config, outage time.Duration) error {
	if !nettest.InPrivateNetwork() {
		return nettest.RunInPrivateNetwork(os.Args[1:]...)
	}
	if err := nettest.SetLoopback(true); err != nil {
		return err
	}
	work, file, cleanup, err := scratch(c.size)
	if err != nil {
		return err
	}
	defer cleanup()
	var calm, holed []*holeResult
	for i := range c.rounds {
		fmt.Fprintf(os.Stderr, "netbench: round %d undisturbed\n", i+1)
		a, err := holeUpload(c, work, file, fmt.Sprintf("calm%d", i), 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "netbench: round %d, a silent %s outage\n", i+1, outage)
		b, err := holeUpload(c, work, file, fmt.Sprintf("hole%d", i), outage)
		if err != nil {
			return err
		}
		calm, holed = append(calm, a), append(holed, b)
	}
	holeBegin, holeEnd := marks(c, "netbench-blackhole", "-blackhole 20s")
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	w("%s\n\n## %s\n\n", holeBegin, titled(c, "A silent blackhole"))
	w("Measured %s on %s, load average %s. `go run ./bench/netbench -blackhole %s%s -size %dMiB -rate %d -rounds %d`%s. "+
		"Every packet dropped, nothing reset, after the first confirmation (the loopback down in a private network "+
		"namespace); the sandbox reads bodies at %d KB/s (its rate fault); the engine with its own client and defaults.%s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), platform(), loadAvg(), outage, serialFlag(c), c.size>>20, c.rateKBs, c.rounds, label(c), c.rateKBs, serialNote(c))
	w("| round | undisturbed | with the outage | lost beyond the outage | dead path found after | bytes flow after the path is back | engine's retries |\n|---|---|---|---|---|---|---|\n")
	var lost []time.Duration
	for i := range calm {
		l := holed[i].took - calm[i].took - outage
		lost = append(lost, l)
		w("| %d | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %s |\n", i+1, calm[i].took.Seconds(), holed[i].took.Seconds(),
			l.Seconds(), holed[i].found.Seconds(), holed[i].flowing.Seconds(), strings.Join(holed[i].reasons, "; "))
	}
	m := medianDur(lost)
	w("\n| figure | measured | goal | |\n|---|---|---|---|\n")
	w("| time lost beyond a silent %s outage, median | %.1f s | %s |\n%s\n", outage, m.Seconds(), goal(c, "at most 5 s", m <= 5*time.Second), holeEnd)
	md := b.String()
	fmt.Print(md)
	if c.out != "" {
		return mdsection.Write(c.out, md, holeBegin, holeEnd)
	}
	return nil
}

// holeUpload sends file once through a fresh sandbox and proxy; outage >
// 0 cuts the path that long after the first confirmation.
func holeUpload(c config, work, file, name string, outage time.Duration) (*holeResult, error) {
	dir := filepath.Join(work, name)
	o := sandbox.Options{Dir: filepath.Join(dir, "sandbox"), Token: token, NoSync: true, Faults: fmt.Sprintf("rate=%dKB", c.rateKBs), SerializeSessions: c.serialize}
	if os.Getenv("NETBENCH_DUMP") != "" {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := nettest.StartSandbox(o)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	events := make(chan transfer.Event, 4096)
	q, err := transfer.New(transfer.Config{StateDir: filepath.Join(dir, "state"), Auth: transfer.StaticToken(token), Workers: 1, Events: events})
	if err != nil {
		return nil, err
	}
	defer q.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res := &holeResult{}
	// The retries, timed as they come.
	var (
		mu     sync.Mutex
		holed  time.Time
		retrys []time.Time
	)
	start := time.Now()
	done, collected := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(collected)
		for {
			select {
			case e := <-events:
				if os.Getenv("NETBENCH_DUMP") != "" && e.Kind != transfer.EventProgress {
					fmt.Fprintf(os.Stderr, "%6.2f %s %s\n", time.Since(start).Seconds(), e.Kind, e.Reason)
				}
				if e.Kind == transfer.EventRetrying {
					mu.Lock()
					retrys = append(retrys, time.Now())
					reason, _, _ := strings.Cut(digits.ReplaceAllString(e.Reason, "N"), ", so the request")
					reason, _, _ = strings.Cut(reason, " to the upload session")
					res.reasons = append(res.reasons, reason)
					mu.Unlock()
				}
			case <-done:
				return
			}
		}
	}()
	id, err := q.Add(transfer.Spec{URL: srv.URL + "/upload/storage/v1/b/netbench/o?name=" + url.QueryEscape(name), ContentType: "application/octet-stream", Path: file})
	if err != nil {
		return nil, err
	}
	if outage > 0 {
		for {
			if s, ok := q.Job(id); ok && s.Confirmed > 0 {
				break
			}
			select {
			case <-ctx.Done():
				return nil, errors.New(name + ": no confirmation before the outage")
			case <-time.After(20 * time.Millisecond):
			}
		}
		if err := nettest.SetLoopback(false); err != nil {
			return nil, err
		}
		mu.Lock()
		holed = time.Now()
		mu.Unlock()
		before := srv.SB.Stats().BytesReceived
		time.Sleep(outage)
		if err := nettest.SetLoopback(true); err != nil {
			return nil, err
		}
		back := time.Now()
		if srv.SB.Stats().BytesReceived > before {
			// Bytes the proxy held when the path went still reached the
			// server during the outage; count from what it holds now.
			before = srv.SB.Stats().BytesReceived
		}
		for srv.SB.Stats().BytesReceived <= before && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		res.flowing = time.Since(back)
	}
	s, err := q.Wait(ctx, id)
	res.took = time.Since(start)
	if err != nil {
		return nil, err
	}
	if s.State != transfer.StateDone {
		return nil, fmt.Errorf("%s: the upload ended %s: %s", name, s.State, s.Error)
	}
	if st := srv.SB.Stats(); st.Completions != 1 {
		return nil, fmt.Errorf("%s: the sandbox made %d objects for one upload", name, st.Completions)
	}
	close(done)
	<-collected
	for _, at := range retrys {
		if !holed.IsZero() && at.After(holed) {
			res.found = at.Sub(holed)
			break
		}
	}
	return res, nil
}
