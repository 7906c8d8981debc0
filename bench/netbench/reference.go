package main

// The flaky link for three clients side by side (issue 33): Carrier's
// engine, a paced reference client written for the comparison, and curl,
// each uploading the same file undisturbed and with every connection reset
// every few seconds, through the toxiproxy link of main.go.
//
// The reference client is the small ideal one the issue names: a resumable
// upload in requests of about two seconds' worth, each body written at
// refGain over the rate the last confirmations showed (the first one
// unpaced, to measure), and, after a reset, a status query at once, then
// on from where the server says. It keeps no journal, never waits, and
// knows the link's round trip (the quickest of its small requests).
//
// curl is what a script does with it: the harness starts the session,
// then curl asks where it stands (a PUT of no bytes, Content-Range
// bytes */SIZE) and sends the rest (`curl -T FILE -C OFFSET`, which names
// the range in Content-Range), again at once after each reset. Its bytes
// written are what curl says it sent (size_request + size_upload).

import (
	"bytes"
	"carrier/bench/internal/mdsection"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"carrier/internal/nettest"
	"carrier/sandbox"
)

const (
	refBegin = "<!-- netbench-reference: begin (go run ./bench/netbench -reference; make bench-net) -->"
	refEnd   = "<!-- netbench-reference: end -->"

	refGain    = 1.04            // the reference's pace over the confirmed rate
	refSeconds = 2.0             // seconds of the confirmed rate per request
	refFirst   = 2 << 20         // the first request, unpaced
	refQuantum = 256 << 10       // requests but the last are a multiple of this
	refBurst   = 16 << 10        // what the pace lets go at once
	refPatient = 2 * time.Minute // a request that long is given up on
)

type client struct {
	name string
	run  func(c config, work, file, name string, every time.Duration) (*result, error)
}

func runReference(c config) error {
	work, file, cleanup, err := scratch(c.size)
	if err != nil {
		return err
	}
	defer cleanup()
	clients := []client{
		{"Carrier (its engine, defaults)", upload},
		{"paced reference client", refUpload},
		{"curl (status query, then -T -C OFFSET)", curlUpload},
	}
	if _, err := exec.LookPath("curl"); err != nil {
		return errors.New("curl is not installed (make deps-test installs it)")
	}
	calm := make([][]*result, len(clients))
	flaky := make([][]*result, len(clients))
	for i := range c.rounds {
		for j, cl := range clients {
			fmt.Fprintf(os.Stderr, "netbench: round %d, %s undisturbed\n", i+1, cl.name)
			a, err := cl.run(c, work, file, fmt.Sprintf("calm%d-%d", j, i), 0)
			if err != nil {
				return fmt.Errorf("%s: %w", cl.name, err)
			}
			fmt.Fprintf(os.Stderr, "netbench: round %d, %s, every connection reset every %s\n", i+1, cl.name, c.every)
			b, err := cl.run(c, work, file, fmt.Sprintf("flaky%d-%d", j, i), c.every)
			if err != nil {
				return fmt.Errorf("%s: %w", cl.name, err)
			}
			calm[j], flaky[j] = append(calm[j], a), append(flaky[j], b)
		}
	}
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	w("%s\n\n## The flaky link: Carrier beside a paced reference client and curl (issue 33)\n\n", refBegin)
	w("Measured %s on %s, load average %s. `go run ./bench/netbench -reference -size %dMiB -rate %d -latency %d -piece %d -rounds %d -reset-every %s`%s. "+
		"The toxiproxy link and middlebox of the section above (%d KB/s, %d ms each way); each client uploads the %d MiB "+
		"file undisturbed, then with every connection reset every %s, %d rounds, medians. Carrier: its engine with its "+
		"defaults (pacing at 1.05 times the confirmed rate, chunks sized for a confirmation every few seconds). The paced "+
		"reference client (`bench/netbench/reference.go`): requests of %.0f s of the confirmed rate, each body written at "+
		"%.2f times it (the first, %d MiB, unpaced), a status query at once after a reset. curl %s: the session started "+
		"by the harness, then a status query and `curl -T FILE -C OFFSET` for the rest, again at once after each reset, "+
		"unpaced. Written: the bytes the client wrote into the link (headers included), over the file's size.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), platform(), loadAvg(), c.size>>20, c.rateKBs, c.latencyMs, c.piece, c.rounds, c.every, label(c),
		c.rateKBs, c.latencyMs, c.size>>20, c.every, c.rounds, refSeconds, refGain, refFirst>>20, curlVersion())
	w("| client | undisturbed | with resets | time / undisturbed | written / file | goal (time, written) | |\n|---|---|---|---|---|---|---|\n")
	for j, cl := range clients {
		var ct, ft []time.Duration
		var fw []float64
		for i := range calm[j] {
			ct, ft = append(ct, calm[j][i].took), append(ft, flaky[j][i].took)
			fw = append(fw, float64(flaky[j][i].written)/float64(flaky[j][i].size))
		}
		ratio := medianDur(ft).Seconds() / medianDur(ct).Seconds()
		wr := quantile(fw, 0.5)
		met := ""
		if j == 0 {
			met = verdict(ratio <= 1.25 && wr <= 1.05)
		}
		w("| %s | %.1f s | %.1f s | %.2fx | %.3fx | at most 1.25x, 1.05x | %s |\n", cl.name, medianDur(ct).Seconds(), medianDur(ft).Seconds(), ratio, wr, met)
	}
	w("\nEach round, with resets (time, written / file):\n\n| round |")
	for _, cl := range clients {
		w(" %s |", cl.name)
	}
	w("\n|---|%s\n", strings.Repeat("---|", len(clients)))
	for i := range c.rounds {
		w("| %d |", i+1)
		for j := range clients {
			r := flaky[j][i]
			w(" %.1f s, %.3fx |", r.took.Seconds(), float64(r.written)/float64(r.size))
		}
		w("\n")
	}
	w("%s\n", refEnd)
	md := b.String()
	fmt.Print(md)
	if c.out != "" {
		return mdsection.Write(c.out, md, refBegin, refEnd)
	}
	return nil
}

// flakyLink starts a sandbox behind a toxiproxy link as upload does, and
// resets every connection every period (every > 0) until stop is called,
// which returns the number of resets.
func flakyLink(c config, dir string, every time.Duration) (srv *nettest.Server, link *nettest.Link, stop func() int, err error) {
	srv, err = nettest.StartSandbox(sandbox.Options{Dir: filepath.Join(dir, "sandbox"), Token: token, NoSync: true})
	if err != nil {
		return nil, nil, nil, err
	}
	link, err = nettest.NewLink(srv.Addr)
	if err != nil {
		srv.Close()
		return nil, nil, nil, err
	}
	if err := link.SlowLink(nettest.Slow{RateKBs: c.rateKBs, LatencyMs: c.latencyMs, PieceBytes: c.piece}); err != nil {
		link.Close()
		srv.Close()
		return nil, nil, nil, err
	}
	stop = func() int { return 0 }
	if every > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		wait := srv.ResetEvery(ctx, every)
		stop = func() int { cancel(); return wait() }
	}
	return srv, link, stop, nil
}

// checkDone fills in what the sandbox saw and checks it made one object.
func checkDone(name string, srv *nettest.Server, res *result) (*result, error) {
	st := srv.SB.Stats()
	res.wire, res.media = srv.WireBytes(), st.BytesReceived
	res.sessions, res.objects = st.SessionsCreated, st.Completions
	if res.objects != 1 {
		return nil, fmt.Errorf("%s: the sandbox made %d objects for one upload", name, res.objects)
	}
	return res, nil
}

// refUpload is the paced reference client's upload.
func refUpload(c config, work, file, name string, every time.Duration) (*result, error) {
	srv, link, stop, err := flakyLink(c, filepath.Join(work, name), every)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	defer link.Close()
	defer stop()
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var written atomic.Int64
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	hc := &http.Client{
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dialer.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &countConn{Conn: c, n: &written}, nil
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       refPatient,
	}
	defer hc.CloseIdleConnections()
	rc := &refClient{hc: hc, f: f, size: c.size, rtt: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	if err := rc.start(ctx, link.URL+"/upload/storage/v1/b/netbench/o?uploadType=resumable&name="+url.QueryEscape(name)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := rc.send(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res := &result{size: c.size, took: time.Since(start)}
	res.resets = stop()
	res.written = written.Load()
	return checkDone(name, srv, res)
}

type refClient struct {
	hc      *http.Client
	f       *os.File
	size    int64
	session string
	rtt     time.Duration // the quickest small request's time
	rate    float64       // confirmed bytes per second; 0: not measured yet
	off     int64         // what the server holds
}

// small times a request without a body, for the round trip.
func (rc *refClient) small(req *http.Request) (*http.Response, error) {
	t := time.Now()
	resp, err := rc.hc.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rc.rtt = min(rc.rtt, time.Since(t))
	return resp, nil
}

// start opens the session, again at once when the link resets it.
func (rc *refClient) start(ctx context.Context, target string) error {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, "POST", target, strings.NewReader("{}"))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json; charset=UTF-8")
		req.Header.Set("X-Upload-Content-Type", "application/octet-stream")
		req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(rc.size, 10))
		resp, err := rc.small(req)
		if err != nil {
			continue
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Location") == "" {
			return fmt.Errorf("the session's start answered %s", resp.Status)
		}
		rc.session = resp.Header.Get("Location")
		return nil
	}
	return ctx.Err()
}

// status asks the server where the upload stands; done when it holds it
// all.
func (rc *refClient) status(ctx context.Context) (done bool, err error) {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, "PUT", rc.session, http.NoBody)
		if err != nil {
			return false, err
		}
		req.Header.Set("Content-Range", fmt.Sprintf("bytes */%d", rc.size))
		resp, err := rc.small(req)
		if err != nil {
			continue // reset again: ask again
		}
		return rc.answer(resp)
	}
	return false, ctx.Err()
}

// answer reads where a response leaves the upload.
func (rc *refClient) answer(resp *http.Response) (done bool, err error) {
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated:
		rc.off = rc.size
		return true, nil
	case http.StatusPermanentRedirect:
		rc.off = 0
		if rg := resp.Header.Get("Range"); rg != "" {
			var last int64
			if _, err := fmt.Sscanf(rg, "bytes=0-%d", &last); err != nil {
				return false, fmt.Errorf("range %q: %v", rg, err)
			}
			rc.off = last + 1
		}
		return false, nil
	}
	return false, fmt.Errorf("the server answered %s", resp.Status)
}

// send sends the rest of the file, request by request.
func (rc *refClient) send(ctx context.Context) error {
	for {
		n := int64(refFirst)
		if rc.rate > 0 {
			n = max(refQuantum, int64(rc.rate*refSeconds)/refQuantum*refQuantum)
		}
		n = min(n, rc.size-rc.off)
		body := &pacedBody{r: io.NewSectionReader(rc.f, rc.off, n), pace: rc.rate * refGain}
		req, err := http.NewRequestWithContext(ctx, "PUT", rc.session, body)
		if err != nil {
			return err
		}
		req.ContentLength = n
		req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", rc.off, rc.off+n-1, rc.size))
		from := rc.off
		resp, err := rc.hc.Do(req)
		var done bool
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answered := time.Now()
			if done, err = rc.answer(resp); err != nil {
				return err
			}
			// The rate the server confirmed: what this request added over
			// its time less a round trip.
			if took := answered.Sub(body.first) - rc.rtt; rc.off > from && !body.first.IsZero() && took > 0 {
				rc.rate = float64(rc.off-from) / took.Seconds()
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		} else if done, err = rc.status(ctx); err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// pacedBody writes a body at pace bytes per second (0: as fast as it
// goes), refBurst at most at once.
type pacedBody struct {
	r     io.Reader
	pace  float64
	first time.Time // the body's first read
	sent  int64
}

func (b *pacedBody) Read(p []byte) (int, error) {
	now := time.Now()
	if b.first.IsZero() {
		b.first = now
	}
	if b.pace > 0 {
		p = p[:min(len(p), refBurst)]
		// The time the bytes sent so far were due: wait for it.
		due := b.first.Add(time.Duration(float64(b.sent) / b.pace * float64(time.Second)))
		if wait := due.Sub(now); wait > 0 {
			time.Sleep(wait)
		}
	}
	n, err := b.r.Read(p)
	b.sent += int64(n)
	return n, err
}

// curlUpload is curl's upload, driven as a script would drive it.
func curlUpload(c config, work, file, name string, every time.Duration) (*result, error) {
	srv, link, stop, err := flakyLink(c, filepath.Join(work, name), every)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	defer link.Close()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	// The session is started as the reference starts it; the harness
	// does it, curl is only the sender.
	rc := &refClient{hc: &http.Client{Timeout: refPatient}, size: c.size, rtt: time.Hour}
	defer rc.hc.CloseIdleConnections()
	if err := rc.start(ctx, link.URL+"/upload/storage/v1/b/netbench/o?uploadType=resumable&name="+url.QueryEscape(name)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var written int64
	// curl prints what it sent and the answer's status; the headers go to
	// a file, for the status query's Range.
	headers := filepath.Join(work, name+".headers")
	const wout = "%{size_request} %{size_upload} %{http_code}"
	curl := func(args ...string) (code int, err error) {
		args = append([]string{"-sS", "-o", "/dev/null", "-D", headers, "-w", wout, "-X", "PUT"}, args...)
		args = append(args, rc.session)
		var out, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "curl", args...)
		cmd.Stdout, cmd.Stderr = &out, &stderr
		runErr := cmd.Run()
		var req, up int64
		fmt.Sscan(out.String(), &req, &up, &code)
		written += req + up
		if runErr != nil && code == 0 {
			return 0, fmt.Errorf("%v: %s", runErr, strings.TrimSpace(stderr.String()))
		}
		return code, nil
	}
	for {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		code, err := curl("-H", fmt.Sprintf("Content-Range: bytes */%d", c.size), "-H", "Content-Length: 0")
		if err != nil {
			continue // reset: ask again
		}
		if code == http.StatusOK || code == http.StatusCreated {
			break
		}
		if code != http.StatusPermanentRedirect {
			return nil, fmt.Errorf("%s: the status query answered %d", name, code)
		}
		off := int64(0)
		if h, err := os.ReadFile(headers); err == nil {
			for _, l := range strings.Split(string(h), "\n") {
				if v, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(l)), "range: bytes=0-"); ok {
					last, err := strconv.ParseInt(v, 10, 64)
					if err == nil {
						off = last + 1
					}
				}
			}
		}
		code, err = curl("-T", file, "-C", strconv.FormatInt(off, 10))
		if err == nil && (code == http.StatusOK || code == http.StatusCreated) {
			break
		}
	}
	res := &result{size: c.size, took: time.Since(start)}
	res.resets = stop()
	res.written = written
	return checkDone(name, srv, res)
}

func curlVersion() string {
	out, err := exec.Command("curl", "--version").Output()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}
