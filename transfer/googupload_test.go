package transfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func googSpec(f *googFake, path string, chunk int64) Spec {
	return Spec{URL: f.url(), Protocol: ProtocolGoogUpload, ContentType: "video/mp4", Path: path, ChunkSize: chunk}
}

// checkGoogDone checks that a job's result is the token of exactly the
// file's bytes, as the session sid stores them.
func checkGoogDone(t *testing.T, f *googFake, resp *Response, sid string, data []byte) {
	t.Helper()
	if resp.Status != 200 || string(resp.Body) != "TOKEN-"+sha(data) {
		t.Fatalf("result %d %.80q, want the token of the file's bytes", resp.Status, resp.Body)
	}
	if got := f.stored(sid); !bytes.Equal(got, data) {
		t.Fatalf("the session holds %d bytes that are not the file's %d", len(got), len(data))
	}
}

// sends are the upload commands of the fake's log, as offset and length.
func sends(t *testing.T, f *googFake) (out [][3]int64) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.log {
		var cmd string
		var off, n int64
		if _, err := fmt.Sscanf(l, "%s %d %d", &cmd, &off, &n); err != nil || cmd != "upload" && cmd != "finalize" {
			continue
		}
		fin := int64(0)
		if cmd == "finalize" {
			fin = 1
		}
		out = append(out, [3]int64{off, n, fin})
	}
	return out
}

// Whole uploads of every shape, on the server's granularity: every chunk
// but the finalizing one a multiple of it (the fake refuses others), even
// when the person's chunk cap is below it, and each byte sent once.
func TestGoogUploadWholeOnTheGranularity(t *testing.T) {
	const Q = ChunkQuantum
	for _, gran := range []int64{Q, 3 * Q} {
		for _, chunk := range []int64{Q, 2 * Q, 0} {
			for _, size := range []int64{0, 1, Q - 1, Q, Q + 1, 3*Q + 5, 7 * Q} {
				t.Run(fmt.Sprintf("gran=%d/chunk=%d/size=%d", gran, chunk, size), func(t *testing.T) {
					f := newGoogFake(t)
					f.gran = gran
					h := newHarness(t, Config{})
					path, data := writeFile(t, size)
					id := h.add(googSpec(f, path, chunk))
					checkGoogDone(t, f, h.mustDone(id), "SECRET-g1", data)
					fin, recv, dropped, sessions, refused := f.stats()
					if len(refused) > 0 {
						t.Fatalf("the server refused: %q", refused)
					}
					if fin != 1 || sessions != 1 || recv != size || dropped != 0 {
						t.Errorf("finished=%d sessions=%d received=%d, want 1, 1, %d", fin, sessions, recv, size)
					}
					if f.count("query") != 0 || f.count("finalize") != 1 {
						t.Errorf("%d queries, %d finalizes: want 0 and 1", f.count("query"), f.count("finalize"))
					}
					next := int64(0)
					for _, s := range sends(t, f) {
						if s[0] != next || s[2] == 0 && s[1]%gran != 0 || s[2] == 1 && s[0]+s[1] != size {
							t.Errorf("sent %d bytes at %d (finalize=%d) after %d", s[1], s[0], s[2], next)
						}
						next = s[0] + s[1]
					}
					rec, err := h.q.journal.Load(id)
					if err != nil || rec.Protocol != ProtocolGoogUpload || rec.Granularity != gran || rec.Confirmed != size {
						t.Errorf("journal: %v protocol=%q granularity=%d confirmed=%d", err, rec.Protocol, rec.Granularity, rec.Confirmed)
					}
					if s, _ := h.q.Job(id); s.Protocol != ProtocolGoogUpload {
						t.Errorf("snapshot protocol %q", s.Protocol)
					}
				})
			}
		}
	}
}

// A chunk cut mid-way: the session is asked where it stands and the
// upload goes on from the server's offset, not the last confirmation:
// only the bytes the server did not keep go again.
func TestGoogUploadCutMidChunkGoesOnFromTheServersOffset(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "upload" && n == 2 {
			f.cutAfter(w, r, s, 2*Q+100) // the server keeps 2 granules of it
			return true
		}
		return false
	}
	h := newHarness(t, Config{})
	path, data := writeFile(t, 12*Q)
	id := h.add(googSpec(f, path, 4*Q))
	checkGoogDone(t, f, h.mustDone(id), "SECRET-g1", data)
	fin, recv, dropped, sessions, refused := f.stats()
	if len(refused) > 0 || fin != 1 || sessions != 1 {
		t.Fatalf("refused %q, finished %d in %d sessions", refused, fin, sessions)
	}
	if recv-dropped != 12*Q {
		t.Errorf("the server kept %d bytes of %d received: a byte it kept came twice", recv-dropped, recv)
	}
	s := sends(t, f)
	if len(s) < 3 || s[1][0] != 4*Q || s[2][0] != 6*Q {
		t.Fatalf("sends %v: after the cut at %d the upload must go on at the server's %d", s, 4*Q, 6*Q)
	}
	f.mu.Lock()
	log := strings.Join(f.log, "; ")
	f.mu.Unlock()
	if !strings.Contains(log, fmt.Sprintf("upload %d %d; query", 4*Q, 4*Q)) {
		t.Errorf("no query right after the cut: %s", log)
	}
	noSecrets(t, h)
}

// 5xx, 408, 429 and the 400 that a per-minute quota comes as are retried
// as in the first protocol, on every request; a broken connection too. A
// failed chunk is followed by a query, never sent again blindly.
func TestGoogUploadBusyServerRetried(t *testing.T) {
	const Q = ChunkQuantum
	cases := []struct {
		name string
		fail func(w http.ResponseWriter)
	}{
		{"503", func(w http.ResponseWriter) { googleError(w, 503, "UNAVAILABLE", "backendError", "try later") }},
		{"500", func(w http.ResponseWriter) { googleError(w, 500, "INTERNAL", "backendError", "oops") }},
		{"408", func(w http.ResponseWriter) { googleError(w, 408, "DEADLINE_EXCEEDED", "timeout", "too slow") }},
		{"429", func(w http.ResponseWriter) {
			googleError(w, 429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "slow down")
		}},
		{"400 per-minute quota", func(w http.ResponseWriter) {
			googleError(w, 400, "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", "Quota exceeded for quota metric 'Upload requests' per minute")
		}},
		{"reset", func(w http.ResponseWriter) { hangUp(w) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newGoogFake(t)
			f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
				if cmd == "upload" && (n == 2 || n == 3) || cmd == "query" && n == 1 || cmd == "start" && n == 1 {
					c.fail(w)
					return true
				}
				return false
			}
			h := newHarness(t, Config{})
			path, data := writeFile(t, 4*Q)
			id := h.add(googSpec(f, path, Q))
			checkGoogDone(t, f, h.mustDone(id), "SECRET-g1", data)
			if fin, _, _, sessions, refused := f.stats(); fin != 1 || sessions != 1 || len(refused) > 0 {
				t.Errorf("finished=%d sessions=%d refused=%q", fin, sessions, refused)
			}
			retries := 0
			for _, e := range h.seen {
				if e.Kind == EventRetrying {
					retries++
				}
			}
			if retries != 4 {
				t.Errorf("%d retrying events, want 4 (start, two chunks, one query)", retries)
			}
			if f.count("query") < 2 {
				t.Errorf("%d queries: a failed chunk must be followed by one", f.count("query"))
			}
		})
	}
}

// A server that keeps failing ends the upload after the same number of
// requests in both protocols, with the session kept for a later try.
func TestGoogUploadGivesUpInTheSameBudget(t *testing.T) {
	f1 := newFake(t)
	f1.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "chunk" || kind == "status" {
			googleError(w, 503, "UNAVAILABLE", "backendError", "down")
			return true
		}
		return false
	}
	f2 := newGoogFake(t)
	f2.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd != "start" {
			googleError(w, 503, "UNAVAILABLE", "backendError", "down")
			return true
		}
		return false
	}
	h := newHarness(t, Config{MaxRetries: 3})
	path, _ := writeFile(t, 1000)
	first := h.add(Spec{URL: f1.url(), ContentType: "application/octet-stream", Path: path})
	second := h.add(googSpec(f2, path, 0))
	for _, id := range []string{first, second} {
		if e := h.finish(id); e.Kind != EventFailed || !errors.Is(e.Snap.Cause, ErrGaveUp) || !e.Snap.Retryable {
			t.Fatalf("job %s: %s (cause %v)", id, e, e.Snap.Cause)
		}
	}
	one := f1.count("chunk") + f1.count("status")
	two := f2.count("upload") + f2.count("finalize") + f2.count("query")
	if one != 5 || two != one {
		t.Errorf("requests before giving up: %d in the first protocol, %d in the second; want 5 both", one, two)
	}
	if rec, _ := h.q.journal.Load(second); rec.Session == "" {
		t.Error("the session was not kept for a later try")
	}
}

// A refusal that is not the server's load fails at once, in its words:
// of the start, or of a chunk where the server stands at the offset sent
// (its state stated, as with every answer of the dialect).
func TestGoogUploadRefusalFails(t *testing.T) {
	for _, cmd := range []string{"start", "upload"} {
		t.Run(cmd, func(t *testing.T) {
			f := newGoogFake(t)
			f.hook = func(c string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
				if c == cmd {
					io.Copy(io.Discard, r.Body)
					f.refuse(w, s, "The file type is not supported")
					return true
				}
				return false
			}
			h := newHarness(t, Config{})
			path, _ := writeFile(t, 3*ChunkQuantum)
			id := h.add(googSpec(f, path, ChunkQuantum))
			e := h.finish(id)
			if e.Kind != EventFailed || !strings.Contains(e.Message, "not supported") || e.Snap.Retryable || f.count(cmd) != 1 {
				t.Fatalf("%s after %d %s commands", e, f.count(cmd), cmd)
			}
		})
	}
}

// The server refuses an offset (it lost bytes it had confirmed) and says
// where it stands: the upload goes on from there.
func TestGoogUploadWrongOffsetGoesOnWhereTheServerStands(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "upload" && n == 3 {
			f.mu.Lock()
			s.stored = Q
			s.data.Truncate(int(Q))
			f.mu.Unlock()
		}
		return false
	}
	h := newHarness(t, Config{})
	path, data := writeFile(t, 5*Q)
	id := h.add(googSpec(f, path, Q))
	checkGoogDone(t, f, h.mustDone(id), "SECRET-g1", data)
	_, _, _, sessions, refused := f.stats()
	if len(refused) != 1 || !strings.HasPrefix(refused[0], "offset") || sessions != 1 {
		t.Fatalf("refused %q in %d sessions; want the one wrong offset", refused, sessions)
	}
	if s := sends(t, f); len(s) < 4 || s[3][0] != Q {
		t.Errorf("sends %v: after the refusal the upload must go on at %d", s, Q)
	}
}

// The journal as a killed process leaves it: the job running, its
// session and an offset behind what the server holds. A new queue on it
// asks the same session and goes on from the server's offset.
func TestGoogUploadKilledProcessResumesTheSameSession(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	cut := make(chan struct{})
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "upload" && n == 3 {
			buf := make([]byte, Q+5)
			got, _ := io.ReadFull(r.Body, buf)
			f.mu.Lock()
			s.data.Write(buf[:Q])
			s.stored += Q
			f.received += int64(got)
			f.dropped += int64(got) - Q
			f.mu.Unlock()
			close(cut)
			f.hold(r) // the process dies before any answer
			return true
		}
		return false
	}
	state := t.TempDir()
	path, data := writeFile(t, 8*Q)
	h1 := newHarness(t, Config{StateDir: state})
	id := h1.add(googSpec(f, path, 2*Q))
	waitChan(t, cut)
	// What the process left on disk at the moment it died.
	jdir := h1.q.journal.Dir()
	left := map[string][]byte{}
	for _, ext := range []string{".json", ".progress"} {
		if b, err := os.ReadFile(filepath.Join(jdir, id+ext)); err == nil {
			left[ext] = b
		}
	}
	if rec, err := DecodeRecord(left[".json"]); err != nil || rec.State != StateRunning || rec.Session == "" {
		t.Fatalf("the journal mid-upload: %v %+v", err, rec)
	}
	h1.q.Close()
	for _, ext := range []string{".json", ".progress"} {
		p := filepath.Join(jdir, id+ext)
		os.Remove(p)
		if b, ok := left[ext]; ok {
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.mu.Lock()
	before := len(f.log)
	f.hook = nil
	f.mu.Unlock()

	h2 := newHarness(t, Config{StateDir: state})
	if ids, err := h2.q.ResumeJournal(false); err != nil || len(ids) != 1 {
		t.Fatalf("ResumeJournal = %v, %v", ids, err)
	}
	checkGoogDone(t, f, h2.mustDone(id), "SECRET-g1", data)
	fin, recv, dropped, sessions, refused := f.stats()
	if fin != 1 || sessions != 1 || len(refused) > 0 {
		t.Fatalf("finished %d in %d sessions, refused %q: a restart must go on in its session", fin, sessions, refused)
	}
	if recv-dropped != 8*Q {
		t.Errorf("the server kept %d bytes of %d received: a byte it kept came twice", recv-dropped, recv)
	}
	f.mu.Lock()
	after := f.log[before:]
	f.mu.Unlock()
	if len(after) < 2 || after[0] != "query  0" || !strings.HasPrefix(after[1], "upload "+strconv.Itoa(5*Q)+" ") && !strings.HasPrefix(after[1], "finalize "+strconv.Itoa(5*Q)+" ") {
		t.Errorf("after the restart: %q; want a query, then bytes from the server's %d", after, 5*Q)
	}
}

// The answer that carried the token is lost: a query gets it, and the
// bytes are not sent again.
func TestGoogUploadLostFinalAnswer(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "finalize" {
			f.storeAndLose(w, r, s)
			return true
		}
		return false
	}
	h := newHarness(t, Config{})
	path, data := writeFile(t, 2*Q+3)
	id := h.add(googSpec(f, path, Q))
	checkGoogDone(t, f, h.mustDone(id), "SECRET-g1", data)
	fin, recv, _, sessions, _ := f.stats()
	if fin != 1 || sessions != 1 || recv != 2*Q+3 || f.count("finalize") != 1 || f.count("query") != 1 {
		t.Errorf("finished=%d sessions=%d received=%d finalizes=%d queries=%d", fin, sessions, recv, f.count("finalize"), f.count("query"))
	}
}

// The token is lost and the server will not give it again: the job says
// the upload may have arrived, sends nothing again, and a retry of it
// (the person's) asks the session rather than make a second item.
func TestGoogUploadFinalWithoutTokenIsMaybeSent(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	f.forget = true
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "finalize" {
			f.storeAndLose(w, r, s)
			return true
		}
		return false
	}
	h := newHarness(t, Config{})
	path, _ := writeFile(t, 2*Q+3)
	id := h.add(googSpec(f, path, Q))
	e := h.finish(id)
	if e.Kind != EventFailed || !errors.Is(e.Snap.Cause, ErrMaybeSent) {
		t.Fatalf("%s (cause %v), want a failure as maybe sent", e, e.Snap.Cause)
	}
	if strings.Contains(e.Message, "SECRET") || strings.Contains(e.Message, "TOKEN") {
		t.Errorf("the error shows the session or the token: %s", e.Message)
	}
	if err := h.q.Retry(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	if e := h.finish(id); e.Kind != EventFailed || !errors.Is(e.Snap.Cause, ErrMaybeSent) {
		t.Fatalf("the retry: %s", e)
	}
	fin, recv, _, sessions, _ := f.stats()
	if fin != 1 || sessions != 1 || recv != 2*Q+3 || f.count("finalize") != 1 {
		t.Errorf("finished=%d sessions=%d received=%d finalizes=%d: sent again", fin, sessions, recv, f.count("finalize"))
	}
	noSecrets(t, h)
}

// A session the server cancelled (or dropped) is replaced by a new one;
// one that keeps being cancelled ends the job.
func TestGoogUploadCanceledSession(t *testing.T) {
	const Q = ChunkQuantum
	t.Run("once", func(t *testing.T) {
		f := newGoogFake(t)
		f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
			if cmd == "upload" && n == 2 {
				f.mu.Lock()
				s.canceled = true
				f.mu.Unlock()
			}
			return false
		}
		h := newHarness(t, Config{})
		path, data := writeFile(t, 3*Q)
		id := h.add(googSpec(f, path, Q))
		checkGoogDone(t, f, h.mustDone(id), "SECRET-g2", data)
		if fin, _, _, sessions, _ := f.stats(); fin != 1 || sessions != 2 {
			t.Errorf("finished=%d sessions=%d, want 1 and 2", fin, sessions)
		}
		if f.count("query") < 1 {
			t.Error("a cancelled answer to a chunk must be checked with a query before starting over")
		}
		noSecrets(t, h)
	})
	t.Run("always", func(t *testing.T) {
		f := newGoogFake(t)
		f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
			if s != nil {
				f.mu.Lock()
				s.canceled = true
				f.mu.Unlock()
			}
			return false
		}
		h := newHarness(t, Config{})
		path, _ := writeFile(t, 3*Q)
		id := h.add(googSpec(f, path, Q))
		if e := h.finish(id); e.Kind != EventFailed || !strings.Contains(e.Message, "cancelled") {
			t.Fatalf("%s", e)
		}
		if _, _, _, sessions, _ := f.stats(); sessions != maxRestarts+1 {
			t.Errorf("%d sessions, want %d", sessions, maxRestarts+1)
		}
		noSecrets(t, h)
	})
}

// Cancelling a job tells its session's server, as the first protocol's
// DELETE does: the session can never finish.
func TestGoogUploadCancelTellsTheServer(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	held := make(chan struct{})
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "upload" && n == 2 {
			close(held)
			f.hold(r)
			return true
		}
		return false
	}
	h := newHarness(t, Config{})
	path, _ := writeFile(t, 4*Q)
	id := h.add(googSpec(f, path, Q))
	waitChan(t, held)
	if err := h.q.Cancel(ctxT(t), id); err != nil {
		t.Fatal(err)
	}
	if e := h.finish(id); e.Kind != EventCancelled || e.Snap.Error != "" {
		t.Fatalf("%s: %s", e, e.Snap.Error)
	}
	f.mu.Lock()
	canceled := f.sessions["SECRET-g1"].canceled
	f.mu.Unlock()
	if f.count("cancel") != 1 || !canceled {
		t.Errorf("%d cancel commands; session cancelled: %v", f.count("cancel"), canceled)
	}
}

// A server whose granularity is unusable gets no byte.
func TestGoogUploadBadGranularity(t *testing.T) {
	for _, g := range []string{"0", "-262144", "lots"} {
		t.Run(g, func(t *testing.T) {
			f := newGoogFake(t)
			f.granHeader = g
			h := newHarness(t, Config{})
			path, _ := writeFile(t, 1000)
			id := h.add(googSpec(f, path, 0))
			if e := h.finish(id); e.Kind != EventFailed || !strings.Contains(e.Message, "granularity") || e.Snap.Retryable {
				t.Fatalf("%s", e)
			}
			if _, recv, _, _, _ := f.stats(); recv != 0 || f.count("upload")+f.count("finalize") != 0 {
				t.Errorf("%d bytes sent", recv)
			}
		})
	}
}

// Records of the first protocol read and write as before; those of the
// second keep their protocol and granularity; anything else is refused.
func TestGoogUploadRecords(t *testing.T) {
	old := goodRecord()
	b, err := EncodeRecord(old)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("protocol")) || bytes.Contains(b, []byte("granularity")) {
		t.Errorf("a record of the first protocol changed form:\n%s", b)
	}
	back, err := DecodeRecord(b)
	if err != nil || back.Protocol != "" || snapshotOf(back).Protocol != ProtocolResumable {
		t.Fatalf("an old record reads as %q (%v)", back.Protocol, err)
	}

	g := goodRecord()
	g.Protocol, g.Granularity, g.Metadata = ProtocolGoogUpload, 3*ChunkQuantum, nil
	b, err = EncodeRecord(g)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodeRecord(b); err != nil || back.Protocol != ProtocolGoogUpload || back.Granularity != 3*ChunkQuantum {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	for name, bad := range map[string]func(r *Record){
		"unknown protocol":   func(r *Record) { r.Protocol = "tus" },
		"media":              func(r *Record) { r.Type = Media },
		"PUT":                func(r *Record) { r.Method = http.MethodPut },
		"metadata":           func(r *Record) { r.Metadata = json.RawMessage(`{"name":"x"}`) },
		"negative granules":  func(r *Record) { r.Granularity = -1 },
		"checksums declared": func(r *Record) { r.Checksums = []string{SumCRC32C} },
	} {
		r := *g
		bad(&r)
		if _, err := EncodeRecord(&r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}

	f := newGoogFake(t)
	h := newHarness(t, Config{})
	path, _ := writeFile(t, 10)
	for name, spec := range map[string]Spec{
		"unknown protocol": {Protocol: "tus"},
		"media":            {Protocol: ProtocolGoogUpload, Type: Media},
		"PUT":              {Protocol: ProtocolGoogUpload, Method: "PUT"},
		"metadata":         {Protocol: ProtocolGoogUpload, Metadata: []byte(`{"name":"x"}`)},
		"checksums":        {Protocol: ProtocolGoogUpload, Checksums: []string{SumMD5}},
		"existing":         {Protocol: ProtocolGoogUpload, Existing: f.url() + "/x"},
	} {
		spec.URL, spec.Path, spec.ContentType = f.url(), path, "video/mp4"
		if _, err := h.q.Add(spec); err == nil || !strings.Contains(err.Error(), "protocol") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A sleep mid-chunk (the system's hold): the request is abandoned, nothing
// is sent and no retry burnt while held, and after it the session is
// asked and the upload goes on from what the server kept of the chunk.
func TestGoogUploadSleepMidChunk(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	got := make(chan struct{})
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "upload" && n == 2 {
			buf := make([]byte, Q+7) // a granule and a bit arrive, then the lid closes
			io.ReadFull(r.Body, buf)
			f.mu.Lock()
			s.data.Write(buf[:Q])
			s.stored += Q
			f.received += Q + 7
			f.dropped += 7
			f.mu.Unlock()
			close(got)
			f.hold(r)
			return true
		}
		return false
	}
	h := newHarness(t, Config{MaxRetries: -1}) // any counted failure would end the job
	path, data := writeFile(t, 9*Q)
	id := h.add(googSpec(f, path, 4*Q))
	waitChan(t, got)
	h.q.Hold("Sleeping: will resume on wake")
	h.await(func(e Event) bool { return e.Job == id && e.Kind == EventRetrying && e.Held })
	f.mu.Lock()
	before := len(f.log)
	f.hook = nil
	f.mu.Unlock()
	h.q.Release("Sleeping: will resume on wake")
	h.q.Wake()
	checkGoogDone(t, f, h.mustDone(id), "SECRET-g1", data)
	fin, recv, dropped, sessions, refused := f.stats()
	if fin != 1 || sessions != 1 || len(refused) > 0 || recv-dropped != 9*Q {
		t.Fatalf("finished %d in %d sessions, refused %q, kept %d of %d received", fin, sessions, refused, recv-dropped, recv)
	}
	f.mu.Lock()
	after := f.log[before:]
	f.mu.Unlock()
	if len(after) < 2 || after[0] != "query  0" || !strings.HasPrefix(after[1], fmt.Sprintf("upload %d ", 5*Q)) && !strings.HasPrefix(after[1], fmt.Sprintf("finalize %d ", 5*Q)) {
		t.Errorf("after the sleep: %q; want a query, then bytes from the server's %d", after, 5*Q)
	}
	noSecrets(t, h)
}

// noSecrets checks that no event of the harness shows a session URI or
// an upload token outside the job's result.
func noSecrets(t *testing.T, h *harness) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.seen {
		for _, s := range []string{e.String(), e.Message, e.Reason, e.Snap.Error, e.Snap.Held, e.Snap.Blocked, e.Snap.URL} {
			if strings.Contains(s, "SECRET") || strings.Contains(s, "TOKEN-") {
				t.Errorf("an event shows a secret: %q", s)
			}
		}
	}
}

// The child process of TestGoogUploadKilledMidChunk: it queues one upload
// of the second dialect and runs until it is killed.
func TestGoogUploadKillChild(t *testing.T) {
	state := os.Getenv("CARRIER_GOOG_CHILD_STATE")
	if state == "" {
		t.Skip("run by TestGoogUploadKilledMidChunk as its child process")
	}
	q, err := New(Config{StateDir: state, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Add(Spec{URL: os.Getenv("CARRIER_GOOG_CHILD_URL"), Protocol: ProtocolGoogUpload, ContentType: "video/mp4", Path: os.Getenv("CARRIER_GOOG_CHILD_FILE"), ChunkSize: 2 * ChunkQuantum}); err != nil {
		t.Fatal(err)
	}
	select {} // until the parent kills this process
}

// kill -9 while a chunk is going out, the server holding part of it: the
// next process asks the same session and sends only what it lacks.
func TestGoogUploadKilledMidChunk(t *testing.T) {
	const Q = ChunkQuantum
	f := newGoogFake(t)
	cut := make(chan struct{})
	f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
		if cmd == "upload" && n == 3 {
			buf := make([]byte, Q+5)
			got, _ := io.ReadFull(r.Body, buf)
			f.mu.Lock()
			s.write(buf[:Q])
			s.stored += Q
			f.received += int64(got)
			f.dropped += int64(got) - Q
			f.mu.Unlock()
			close(cut)
			f.hold(r)
			return true
		}
		return false
	}
	state := t.TempDir()
	path, data := writeFile(t, 8*Q)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestGoogUploadKillChild$")
	cmd.Env = append(os.Environ(), "CARRIER_GOOG_CHILD_STATE="+state, "CARRIER_GOOG_CHILD_URL="+f.url(), "CARRIER_GOOG_CHILD_FILE="+path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-cut:
	case <-exited:
		t.Fatalf("the child ended before its third chunk:\n%s", out.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("the child never sent its third chunk:\n%s", out.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	f.srv.CloseClientConnections()
	f.mu.Lock()
	before := len(f.log)
	f.hook = nil
	f.mu.Unlock()

	j, err := OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := j.List()
	if err != nil || len(recs) != 1 || recs[0].State != StateRunning || recs[0].Session == "" || recs[0].Confirmed > 4*Q {
		t.Fatalf("the journal the killed process left: %v, %+v", err, recs)
	}
	id := recs[0].ID
	h := newHarness(t, Config{StateDir: state})
	if ids, err := h.q.ResumeJournal(false); err != nil || len(ids) != 1 {
		t.Fatalf("ResumeJournal = %v, %v", ids, err)
	}
	checkGoogDone(t, f, h.mustDone(id), "SECRET-g1", data)
	fin, recv, dropped, sessions, refused := f.stats()
	if fin != 1 || sessions != 1 || len(refused) > 0 || recv-dropped != 8*Q {
		t.Fatalf("finished %d in %d sessions, refused %q, kept %d of %d received", fin, sessions, refused, recv-dropped, recv)
	}
	f.mu.Lock()
	after := f.log[before:]
	f.mu.Unlock()
	if len(after) < 2 || after[0] != "query  0" || !strings.HasPrefix(after[1], fmt.Sprintf("upload %d ", 5*Q)) && !strings.HasPrefix(after[1], fmt.Sprintf("finalize %d ", 5*Q)) {
		t.Errorf("after the kill: %q; want a query, then bytes from the server's %d", after, 5*Q)
	}
}

// The second dialect's server verifies nothing, so the source check is a
// CRC32C, not a SHA-256: the record keeps its state with the offset, a
// resume refuses a file whose sent bytes changed (with no change time to
// tell, only the prefix can), and an unchanged one finishes with no
// SHA-256 computed.
func TestGoogUploadSourceCheckedByCRC32C(t *testing.T) {
	const Q = ChunkQuantum
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprintf("changed=%v", changed), func(t *testing.T) {
			f := newGoogFake(t)
			held := make(chan struct{})
			f.hook = func(cmd string, n int, w http.ResponseWriter, r *http.Request, s *googSession) bool {
				if cmd == "upload" && n == 3 {
					close(held)
					f.hold(r)
					return true
				}
				return false
			}
			state := t.TempDir()
			path, data := writeFile(t, 6*Q+5)
			h1 := newHarness(t, Config{StateDir: state})
			id := h1.add(googSpec(f, path, Q))
			waitChan(t, held)
			h1.q.Close()
			j, _ := OpenJournal(state)
			rec, err := j.Load(id)
			if err != nil {
				t.Fatal(err)
			}
			if rec.SourceSum != SumCRC32C || rec.Hashed < Q || len(rec.HashState) == 0 || rec.SHA256 != "" {
				t.Fatalf("mid-upload the record holds source sum %q over %d bytes (%d bytes of state), sha %q", rec.SourceSum, rec.Hashed, len(rec.HashState), rec.SHA256)
			}
			rec.ChangeTime = time.Time{}
			if err := j.Save(rec); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			f.hook = nil
			f.mu.Unlock()
			if changed {
				fi, _ := os.Stat(path)
				data[0] ^= 0xff
				os.WriteFile(path, data, 0o600)
				os.Chtimes(path, fi.ModTime(), fi.ModTime())
			}
			h2 := newHarness(t, Config{StateDir: state})
			h2.q.ResumeJournal(false)
			e := h2.finish(id)
			if changed {
				if e.Kind != EventFailed || !errors.Is(e.Err, ErrSourceChanged) {
					t.Fatalf("got %s; a file whose sent bytes changed must be refused", e)
				}
				return
			}
			if e.Kind != EventDone {
				t.Fatalf("got %s", e)
			}
			checkGoogDone(t, f, e.Response, "SECRET-g1", data)
			if rec, _ := j.Load(id); rec.SHA256 != "" {
				t.Errorf("a SHA-256 was computed: %q", rec.SHA256)
			}
		})
	}
}
