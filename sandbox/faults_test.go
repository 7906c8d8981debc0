package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	good := []struct{ spec, canon string }{
		{"", "none"},
		{"none", "none"},
		{"seed=7,reset=0.05,err5xx=0.05,stall=0.02,partial=0.2,dropfinal=0.1,latency=20ms,rate=20MB", "seed=7,reset=0.05,err5xx=0.05,stall=0.02,partial=0.2,dropfinal=0.1,latency=20ms,rate=20000000B"},
		{" reset=1 , rate=1MiB/s ", "seed=1,reset=1,rate=1048576B"},
		{"stall=0.5,stallfor=2s", "seed=1,stall=0.5,stallfor=2s"},
	}
	for _, g := range good {
		f, err := ParseFaults(g.spec)
		if err != nil || f.String() != g.canon {
			t.Errorf("ParseFaults(%q) = %q, %v; want %q", g.spec, f.String(), err, g.canon)
		}
		if again, err := ParseFaults(f.String()); err != nil || again.String() != g.canon {
			t.Errorf("canonical form %q does not parse back: %v", f.String(), err)
		}
	}
	for _, bad := range []string{"reset", "reset=2", "reset=-0.1", "reset=NaN", "boom=1", "latency=fast", "latency=2h", "rate=0", "rate=-5MB", "seed=x"} {
		if _, err := ParseFaults(bad); err == nil {
			t.Errorf("ParseFaults(%q) accepted", bad)
		}
	}
}

func TestFaultPlansFollowTheSeed(t *testing.T) {
	f, _ := ParseFaults("seed=42,reset=0.3,err5xx=0.3,partial=0.5,dropfinal=0.5")
	a, b := newFaultInjector(f), newFaultInjector(f)
	req, _ := http.NewRequest("PUT", "http://x/", strings.NewReader("abc"))
	hits := 0
	for i := 0; i < 200; i++ {
		pa, pb := a.plan(req), b.plan(req)
		if pa != pb {
			t.Fatalf("plan %d differs for the same seed: %+v vs %+v", i, pa, pb)
		}
		if pa.err5xx != 0 || pa.resetAt >= 0 {
			hits++
		}
	}
	if hits < 60 || hits > 180 {
		t.Fatalf("%d of 200 requests faulted at p=0.3+0.3", hits)
	}
}

func TestServerErrorsChangeNothing(t *testing.T) {
	e := newEnv(t)
	data := randomData(10, kib256)
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=f5xx", "application/octet-stream", int64(len(data)), "")
	e.sb.SetFaults("err5xx=1")
	for i := 0; i < 8; i++ {
		r := e.chunk(uri, data, 0, int64(len(data)))
		if r.code < 500 || r.code > 504 {
			t.Fatalf("err5xx=1 answered %d", r.code)
		}
		r.errMessage(t)
	}
	e.sb.SetFaults("")
	if r := e.query(uri, int64(len(data))); r.code != 308 || r.h.Get("Range") != "" {
		t.Fatalf("a 5xx stored bytes: %d %q", r.code, r.h.Get("Range"))
	}
}

func TestResetKeepsWhatArrived(t *testing.T) {
	e := newEnv(t)
	data := randomData(11, 8*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=reset", "application/octet-stream", total, "")
	e.sb.SetFaults("seed=5,reset=1")
	req, _ := http.NewRequest("PUT", uri, bytes.NewReader(data))
	req.Header.Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", total-1, total))
	if r, err := e.srv.Client().Do(req); err == nil {
		r.Body.Close()
		t.Fatalf("reset=1 answered %d", r.StatusCode)
	}
	e.sb.SetFaults("")
	r := e.query(uri, total)
	stored := storedFrom(t, r)
	if r.code != 308 || stored >= total {
		t.Fatalf("after a reset: %d, %d bytes stored", r.code, stored)
	}
	if r := e.chunk(uri, data[stored:], stored, total); r.code != 200 {
		t.Fatalf("finishing after a reset at %d: %d %s", stored, r.code, r.body)
	}
	if !bytes.Equal(e.object("bkt", "reset"), data) {
		t.Fatal("bytes differ")
	}
}

func TestPartialPersistenceIsReportedTruthfully(t *testing.T) {
	e := newEnv(t)
	data := randomData(12, 8*kib256)
	total := int64(len(data))
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=partial", "application/octet-stream", total, "")
	e.sb.SetFaults("seed=9,partial=1")
	r := e.chunk(uri, data, 0, total)
	stored := storedFrom(t, r)
	if r.code != 308 || stored >= total || stored%kib256 != 0 {
		t.Fatalf("partial=1 on the whole file: %d, %d stored", r.code, stored)
	}
	e.sb.SetFaults("")
	if r := e.query(uri, total); storedFrom(t, r) != stored {
		t.Fatalf("status query disagrees with the chunk's answer")
	}
	if r := e.chunk(uri, data[stored:], stored, total); r.code != 200 {
		t.Fatalf("rest: %d %s", r.code, r.body)
	}
	if !bytes.Equal(e.object("bkt", "partial"), data) {
		t.Fatal("bytes differ")
	}
}

func TestDroppedFinalAnswer(t *testing.T) {
	e := newEnv(t)
	data := randomData(13, 1000)
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=dropped", "application/octet-stream", 1000, "")
	e.sb.SetFaults("dropfinal=1")
	req, _ := http.NewRequest("PUT", uri, bytes.NewReader(data))
	req.Header.Set("Content-Range", "bytes 0-999/1000")
	if r, err := e.srv.Client().Do(req); err == nil {
		r.Body.Close()
		t.Fatalf("dropfinal=1 answered %d", r.StatusCode)
	}
	e.sb.SetFaults("")
	r := e.query(uri, 1000)
	if r.code != 200 || r.json(t)["size"] != "1000" {
		t.Fatalf("status query after a dropped final answer: %d %s", r.code, r.body)
	}
	if st := e.sb.Stats(); st.Completions != 1 {
		t.Fatalf("%d completions", st.Completions)
	}
}

func TestStallHangsUntilTheClientGivesUp(t *testing.T) {
	e := newEnv(t)
	uri := e.initiate("POST", "/upload/storage/v1/b/bkt/o?name=stall", "application/octet-stream", 10, "")
	e.sb.SetFaults("stall=1,stallfor=1m")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "PUT", uri, strings.NewReader("0123456789"))
	req.Header.Set("Content-Range", "bytes 0-9/10")
	_, err := e.srv.Client().Do(req)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("a stalled request returned: %v", err)
	}
	// The sandbox's Close (in cleanup) releases the held connection; the
	// test would take a minute otherwise.
}

func TestInitiationIsSubjectToFaults(t *testing.T) {
	e := newEnv(t)
	e.sb.SetFaults("err5xx=1")
	r := e.do("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=x", auth(), nil)
	if r.code < 500 {
		t.Fatalf("initiation under err5xx=1: %d", r.code)
	}
}

func TestFaultControlEndpoint(t *testing.T) {
	e := newEnv(t)
	if r := e.do("PUT", "/sandbox/v1/faults", nil, []byte("reset=1")); r.code != 401 {
		t.Fatalf("faults without a token: %d", r.code)
	}
	r := e.do("PUT", "/sandbox/v1/faults", auth(), []byte("seed=3,err5xx=0.5"))
	if r.code != 200 || r.json(t)["faults"] != "seed=3,err5xx=0.5" || e.sb.Faults() != "seed=3,err5xx=0.5" {
		t.Fatalf("set: %d %s", r.code, r.body)
	}
	r = e.do("POST", "/sandbox/v1/faults", auth(), []byte(`{"faults":"none"}`))
	if r.code != 200 || e.sb.Faults() != "none" {
		t.Fatalf("clear: %d %s", r.code, r.body)
	}
	if r := e.do("PUT", "/sandbox/v1/faults", auth(), []byte("reset=7")); r.code != 400 || !strings.Contains(r.errMessage(t), "probability") {
		t.Fatalf("bad spec: %d %s", r.code, r.body)
	}
	if e.sb.Faults() != "none" {
		t.Fatal("a bad spec changed the faults")
	}
	st := e.do("GET", "/sandbox/v1/stats", auth(), nil).json(t)
	if st["requests"].(float64) < 4 {
		t.Fatalf("stats: %v", st)
	}
}

func storedFrom(t *testing.T, r resp) int64 {
	t.Helper()
	rg := r.h.Get("Range")
	if rg == "" {
		return 0
	}
	last, ok := strings.CutPrefix(rg, "bytes=0-")
	n, err := strconv.ParseInt(last, 10, 64)
	if !ok || err != nil {
		t.Fatalf("Range %q", rg)
	}
	return n + 1
}

// TestFaultSoak drives many uploads through every fault at once with a
// plain client that follows PROTOCOL.md: whatever the faults, every object
// ends byte-identical and is created exactly once. CARRIER_SOAK=1 makes
// it longer.
func TestFaultSoak(t *testing.T) {
	uploads, size := 12, 3*kib256+1234
	if os.Getenv("CARRIER_SOAK") != "" {
		uploads, size = 200, 5*kib256+99
	}
	e := newEnv(t, func(o *Options) {
		o.Faults = "seed=7,reset=0.1,err5xx=0.1,stall=0.03,stallfor=30s,partial=0.2,dropfinal=0.2"
	})
	client := &http.Client{Timeout: 500 * time.Millisecond}
	var wg sync.WaitGroup
	errs := make(chan error, uploads)
	sem := make(chan struct{}, 4)
	for i := 0; i < uploads; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			data := randomData(uint64(100+i), size)
			name := fmt.Sprintf("soak-%03d", i)
			if err := soakUpload(client, e.srv.URL, name, data); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.sb.SetFaults("")
	for i := 0; i < uploads; i++ {
		if got := e.object("bkt", fmt.Sprintf("soak-%03d", i)); !bytes.Equal(got, randomData(uint64(100+i), size)) {
			t.Errorf("soak-%03d differs", i)
		}
	}
	if st := e.sb.Stats(); st.Completions != int64(uploads) || st.FaultsInjected == 0 {
		t.Errorf("stats %+v: want %d completions and some faults", st, uploads)
	}
}

func soakUpload(c *http.Client, base, name string, data []byte) error {
	total := int64(len(data))
	var uri string
	for attempt := 0; uri == ""; attempt++ {
		if attempt > 50 {
			return fmt.Errorf("could not start a session")
		}
		req, _ := http.NewRequest("POST", base+"/upload/storage/v1/b/bkt/o?uploadType=resumable&name="+name, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(total, 10))
		if r, err := c.Do(req); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if r.StatusCode == 200 {
				uri = r.Header.Get("Location")
			}
		}
	}
	send := func(cr string, body []byte) (*http.Response, error) {
		req, _ := http.NewRequest("PUT", uri, bytes.NewReader(body))
		req.Header.Set("Content-Range", cr)
		r, err := c.Do(req)
		if err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		return r, err
	}
	for attempt := 0; attempt < 400; attempt++ {
		r, err := send(fmt.Sprintf("bytes */%d", total), nil)
		if err != nil || r.StatusCode >= 500 {
			continue
		}
		switch r.StatusCode {
		case 200, 201:
			return nil
		case 308:
		default:
			return fmt.Errorf("status query answered %d", r.StatusCode)
		}
		off := int64(0)
		if rg := r.Header.Get("Range"); rg != "" {
			n, _ := strconv.ParseInt(strings.TrimPrefix(rg, "bytes=0-"), 10, 64)
			off = n + 1
		}
		end := min(off+2*kib256, total)
		r, err = send(fmt.Sprintf("bytes %d-%d/%d", off, end-1, total), data[off:end])
		if err == nil && (r.StatusCode == 200 || r.StatusCode == 201) {
			return nil
		}
		if err == nil && r.StatusCode != 308 && r.StatusCode < 500 {
			return fmt.Errorf("chunk at %d answered %d", off, r.StatusCode)
		}
	}
	return fmt.Errorf("gave up after 400 attempts")
}

func TestResetDuringMetadataDropsTheConnection(t *testing.T) {
	e := newEnv(t)
	e.sb.SetFaults("seed=1,reset=1")
	meta := []byte(`{"name":"with-metadata","metadata":{"k":"` + strings.Repeat("v", 4000) + `"}}`)
	multi := append(append([]byte("--B\r\nContent-Type: application/json\r\n\r\n"), meta...), "\r\n--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--\r\n"...)
	for _, c := range []struct {
		path, ctype string
		body        []byte
	}{
		{"/upload/storage/v1/b/bkt/o?uploadType=resumable", "application/json", meta},
		{"/upload/storage/v1/b/bkt/o?uploadType=multipart", "multipart/related; boundary=B", multi},
	} {
		path := c.path
		req, _ := http.NewRequest("POST", e.srv.URL+path, bytes.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", c.ctype)
		if r, err := e.srv.Client().Do(req); err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			t.Fatalf("%s: reset=1 answered %d %s", path, r.StatusCode, b)
		}
	}
}
