package transfer

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Checksums: every byte the engine sends goes through its running sums
// once, as it leaves (hashTee, bulkconn.go): the sums a target can check
// and report, asked for by the job (Spec.Checksums: SumCRC32C, SumMD5,
// SumSHA256 for Drive), or, when the job asks for none and the caller did
// not give the SHA-256, a CRC32C for the source check alone
// (Record.SourceSum: Gmail and Google's second dialect report nothing). The
// SHA-256 costs 0.8 CPU-s per GiB here, more than moving the bytes: a job
// is charged for it only where its target compares it. Elsewhere a CRC32C
// stands for the source check (32 bits against accidental change, beside
// the size and times checked before every request; a server that checks
// CRC32C compares the whole file's at the end). Their states are kept with
// the confirmed offset, so a resume hashes the prefix again and goes on.
// The request carrying the last bytes states them (X-Goog-Hash), and the
// server's finishing resource is compared with the file's sums where it
// reports one (verify); a SHA-256 reported by a target the job did not say
// reports one is compared too, from one more pass over the file
// (lateSHA256).

// The sums a job can ask for, and the SHA-256 of jobs that ask for none.
const (
	SumCRC32C = "crc32c" // CRC32C (Castagnoli), as Cloud Storage keeps it
	SumMD5    = "md5"
	SumSHA256 = "sha256"
)

// ErrNotVerified: the server reports a checksum of what it holds that is
// not the file's.
var ErrNotVerified = errors.New("the server holds other bytes than the file's")

var castagnoli = crc32.MakeTable(crc32.Castagnoli) // hardware-accelerated where the CPU can

func newSum(name string) hash.Hash {
	switch name {
	case SumCRC32C:
		return crc32.New(castagnoli)
	case SumMD5:
		return md5.New()
	case SumSHA256:
		return sha256.New()
	}
	return nil
}

// validSums reports whether names are sums a job can ask for, once each.
func validSums(names []string) bool {
	for i, n := range names {
		if n != SumCRC32C && n != SumMD5 && n != SumSHA256 || slices.Contains(names[:i], n) {
			return false
		}
	}
	return true
}

// sumGroup is running sums over the file's first at bytes.
type sumGroup struct {
	names []string
	hs    []hash.Hash
	at    int64
}

func newSumGroup(names []string) *sumGroup {
	g := &sumGroup{names: names}
	for _, n := range names {
		g.hs = append(g.hs, newSum(n))
	}
	return g
}

// feed adds the bytes p, found at file offset pos, from where the sums
// stand on: bytes before it are in them already (a resend), and bytes
// after a gap cannot go in.
func (g *sumGroup) feed(pos int64, p []byte) {
	if g == nil || pos > g.at || g.at >= pos+int64(len(p)) {
		return
	}
	b := p[g.at-pos:]
	for _, h := range g.hs {
		h.Write(b)
	}
	g.at = pos + int64(len(p))
}

// needs reports whether the n bytes at pos would move the sums on.
func (g *sumGroup) needs(pos int64, n int) bool {
	return g != nil && pos <= g.at && g.at < pos+int64(n)
}

func (g *sumGroup) sum(name string) []byte {
	if g == nil {
		return nil
	}
	if i := slices.Index(g.names, name); i >= 0 {
		return g.hs[i].Sum(nil)
	}
	return nil
}

func (g *sumGroup) states() map[string][]byte {
	m := map[string][]byte{}
	for i, h := range g.hs {
		m[g.names[i]], _ = h.(encoding.BinaryMarshaler).MarshalBinary()
	}
	return m
}

// restore sets the sums to the states kept for the first at bytes.
func (g *sumGroup) restore(states map[string][]byte, at int64) error {
	for i, h := range g.hs {
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(states[g.names[i]]); err != nil {
			return fmt.Errorf("the journal's record of this job is damaged (%s state): %w", g.names[i], err)
		}
	}
	g.at = at
	return nil
}

// readSums feeds the groups with the file's bytes from..to.
func readSums(ctx context.Context, f io.ReaderAt, from, to int64, lock func() func(), gs ...*sumGroup) error {
	buf := make([]byte, 256<<10)
	for pos := from; pos < to; {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := f.ReadAt(buf[:min(int64(len(buf)), to-pos)], pos)
		if m > 0 {
			unlock := lock()
			for _, g := range gs {
				g.feed(pos, buf[:m])
			}
			unlock()
			pos += int64(m)
		}
		if err == io.EOF && pos < to {
			return io.ErrUnexpectedEOF
		}
		if err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

func noLock() func() { return func() {} }

// catchUp brings the running sums to the file's offset to, reading the
// bytes they miss: those a process before this one sent (the server holds
// more than the journal's last checkpoint), or, at the end, those of a
// session that completed before this process sent them.
func (up *upload) catchUp(ctx context.Context, to int64) error {
	up.hashMu.Lock()
	from := to
	for _, g := range []*sumGroup{up.sha, up.extra} {
		if g != nil {
			from = min(from, g.at)
		}
	}
	up.hashMu.Unlock()
	if from >= to {
		return nil
	}
	lock := func() func() { up.hashMu.Lock(); return up.hashMu.Unlock }
	if err := readSums(ctx, up.f, from, to, lock, up.sha, up.extra); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return readError(err)
	}
	return nil
}

// goog are the sums the last request states, as "crc32c=B64,md5=B64"
// (Cloud Storage's X-Goog-Hash); "" when the job asks for none or they do
// not cover the file.
func (up *upload) goog() string {
	up.hashMu.Lock()
	defer up.hashMu.Unlock()
	g := up.extra
	if g == nil || g.at != up.rec.Size {
		return ""
	}
	var parts []string
	for _, n := range g.names {
		if n != SumSHA256 { // X-Goog-Hash knows CRC32C and MD5 only
			parts = append(parts, n+"="+base64.StdEncoding.EncodeToString(g.sum(n)))
		}
	}
	return strings.Join(parts, ",")
}

// reported is where servers state a checksum of what they hold: fields
// of the finished resource (Cloud Storage's base64, Drive's hex) and the
// finishing answer's X-Goog-Hash.
var reported = []struct {
	field, sum string
	hex        bool
}{
	{"sha256Checksum", SumSHA256, true},
	{"md5Checksum", SumMD5, true},
	{"md5Hash", SumMD5, false},
	{"crc32c", SumCRC32C, false},
}

// verifiedBy orders the sums from the strongest: the one a verified job
// names.
var verifiedBy = []string{SumSHA256, SumMD5, SumCRC32C}

type claim struct {
	sum, field, value string
	hex               bool
}

func claims(resp *Response) []claim {
	var cs []claim
	var obj map[string]json.RawMessage
	json.Unmarshal(resp.Body, &obj)
	for _, r := range reported {
		var v string
		if raw, ok := obj[r.field]; ok && json.Unmarshal(raw, &v) == nil {
			cs = append(cs, claim{r.sum, r.field, v, r.hex})
		}
	}
	for _, part := range strings.Split(resp.googHash, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && (name == SumCRC32C || name == SumMD5) {
			cs = append(cs, claim{name, "X-Goog-Hash " + name, v, false})
		}
	}
	return cs
}

// verify compares the checksums the finishing answer reports with the
// file's, completing the file's sums first if bytes are missing from them
// (a session that completed before this process sent its last bytes). It
// returns the strongest sum that matched, "" when the server reports none
// the engine has.
func (up *upload) verify(ctx context.Context, resp *Response) (string, error) {
	cs := claims(resp)
	if len(cs) == 0 {
		return "", nil
	}
	rec := up.rec
	if up.checkUnchanged(up.f) == nil {
		if err := up.catchUp(ctx, rec.Size); err != nil {
			return "", err
		}
	}
	ours := func(name string) []byte {
		up.hashMu.Lock()
		defer up.hashMu.Unlock()
		switch {
		case name == SumSHA256 && rec.SHA256 != "" && up.sha == nil:
			b, _ := hex.DecodeString(rec.SHA256)
			return b
		case name == SumSHA256 && up.sha != nil && up.sha.at == rec.Size && up.sha.names[0] == SumSHA256:
			return up.sha.sum(name)
		case up.extra != nil && up.extra.at == rec.Size:
			return up.extra.sum(name)
		}
		return nil
	}
	var late []byte
	if slices.ContainsFunc(cs, func(c claim) bool { return c.sum == SumSHA256 }) && ours(SumSHA256) == nil {
		var err error
		if late, err = up.lateSHA256(ctx); err != nil {
			return "", err
		}
	}
	matched := map[string]bool{}
	for _, c := range cs {
		want := ours(c.sum)
		if c.sum == SumSHA256 && want == nil {
			want = late
		}
		if want == nil {
			continue // a sum this job did not compute
		}
		enc := base64.StdEncoding.EncodeToString
		if c.hex {
			enc = hex.EncodeToString
		}
		got, err := base64.StdEncoding.DecodeString(c.value)
		if c.hex {
			got, err = hex.DecodeString(strings.ToLower(c.value))
		}
		if err != nil || !bytes.Equal(got, want) {
			return "", &permanent{fmt.Errorf("%w: %s: its %s is %s, but the server reports %s (%s) for the copy it holds", ErrNotVerified, rec.Path, strings.ToUpper(c.sum), enc(want), printable(c.value), c.field)}
		}
		matched[c.sum] = true
	}
	for _, n := range verifiedBy {
		if matched[n] {
			return n, nil
		}
	}
	return "", nil
}

// lateSHA256 is the file's SHA-256 for a target that reports one though
// the job did not name it (Spec.Checksums), so only a CRC32C went with the
// bytes: one more pass reads the file for both, and the CRC32C must be
// the one of the bytes that went, so the SHA-256 is of what was sent. nil
// when the bytes that went are not all in the source sum (the file
// changed since: the size and times say so).
func (up *upload) lateSHA256(ctx context.Context) ([]byte, error) {
	up.hashMu.Lock()
	src := up.sha
	ok := src != nil && src.names[0] == SumCRC32C && src.at == up.rec.Size
	up.hashMu.Unlock()
	if !ok {
		return nil, nil
	}
	g := newSumGroup([]string{SumSHA256, SumCRC32C})
	if err := readSums(ctx, up.f, 0, up.rec.Size, noLock, g); err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, readError(err)
	}
	up.hashMu.Lock()
	same := bytes.Equal(g.sum(SumCRC32C), src.sum(SumCRC32C))
	up.hashMu.Unlock()
	if !same {
		return nil, changedError(up.rec.Path, ChangedContent, "its content differs from the bytes sent")
	}
	up.late = g.sum(SumSHA256)
	return up.late, nil
}

// googHashOf reads the X-Goog-Hash values of an answer.
func googHashOf(h http.Header) string { return strings.Join(h.Values("X-Goog-Hash"), ",") }
