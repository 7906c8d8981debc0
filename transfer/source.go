package transfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net"
	"os"
)

// The source's identity: an upload sends the file it was recorded with,
// or nothing. Size and times are checked before every request; the bytes
// already sent are hashed again on a resume; a first upload hashes the
// file as it goes out, so nothing is read ahead of sending.

// openSource opens the file and makes sure it is the one the job was
// recorded with.
func (up *upload) openSource(ctx context.Context) error {
	f, err := os.Open(up.rec.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !up.rec.ownFile() {
			return &permanent{&missingErr{path: up.rec.Path}} // a ghost: the queue waits for Locate
		}
		return &permanent{fmt.Errorf("cannot open the file to upload: %w", err)}
	}
	if err := up.checkUnchanged(f); err != nil {
		f.Close()
		return err
	}
	if err := up.checkHashed(ctx, f); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	up.f = f
	return nil
}

// checkHashed compares the file with what the record knows of it, and
// sets up the running sums. A given SHA-256 is checked once anything may
// have gone out under it; a partial sum is checked over its prefix, the
// bytes the server may hold: so no mixed bytes ever reach it.
func (up *upload) checkHashed(ctx context.Context, f *os.File) error {
	rec := up.rec
	began := rec.Session != "" || rec.Sent || rec.Confirmed > 0
	switch {
	case rec.SHA256 != "" && rec.HashState == nil:
		if !began {
			break // the caller's hash, and nothing sent yet to check it for
		}
		h, err := hashPrefix(ctx, f, rec.Size)
		if err != nil {
			return readError(err)
		}
		if hex.EncodeToString(h.Sum(nil)) != rec.SHA256 {
			return changedError(rec.Path, ChangedContent, "its content (SHA-256) differs")
		}
	case rec.Hashed > 0:
		want := newSumGroup([]string{rec.sourceSum()})
		if err := want.restore(map[string][]byte{rec.sourceSum(): rec.HashState}, rec.Hashed); err != nil {
			return &permanent{err}
		}
		if err := checkPrefix(ctx, f, want); err != nil {
			return err
		}
		up.sha = want
	case len(rec.Checksums) == 0:
		up.sha = newSumGroup([]string{rec.sourceSum()})
	}
	if len(rec.Checksums) == 0 {
		return nil
	}
	up.extra = newSumGroup(rec.Checksums)
	if rec.Summed > 0 {
		if err := up.extra.restore(rec.SumState, rec.Summed); err != nil {
			return &permanent{err}
		}
		return checkPrefix(ctx, f, up.extra)
	}
	return nil
}

// checkPrefix hashes the file's first want.at bytes again and compares
// every sum with the kept one.
func checkPrefix(ctx context.Context, f *os.File, want *sumGroup) error {
	got := newSumGroup(want.names)
	if err := readSums(ctx, f, 0, want.at, noLock, got); err != nil {
		return readError(err)
	}
	for _, n := range want.names {
		if !bytes.Equal(got.sum(n), want.sum(n)) {
			return changedError(f.Name(), ChangedContent, fmt.Sprintf("its first %d bytes, already sent, differ", want.at))
		}
	}
	return nil
}

func readError(err error) error {
	return &permanent{fmt.Errorf("cannot read the file to upload: %w", err)}
}

// checkUnchanged compares size and times, cheaply, before each request:
// mixed bytes must never be uploaded.
func (up *upload) checkUnchanged(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return &permanent{fmt.Errorf("cannot read the file to upload: %w", err)}
	}
	rec := up.rec
	switch {
	case fi.Size() != rec.Size:
		return changedError(rec.Path, ChangedSize, fmt.Sprintf("its size is now %d bytes, not %d", fi.Size(), rec.Size))
	case !fi.ModTime().Equal(rec.ModTime):
		return changedError(rec.Path, ChangedModified, "its modification time changed")
	case !rec.ChangeTime.IsZero() && !changeTimeOf(rec.Path, fi).Equal(rec.ChangeTime):
		return changedError(rec.Path, ChangedWritten, "it was written to (its change time moved)")
	}
	return nil
}

// How a file changed under its upload: the Reason of a
// FailSourceChanged failure.
const (
	ChangedSize     = "size"     // its size is not what it was
	ChangedModified = "modified" // its modification time changed
	ChangedWritten  = "written"  // its change time moved: it was written to
	ChangedContent  = "content"  // its bytes differ from those sent
)

// changedErr is a file that changed under its upload; how is one of the
// Changed names, said for people in words.
type changedErr struct{ path, how, words string }

func (e *changedErr) Error() string {
	return fmt.Sprintf("%v (%s: %s); nothing more was sent, so no mixed bytes reach the server", ErrSourceChanged, e.path, e.words)
}

func (e *changedErr) Unwrap() error { return ErrSourceChanged }

func changedError(path, how, words string) error {
	return &permanent{&changedErr{path: path, how: how, words: words}}
}

// hashPrefix hashes the first n bytes of f.
func hashPrefix(ctx context.Context, f *os.File, n int64) (hash.Hash, error) {
	h := sha256.New()
	sr := io.NewSectionReader(f, 0, n)
	buf := make([]byte, 256<<10)
	var read int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := sr.Read(buf)
		h.Write(buf[:m])
		read += int64(m)
		if err == io.EOF {
			if read != n {
				return nil, io.ErrUnexpectedEOF
			}
			return h, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// hashTee is a range of the file as a request's body, feeding the
// running sums with its bytes as they go, from where each stands on:
// bytes sent again after a rewind are already in them. The transport
// reads it (Read), or has it send itself from the file (send).
type hashTee struct {
	sr  *io.SectionReader
	f   *os.File
	pos int64 // file offset of the next byte
	end int64 // file offset after the range
	up  *upload
	// kernel sends from the file; nil is sendFile (tests take the path
	// of a system that cannot).
	kernel func(c *net.TCPConn, f *os.File, off int64, n int, each func(int) error) (int, error)
	// noKernel: the kernel could not send from this file; the rest goes
	// through the buffer.
	noKernel bool
}

func (t *hashTee) Read(p []byte) (int, error) {
	n, err := t.sr.Read(p)
	if n > 0 {
		t.up.feed(t.pos, p[:n])
		t.pos += int64(n)
	}
	return n, err
}

func (t *hashTee) left() int64 { return t.end - t.pos }

// send sends the next n bytes of the range to c, telling each of the
// parts that went. The sums that lack them read them first, len(buf) at a
// time; the bytes then go from the file to the socket in one call without
// passing through the process where the system can (sendFile), else
// through buf, each piece read once for the sums and the socket. A file
// changed between the reading and the sending is caught as any change
// during a request is: the resume's prefix check, or the server's
// checksum of what it got, differs.
func (t *hashTee) send(c *net.TCPConn, n int, buf []byte, each func(int) error) (int, error) {
	if !t.noKernel {
		for done := 0; done < n; {
			k := min(n-done, len(buf))
			if pos := t.pos + int64(done); t.up.lacks(pos, k) {
				if err := readFull(t.f, buf[:k], pos); err != nil {
					return 0, err
				}
				t.up.feed(pos, buf[:k])
			}
			done += k
		}
		kernel := t.kernel
		if kernel == nil {
			kernel = sendFile
		}
		sent, err := kernel(c, t.f, t.pos, n, each)
		t.advance(sent)
		if !errors.Is(err, errNoSendFile) || sent > 0 {
			return sent, err
		}
		t.noKernel = true
	}
	sent := 0
	for sent < n {
		k := min(n-sent, len(buf))
		if err := readFull(t.f, buf[:k], t.pos); err != nil {
			return sent, err
		}
		t.up.feed(t.pos, buf[:k])
		m, err := c.Write(buf[:k])
		t.advance(m)
		sent += m
		if m > 0 {
			if eerr := each(m); eerr != nil {
				return sent, eerr
			}
		}
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

func (t *hashTee) advance(n int) {
	t.pos += int64(n)
	t.sr.Seek(int64(n), io.SeekCurrent)
}

// readFull reads len(p) bytes of f at off: a file shorter than it was is
// an error.
func readFull(f *os.File, p []byte, off int64) error {
	m, err := f.ReadAt(p, off)
	if m < len(p) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// feed adds the file's bytes p, found at pos, to the running sums.
func (up *upload) feed(pos int64, p []byte) {
	up.hashMu.Lock()
	up.sha.feed(pos, p)
	up.extra.feed(pos, p)
	up.hashMu.Unlock()
}

// lacks reports whether a running sum still needs the n bytes at pos.
func (up *upload) lacks(pos int64, n int) bool {
	up.hashMu.Lock()
	defer up.hashMu.Unlock()
	return up.sha.needs(pos, n) || up.extra.needs(pos, n)
}

// source is the file's bytes from off, through the running sums.
func (up *upload) source(off, n int64) io.Reader {
	return &hashTee{sr: io.NewSectionReader(up.f, off, n), f: up.f, pos: off, end: off + n, up: up}
}

// sumState is the running sums to record with a confirmed offset.
func (up *upload) sumState(c *Cursor) {
	up.hashMu.Lock()
	defer up.hashMu.Unlock()
	if up.sha != nil {
		c.Hashed, c.HashState = up.sha.at, up.sha.states()[up.sha.names[0]]
	}
	if up.extra != nil {
		c.Summed, c.SumState = up.extra.at, up.extra.states()
	}
}

// fileSum is the file's SHA-256 once every byte went through the hash,
// or once the end read it for a target that reported one (lateSHA256).
func (up *upload) fileSum() string {
	up.hashMu.Lock()
	defer up.hashMu.Unlock()
	switch {
	case up.late != nil:
		return hex.EncodeToString(up.late)
	case up.sha == nil || up.sha.at != up.rec.Size || up.sha.names[0] != SumSHA256:
		return ""
	}
	return hex.EncodeToString(up.sha.sum(SumSHA256))
}
