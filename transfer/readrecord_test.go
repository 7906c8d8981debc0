package transfer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// refusingJournal is a journal holding one record whose reads go through
// read on a fake clock, and are retried on Windows' refusals of a file
// being moved (sharingViolation) on every system: the real retry loop,
// reached on Linux and macOS as well as on Windows.
func refusingJournal(t *testing.T, read func(path string) ([]byte, error)) (*Journal, *Record, *FakeClock) {
	t.Helper()
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	if err := j.Save(r); err != nil {
		t.Fatal(err)
	}
	clock := NewFakeClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	j.reader = recordReader{read: read, passes: sharingViolation, clock: clock}
	return j, r, clock
}

// loadWaiting loads id in a goroutine and moves the clock to each wait's
// end as the reader starts it; it returns what Load returned and the
// waits, in order. More waits than a reader with a deadline makes fail
// the test rather than hang it.
func loadWaiting(t *testing.T, j *Journal, id string, clock *FakeClock) (*Record, []time.Duration, error) {
	t.Helper()
	type result struct {
		r   *Record
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := j.Load(id)
		done <- result{r, err}
	}()
	var waits []time.Duration
	deadline := time.After(30 * time.Second)
	for {
		added := clock.TimerAdded()
		if n, next := clock.Timers(); n > 0 {
			if len(waits) == 50 {
				t.Fatalf("the reader is still waiting after %d waits (%v): it has no deadline", len(waits), waits)
			}
			waits = append(waits, next)
			clock.Advance(next)
			continue
		}
		select {
		case res := <-done:
			return res.r, waits, res.err
		case <-added:
		case <-deadline:
			t.Fatalf("Load neither returned nor waited on the clock (after waits %v)", waits)
		}
	}
}

func refused(path string, e syscall.Errno) error {
	return &fs.PathError{Op: "open", Path: path, Err: e}
}

// A reader that opens a record while another process moves a new
// version over it is refused for that instant on Windows (the Wine suite
// saw it): it waits and reads again, with waits that double.
func TestJournalReadWaitsOutASharingViolation(t *testing.T) {
	var calls atomic.Int32
	j, r, clock := refusingJournal(t, func(path string) ([]byte, error) {
		switch calls.Add(1) {
		case 1, 3:
			return nil, refused(path, errSharingViolation)
		case 2:
			return nil, refused(path, errAccessDenied) // the old version being deleted
		}
		return os.ReadFile(path)
	})
	got, waits, err := loadWaiting(t, j, r.ID, clock)
	if err != nil {
		t.Fatalf("Load after three refusals: %v", err)
	}
	if got.ID != r.ID {
		t.Fatalf("Load read job %q, want %q", got.ID, r.ID)
	}
	// The record, then its progress file (absent here, read once).
	if n := calls.Load(); n != 5 {
		t.Errorf("%d reads, want 4 of the record and 1 of its progress", n)
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}
	if !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
}

// A refusal that does not pass is reported at once: no wait, one read.
func TestJournalReadDoesNotRetryAPermanentError(t *testing.T) {
	for _, cause := range []error{fs.ErrPermission, fs.ErrNotExist, errors.New("disk on fire")} {
		var calls atomic.Int32
		j, r, clock := refusingJournal(t, func(path string) ([]byte, error) {
			calls.Add(1)
			return nil, &fs.PathError{Op: "open", Path: path, Err: cause}
		})
		_, waits, err := loadWaiting(t, j, r.ID, clock)
		if !errors.Is(err, cause) {
			t.Errorf("%v: Load returned %v", cause, err)
		}
		if n := calls.Load(); n != 1 || len(waits) != 0 {
			t.Errorf("%v: %d reads and waits %v, want one read and none", cause, n, waits)
		}
	}
}

// A record that stays refused is given up after the waits (511 ms in
// all), with an error that says so and keeps the system's.
func TestJournalReadGivesUpAfterItsDeadline(t *testing.T) {
	var calls atomic.Int32
	j, r, clock := refusingJournal(t, func(path string) ([]byte, error) {
		calls.Add(1)
		return nil, refused(path, errSharingViolation)
	})
	_, waits, err := loadWaiting(t, j, r.ID, clock)
	if err == nil {
		t.Fatal("Load of a record refused for ever succeeded")
	}
	var total time.Duration
	for _, w := range waits {
		total += w
	}
	if total != 511*time.Millisecond || len(waits) != 9 || calls.Load() != 10 {
		t.Errorf("gave up after %d reads and waits %v (%v), want 10 reads and 511ms", calls.Load(), waits, total)
	}
	if !errors.Is(err, errSharingViolation) || !strings.Contains(err.Error(), "locked by another process for 511ms") || !strings.Contains(err.Error(), r.ID) {
		t.Errorf("the error does not say what happened: %v", err)
	}
}

// Only Windows retries, and only its refusals of a file being moved; a
// missing file or a denial elsewhere is final everywhere.
func TestReadRefusalPassesOnWindowsOnly(t *testing.T) {
	p := filepath.Join("jobs", "x.json")
	win := runtime.GOOS == "windows"
	for _, c := range []struct {
		err     error
		windows bool
	}{
		{refused(p, errSharingViolation), true},
		{refused(p, errAccessDenied), true},
		{errSharingViolation, true},
		{refused(p, syscall.Errno(2)), false}, // ERROR_FILE_NOT_FOUND
		{fs.ErrNotExist, false},
		{fs.ErrPermission, false},
		{errors.New("refused"), false},
	} {
		if got := sharingViolation(c.err); got != c.windows {
			t.Errorf("sharingViolation(%v) = %v, want %v", c.err, got, c.windows)
		}
		if got := readRefusalPasses(c.err); got != (c.windows && win) {
			t.Errorf("on %s, readRefusalPasses(%v) = %v", runtime.GOOS, c.err, got)
		}
	}
	if got := systemRecordReader().passes(refused(p, errSharingViolation)); got != win {
		t.Errorf("on %s, the journal's reader retries a sharing violation: %v", runtime.GOOS, got)
	}
}
