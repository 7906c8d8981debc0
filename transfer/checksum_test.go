package transfer

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"testing"
)

func crc32cOf(b []byte) string {
	c := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, c))
}

func md5Of(b []byte) string { m := md5.Sum(b); return base64.StdEncoding.EncodeToString(m[:]) }

// A target that checks CRC32C gets it on the request carrying the last
// bytes, and a server reporting the right one verifies the job.
func TestChecksumSentAndVerified(t *testing.T) {
	const Q = ChunkQuantum
	type tc struct {
		typ   UploadType
		size  int64
		chunk int64
	}
	var cases []tc
	for _, size := range []int64{0, 1, Q - 1, Q, Q + 1, 3*Q + 5} {
		for _, chunk := range []int64{Q, 0} {
			cases = append(cases, tc{Resumable, size, chunk})
		}
	}
	cases = append(cases, tc{Media, 3*Q + 5, 0}, tc{Multipart, 3*Q + 5, 0}, tc{Media, 0, 0})
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/size=%d/chunk=%d", c.typ, c.size, c.chunk), func(t *testing.T) {
			f := newFake(t)
			f.sums = true
			h := newHarness(t, Config{})
			path, data := writeFile(t, c.size)
			spec := Spec{URL: f.url(), Type: c.typ, ContentType: "application/octet-stream", Path: path, ChunkSize: c.chunk, Checksums: []string{SumCRC32C}}
			if c.typ == Multipart {
				spec.Metadata = []byte(`{"name":"obj"}`)
			}
			id := h.add(spec)
			e := h.finish(id)
			if e.Kind != EventDone || e.Snap.Verified != SumCRC32C {
				t.Fatalf("got %s, verified %q; want done, verified by crc32c", e, e.Snap.Verified)
			}
			if resourceSHA(t, e.Response) != sha(data) {
				t.Fatal("bytes differ")
			}
			f.mu.Lock()
			hashes, log := f.googHash, f.log
			f.mu.Unlock()
			if len(hashes) != 1 {
				t.Fatalf("X-Goog-Hash on %d requests (%q), want on the last one only", len(hashes), hashes)
			}
			last := log[len(log)-1]
			if want := last + ": crc32c=" + crc32cOf(data); hashes[0] != want {
				t.Errorf("X-Goog-Hash %q, want %q", hashes[0], want)
			}
			if c.typ == Resumable && c.size > 0 && !strings.HasSuffix(last, fmt.Sprintf("-%d/%d", c.size-1, c.size)) {
				t.Errorf("the last request %q does not carry the last bytes", last)
			}
			if comp, recv, _ := f.stats(); comp != 1 || c.typ == Resumable && recv != c.size {
				t.Errorf("completions=%d received=%d: bytes sent twice", comp, recv)
			}
			rec, _ := h.q.journal.Load(id)
			if rec.Verified != SumCRC32C {
				t.Errorf("journal: verified %q", rec.Verified)
			}
		})
	}
}

// A server that stored a flipped byte and says so in its CRC32C: the job
// fails as not verified, naming the file and both checksums; nothing is
// reported done.
func TestChecksumMismatchIsNotVerified(t *testing.T) {
	const Q = ChunkQuantum
	for _, typ := range []UploadType{Resumable, Media} {
		t.Run(string(typ), func(t *testing.T) {
			f := newFake(t)
			f.sums = true
			f.mangle = func(b []byte) { b[len(b)/2] ^= 0x01 }
			h := newHarness(t, Config{})
			path, data := writeFile(t, 2*Q+9)
			bad := append([]byte(nil), data...)
			bad[len(bad)/2] ^= 0x01
			id := h.add(Spec{URL: f.url(), Type: typ, ContentType: "application/octet-stream", Path: path, ChunkSize: Q, Checksums: []string{SumCRC32C}})
			e := h.finish(id)
			if e.Kind != EventFailed || !errors.Is(e.Err, ErrNotVerified) {
				t.Fatalf("got %s; want failed, not verified", e)
			}
			for _, want := range []string{path, crc32cOf(data), crc32cOf(bad)} {
				if !strings.Contains(e.Message, want) {
					t.Errorf("the message %q does not name %q", e.Message, want)
				}
			}
			for _, ev := range h.seen {
				if ev.Job == id && (ev.Kind == EventDone || ev.Snap.Response != nil || ev.Snap.Verified != "") {
					t.Errorf("reported as done or verified: %s", ev)
				}
			}
			rec, _ := h.q.journal.Load(id)
			if rec.State != StateFailed || rec.Cause != "not-verified" || rec.Response != nil || rec.Verified != "" || rec.Retryable {
				t.Errorf("journal: state %s cause %q response %v verified %q retryable %v", rec.State, rec.Cause, rec.Response, rec.Verified, rec.Retryable)
			}
		})
	}
}

// The running CRC32C is kept with the confirmed offset: a new queue on the
// same journal goes on from it and still verifies.
func TestChecksumAcrossRestart(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	f.sums = true
	held := stopAfterChunk(f, 3)
	state := t.TempDir()
	path, data := writeFile(t, 5*Q+7)
	h1 := newHarness(t, Config{StateDir: state})
	id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q, Checksums: []string{SumCRC32C, SumMD5}})
	waitChan(t, held)
	h1.q.Close()
	j, _ := OpenJournal(state)
	rec, err := j.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Summed < 2*Q || len(rec.SumState[SumCRC32C]) == 0 || len(rec.SumState[SumMD5]) == 0 {
		t.Fatalf("mid-upload the record holds summed %d, states %v", rec.Summed, rec.SumState)
	}
	f.hook = nil
	h2 := newHarness(t, Config{StateDir: state})
	if _, err := h2.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	e := h2.finish(id)
	if e.Kind != EventDone || e.Snap.Verified != SumMD5 {
		t.Fatalf("got %s verified %q; want done, verified by md5", e, e.Snap.Verified)
	}
	f.mu.Lock()
	hashes := f.googHash
	f.mu.Unlock()
	if want := "crc32c=" + crc32cOf(data) + ",md5=" + md5Of(data); len(hashes) != 1 || !strings.HasSuffix(hashes[0], ": "+want) {
		t.Errorf("X-Goog-Hash %q, want %q", hashes, want)
	}
	if comp, _, sessions := f.stats(); comp != 1 || sessions != 1 {
		t.Errorf("completions=%d sessions=%d", comp, sessions)
	}
}

// A process that dies after the server stored more than the journal
// kept: the next one reads the missing bytes into the sums (they are the
// file's, checked by size and times) and still states the right CRC32C.
func TestChecksumServerAheadOfJournal(t *testing.T) {
	const Q = ChunkQuantum
	f := newFake(t)
	f.sums = true
	state := t.TempDir()
	path, data := writeFile(t, 4*Q+3)
	held := stopAfterChunk(f, 2)
	h1 := newHarness(t, Config{StateDir: state})
	id := h1.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, ChunkSize: Q, Checksums: []string{SumCRC32C}})
	waitChan(t, held)
	h1.q.Close()
	// The server gets two more quanta from "elsewhere": the file's own
	// bytes, which this journal never saw go.
	f.mu.Lock()
	for _, s := range f.sessions {
		s.data.Write(data[s.stored : s.stored+2*Q])
		s.stored += 2 * Q
	}
	f.hook = nil
	f.mu.Unlock()
	h2 := newHarness(t, Config{StateDir: state})
	h2.q.ResumeJournal(false)
	e := h2.finish(id)
	if e.Kind != EventDone || e.Snap.Verified != SumCRC32C {
		t.Fatalf("got %s verified %q", e, e.Snap.Verified)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.googHash) != 1 || !strings.HasSuffix(f.googHash[0], "crc32c="+crc32cOf(data)) {
		t.Errorf("X-Goog-Hash %q", f.googHash)
	}
}

// Drive's hex sha256Checksum verifies any job: one that names it
// (Spec.Checksums) computes the SHA-256 as the bytes go, one that does
// not reads the file once more at the end (lateSHA256); a target that
// reports nothing (Gmail) is never called verified.
func TestChecksumReportedOrNot(t *testing.T) {
	for _, c := range []struct {
		name string
		sha  func(data []byte) string // "" reports none
		sums []string
		want string
		fail bool
	}{
		{"drive sha256Checksum", func(d []byte) string { return strings.ToUpper(sha(d)) }, nil, SumSHA256, false},
		{"drive sha256Checksum of other bytes", func(d []byte) string { return sha(append(d, 0)) }, nil, "", true},
		{"drive sha256Checksum, named", func(d []byte) string { return strings.ToUpper(sha(d)) }, []string{SumSHA256}, SumSHA256, false},
		{"drive sha256Checksum of other bytes, named", func(d []byte) string { return sha(append(d, 0)) }, []string{SumSHA256}, "", true},
		{"nothing reported", nil, nil, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			path, data := writeFile(t, 3000)
			f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
				if kind != "chunk" || c.sha == nil {
					return false
				}
				f.session(discardWriter{}, r, s)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(200)
				fmt.Fprintf(w, `{"id":"x","size":"3000","sha256Checksum":%q,"md5Checksum":"00"}`, c.sha(data))
				return true
			}
			h := newHarness(t, Config{})
			id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, Checksums: c.sums})
			e := h.finish(id)
			if c.fail {
				if e.Kind != EventFailed || !errors.Is(e.Err, ErrNotVerified) || !strings.Contains(e.Message, sha(data)) {
					t.Fatalf("got %s", e)
				}
				return
			}
			if e.Kind != EventDone || e.Snap.Verified != c.want {
				t.Fatalf("got %s verified %q, want %q", e, e.Snap.Verified, c.want)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.googHash) != 0 {
				t.Errorf("X-Goog-Hash sent to a target that did not ask: %q", f.googHash)
			}
		})
	}
}

// A server that refuses the sums the last request states (Cloud Storage:
// 400 "Provided CRC32C ... doesn't match calculated CRC32C ...") received
// other bytes than the file's: the job fails as not verified, naming the
// sums, not as a plain refusal.
func TestRefusedChecksumIsNotVerified(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, _ int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind != "chunk" || r.Header.Get("X-Goog-Hash") == "" {
			return false
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"code":400,"message":"Provided CRC32C \"AAAAAA==\" doesn't match calculated CRC32C \"BBBBBB==\".","errors":[{"reason":"invalid"}]}}`))
		return true
	}
	h := newHarness(t, Config{})
	path, _ := writeFile(t, 3*ChunkQuantum+7)
	id := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path, Checksums: []string{SumCRC32C}})
	e := h.finish(id)
	if e.Kind != EventFailed || !errors.Is(e.Err, ErrNotVerified) || !strings.Contains(e.Message, "crc32c=") {
		t.Fatalf("got %s", e)
	}
}
