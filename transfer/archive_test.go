package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"
)

// archiveJournal is a journal of one job in each state that matters to
// Compact, with what it should move: a done job nobody needs, a cancelled
// one, a done one a waiting call quotes, a done one a failed job needs (a
// retry would need it again), and the waiting, failed, queued and running
// jobs themselves.
func archiveJournal(t *testing.T) (j *Journal, all []string, movable []string) {
	t.Helper()
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	mk := func(n int, st State, needs ...string) string {
		r := goodRecord()
		r.ID = fmt.Sprintf("20300102T030405-%08x", n)
		r.Created = t0.Add(time.Duration(n) * time.Second)
		r.State, r.Needs = st, needs
		switch st {
		case StateDone:
			r.Confirmed = r.Size
			r.Response = &Response{Status: 200, Body: []byte(`{"id":"item-` + r.ID + `"}`)}
		case StateCancelled:
			r.Failure = &Failure{Code: FailCancelled}
		}
		if err := j.Save(r); err != nil {
			t.Fatal(err)
		}
		all = append(all, r.ID)
		return r.ID
	}
	doneFree := mk(1, StateDone)
	cancelled := mk(2, StateCancelled)
	quoted := mk(3, StateDone)
	call := goodRecord()
	call.ID, call.Created, call.Type, call.State = "20300102T030405-000000a0", t0.Add(3500*time.Millisecond), Call, StateWaiting
	call.Needs, call.Quote = []string{quoted}, []string{quoted}
	if err := j.Save(call); err != nil {
		t.Fatal(err)
	}
	all = append(all, call.ID)
	forRetry := mk(4, StateDone)
	mk(5, StateFailed, forRetry)
	mk(6, StateQueued)
	mk(7, StateRunning)
	doneAfter := mk(8, StateDone, doneFree) // settled, needing a settled one: both go
	return j, all, []string{doneFree, cancelled, doneAfter}
}

func listedIDs(t *testing.T, j *Journal) []string {
	t.Helper()
	recs, err := j.List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	return ids
}

func inFolder(j *Journal, id string) bool {
	_, err := os.Stat(j.path(id, ".json"))
	return err == nil
}

func TestCompactMovesOnlyJobsNothingCanNeedAndKeepsThemListable(t *testing.T) {
	j, all, movable := archiveJournal(t)
	moved, err := j.Compact()
	if err != nil || moved != len(movable) {
		t.Fatalf("Compact moved %d, %v; want %d", moved, err, len(movable))
	}
	for _, id := range all {
		if want := !slices.Contains(movable, id); inFolder(j, id) != want {
			t.Errorf("job %s in the folder: %v, want %v", id, !want, want)
		}
	}
	// Every job is still listed, once, oldest first, and read whole.
	if got := listedIDs(t, j); !slices.Equal(got, all) {
		t.Errorf("listed after Compact:\n%v\nwant\n%v", got, all)
	}
	r, err := j.Load(movable[0])
	if err != nil || r.State != StateDone || r.Response == nil || string(r.Response.Body) != `{"id":"item-`+movable[0]+`"}` {
		t.Fatalf("an archived job loads as %+v, %v", r, err)
	}
	// The folder a queue takes up holds only what may still move.
	live, err := j.listFolder()
	if err != nil || len(live) != len(all)-len(movable) {
		t.Errorf("the folder lists %d records (%v), want %d", len(live), err, len(all)-len(movable))
	}
	// Again: nothing more to move, nothing doubled.
	if moved, err := j.Compact(); moved != 0 || err != nil {
		t.Errorf("a second Compact moved %d, %v", moved, err)
	}
	if got := listedIDs(t, j); !slices.Equal(got, all) {
		t.Errorf("listed after a second Compact: %v", got)
	}
	// A forgotten archived job is gone from the list and from Load.
	if err := j.Remove(movable[0]); err != nil {
		t.Fatal(err)
	}
	if got := listedIDs(t, j); slices.Contains(got, movable[0]) || len(got) != len(all)-1 {
		t.Errorf("listed after Remove of %s: %v", movable[0], got)
	}
	if _, err := j.Load(movable[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a forgotten archived job: %v", err)
	}
}

func TestCompactCutShortReadsEveryJobOnce(t *testing.T) {
	j, all, movable := archiveJournal(t)
	compactStop = func() bool { return true } // a crash after the archive's write
	t.Cleanup(func() { compactStop = func() bool { return false } })
	j.Compact()
	for _, id := range movable {
		if !inFolder(j, id) {
			t.Fatalf("job %s left the folder before the crash", id)
		}
	}
	if got := listedIDs(t, j); !slices.Equal(got, all) {
		t.Errorf("listed after a crash between the steps:\n%v\nwant\n%v", got, all)
	}
	// The next start's Compact finishes the move: the archive then holds
	// those jobs twice, still read once.
	compactStop = func() bool { return false }
	if moved, err := j.Compact(); err != nil || moved != len(movable) {
		t.Fatalf("Compact after the crash moved %d, %v", moved, err)
	}
	if got := listedIDs(t, j); !slices.Equal(got, all) {
		t.Errorf("listed after the move was finished:\n%v\nwant\n%v", got, all)
	}
}

func TestArchiveLineTornByACrashIsSkippedAndCut(t *testing.T) {
	j, all, movable := archiveJournal(t)
	if _, err := j.Compact(); err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of a later append: half a line, no newline.
	f, err := os.OpenFile(j.archivePath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"record":{"v":1,"id":"2030`)
	f.Close()
	if got := listedIDs(t, j); !slices.Equal(got, all) {
		t.Errorf("listed with a torn last line:\n%v\nwant\n%v", got, all)
	}
	// The next append cuts the torn line off: its own line is read, and
	// nothing is reported.
	if err := j.Remove(movable[1]); err != nil {
		t.Fatal(err)
	}
	got := listedIDs(t, j)
	want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return id == movable[1] })
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("listed after an append past the torn line:\n%v\nwant\n%v", got, want)
	}
}

// TestQueueStartReadsOnlyTheFolder pins that a queue taking up its journal
// reads the records that may still move, not the archive: its start does
// not grow with the jobs ever sent. The archive is made unreadable; a start
// that read it would say so.
func TestQueueStartReadsOnlyTheFolder(t *testing.T) {
	j, _, _ := archiveJournal(t)
	if _, err := j.Compact(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(j.archivePath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not a line of the archive\n")
	f.Close()
	if _, err := j.List(); err == nil {
		t.Fatal("List read past an unreadable archive line without a word")
	}
	q, err := New(Config{StateDir: filepath.Dir(j.Dir()), Workers: 1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.ResumeJournalExcept(false, []string{"20300102T030405-00000006"}); err != nil {
		t.Errorf("a queue's start read the archive: %v", err)
	}
}

// TestFinishedJobKeepsItsAnswerAtItsLength pins the memory a finished job
// holds for its answer (issue 29): the answer's bytes, not the buffer it
// was read into (io.ReadAll's, 512 bytes at least), for each of the
// 20,000 uploads of a camera roll.
func TestFinishedJobKeepsItsAnswerAtItsLength(t *testing.T) {
	const token = `{"id":"an answer of 80 bytes, as a Photos upload token is: 0123456789abcdefgh"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(token))
	}))
	defer srv.Close()
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	q, err := New(Config{StateDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := q.Wait(context.Background(), id); err != nil || s.State != StateDone {
		t.Fatalf("%s, %v: %s", s.State, err, s.Error)
	}
	rec, _ := q.record(id)
	if b := rec.Response.Body; string(b) != token || cap(b) > len(token)+16 {
		t.Errorf("the finished job holds %d bytes for its answer of %d (%q)", cap(b), len(token), b)
	}
}

// TestHistoryReadsOnlyTheRecordsItDoesNotHold pins History's cost (issue
// 29): the Photos front end asks for it after each of a batch's calls, so
// reading again the records of the jobs the queue holds made a batch of n
// pictures cost n²/50 record reads. It counts the files read: those of
// the jobs another process left, none of its own.
func TestHistoryReadsOnlyTheRecordsItDoesNotHold(t *testing.T) {
	j, all, _ := archiveJournal(t) // jobs left by another process
	if _, err := j.Compact(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x"}`))
	}))
	defer srv.Close()
	src := filepath.Join(t.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	q, err := New(Config{StateDir: filepath.Dir(j.Dir()), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var last string
	for range 40 {
		if last, err = q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Wait(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	reads := 0
	read := q.journal.reader.read
	q.journal.reader.read = func(p string) ([]byte, error) {
		if filepath.Ext(p) == ".json" {
			reads++
		}
		return read(p)
	}
	hist, err := q.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != len(all)+40 {
		t.Errorf("History lists %d jobs, want %d", len(hist), len(all)+40)
	}
	if left := len(all) - 3; reads > left {
		t.Errorf("History read %d records: the %d other jobs in the folder, and %d of its own", reads, left, reads-left)
	}
}

// TestArchiveLinesAreSplitWithoutParsing pins that the lines appendArchive
// writes are read by slicing, the record then parsed once (History reads
// every archived line each time), and that anything else is left to the
// JSON decoder.
func TestArchiveLinesAreSplitWithoutParsing(t *testing.T) {
	rec := []byte(`{"v":1,"id":"x","body":"a \"quoted\" }"}`)
	written, err := json.Marshal(archiveLine{ID: "20300102T030405-00000001", Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := splitRecordLine(append(written, '\n'))
	if !ok || l.ID != "20300102T030405-00000001" || string(l.Record) != string(rec) {
		t.Errorf("a written line split as %q %q, %v", l.ID, l.Record, ok)
	}
	for _, other := range []string{`{"forgot":"20300102T030405-00000001"}`, `{"id":"../x","record":{}}`, `not json`} {
		if _, ok := splitRecordLine([]byte(other)); ok {
			t.Errorf("%s was split", other)
		}
	}
}

// Compact moves a folder of many ended jobs a batch at a time (each
// appended and synced before its records go), not all encoded into one
// buffer; a crash after the first batch leaves the rest in the folder,
// and every job is listed once throughout. The folder is read past its
// first names (History and a start list it in batches too).
func TestCompactMovesABatchAtATime(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 2*compactBatch + 7
	var all []string
	for i := range n {
		r := goodRecord()
		r.ID = fmt.Sprintf("20300102T030405-%08x", i)
		r.Created = t0.Add(time.Duration(i) * time.Second)
		r.State, r.Confirmed = StateDone, r.Size
		r.Response = &Response{Status: 200, Body: []byte(`{"id":"item"}`)}
		if err := j.Save(r); err != nil {
			t.Fatal(err)
		}
		all = append(all, r.ID)
	}
	if live, err := j.listFolder(); err != nil || len(live) != n {
		t.Fatalf("the folder lists %d records, %v; want %d", len(live), err, n)
	}
	batches := 0
	compactStop = func() bool { batches++; return batches == 2 } // a crash after the second batch's write
	t.Cleanup(func() { compactStop = func() bool { return false } })
	if moved, _ := j.Compact(); moved != compactBatch {
		t.Fatalf("Compact cut short in its second batch moved %d; want the first batch's %d", moved, compactBatch)
	}
	if live, _ := j.listFolder(); len(live) != n-compactBatch {
		t.Fatalf("%d records left in the folder; want %d", len(live), n-compactBatch)
	}
	if got := listedIDs(t, j); !slices.Equal(got, all) {
		t.Fatalf("listed after the crash: %d jobs, want %d once each", len(got), n)
	}
	batches = 0
	compactStop = func() bool { batches++; return false }
	if moved, err := j.Compact(); err != nil || moved != n-compactBatch || batches != 2 {
		t.Fatalf("the next Compact moved %d in %d batches, %v; want %d in 2", moved, batches, err, n-compactBatch)
	}
	if got := listedIDs(t, j); !slices.Equal(got, all) {
		t.Fatalf("listed after the move: %d jobs, want %d once each", len(got), n)
	}
}

// walkArchive hands over, one at a time, the records readArchive returns:
// each job as its last line says, a forgotten one left out, a torn last
// line skipped, the jobs skip names not decoded.
func TestWalkArchiveReadsAsReadArchive(t *testing.T) {
	j, _, movable := archiveJournal(t)
	compactStop = func() bool { return true } // a crash after the archive's write: the next doubles the lines
	j.Compact()
	compactStop = func() bool { return false }
	t.Cleanup(func() { compactStop = func() bool { return false } })
	if _, err := j.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := j.Remove(movable[0]); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(j.archivePath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"20300102T030405-000000ff","record":{"ver`) // torn
	f.Close()
	for _, skip := range []func(string) bool{nil, func(id string) bool { return id == movable[1] }} {
		want, err := j.readArchive(skip)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]*Record{}
		if err := j.walkArchive(skip, func(r *Record) {
			if got[r.ID] != nil {
				t.Errorf("job %s handed over twice", r.ID)
			}
			got[r.ID] = r
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("walkArchive gave %d records, readArchive %d", len(got), len(want))
		}
		for id, r := range want {
			g, _ := json.Marshal(got[id])
			w, _ := json.Marshal(r)
			if string(g) != string(w) {
				t.Fatalf("job %s: walkArchive\n%s\nreadArchive\n%s", id, g, w)
			}
		}
		if got[movable[0]] != nil {
			t.Fatal("a forgotten job was handed over")
		}
	}
}
