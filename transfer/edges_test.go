package transfer

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The promises of the engine's edges, each pinned by a test that fails
// when it breaks (make mutation measures how many deliberate bugs they
// catch; docs/RELIABILITY.md, Mutation).

// fakeAckProbe stands in for a socket's TCP_INFO: the count it reports is
// the test's.
type fakeAckProbe struct {
	mu sync.Mutex
	n  int64
	ok bool
}

func (p *fakeAckProbe) acked() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, p.ok
}

func (p *fakeAckProbe) set(n int64, ok bool) {
	p.mu.Lock()
	p.n, p.ok = n, ok
	p.mu.Unlock()
}

// A request's acknowledged bytes are counted from the connection's count
// when the request got it (the connection carried earlier requests),
// never more than the body bytes written, never less than reported
// before; a probe that cannot read tells nothing.
func TestEdgeAckTrackerCountsFromItsBase(t *testing.T) {
	p := &fakeAckProbe{n: 1000, ok: true}
	tr := &ackTracker{}
	tr.mu.Lock()
	tr.probe, tr.base = p, 1000 // as GotConn sets them
	tr.mu.Unlock()
	steps := []struct {
		acked, written int64
		ok             bool
		want           int64
		wantOK         bool
	}{
		{1000, 0, true, 0, true},
		{1300, 500, true, 300, true},   // from the base
		{2000, 500, true, 500, true},   // the request's header counts as body: never past what was written
		{2000, 900, true, 900, true},   //
		{1100, 900, true, 900, true},   // never back
		{1100, 900, false, 0, false},   // unreadable: nothing known
		{5000, 4000, true, 4000, true}, // then on
	}
	for i, s := range steps {
		p.set(s.acked, s.ok)
		tr.written.Store(s.written)
		got, ok := tr.body()
		if got != s.want || ok != s.wantOK {
			t.Fatalf("step %d (acked %d, written %d): body %d, %v; want %d, %v", i, s.acked, s.written, got, ok, s.want, s.wantOK)
		}
	}
	if n, ok := (&ackTracker{}).body(); n != 0 || ok {
		t.Errorf("a request that got no probe tells %d, %v", n, ok)
	}
}

// Drive reports a SHA-256 (hex) of what it stores: a job that has the
// file's compares them, and one that differs fails as not verified,
// whatever else the server says. The job has the SHA-256 as a sum it
// names (Spec.Checksums), as the source sum of a record that names none
// (records from before Record.SourceSum, which the standalone Uploader's
// are), or as the caller's (Spec.SHA256).
func TestEdgeDriveSHA256Compared(t *testing.T) {
	for _, how := range []string{"source", "named", "given"} {
		for _, right := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s,right=%v", how, right), func(t *testing.T) {
				f := newFake(t)
				path, data := writeFile(t, 5000)
				held := sha(data)
				if !right {
					held = sha(append(data, 1))
				}
				f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
					if kind != "chunk" {
						return false
					}
					f.session(discardWriter{}, r, s)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(200)
					fmt.Fprintf(w, `{"id":"x","size":"5000","sha256Checksum":%q}`, held)
					return true
				}
				rec := uploadRecord(t, f.url(), path, ChunkQuantum)
				switch how {
				case "named":
					rec.Checksums = []string{SumSHA256}
				case "given":
					rec.SHA256 = sha(data)
				}
				res, err := NewUploader(Uploader{}).Upload(ctxT(t), Work{Record: rec, Sink: &recSink{}})
				if right {
					if err != nil || res == nil || res.Verified != SumSHA256 {
						t.Fatalf("the right SHA-256: %v, %+v; want verified by it", err, res)
					}
					return
				}
				if !errors.Is(err, ErrNotVerified) || !strings.Contains(err.Error(), sha(data)) {
					t.Fatalf("a wrong SHA-256 reported: %v; want ErrNotVerified naming the file's", err)
				}
			})
		}
	}
}

// A need that fails while the job that needs it is already waiting says
// so on the waiting job: the need is held at its start until the job is
// queued behind it, so the failure comes after (recheckWaiting's path,
// not Add's).
func TestEdgeNeedFailingAfterTheJobWaitsBlocksIt(t *testing.T) {
	f := newFake(t)
	gate := make(chan struct{})
	f.hook = func(kind string, _ int, w http.ResponseWriter, r *http.Request, _ *fakeSession) bool {
		if kind != "start" || r.URL.Query().Get("name") != "a" {
			return false
		}
		<-gate
		googleError(w, 400, "INVALID_ARGUMENT", "invalid", "refused a")
		return true
	}
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa, Label: "Holiday.mov"})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != "" {
		t.Fatalf("queued behind a job under way: %s, blocked %q", s.State, s.Blocked)
	}
	close(gate)
	if e := h.finish(a); e.Kind != EventFailed {
		t.Fatalf("need: %s", e)
	}
	e := h.await(func(e Event) bool { return e.Job == c && e.Kind == EventWaiting && e.Snap.Blocked != "" })
	if !strings.Contains(e.Snap.Blocked, `"Holiday.mov"`) || !strings.Contains(e.Snap.Blocked, "failed") {
		t.Errorf("blocked says %q", e.Snap.Blocked)
	}
	if s, _ := h.q.Job(c); s.State != StateWaiting || s.Blocked != e.Snap.Blocked {
		t.Errorf("the job is %s, blocked %q", s.State, s.Blocked)
	}
}

// A server's text that is not Google's form keeps its first line, cut at
// 200 bytes; control characters (C0, DEL, C1) become spaces, the rest of
// Unicode (from U+00A0) stays.
func TestEdgeErrorTextCutAndPrintable(t *testing.T) {
	for _, c := range []struct {
		body, want string
	}{
		{strings.Repeat("a", 200), strings.Repeat("a", 200)},
		{strings.Repeat("b", 201), strings.Repeat("b", 200) + "..."},
		{"  first line \nsecond", "first line"},
		{"<html>" + strings.Repeat("c", 300) + "\n</html>", "<html>" + strings.Repeat("c", 194) + "..."},
	} {
		if got := parseAPIError(502, []byte(c.body)).Message; got != c.want {
			t.Errorf("body %.30q...: message %q, want %q", c.body, got, c.want)
		}
	}
	in := "\x00\x1f \x7e\x7f\u0080\u009f\u00a0\u00e9\u200b"
	want := "   \x7e   \u00a0\u00e9\u200b"
	if got := printable(in); got != want {
		t.Errorf("printable(%q) = %q, want %q", in, got, want)
	}
}

// The write rate: 0 on the first sample (no interval yet, never a
// division by zero), bytes over seconds from the oldest sample kept,
// samples closer than 200 ms not kept, those older than the window
// dropped.
func TestEdgeWriteRate(t *testing.T) {
	var m rateMeter
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for i, s := range []struct {
		at    time.Duration
		total int64
		want  float64
	}{
		{ms(0), 0, 0},
		{ms(100), 500, 5000},   // 500 B in 0.1 s (not kept: too close)
		{ms(1000), 2000, 2000}, // 2000 B in 1 s
		{ms(1100), 2100, 2100 / 1.1},
		{ms(5000), 10000, 2000},  // the window reaches back to 0 s
		{ms(6000), 10000, 1600},  // 0 s dropped: (10000-2000)/5 s from 1 s
		{ms(6050), 10000, 0},     // 1 s dropped, 1.1 s was never kept: from 5 s
		{ms(20000), 10000, 0},    // all old: nothing moved since the last kept
		{ms(21000), 13000, 3000}, // from 20 s
	} {
		got := m.add(s.at, s.total)
		if math.IsNaN(got) || math.Abs(got-s.want) > 1e-6 {
			t.Fatalf("sample %d (%s, %d): rate %v, want %v", i, s.at, s.total, got, s.want)
		}
	}
	var one rateMeter
	if r := one.add(ms(3000), 777); r != 0 {
		t.Errorf("the first sample says %v B/s", r)
	}
}

// googUploader is an upload of Google's second dialect to srv.
func googUploader(t *testing.T, srv *httptest.Server) *upload {
	t.Helper()
	u := NewUploader(Uploader{})
	rec := &Record{URL: srv.URL + "/upload", Session: srv.URL + "/session", Size: 1000, Protocol: ProtocolGoogUpload}
	return &upload{u: u, rec: rec, sink: nopSink{}}
}

// Photos' dialect: a status query that answers an error code but says the
// session was cancelled means the session is gone (a new one carries the
// upload), not a refusal; a session stated active without its size is a
// protocol error, never an offset.
func TestEdgeGoogQueryCancelledIsGone(t *testing.T) {
	for _, c := range []struct {
		code   int
		status string
		size   string
		gone   bool
		api    int
	}{
		{400, "cancelled", "", true, 0},
		{404, "canceled", "", true, 0},
		{200, "cancelled", "", true, 0},
		{400, "active", "", false, 400},
		{503, "", "", false, 503},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(hdrStatus, c.status)
			if c.size != "" {
				w.Header().Set(hdrReceived, c.size)
			}
			w.WriteHeader(c.code)
		}))
		off, _, err := googUploader(t, srv).googQuery(ctxT(t))
		srv.Close()
		var gone *sessionGone
		var api *APIError
		switch {
		case c.gone && !errors.As(err, &gone):
			t.Errorf("%d %s: %v (offset %d), want the session gone", c.code, c.status, err, off)
		case c.api != 0 && (!errors.As(err, &api) || api.Code != c.api || errors.As(err, &gone)):
			t.Errorf("%d %s: %v, want the API error %d", c.code, c.status, err, c.api)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(hdrStatus, "active")
		w.WriteHeader(200)
	}))
	defer srv.Close()
	off, _, err := googUploader(t, srv).googQuery(ctxT(t))
	var pe *protocolError
	if !errors.As(err, &pe) || off != 0 {
		t.Errorf("active without %s: offset %d, %v; want a protocol error", hdrReceived, off, err)
	}
}

// An offset refusal goes on where the server says it stands, and only
// where it says so: without X-Goog-Upload-Size-Received (or at the offset
// sent) the refusal stands, never an offset of -1.
func TestEdgeGoogOffsetRefusal(t *testing.T) {
	up := &upload{rec: &Record{Size: 1 << 20}}
	ans := func(code int, status, received string) *answer {
		h := http.Header{}
		if status != "" {
			h.Set(hdrStatus, status)
		}
		if received != "" {
			h.Set(hdrReceived, received)
		}
		return &answer{status: code, header: h, body: []byte(`{"error":{"code":400,"message":"bad offset"}}`)}
	}
	for _, c := range []struct {
		a    *answer
		next int64
		err  int // the API error's code; 0 none
	}{
		{ans(400, "active", "524288"), 524288, 0},
		{ans(400, "active", ""), 0, 400},       // where it stands unsaid
		{ans(400, "active", "262144"), 0, 400}, // at the offset sent: the bytes refused
		{ans(400, "", "524288"), 0, 400},       // the session's state unsaid
		{ans(401, "active", "524288"), 0, 401}, // not an offset refusal
		{ans(429, "active", "524288"), 0, 429},
	} {
		next, _, err := up.googChunkAnswer(c.a, 262144, 262144, false)
		var api *APIError
		if c.err == 0 && (err != nil || next != c.next) {
			t.Errorf("%d %v: %d, %v; want to go on at %d", c.a.status, c.a.header, next, err, c.next)
		}
		if c.err != 0 && (!errors.As(err, &api) || api.Code != c.err || next < 0) {
			t.Errorf("%d %v: %d, %v; want the API error %d", c.a.status, c.a.header, next, err, c.err)
		}
	}
	next, _, err := up.googChunkAnswer(ans(409, "cancelled", ""), 0, 262144, false)
	var gone *sessionGone
	if !errors.As(err, &gone) || next != 0 {
		t.Errorf("cancelled: %d, %v; want the session gone", next, err)
	}
}

// limiterAt is a limit of rate on a fake clock that has run for a
// second, idle.
func limiterAt(rate int64) (*Limiter, *FakeClock) {
	clock := NewFakeClock(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	l := NewLimiter(rate, clock)
	clock.Advance(time.Second)
	return l, clock
}

// takeNow reports whether the limit gives n bytes without waiting (a
// wait ends at once: the stop is closed and the fake clock stands).
func takeNow(l *Limiter, n int) (int, bool) {
	stop := make(chan struct{})
	close(stop)
	g, _, err := l.take(n, stop, nil)
	return g, err == nil
}

// After an idle time the limit lets one piece go at once, not more: what
// an idle limit stores is capped, so a pause is not followed by a burst.
func TestEdgeLimitNoBurstAfterIdle(t *testing.T) {
	l, clock := limiterAt(10240) // pieces of 1 KiB
	clock.Advance(time.Hour)
	if g, ok := takeNow(l, 1<<10); !ok || g != 1<<10 {
		t.Fatalf("after an idle hour the first piece waits (granted %d, %v)", g, ok)
	}
	if _, ok := takeNow(l, 1<<10); ok {
		t.Fatal("after an idle hour a second piece goes at once: a burst")
	}
	// The one refused gave its bytes back: a tenth of a second pays one.
	clock.Advance(100 * time.Millisecond)
	if _, ok := takeNow(l, 1<<10); !ok {
		t.Fatal("a tenth of a second at 10 KiB/s does not pay 1 KiB")
	}
}

// Bytes granted but not sent go back to the limit: a body closed after
// its grant (the request ended) refunds it whole, so the next request
// does not wait for bytes that never went; a refund never stores more
// than one piece ahead.
func TestEdgeLimitRefundOfAClosedBody(t *testing.T) {
	l, _ := limiterAt(10240)
	path, _ := writeFile(t, 64<<10)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	up := &upload{f: f, extra: newSumGroup([]string{SumCRC32C})}
	body := &progressBody{r: up.source(0, 64<<10), limit: l}
	body.Close()
	c, s := tcpPair(t)
	defer c.Close()
	defer s.Close()
	sent, handled, err := body.sendTo(c, 64<<10)
	if !handled || sent != 0 || !errors.Is(err, errBodyClosed) {
		t.Fatalf("a closed body sent %d (handled %v): %v", sent, handled, err)
	}
	// The second's piece went back: the next request's goes at once.
	if _, ok := takeNow(l, 1<<10); !ok {
		t.Fatal("the closed body's grant was not refunded: the next request waits")
	}
	if _, ok := takeNow(l, 1<<10); ok {
		t.Fatal("more went at once than the idle second paid")
	}
	l.refund(1 << 20)
	if _, ok := takeNow(l, 1<<10); !ok {
		t.Fatal("a refund paid nothing")
	}
	if _, ok := takeNow(l, 1<<10); ok {
		t.Fatal("a refund stored more than one piece ahead")
	}
}

// tcpPair is a connected pair of loopback TCP connections.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	if s == nil {
		t.Fatal("no connection accepted")
	}
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// failRename makes the journal's record writes fail for the jobs under
// dir while on is set; the ids it refused are sent to refused.
func failRename(t *testing.T, dir string) (on func(bool), refused func() []string) {
	var mu sync.Mutex
	failing := false
	var ids []string
	old := renameRecord
	swapSeam(t, &renameRecord, func(from, to string) error {
		mu.Lock()
		defer mu.Unlock()
		if failing && strings.HasPrefix(to, dir) && strings.HasSuffix(to, ".json") {
			ids = append(ids, strings.TrimSuffix(filepath.Base(to), ".json"))
			return errors.New("injected: the journal cannot be written")
		}
		return old(from, to)
	})
	return func(b bool) {
			mu.Lock()
			failing = b
			mu.Unlock()
		}, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), ids...)
		}
}

// An Add whose record cannot be written lets the job's lock go: nothing
// holds a job that does not exist.
func TestEdgeFailedSaveOnAddLetsTheLockGo(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, Config{})
	on, refused := failRename(t, h.dir)
	path, _ := writeFile(t, 100)
	on(true)
	if id, err := h.q.Add(Spec{URL: f.url(), ContentType: "text/plain", Path: path}); err == nil {
		t.Fatalf("Add succeeded (job %s) though its record was never written", id)
	}
	on(false)
	ids := refused()
	if len(ids) == 0 {
		t.Fatal("no record write was refused")
	}
	release, err := h.q.journal.Lock(ids[0])
	if err != nil {
		t.Fatalf("the job whose record was never written is still locked: %v", err)
	}
	release()
}

// returnsWithin ends the tests when do has not returned after a long
// while: a job left locked deadlocks its next access.
func returnsWithin(t *testing.T, what string, do func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		do()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		// Neither t.Fatal nor a panic: the test's cleanup (the queue's
		// Close) runs first and waits on the same lock. The goroutines'
		// stacks show who holds it.
		buf := make([]byte, 1<<20)
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s never returned (a lock left held, or a loop that never ends)\n%s", t.Name(), what, buf[:runtime.Stack(buf, true)])
		os.Exit(1)
	}
}

// A person's pause or cancel that the journal refuses does not stand, and
// leaves the job as it was and free: the next look at it, and the next
// command, go through.
func TestEdgeFailedSaveOnAPersonsMoveLeavesTheJobFree(t *testing.T) {
	for _, move := range []string{"pause", "cancel"} {
		t.Run(move, func(t *testing.T) {
			f := newFake(t)
			g := newGates(f, "a")
			h := newHarness(t, Config{})
			on, _ := failRename(t, h.dir)
			pa, _ := writeFile(t, 1000)
			pc, _ := writeFile(t, 3000)
			a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
			c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a}})
			on(true)
			var err error
			returnsWithin(t, move, func() {
				if move == "pause" {
					err = h.q.Pause(c)
				} else {
					err = h.q.Cancel(ctxT(t), c)
				}
			})
			on(false)
			if err == nil {
				t.Fatalf("the %s stood though the journal refused it", move)
			}
			var s Snapshot
			returnsWithin(t, "Job", func() { s, _ = h.q.Job(c) })
			if s.State != StateWaiting {
				t.Fatalf("after a refused %s the job is %s", move, s.State)
			}
			returnsWithin(t, "Pause", func() { err = h.q.Pause(c) })
			if err != nil {
				t.Fatalf("pausing afterwards: %v", err)
			}
			g.open("a")
			h.mustDone(a)
		})
	}
}

// MinSpeed{} is the documented default, 1 KiB/s over 60 s; a rate or a
// window alone takes the other from it; a negative rate is off.
func TestEdgeMinSpeedDefaults(t *testing.T) {
	if DefaultMinSpeed != (MinSpeed{Rate: 1024, Window: time.Minute}) {
		t.Fatalf("DefaultMinSpeed is %+v", DefaultMinSpeed)
	}
	for _, c := range []struct{ in, want MinSpeed }{
		{MinSpeed{}, MinSpeed{Rate: 1024, Window: time.Minute}},
		{MinSpeed{Rate: 4096}, MinSpeed{Rate: 4096, Window: time.Minute}},
		{MinSpeed{Window: 10 * time.Second}, MinSpeed{Rate: 1024, Window: 10 * time.Second}},
		{MinSpeed{Rate: 5, Window: time.Second}, MinSpeed{Rate: 5, Window: time.Second}},
		{MinSpeed{Rate: -1, Window: time.Second}, MinSpeed{Rate: -1}},
	} {
		if got := c.in.withDefaults(); got != c.want {
			t.Errorf("%+v.withDefaults() = %+v, want %+v", c.in, got, c.want)
		}
	}
	if NewUploader(Uploader{}).MinSpeed != DefaultMinSpeed {
		t.Errorf("an Uploader's minimum speed is %+v", NewUploader(Uploader{}).MinSpeed)
	}
}

// A multipart body is the metadata as given (an empty object when none),
// then the media, in two parts of multipart/related, of the exact length
// stated.
func TestEdgeMultipartBodyCarriesTheMetadata(t *testing.T) {
	media := []byte("\x89PNG the picture's bytes")
	for _, c := range []struct{ meta, want string }{
		{`{"title":"x","parents":["p"]}`, `{"title":"x","parents":["p"]}`},
		{"", "{}"},
	} {
		r, n, ct := multipartBody([]byte(c.meta), "image/png", bytes.NewReader(media), int64(len(media)))
		body, err := io.ReadAll(r)
		if err != nil || int64(len(body)) != n {
			t.Fatalf("read %d bytes (%v), stated %d", len(body), err, n)
		}
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || mt != "multipart/related" {
			t.Fatalf("Content-Type %q", ct)
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		var parts [][2]string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(p)
			parts = append(parts, [2]string{p.Header.Get("Content-Type"), string(b)})
		}
		want := [][2]string{{"application/json; charset=UTF-8", c.want}, {"image/png", string(media)}}
		if fmt.Sprint(parts) != fmt.Sprint(want) {
			t.Errorf("metadata %q: parts %q, want %q", c.meta, parts, want)
		}
	}
}

// Windows' numbers, which the journal's reader waits out on Windows:
// ERROR_ACCESS_DENIED is 5 and ERROR_SHARING_VIOLATION 32 (winerror.h).
func TestEdgeWindowsSharingNumbers(t *testing.T) {
	for n, want := range map[syscall.Errno]bool{5: true, 32: true, 2: false, 6: false, 31: false, 33: false} {
		if got := sharingViolation(fmt.Errorf("open x: %w", n)); got != want {
			t.Errorf("errno %d: sharing violation %v, want %v", n, got, want)
		}
	}
}

// Cancelling a session: the server's 499 (and a session already gone,
// or a 2xx) is a cancel; a refusal (403, 500) is not, and says so; a
// connection that fails is an error, never a panic. For both dialects.
func TestEdgeCancelSessionAnswers(t *testing.T) {
	for _, goog := range []bool{false, true} {
		for _, c := range []struct {
			code int
			ok   bool
		}{{499, true}, {204, true}, {200, true}, {404, true}, {410, true}, {403, false}, {500, false}, {400, false}} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.code/100 != 2 && c.code != 499 {
					googleError(w, c.code, "X", "x", "refused")
					return
				}
				w.WriteHeader(c.code)
			}))
			rec := Record{URL: srv.URL + "/upload", Session: srv.URL + "/session?upload_id=x"}
			if goog {
				rec.Protocol = ProtocolGoogUpload
			}
			err := NewUploader(Uploader{}).CancelSession(ctxT(t), rec)
			srv.Close()
			var api *APIError
			switch {
			case c.ok && err != nil:
				t.Errorf("goog=%v %d: %v, want cancelled", goog, c.code, err)
			case !c.ok && (!errors.As(err, &api) || api.Code != c.code):
				t.Errorf("goog=%v %d: %v, want the refusal", goog, c.code, err)
			}
		}
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close() // nothing listens there any more
		rec := Record{URL: srv.URL + "/upload", Session: srv.URL + "/session?upload_id=x"}
		if goog {
			rec.Protocol = ProtocolGoogUpload
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := NewUploader(Uploader{}).CancelSession(ctx, rec)
		cancel()
		var ne *NetError
		if !errors.As(err, &ne) {
			t.Errorf("goog=%v, no server: %v, want a network error", goog, err)
		}
	}
}

// The buffered path (where the kernel cannot send from the file) ends on
// a write error, with what went before it counted.
func TestEdgeBufferedSendEndsOnAWriteError(t *testing.T) {
	path, data := writeFile(t, 3*bulkCopy)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	up := &upload{f: f, extra: newSumGroup([]string{SumCRC32C})}
	tee := up.source(0, int64(len(data))).(*hashTee)
	tee.kernel = func(*net.TCPConn, *os.File, int64, int, func(int) error) (int, error) { return 0, errNoSendFile }
	c, s := tcpPair(t)
	s.Close()
	c.Close() // every write fails
	var n int
	returnsWithin(t, "send", func() {
		n, err = tee.send(c, len(data), make([]byte, bulkCopy), func(int) error { return nil })
	})
	if err == nil || n != 0 {
		t.Fatalf("a closed connection took %d bytes, %v", n, err)
	}
}

// While a chunk is in flight the tracker tells the acknowledged offset
// (from the chunk's start) as it moves, once per change: the fake probe
// moves it, the tracker's own ticker reads it.
func TestEdgeAckTrackerFollows(t *testing.T) {
	p := &fakeAckProbe{n: 7000, ok: true}
	tr := &ackTracker{}
	tr.mu.Lock()
	tr.probe, tr.base = p, 7000
	tr.mu.Unlock()
	told := make(chan int64, 100)
	p.set(7300, true)
	tr.written.Store(300)
	stop := tr.follow(1000, func(off int64) { told <- off })
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	wait := func(want int64) {
		t.Helper()
		select {
		case got := <-told:
			if got != want {
				t.Fatalf("told %d, want %d", got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("never told %d", want)
		}
	}
	wait(1300)
	p.set(7500, true)
	tr.written.Store(500)
	wait(1500)
	stop()
	stop = nil
	select {
	case off := <-told:
		t.Errorf("told %d again though nothing moved", off)
	default:
	}
}

// A refusal's words: a 5xx (500 itself) is the server's load, a quota per
// day and a request to slow down say so; the message comes from
// errors[].message when the error has none of its own.
func TestEdgeAPIErrorWords(t *testing.T) {
	for _, c := range []struct {
		code int
		body string
		want string
	}{
		{500, `{"error":{"code":500,"message":"x"}}`, "the server is busy (it answered 500"},
		{499, `{"error":{"code":499,"message":"x"}}`, "the server answered 499"},
		{403, `{"error":{"code":403,"message":"x","errors":[{"reason":"dailyLimitExceeded"}]}}`, "the server's quota for the day is used up"},
		{403, `{"error":{"code":403,"message":"x","errors":[{"reason":"userRateLimitExceeded"}]}}`, "the server asks to slow down"},
	} {
		if got := parseAPIError(c.code, []byte(c.body)).Error(); !strings.Contains(got, c.want) {
			t.Errorf("%d %s: %q, want %q", c.code, c.body, got, c.want)
		}
	}
	e := parseAPIError(400, []byte(`{"error":{"errors":[{"message":"the inner words","reason":"invalid"},{"message":"other words"}]}}`))
	if e.Message != "the inner words" || len(e.Reasons) != 1 || e.Reasons[0] != "invalid" {
		t.Errorf("message %q, reasons %q", e.Message, e.Reasons)
	}
}

// The write rate keeps a sample 200 ms after the last kept one (not only
// later ones).
func TestEdgeWriteRateKeepsASampleAt200ms(t *testing.T) {
	var m rateMeter
	m.add(0, 0)
	m.add(200*time.Millisecond, 1000)
	if got := m.add(5100*time.Millisecond, 1500); math.Abs(got-500/4.9) > 1e-6 {
		t.Errorf("rate %v, want %v (from the sample at 200 ms)", got, 500/4.9)
	}
}

// A pace with no span or no bytes has no rate (never a division by zero).
func TestEdgePaceWithoutSpanOrBytes(t *testing.T) {
	for _, p := range []Pace{{Bytes: 100}, {Span: time.Second}, {}} {
		if r := p.Rate(0); r != 0 {
			t.Errorf("%+v: rate %v", p, r)
		}
	}
}

// Only CRC32C and MD5 of X-Goog-Hash are claims the engine can check.
func TestEdgeGoogHashClaims(t *testing.T) {
	cs := claims(&Response{googHash: "crc32c=AAAAAA==, md5=BBBB,sha1=CCCC,crc32c"})
	var got []string
	for _, c := range cs {
		got = append(got, c.sum+"="+c.value)
	}
	if fmt.Sprint(got) != "[crc32c=AAAAAA== md5=BBBB]" {
		t.Errorf("claims %q", got)
	}
}

// A file name goes in a header as it is, unless it is not UTF-8 or holds
// a control character: then none goes.
func TestEdgeHeaderFileName(t *testing.T) {
	for in, want := range map[string]string{
		filepath.Join("d", "holiday.png"): "holiday.png",
		filepath.Join("d", "bad\xffname"): "",
		filepath.Join("d", "line\nbreak"): "",
		filepath.Join("d", "été à Paris"): "été à Paris",
	} {
		if got := headerFileName(in); got != want {
			t.Errorf("headerFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Over TLS (HTTP/1: no ALPN agreed) the probe reads the TCP connection
// beneath, where the system tells.
func TestEdgeAckProbeUnderTLS(t *testing.T) {
	if !loopbackTellsAcks(t) {
		t.Skip("this system tells nothing of what the peer acknowledged")
	}
	c, s := tcpPair(t)
	defer c.Close()
	defer s.Close()
	if newAckProbe(tls.Client(c, &tls.Config{ServerName: "example.test"})) == nil {
		t.Fatal("no probe for a TLS connection over TCP")
	}
}

// A record from before Failure, cancelled, reads as cancelled; a failed
// one by its words; one still going gets none.
func TestEdgeSettleFailureOfOldRecords(t *testing.T) {
	r := &Record{State: StateCancelled, Error: "the server answered 403 Forbidden: no", Cause: "refused"}
	settleFailure(r)
	if r.Failure == nil || r.Failure.Code != FailCancelled {
		t.Errorf("a cancelled record reads as %+v", r.Failure)
	}
	r = &Record{State: StateQueued, Error: "x"}
	if settleFailure(r); r.Failure != nil {
		t.Errorf("a queued record got %+v", r.Failure)
	}
}

// A call's template must hold as many places as it quotes results: the
// refusal counts both.
func TestEdgeFillCountsPlaces(t *testing.T) {
	tmpl := []byte("{\"a\":\x00,\"b\":\x00}")
	up := &upload{rec: &Record{Size: int64(len(tmpl)), Quote: []string{"j1"}}, quoted: [][]byte{[]byte(`"tok"`)}}
	_, err := up.fill(bytes.NewReader(tmpl))
	if err == nil || !strings.Contains(err.Error(), "has 2 places for results but quotes 1 jobs") {
		t.Errorf("fill: %v", err)
	}
}

// A need that ends well while the job still waits for another says
// nothing new of the waiting job: no second EventWaiting.
func TestEdgeWaitingJobNotToldAgainWhenNothingChanged(t *testing.T) {
	f := newFake(t)
	g := newGates(f, "a", "b")
	h := newHarness(t, Config{})
	pa, _ := writeFile(t, 1000)
	pb, _ := writeFile(t, 2000)
	pc, _ := writeFile(t, 3000)
	a := h.add(Spec{URL: named(f, "a"), ContentType: "application/octet-stream", Path: pa})
	b := h.add(Spec{URL: named(f, "b"), ContentType: "application/octet-stream", Path: pb})
	c := h.add(Spec{URL: named(f, "c"), ContentType: "application/octet-stream", Path: pc, Needs: []string{a, b}})
	g.open("a")
	h.mustDone(a)
	g.open("b")
	h.mustDone(b)
	h.mustDone(c)
	h.mu.Lock()
	defer h.mu.Unlock()
	aDone := false
	for _, e := range h.seen {
		switch {
		case e.Job == a && e.Kind == EventDone:
			aDone = true
		case aDone && e.Job == c && e.Kind == EventWaiting:
			t.Errorf("told again that the job waits, unchanged: %s (blocked %q)", e, e.Snap.Blocked)
		}
	}
}

// The bulk path asks the kernel to send from the file first; only once it
// says it cannot does the buffer carry the bytes, and from then on alone.
func TestEdgeBulkSendAsksTheKernelFirst(t *testing.T) {
	path, data := writeFile(t, 2*bulkCopy)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	up := &upload{f: f, extra: newSumGroup([]string{SumCRC32C})}
	tee := up.source(0, int64(len(data))).(*hashTee)
	asked := 0
	tee.kernel = func(*net.TCPConn, *os.File, int64, int, func(int) error) (int, error) {
		asked++
		return 0, errNoSendFile
	}
	c, s := tcpPair(t)
	defer s.Close()
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(s)
		got <- b
	}()
	for i := 0; i < 2; i++ {
		if n, err := tee.send(c, bulkCopy, make([]byte, bulkCopy), func(int) error { return nil }); n != bulkCopy || err != nil {
			t.Fatalf("sent %d, %v", n, err)
		}
	}
	c.Close()
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("the peer got %d bytes, not the file's %d", len(b), len(data))
	}
	if asked != 1 {
		t.Errorf("the kernel was asked %d times, want once (then the buffer alone)", asked)
	}
}
