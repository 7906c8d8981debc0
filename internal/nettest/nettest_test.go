package nettest_test

// Carrier's engine through toxiproxy to the sandbox: each upload must end
// byte-identical, as one object, whatever the link does. The tests assert
// outcomes, never durations: a loaded machine only makes them slower.

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"carrier/internal/nettest"
	"carrier/sandbox"
	"carrier/transfer"
)

const token = "nettest-token"

type env struct {
	srv    *nettest.Server
	link   *nettest.Link
	q      *transfer.Queue
	events chan transfer.Event
}

func newEnv(t *testing.T, cfg transfer.Config) *env {
	t.Helper()
	return newEnvWith(t, cfg, "", true)
}

// newEnvWith starts the sandbox with its faults, and toxiproxy in front
// of it if proxied (else the engine talks to the sandbox directly).
func newEnvWith(t *testing.T, cfg transfer.Config, faults string, proxied bool) *env {
	t.Helper()
	srv, err := nettest.StartSandbox(sandbox.Options{Dir: t.TempDir(), Token: token, NoSync: true, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, srv, cfg, proxied)
}

// newEnvOn is newEnvWith on a sandbox the test started.
func newEnvOn(t *testing.T, srv *nettest.Server, cfg transfer.Config, proxied bool) *env {
	t.Helper()
	t.Cleanup(srv.Close)
	e := &env{srv: srv, events: make(chan transfer.Event, 1<<14)}
	if proxied {
		link, err := nettest.NewLink(srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(link.Close)
		e.link = link
	}
	cfg.StateDir = t.TempDir()
	cfg.Auth = transfer.StaticToken(token)
	cfg.Workers = 1
	cfg.Events = e.events
	if cfg.RetryBase == 0 {
		cfg.RetryBase = 5 * time.Millisecond
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 30
	}
	q, err := transfer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	e.q = q
	return e
}

// add writes a file of random bytes and queues its upload through the
// proxy.
func (e *env) add(t *testing.T, name string, size int) []byte {
	t.Helper()
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(size), 13))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	base := e.srv.URL
	if e.link != nil {
		base = e.link.URL
	}
	u := base + "/upload/storage/v1/b/nettest/o?name=" + url.QueryEscape(name)
	if _, err := e.q.Add(transfer.Spec{URL: u, ContentType: "application/octet-stream", Path: path}); err != nil {
		t.Fatal(err)
	}
	return data
}

// await reads events until the job ends, calling each on every event, and
// returns the retries seen. The deadline only bounds a hang.
func (e *env) await(t *testing.T, each func(transfer.Event)) (retries []transfer.Event) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case ev := <-e.events:
			if each != nil {
				each(ev)
			}
			switch ev.Kind {
			case transfer.EventRetrying:
				retries = append(retries, ev)
			case transfer.EventDone:
				return retries
			case transfer.EventFailed:
				t.Fatalf("upload failed: %s", ev.Message)
			}
		case <-deadline:
			t.Fatalf("the upload did not end; jobs: %+v", e.q.Jobs())
		}
	}
}

// check reads the object back from the sandbox itself and counts what
// the sandbox made: one object, the file's bytes.
func (e *env) check(t *testing.T, name string, want []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/storage/v1/b/nettest/o/"+url.PathEscape(name)+"?alt=media", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("read back: %d %s", resp.StatusCode, got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the object differs from the file: %d bytes, want %d", len(got), len(want))
	}
	if st := e.srv.SB.Stats(); st.Completions != 1 || st.SessionsCompleted != 1 {
		t.Fatalf("want one object from one session, the sandbox made %d objects and completed %d sessions", st.Completions, st.SessionsCompleted)
	}
}

func TestToxiLatencyBandwidth(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	if err := e.link.SlowLink(nettest.Slow{RateKBs: 6000, LatencyMs: 20, JitterMs: 10, PieceBytes: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	want := e.add(t, "slow", 3<<20+17)
	if r := e.await(t, nil); len(r) > 0 {
		t.Errorf("an undisturbed slow link made the engine retry: %s", r[0].Reason)
	}
	e.check(t, "slow", want)
	// Through the proxy, so the link really was in the way.
	if wire := e.srv.WireBytes(); wire < int64(len(want)) {
		t.Fatalf("the server read %d bytes for a file of %d", wire, len(want))
	}
	// Nothing lost on the way, so nothing may go twice.
	if got := e.srv.SB.Stats().BytesReceived; got != int64(len(want)) {
		t.Fatalf("the sandbox received %d media bytes for a file of %d on an undisturbed link", got, len(want))
	}
}

// Connections die three ways at once: toxiproxy resets some on their first
// bytes (reset_peer), closes others after 192 KiB (limit_data, mid-chunk),
// and the server resets every connection it holds every 150 ms.
func TestToxiResets(t *testing.T) {
	e := newEnv(t, transfer.Config{})
	if err := e.link.SlowLink(nettest.Slow{RateKBs: 4000, LatencyMs: 5}); err != nil {
		t.Fatal(err)
	}
	for _, tx := range []nettest.Toxic{
		{Name: "reset", Type: "reset_peer", Stream: "upstream", Toxicity: 0.25, Attributes: map[string]any{"timeout": 0}},
		{Name: "cut", Type: "limit_data", Stream: "upstream", Toxicity: 0.5, Attributes: map[string]any{"bytes": 192 << 10}},
	} {
		if err := e.link.Add(tx); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	resets := e.srv.ResetEvery(ctx, 150*time.Millisecond)
	want := e.add(t, "resets", 4<<20+5)
	retries := e.await(t, nil)
	cancel()
	n := resets()
	if len(retries) == 0 {
		t.Fatalf("no retry under resets (%d server-side resets): the faults did not reach the engine", n)
	}
	e.check(t, "resets", want)
	t.Logf("%d retries, %d server-side resets", len(retries), n)
}

// A blackhole (toxiproxy's timeout toxic with timeout 0 swallows every
// byte and closes nothing) mid-upload: only the stall timeout gets the
// upload out of it. It ends once the engine gave up a request for a stall.
func TestToxiBlackhole(t *testing.T) {
	e := newEnv(t, transfer.Config{StallTimeout: 300 * time.Millisecond})
	if err := e.link.SlowLink(nettest.Slow{RateKBs: 4000, LatencyMs: 5}); err != nil {
		t.Fatal(err)
	}
	want := e.add(t, "blackhole", 4<<20+3)
	holed, lifted := false, false
	retries := e.await(t, func(ev transfer.Event) {
		switch {
		case !holed && ev.Kind == transfer.EventProgress && ev.Confirmed > 0:
			holed = true
			if err := e.link.Add(nettest.Toxic{Name: "hole", Type: "timeout", Stream: "upstream", Attributes: map[string]any{"timeout": 0}}); err != nil {
				t.Fatal(err)
			}
		case holed && !lifted && ev.Kind == transfer.EventRetrying:
			if !strings.Contains(ev.Reason, "stall") {
				t.Errorf("the blackhole ended in %q, want the stall timeout", ev.Reason)
			}
			lifted = true
			if err := e.link.Remove("hole"); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !holed || !lifted {
		t.Fatalf("the upload ended before the blackhole was tried (holed %v, lifted %v, %d retries)", holed, lifted, len(retries))
	}
	e.check(t, "blackhole", want)
}

// The final answer lost: toxiproxy swallows everything the server sends
// (a downstream blackhole) from the middle of the only chunk on, so the
// upload completes on the server while the engine hears nothing, and its
// status queries are swallowed too. Once the server holds the object the
// hole is lifted: the engine must learn of the object by asking, not make
// a second one.
func TestToxiFinalAnswerLost(t *testing.T) {
	// The engine resets the connection of a request it gives up on, and a
	// reset discards what the proxy still held of the body: the stall
	// timeout is longer than the rest of the body takes at this rate
	// (300 KiB in 1.5 s), so the server has it all, and finishes the
	// upload, before the engine gives the request up in the hole.
	e := newEnv(t, transfer.Config{StallTimeout: 4 * time.Second})
	// Slow enough that the hole is in place long before the body's end.
	if err := e.link.Add(nettest.Toxic{Type: "bandwidth", Stream: "upstream", Attributes: map[string]any{"rate": 200}}); err != nil {
		t.Fatal(err)
	}
	const size = 300 << 10
	mid := e.srv.Reached(size / 2)
	want := e.add(t, "final", size)
	select {
	case <-mid:
	case <-time.After(2 * time.Minute):
		t.Fatal("the body never reached the server's middle")
	}
	if err := e.link.Add(nettest.Toxic{Name: "deaf", Type: "timeout", Stream: "downstream", Attributes: map[string]any{"timeout": 0}}); err != nil {
		t.Fatal(err)
	}
	completedInHole := false
	retries := e.await(t, func(ev transfer.Event) {
		if ev.Kind != transfer.EventRetrying || completedInHole {
			return
		}
		// Each retry is a request given up on in the hole; lift it only
		// once the server has finished the upload, so its answer was lost.
		if e.srv.SB.Stats().SessionsCompleted > 0 {
			completedInHole = true
			if err := e.link.Remove("deaf"); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !completedInHole {
		t.Fatalf("the upload ended without the server finishing it in the hole (%d retries)", len(retries))
	}
	e.check(t, "final", want)
}
