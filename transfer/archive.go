package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// The archive keeps the records of jobs that ended for good in one
// append-only file beside the records (jobs/archive.jsonl), so that the
// folder every start reads file by file holds only what may still move,
// however many jobs were ever sent: a camera roll of 20,000 pictures
// leaves 20,400 records, which each start would otherwise open, read and
// parse (issue 29).
//
// Each line is one JSON object: {"record": {...}} for a record moved
// there, {"forgot": "ID"} for a job forgotten since (Remove). A later line
// for an id stands over an earlier one, and a record still in the folder
// stands over the archive's: Compact writes the archive durably before it
// removes any record, so a crash between the two leaves a job in both
// places, read once, and never in neither.

const archiveName = "archive.jsonl"

// archiveLockWait bounds how long an append waits for another process's
// (each appends a few lines at most, or one compaction's worth).
const archiveLockWait = 30 * time.Second

// maxArchiveLine bounds one line read back: a record with its answer.
const maxArchiveLine = 64 << 20

// archiveLine is one line of the archive. ID names the record's job, so
// that a reader can pass over a job it does not want without decoding it.
type archiveLine struct {
	ID     string          `json:"id,omitempty"`
	Record json.RawMessage `json:"record,omitempty"`
	Forgot string          `json:"forgot,omitempty"`
}

func (j *Journal) archivePath() string { return filepath.Join(j.dir, archiveName) }

// settled reports whether a job in state s ended for good: nothing moves
// it again (lifecycle has no move out of done or cancelled), so its record
// will not be written again and may leave the folder. A failed job may be
// retried, so it stays.
func settled(s State) bool { return s == StateDone || s == StateCancelled }

// readArchive is the archive's records by id, each as its last line
// says (a forgotten job absent), but those skip names (nil: none), which
// are not decoded. A line cut short by a crash in the middle
// of an append is the file's last and ends without a newline: it is
// skipped, since the records it held are still in the folder. Any other
// line that cannot be read is reported and left out.
// archiveReads counts the reads of a whole archive (readArchive), for
// the tests of what reads it how often.
var archiveReads atomic.Int64

func (j *Journal) readArchive(skip func(id string) bool) (map[string]*Record, error) {
	archiveReads.Add(1)
	f, err := os.Open(j.archivePath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the upload journal's archive: %w", err)
	}
	defer f.Close()
	recs := map[string]*Record{}
	var errs []error
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			line, err = readLongLine(br, line)
		}
		if err == io.EOF {
			return recs, errors.Join(errs...) // a torn last line, or none
		}
		if err != nil {
			return recs, errors.Join(append(errs, fmt.Errorf("cannot read the upload journal's archive: %w", err))...)
		}
		l, ok := splitRecordLine(line)
		if !ok {
			if err := json.Unmarshal(line, &l); err != nil {
				errs = append(errs, fmt.Errorf("%s line %d: %w", archiveName, n, err))
				continue
			}
		}
		if l.Forgot != "" {
			delete(recs, l.Forgot)
			continue
		}
		if skip != nil && skip(l.ID) {
			continue
		}
		r, err := DecodeRecord(l.Record)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s line %d: %w", archiveName, n, err))
			continue
		}
		recs[r.ID] = r
	}
}

// walkArchive hands fn the archive's records as readArchive would return
// them, one at a time, holding none: a first pass finds each job's last
// line without decoding a record, the second decodes those lines alone
// (a camera roll leaves 20,400 records, with their answers, which a
// history read whole would hold at once). Lines appended after the first
// pass are left to the next read.
func (j *Journal) walkArchive(skip func(id string) bool, fn func(*Record)) error {
	f, err := os.Open(j.archivePath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read the upload journal's archive: %w", err)
	}
	defer f.Close()
	var errs []error
	// each calls line for each whole line of the archive, with its number
	// and what it says (ok false: it cannot be read, reported once).
	each := func(report bool, line func(n int, l archiveLine, raw []byte)) error {
		br := bufio.NewReaderSize(f, 64<<10)
		for n := 1; ; n++ {
			raw, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				raw, err = readLongLine(br, raw)
			}
			if err == io.EOF {
				return nil // a torn last line, or none
			}
			if err != nil {
				return fmt.Errorf("cannot read the upload journal's archive: %w", err)
			}
			l, ok := splitRecordLine(raw)
			if !ok {
				if err := json.Unmarshal(raw, &l); err != nil {
					if report {
						errs = append(errs, fmt.Errorf("%s line %d: %w", archiveName, n, err))
					}
					continue
				}
			}
			line(n, l, raw)
		}
	}
	last := map[string]int{} // each job's last line; 0: forgotten
	if err := each(true, func(n int, l archiveLine, _ []byte) {
		if l.Forgot != "" {
			last[l.Forgot] = 0
		} else {
			last[l.ID] = n
		}
	}); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return errors.Join(append(errs, fmt.Errorf("cannot read the upload journal's archive: %w", err))...)
	}
	err = each(false, func(n int, l archiveLine, _ []byte) {
		if l.Forgot != "" || last[l.ID] != n || skip != nil && skip(l.ID) {
			return
		}
		r, err := DecodeRecord(l.Record)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s line %d: %w", archiveName, n, err))
			return
		}
		fn(r)
	})
	return errors.Join(append(errs, err)...)
}

// splitRecordLine reads a record's line as appendArchive writes it,
// {"id":"ID","record":{...}}, without parsing the record, which
// DecodeRecord then parses once (and checks whole): History reads every
// archived line each time it is asked. Any other line is not split (!ok)
// and goes to the JSON decoder.
func splitRecordLine(line []byte) (l archiveLine, ok bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\n"), []byte(`{"id":"`))
	if !ok {
		return l, false
	}
	id, rec, ok := bytes.Cut(rest, []byte(`","record":`))
	if !ok || !idPattern.Match(id) {
		return l, false
	}
	rec, ok = bytes.CutSuffix(rec, []byte("}"))
	return archiveLine{ID: string(id), Record: rec}, ok
}

// readLongLine finishes a line longer than br's buffer, up to
// maxArchiveLine.
func readLongLine(br *bufio.Reader, head []byte) ([]byte, error) {
	line := append([]byte(nil), head...)
	for len(line) <= maxArchiveLine {
		more, err := br.ReadSlice('\n')
		line = append(line, more...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
	return nil, fmt.Errorf("a line longer than %d bytes", maxArchiveLine)
}

// loadArchived is one job's record from the archive, for Load of a job no
// longer in the folder.
func (j *Journal) loadArchived(id string) (*Record, bool) {
	recs, _ := j.readArchive(func(other string) bool { return other != id })
	r, ok := recs[id]
	return r, ok
}

// appendArchive adds lines to the archive durably (synced before it
// returns), under the archive's lock so that two processes' lines never
// interleave. A line left torn by an earlier crash is cut off first: what
// it held is still in the folder (Compact removes records only once the
// archive is synced).
func (j *Journal) appendArchive(lines []archiveLine) error {
	var buf bytes.Buffer
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf.Write(b) // json.Marshal never writes a raw newline
		buf.WriteByte('\n')
	}
	release, err := LockFile(filepath.Join(j.dir, ".archive.lock"), archiveLockWait)
	if err != nil {
		return fmt.Errorf("cannot write the upload journal's archive: %w", err)
	}
	defer release()
	f, err := os.OpenFile(j.archivePath(), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cannot write the upload journal's archive: %w", err)
	}
	err = cutTornTail(f)
	if err == nil {
		_, err = f.Write(buf.Bytes())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write the upload journal's archive (disk full?): %w", err)
	}
	j.syncFolder() // a new archive's name
	return nil
}

// cutTornTail truncates f after its last newline, when bytes follow it.
func cutTornTail(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	end := fi.Size()
	block := make([]byte, 64<<10)
	for at := end; at > 0; {
		n := min(int64(len(block)), at)
		at -= n
		if _, err := f.ReadAt(block[:n], at); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(block[:n], '\n'); i >= 0 {
			if keep := at + int64(i) + 1; keep < end {
				return f.Truncate(keep)
			}
			return nil
		}
	}
	if end > 0 {
		return f.Truncate(0) // one torn line and nothing before it
	}
	return nil
}

// compactStop is a seam of the crash test: it runs between the archive's
// write and the first record's removal, and a true answer stops there, as
// a crash would.
var compactStop = func() bool { return false }

// Compact moves the records of jobs that ended for good (done or
// cancelled) and that no job still able to move needs into the archive,
// and reports how many it moved. A job a waiting one needs, or quotes,
// stays in the folder until that one ends; an unfinished or failed job
// never moves. The archive is written and synced before any record is
// removed, so a crash at any point loses no job and, read back, doubles
// none.
func (j *Journal) Compact() (int, error) {
	// First what each record says of itself (its state and needs), then
	// the records that move, read again a batch at a time: a camera
	// roll's 20,400 records, with their answers, are never held at once.
	type seen struct {
		id      string
		state   State
		needs   []string
		created time.Time
	}
	var all []seen
	_, err := j.walkFolder(nil, func(r *Record) {
		all = append(all, seen{r.ID, r.State, r.Needs, r.Created})
	})
	if err != nil && len(all) == 0 {
		return 0, err
	}
	slices.SortFunc(all, func(a, b seen) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	needed := map[string]bool{}
	for _, r := range all {
		if !settled(r.state) {
			for _, id := range r.needs {
				needed[id] = true
			}
		}
	}
	var moving []string
	for _, r := range all {
		if settled(r.state) && !needed[r.id] {
			moving = append(moving, r.id)
		}
	}
	// A batch at a time: its lines encoded, appended and synced, then its
	// records removed, so that a camera roll's 20,400 records are not
	// encoded into one buffer at once.
	moved := 0
	var errs []error
	for start := 0; start < len(moving); start += compactBatch {
		var batch []string
		lines := make([]archiveLine, 0, compactBatch)
		for _, id := range moving[start:min(start+compactBatch, len(moving))] {
			r, err := j.loadFile(id)
			if errors.Is(err, fs.ErrNotExist) {
				continue // another Carrier's start moved it meanwhile
			}
			if err == nil && !settled(r.State) {
				err = fmt.Errorf("job %s is %s again", id, r.State) // cannot be: settled is for good
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			data, err := json.Marshal(r)
			if err != nil {
				return moved, errors.Join(append(errs, err)...)
			}
			lines = append(lines, archiveLine{ID: r.ID, Record: data})
			batch = append(batch, id)
		}
		if len(lines) == 0 {
			continue
		}
		if err := j.appendArchive(lines); err != nil {
			return moved, errors.Join(append(errs, err)...)
		}
		if compactStop() {
			return moved, errors.Join(errs...)
		}
		for _, id := range batch {
			// The lock and progress files go first: a record without them is
			// whole, one with them but without its record is litter.
			os.Remove(j.path(id, ".lock"))
			os.Remove(j.path(id, ".progress"))
			if err := os.Remove(j.path(id, ".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		j.syncFolder()
		moved += len(batch)
	}
	return moved, errors.Join(errs...)
}

// compactBatch is how many records Compact moves at a time.
const compactBatch = 256
