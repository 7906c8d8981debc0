package photos

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"carrier/internal/platform"
)

// A batch's stamps (each file as it was matched before its upload was
// queued: size, modification time, SHA-256) are kept beside its delivery,
// in STATE/deliveries/ID.stamps, not in memory: a camera roll's 20,000
// would be held from the batch's start to each one's call (issue 29).
// The file holds one block per batchCreate call, written before the call
// is queued: a line "= FIRST N" naming the call's first upload and how
// many follow ("= FIRST N last" for the batch's last call), then a line
// "UPLOAD SIZE MODIFIED SHA256" for each. A call's end reads its block
// (photosRecord): calls end in the files' order, so the file is read
// once, front to back, from where the call before stopped; the file goes
// once the last block is read. A block not found (a call for expired
// items, a file lost or cut short by a kill) leaves the call's uploads
// unstamped: their files are read again for their SHA-256, as for
// another process's uploads.

// stampsPath is where delivery id's stamps are kept.
func (q *Queue) stampsPath(id string) string {
	return filepath.Join(q.DeliveryStore().Dir(), id+".stamps")
}

// stampWriter writes a batch's stamps as its calls are queued; one that
// cannot write keeps them in memory (Queue.stamp), as before.
type stampWriter struct {
	q    *Queue
	path string
	f    *os.File
	w    *bufio.Writer
	err  error
}

// newStampWriter starts delivery id's stamps file.
func (q *Queue) newStampWriter(id string) *stampWriter {
	sw := &stampWriter{q: q, path: q.stampsPath(id)}
	// Made private under a temporary name, closed (Windows renames no
	// open file), named, and opened again to append.
	f, err := platform.CreateTemp(q.DeliveryStore().Dir(), "."+id+".stamps-*")
	if err == nil {
		f.Close()
		if err = platform.Rename(f.Name(), sw.path); err != nil {
			platform.Remove(f.Name())
		}
	}
	if err == nil {
		f, err = os.OpenFile(sw.path, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		sw.err = err
		return sw
	}
	sw.f, sw.w = f, bufio.NewWriter(f)
	return sw
}

// add writes the block of a call's uploads, with their stamps, before
// the call is queued; the batch's last call's (last) says so, and the
// file is closed after it, so that the call's end, which may come before
// PhotosUpload returns, finds it whole and may remove it (Windows
// removes no open file).
func (sw *stampWriter) add(uploads []string, stamps []postedStamp, last bool) {
	if sw.err == nil {
		mark := ""
		if last {
			mark = " last"
		}
		fmt.Fprintf(sw.w, "= %s %d%s\n", uploads[0], len(uploads), mark)
		for i, u := range uploads {
			st := stamps[i]
			fmt.Fprintf(sw.w, "%s %d %d %s\n", u, st.size, st.modified, hex.EncodeToString(st.sum[:]))
		}
		// On the disk before the call is queued: a kill or a power cut
		// after it finds the call's stamps.
		if sw.err = sw.w.Flush(); sw.err == nil {
			sw.err = platform.SyncFile(sw.f)
		}
		if sw.err == nil && last {
			sw.err = sw.f.Close()
			sw.f = nil
		}
		if sw.err == nil {
			return
		}
	}
	for i, u := range uploads {
		sw.q.stamp(u, stamps[i])
	}
}

// close ends a batch not wholly queued (done false): its file goes (the
// calls queued were cancelled). A batch whose last block was written
// closed its file then.
func (sw *stampWriter) close(done bool) {
	if sw.f != nil {
		sw.f.Close()
		sw.f = nil
	}
	if !done {
		platform.Remove(sw.path)
	}
}

// stampReader is where a delivery's stamps file was last read to.
type stampReader struct {
	off int64
}

// callStamps returns the stamps of a call's uploads (quoted, in order)
// from delivery id's file, or nil. Queue.stampMu is taken.
func (q *Queue) callStamps(id string, quoted []string) map[string]postedStamp {
	if len(quoted) == 0 || id == "" {
		return nil
	}
	q.stampMu.Lock()
	defer q.stampMu.Unlock()
	path := q.stampsPath(id)
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if q.stampFiles == nil {
		q.stampFiles = map[string]*stampReader{}
	}
	rd := q.stampFiles[id]
	if rd == nil {
		rd = &stampReader{}
		q.stampFiles[id] = rd
	}
	// From where the call before stopped; once more from the start for
	// a call out of that order.
	for _, from := range []int64{rd.off, 0} {
		got, next, last, err := readStamps(f, from, quoted[0])
		if err != nil || got == nil {
			if from == 0 {
				return nil
			}
			continue
		}
		rd.off = next
		if last {
			delete(q.stampFiles, id)
			f.Close() // Windows removes no open file
			platform.Remove(path)
		}
		return got
	}
	return nil
}

// readStamps reads f from off for the block whose first upload is first;
// it returns its stamps, the offset after it, and whether it was the
// batch's last. A line cut short by a kill ends the file.
func readStamps(f *os.File, off int64, first string) (map[string]postedStamp, int64, bool, error) {
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, 0, false, err
	}
	br := bufio.NewReader(f)
	line := func() (string, bool) {
		s, err := br.ReadString('\n')
		if err != nil {
			return "", false
		}
		off += int64(len(s))
		return s[:len(s)-1], true
	}
	for {
		head, ok := line()
		if !ok {
			return nil, off, false, nil
		}
		h := strings.Fields(head)
		if len(h) < 3 || len(h) > 4 || h[0] != "=" || len(h) == 4 && h[3] != "last" {
			return nil, off, false, errors.New("a stamps file out of order")
		}
		n, err := strconv.Atoi(h[2])
		if err != nil || n <= 0 {
			return nil, off, false, errors.New("a stamps file out of order")
		}
		want := h[1] == first
		var got map[string]postedStamp
		if want {
			got = make(map[string]postedStamp, n)
		}
		for range n {
			s, ok := line()
			if !ok {
				return nil, off, false, nil
			}
			if !want {
				continue
			}
			u, st, ok := parseStamp(s)
			if !ok {
				return nil, off, false, errors.New("a stamps file out of order")
			}
			got[u] = st
		}
		if want {
			return got, off, len(h) == 4, nil
		}
	}
}

// parseStamp reads one upload's line.
func parseStamp(s string) (string, postedStamp, bool) {
	f := strings.Fields(s)
	if len(f) != 4 {
		return "", postedStamp{}, false
	}
	var st postedStamp
	var err1, err2 error
	st.size, err1 = strconv.ParseInt(f[1], 10, 64)
	st.modified, err2 = strconv.ParseInt(f[2], 10, 64)
	if n, err := hex.Decode(st.sum[:], []byte(f[3])); err1 != nil || err2 != nil || err != nil || n != len(st.sum) {
		return "", postedStamp{}, false
	}
	return f[0], st, true
}
