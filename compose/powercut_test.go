package compose

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A step of Build on the disk, as the power-cut test records it.
type diskStep struct {
	kind     string // create, write, chmod, sync, rename, syncdir
	name, to string // file names in the spool folder (to: a rename's)
	data     []byte
	mode     os.FileMode
}

// inode is the spool file as a state after a power cut holds it.
type inode struct {
	data  []byte
	mode  os.FileMode
	ctime int // how many changes of its status it went through
}

// recordSpoolSteps routes Build's steps on the disk through a recorder
// for the rest of the test: each is done, and noted.
func recordSpoolSteps(t *testing.T) *[]diskStep {
	t.Helper()
	var steps []diskStep
	oldDisk, oldSink := spoolDisk, spoolSink
	t.Cleanup(func() { spoolDisk, spoolSink = oldDisk, oldSink })
	base := filepath.Base
	spoolDisk.create = func(dir, pattern string) (*os.File, error) {
		f, err := oldDisk.create(dir, pattern)
		if err == nil {
			steps = append(steps, diskStep{kind: "create", name: base(f.Name())})
		}
		return f, err
	}
	spoolSink = func(f *os.File) io.Writer {
		return writeFunc(func(p []byte) (int, error) {
			steps = append(steps, diskStep{kind: "write", name: base(f.Name()), data: bytes.Clone(p)})
			return f.Write(p)
		})
	}
	spoolDisk.chmod = func(path string, mode os.FileMode) error {
		steps = append(steps, diskStep{kind: "chmod", name: base(path), mode: mode})
		return oldDisk.chmod(path, mode)
	}
	spoolDisk.sync = func(f *os.File) error {
		steps = append(steps, diskStep{kind: "sync", name: base(f.Name())})
		return oldDisk.sync(f)
	}
	spoolDisk.rename = func(from, to string) error {
		steps = append(steps, diskStep{kind: "rename", name: base(from), to: base(to)})
		return oldDisk.rename(from, to)
	}
	spoolDisk.syncDir = func(dir string) error {
		steps = append(steps, diskStep{kind: "syncdir"})
		return oldDisk.syncDir(dir)
	}
	return &steps
}

type writeFunc func([]byte) (int, error)

func (w writeFunc) Write(p []byte) (int, error) { return w(p) }

// durable says which steps a power cut after the last one cannot undo, as
// POSIX promises and SQLite's crash tests assume: what a file holds and
// its mode only once the file is synced after them; a name made or moved
// only once its folder is synced after it. A rename also moves the file's
// change time (ext4, XFS and btrfs do), in the same journal transaction
// as the name: it is durable with the folder's sync.
func durable(steps []diskStep) []bool {
	d := make([]bool, len(steps))
	for i, s := range steps {
		for _, later := range steps[i+1:] {
			switch s.kind {
			case "write", "chmod":
				d[i] = d[i] || later.kind == "sync"
			case "create", "rename":
				d[i] = d[i] || later.kind == "syncdir"
			}
		}
		if s.kind == "sync" || s.kind == "syncdir" {
			d[i] = true // a sync itself leaves nothing to undo
		}
	}
	return d
}

// replay applies the steps a power cut kept, in their order, to an empty
// folder, and gives the names it holds. The spool is one file, under the
// name it was made with, then the name it was renamed to.
func replay(steps []diskStep, kept []bool) map[string]*inode {
	var file *inode
	names := map[string]*inode{}
	changed := func() {
		if file != nil {
			file.ctime++
		}
	}
	for i, s := range steps {
		if !kept[i] {
			continue
		}
		switch s.kind {
		case "create":
			file = &inode{mode: 0o600}
			names[s.name] = file
		case "write":
			if file != nil {
				file.data = append(file.data, s.data...)
				changed()
			}
		case "chmod":
			if file != nil {
				file.mode = s.mode
				changed()
			}
		case "rename":
			if f, ok := names[s.name]; ok {
				delete(names, s.name)
				names[s.to] = f
				changed()
			}
		}
	}
	return names
}

// A power cut at any moment after Build returned leaves the spool whole
// at its path, with its mode and the change time seen when Build returned
// (which the job recorded for it keeps, and a resume checks): Build's
// chmod, rename and folder sync come in an order no cut can undo in part.
// Every state the cut could leave is rebuilt in a folder of its own
// (every durable step, and any subset of the others) and looked at there.
func TestSpoolSurvivesAPowerCutAfterBuild(t *testing.T) {
	steps := recordSpoolSteps(t)
	m := &Message{To: []string{"zoe@example.com"}, Subject: "Power cut", Text: "The lights went out."}
	sp, err := Build(context.Background(), m, Send, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(sp.Path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(sp.Path)
	if err != nil {
		t.Fatal(err)
	}
	wantMode := fi.Mode().Perm() // 0400; Windows shows its read-only files as 0444
	name := filepath.Base(sp.Path)
	all := make([]bool, len(*steps))
	for i := range all {
		all[i] = true
	}
	final := replay(*steps, all)[name]
	if final == nil || !bytes.Equal(final.data, want) || final.mode != 0o400 {
		t.Fatalf("the steps recorded do not make the spool Build wrote: %+v", *steps)
	}

	d := durable(*steps)
	var open []int // the steps a cut may or may not have kept
	for i := range d {
		if !d[i] {
			open = append(open, i)
		}
	}
	for subset := range 1 << len(open) {
		keep := append([]bool(nil), d...)
		var lost []string
		for b, i := range open {
			if subset&(1<<b) != 0 {
				keep[i] = true
			} else {
				lost = append(lost, (*steps)[i].kind)
			}
		}
		names := replay(*steps, keep)
		state := rebuild(t, names)
		got, err := os.ReadFile(filepath.Join(state, name))
		fi, serr := os.Stat(filepath.Join(state, name))
		switch {
		case err != nil || serr != nil:
			t.Errorf("a cut that lost %v leaves no spool at its path: %v", lost, err)
		case !bytes.Equal(got, want):
			t.Errorf("a cut that lost %v leaves a spool of %d bytes, not the %d written", lost, len(got), len(want))
		case fi.Mode().Perm() != wantMode:
			t.Errorf("a cut that lost %v leaves the spool with mode %v, not %v", lost, fi.Mode().Perm(), wantMode)
		case names[name].ctime != final.ctime:
			t.Errorf("a cut that lost %v leaves the spool with another change time than the one recorded", lost)
		}
	}
	if len(open) > 0 {
		t.Logf("%d steps a cut could undo after Build returned: %v", len(open), open)
	}
}

// rebuild makes a folder holding the files of a state after a cut.
func rebuild(t *testing.T, names map[string]*inode) string {
	t.Helper()
	dir := t.TempDir()
	for n, f := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
