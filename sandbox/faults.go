package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Faults is a seeded description of how the sandbox misbehaves, so a
// client's recovery can be watched and tested. Probabilities are per
// upload request.
type Faults struct {
	Seed      uint64
	Reset     float64       // close the connection part-way through a request body
	Err5xx    float64       // answer 500, 502, 503 or 504 without touching the session
	Stall     float64       // hang without reading or answering
	StallFor  time.Duration // how long a stall lasts at most (the client usually gives up first)
	Partial   float64       // keep fewer bytes than arrived (rounded down to 256 KiB) and say so in Range
	DropFinal float64       // store everything, create the resource, close without answering
	Latency   time.Duration // added before every upload request
	Rate      int64         // bytes per second for all request bodies together; 0 = no cap
}

const defaultStallFor = 5 * time.Minute

// ParseFaults reads a spec such as
// "seed=7,reset=0.05,err5xx=0.05,stall=0.02,partial=0.2,dropfinal=0.1,latency=20ms,rate=20MB".
// "" and "none" mean no faults.
func ParseFaults(spec string) (Faults, error) {
	f := Faults{Seed: 1, StallFor: defaultStallFor}
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "none" || spec == "off" {
		return f, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return f, fmt.Errorf("fault %q: expected NAME=VALUE", kv)
		}
		var err error
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "seed":
			f.Seed, err = strconv.ParseUint(v, 10, 64)
		case "reset":
			f.Reset, err = parseProb(v)
		case "err5xx", "5xx":
			f.Err5xx, err = parseProb(v)
		case "stall":
			f.Stall, err = parseProb(v)
		case "stallfor":
			f.StallFor, err = time.ParseDuration(v)
		case "partial":
			f.Partial, err = parseProb(v)
		case "dropfinal":
			f.DropFinal, err = parseProb(v)
		case "latency":
			f.Latency, err = time.ParseDuration(v)
			if err == nil && (f.Latency < 0 || f.Latency > time.Minute) {
				err = errors.New("must be between 0 and 1m")
			}
		case "rate":
			f.Rate, err = parseRate(v)
		default:
			return f, fmt.Errorf("unknown fault %q (known: seed, reset, err5xx, stall, stallfor, partial, dropfinal, latency, rate)", k)
		}
		if err != nil {
			return f, fmt.Errorf("fault %s=%s: %v", k, v, err)
		}
	}
	return f, nil
}

func parseProb(v string) (float64, error) {
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || p < 0 || p > 1 || p != p {
		return 0, errors.New("must be a probability between 0 and 1")
	}
	return p, nil
}

// parseRate reads bytes per second: "500KB", "20MB", "1MiB", "65536".
func parseRate(v string) (int64, error) {
	v = strings.TrimSuffix(strings.TrimSpace(v), "/s")
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1e12 {
		return 0, errors.New("must be a positive byte rate such as 20MB (per second)")
	}
	return int64(n * float64(mult)), nil
}

// String is the spec in canonical form.
func (f Faults) String() string {
	var parts []string
	add := func(name string, p float64) {
		if p > 0 {
			parts = append(parts, name+"="+strconv.FormatFloat(p, 'g', -1, 64))
		}
	}
	add("reset", f.Reset)
	add("err5xx", f.Err5xx)
	add("stall", f.Stall)
	add("partial", f.Partial)
	add("dropfinal", f.DropFinal)
	if f.Stall > 0 && f.StallFor != defaultStallFor {
		parts = append(parts, "stallfor="+f.StallFor.String())
	}
	if f.Latency > 0 {
		parts = append(parts, "latency="+f.Latency.String())
	}
	if f.Rate > 0 {
		parts = append(parts, "rate="+strconv.FormatInt(f.Rate, 10)+"B")
	}
	if len(parts) == 0 {
		return "none"
	}
	return "seed=" + strconv.FormatUint(f.Seed, 10) + "," + strings.Join(parts, ",")
}

type faultInjector struct {
	mu  sync.Mutex
	f   Faults
	rng *rand.Rand
	lim limiter
}

func newFaultInjector(f Faults) *faultInjector {
	fi := &faultInjector{}
	fi.set(f)
	return fi
}

func (fi *faultInjector) set(f Faults) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.f = f
	fi.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	fi.lim.setRate(f.Rate)
}

func (fi *faultInjector) get() Faults {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	return fi.f
}

// faultPlan is what the injector decided for one request.
type faultPlan struct {
	latency   time.Duration
	stall     time.Duration // 0 = no stall
	err5xx    int           // 0 = none
	resetAt   int64         // body bytes after which the connection drops; -1 = none
	partial   bool
	dropFinal bool
	keepFrac  float64 // for partial: which fraction of the new bytes to keep
}

var serverErrors = []int{500, 502, 503, 504}

func (fi *faultInjector) plan(r *http.Request) faultPlan {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	f, rng := fi.f, fi.rng
	p := faultPlan{latency: f.Latency, resetAt: -1}
	hit := func(prob float64) bool { return prob > 0 && rng.Float64() < prob }
	switch {
	case hit(f.Stall):
		p.stall = f.StallFor
	case hit(f.Err5xx):
		p.err5xx = serverErrors[rng.IntN(len(serverErrors))]
	case r.ContentLength != 0 && hit(f.Reset):
		n := r.ContentLength
		if n < 0 {
			n = 1 << 20
		}
		p.resetAt = rng.Int64N(n)
	}
	p.partial = hit(f.Partial)
	p.keepFrac = rng.Float64()
	p.dropFinal = hit(f.DropFinal)
	return p
}

func (fi *faultInjector) active() bool {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	f := fi.f
	return f.Reset+f.Err5xx+f.Stall+f.Partial+f.DropFinal > 0 || f.Latency > 0 || f.Rate > 0
}

// errInjectedReset ends a body read when the plan drops the connection.
var errInjectedReset = errors.New("sandbox: connection reset by fault injection")

// beginFaults applies the faults that act before the handler. It returns
// the plan and whether the request was already answered (or dropped).
func (s *Sandbox) beginFaults(w http.ResponseWriter, r *http.Request) (faultPlan, bool) {
	if !s.faults.active() {
		return faultPlan{resetAt: -1}, false
	}
	p := s.faults.plan(r)
	if p.latency > 0 && !s.sleep(r, p.latency) {
		s.refuse(w, r, errShuttingDown)
		return p, true
	}
	if p.stall > 0 {
		s.stats.faults.Add(1)
		s.stallConn(w, r, p.stall)
		return p, true
	}
	if p.err5xx != 0 {
		s.stats.faults.Add(1)
		// The body stays unread, so this connection cannot be reused.
		w.Header().Set("Connection", "close")
		writeError(w, errorf(p.err5xx, "backendError", "Backend Error (injected by the sandbox's fault spec)"))
		return p, true
	}
	if p.resetAt >= 0 || s.faults.lim.enabled() {
		r.Body = &faultBody{r: r.Body, s: s, req: r, resetAt: p.resetAt}
	}
	return p, false
}

func (s *Sandbox) sleep(r *http.Request, d time.Duration) bool {
	return pause(r, s.closing, d)
}

// pause waits d, and says whether it did: the request may end first, or
// the sandbox close (closing).
func pause(r *http.Request, closing <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-closing:
	}
	return false
}

// stallConn takes the connection away from net/http and leaves it silent:
// nothing read, nothing answered, as a server behind a dead network looks.
// Hijacking also keeps a stall from holding up a server's shutdown.
func (s *Sandbox) stallConn(w http.ResponseWriter, r *http.Request, d time.Duration) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.sleep(r, d)
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.closing:
	}
}

// errShuttingDown answers a request the sandbox gave up on while stopping.
var errShuttingDown = errorf(http.StatusServiceUnavailable, "backendError", "The sandbox is stopping; ask where the upload stands once it is back.")

// abortConn closes the connection without an answer.
func abortConn() { panic(http.ErrAbortHandler) }

// abortIfInjected drops the connection when a body read failed because of
// an injected reset: the client must see a broken connection, not a 400.
func abortIfInjected(err error) {
	if errors.Is(err, errInjectedReset) {
		abortConn()
	}
}

// faultBody injects a reset and the bandwidth cap into a request body.
type faultBody struct {
	r       io.ReadCloser
	s       *Sandbox
	req     *http.Request
	read    int64
	resetAt int64
}

func (b *faultBody) Read(p []byte) (int, error) {
	if b.resetAt >= 0 {
		left := b.resetAt - b.read
		if left <= 0 {
			b.s.stats.faults.Add(1)
			return 0, errInjectedReset
		}
		if int64(len(p)) > left {
			p = p[:left]
		}
	}
	if len(p) > 32<<10 {
		p = p[:32<<10]
	}
	if !b.s.faults.lim.wait(b.req, b.s.closing, len(p)) {
		return 0, errInjectedReset
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

func (b *faultBody) Close() error { return b.r.Close() }

// limiter is a shared bandwidth cap: each read reserves its time slot.
type limiter struct {
	mu   sync.Mutex
	rate int64
	next time.Time
}

func (l *limiter) setRate(r int64) {
	l.mu.Lock()
	l.rate = r
	l.mu.Unlock()
}

func (l *limiter) enabled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate > 0
}

func (l *limiter) wait(r *http.Request, closing <-chan struct{}, n int) bool {
	l.mu.Lock()
	if l.rate <= 0 {
		l.mu.Unlock()
		return true
	}
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	d := l.next.Sub(now)
	l.next = l.next.Add(time.Duration(float64(n) / float64(l.rate) * float64(time.Second)))
	l.mu.Unlock()
	if d <= 0 {
		return true
	}
	return pause(r, closing, d)
}

func (s *Sandbox) serveFaults(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
		if err != nil {
			writeError(w, badRequest("fault spec too long or unreadable: %v", err))
			return
		}
		spec := strings.TrimSpace(string(body))
		if strings.HasPrefix(spec, "{") {
			var in struct {
				Faults string `json:"faults"`
			}
			if err := json.Unmarshal(body, &in); err != nil {
				writeError(w, badRequest("fault body is not JSON of the form {\"faults\":\"SPEC\"}: %v", err))
				return
			}
			spec = in.Faults
		}
		if err := s.SetFaults(spec); err != nil {
			writeError(w, badRequest("%v", err))
			return
		}
		s.log.Info("faults changed", "faults", s.Faults())
	}
	writeJSON(w, http.StatusOK, map[string]string{"faults": s.Faults()})
}
