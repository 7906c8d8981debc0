package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"carrier/internal/nettest"
)

// runUploadsToxi is phase 1's uploads through Shopify's toxiproxy, a
// network-fault component nobody here wrote, between the engine and the
// sandbox: latency with jitter both ways and a bandwidth cap on every
// connection, some connections reset on their first bytes or cut
// mid-chunk, and a driver that now and then resets every busy connection
// at once or swallows everything for a while (a blackhole the stall
// timeout must get out of).
func runUploadsToxi(ctx context.Context, c *config, dir string, rep *report) error {
	fr := func(ctx context.Context, sbAddr string) (string, string, func() int64, func(), error) {
		link, err := nettest.NewLink(sbAddr)
		if err != nil {
			return "", "", nil, nil, err
		}
		toxics := []nettest.Toxic{
			{Type: "latency", Stream: "upstream", Attributes: map[string]any{"latency": 10, "jitter": 8}},
			{Type: "bandwidth", Stream: "upstream", Attributes: map[string]any{"rate": c.toxiRate}},
			{Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 10, "jitter": 8}},
			{Name: "reset_first", Type: "reset_peer", Stream: "upstream", Toxicity: 0.03, Attributes: map[string]any{"timeout": 0}},
			{Name: "cut", Type: "limit_data", Stream: "upstream", Toxicity: 0.08, Attributes: map[string]any{"bytes": 300 << 10}},
		}
		for _, t := range toxics {
			if err := link.Add(t); err != nil {
				link.Close()
				return "", "", nil, nil, err
			}
		}
		desc := fmt.Sprintf("toxiproxy: latency 10±8 ms each way, bandwidth %d KB/s per connection, reset_peer on 3%% of connections, "+
			"limit_data 300 KiB on 8%%, every %s on average a reset of every busy connection (%.0f%%) or a %s blackhole",
			c.toxiRate, c.toxiEvery, 100*(1-c.toxiHoles), c.toxiHole)
		var injected atomic.Int64
		dctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r := rand.New(rand.NewPCG(c.seed, 0x70c1))
			for {
				// Exponential gaps: faults come when they will, not on a beat.
				gap := time.Duration(r.ExpFloat64() * float64(c.toxiEvery))
				select {
				case <-dctx.Done():
					return
				case <-time.After(gap):
				}
				hole := r.Float64() < c.toxiHoles
				name, typ, hold := "burst", "reset_peer", 30*time.Millisecond
				if hole {
					name, typ, hold = "hole", "timeout", c.toxiHole
				}
				// reset_peer with timeout 0 resets a connection on its next
				// bytes; timeout with 0 swallows them and never closes.
				if err := link.Add(nettest.Toxic{Name: name, Type: typ, Stream: "upstream", Attributes: map[string]any{"timeout": 0}}); err != nil {
					logf("toxi: %v", err)
					continue
				}
				injected.Add(1)
				select {
				case <-dctx.Done():
				case <-time.After(hold):
				}
				if err := link.Remove(name); err != nil {
					logf("toxi: %v", err)
				}
				debugf("toxi: %s for %s", name, hold)
			}
		}()
		return link.URL, desc, injected.Load, func() { stop(); <-done; link.Close() }, nil
	}
	return runMix(ctx, c, dir, rep, "toxiproxy", c.toxiMix, c.seed+2, fr)
}
