// Package crashdisk records the durable steps Carrier takes in a folder
// (through internal/platform's disk hook) and rebuilds the states a power
// cut could leave there, as SQLite's crash-test file system does: a test
// records a whole run, then recovers from every state a cut at every step
// could leave, and checks that nothing was lost and nothing went twice.
//
// The rules of what a cut keeps (Linux's, as fsync(2) documents them, and
// conservative: a state is built whenever one of these rules allows it,
// even if ext4 in data=ordered mode would in practice keep more):
//
//   - What a file holds, and its mode, are kept once the file is synced
//     (fsync) after they were written; before, the write may be lost
//     whole, kept whole, or torn (its first half kept). ext4's
//     data=ordered and auto_da_alloc, which flush a file's data before a
//     rename over another commits, are not relied on.
//   - A name made, moved or removed in a folder is kept once the folder
//     is synced after it; before, it may or may not be. A file's sync
//     does not keep its name (fsync(2): "an explicit fsync() on a file
//     descriptor for the directory is also needed").
//   - A folder made is kept once its parent is synced after; the files
//     in a folder a cut took away are gone with it.
//   - Relied on from ext4 (also XFS and btrfs): the change time a rename
//     gives the file goes to the disk with the rename.
//
// Steps not yet kept are otherwise independent: any subset of them may
// survive, in any combination (a rename kept while the write before it
// is lost gives the new name to an empty or torn file). When a cut leaves
// more open steps than a test can afford to enumerate, States gives a
// documented reduction instead (see States).
package crashdisk

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"carrier/internal/platform"
)

// Op is one recorded step, its paths relative to the recorded folder.
type Op struct {
	Kind  string // create, write, chmod, sync, rename, remove, syncdir, mark
	Path  string // the file (the folder for syncdir; from for rename)
	To    string // rename's new name
	Ino   int    // the file the step changes (create, write, chmod, sync, rename)
	Data  []byte // write: what the file holds after it
	Mode  os.FileMode
	MTime time.Time // write: the file's modification time after it
	CTime time.Time // write, chmod, rename: the file's change time after it
	Mark  string    // mark: the test's label
}

func (o Op) String() string {
	switch o.Kind {
	case "rename":
		return fmt.Sprintf("rename %s %s", o.Path, o.To)
	case "write":
		return fmt.Sprintf("write %s (%d bytes)", o.Path, len(o.Data))
	case "mark":
		return "mark " + o.Mark
	}
	return o.Kind + " " + o.Path
}

// File is a file of a state.
type File struct {
	Data  []byte
	Mode  os.FileMode
	MTime time.Time
	CTime time.Time // the change time recorded for it (not the rebuilt file's)
}

// Recorder notes every step of the hook under its folder.
type Recorder struct {
	root string

	mu      sync.Mutex
	ops     []Op
	dirs    []string         // folders at the start, relative
	base    map[string]*File // files at the start, by relative path
	baseIno map[string]int
	names   map[string]int // relative path → file, now
	held    map[int][]byte // what each file held at its last step
	paths   map[int]string // a file's name at its last step
	next    int
	stopped bool
	restore func()
}

// Record starts recording the steps taken under root (which exists):
// what it holds now is the state every cut starts from.
func Record(root string) (*Recorder, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	r := &Recorder{root: root, base: map[string]*File{}, baseIno: map[string]int{}, names: map[string]int{}, held: map[int][]byte{}, paths: map[int]string{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			r.dirs = append(r.dirs, rel)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		r.next++
		r.base[rel] = &File{Data: data, Mode: fi.Mode().Perm(), MTime: fi.ModTime(), CTime: changeTime(fi)}
		r.baseIno[rel] = r.next
		r.names[rel] = r.next
		r.held[r.next] = data
		r.paths[r.next] = rel
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.restore = platform.SetDiskHook(&platform.DiskHook{Before: r.mu.Lock, After: r.after})
	return r, nil
}

// Stop ends the recording; Ops then holds every step.
func (r *Recorder) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.stopped = true
		r.restore()
	}
}

// Mark notes a moment of the test's (the server answered, the person was
// told the message is queued) among the steps; it returns its index.
func (r *Recorder) Mark(label string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, Op{Kind: "mark", Mark: label})
	return len(r.ops) - 1
}

// Ops are the steps recorded so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Root is the recorded folder.
func (r *Recorder) Root() string { return r.root }

func (r *Recorder) rel(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(r.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// after notes a step done, under r.mu (taken by Before).
func (r *Recorder) after(s platform.DiskStep, err error) {
	defer r.mu.Unlock()
	if err != nil || r.stopped {
		return
	}
	rel, ok := r.rel(s.Path)
	if !ok {
		return
	}
	switch s.Op {
	case "mkdir":
		if rel != "." {
			r.ops = append(r.ops, Op{Kind: "mkdir", Path: rel})
		}
	case "create":
		r.next++
		r.names[rel] = r.next
		r.held[r.next] = nil
		r.paths[r.next] = rel
		r.ops = append(r.ops, Op{Kind: "create", Path: rel, Ino: r.next})
	case "sync":
		ino := r.ino(rel)
		r.noteWrite(ino, rel, func() ([]byte, error) { return readAll(s.File) })
		r.ops = append(r.ops, Op{Kind: "sync", Path: rel, Ino: ino})
	case "chmod":
		ino := r.ino(rel)
		p := filepath.Join(r.root, rel)
		r.noteWrite(ino, rel, func() ([]byte, error) { return os.ReadFile(p) })
		r.ops = append(r.ops, Op{Kind: "chmod", Path: rel, Ino: ino, Mode: s.Mode, CTime: ctimeOf(p)})
	case "rename":
		to, ok := r.rel(s.To)
		if !ok {
			return
		}
		ino := r.ino(rel)
		p := filepath.Join(r.root, to)
		r.noteWrite(ino, rel, func() ([]byte, error) { return os.ReadFile(p) })
		delete(r.names, rel)
		r.names[to] = ino
		r.paths[ino] = to
		r.ops = append(r.ops, Op{Kind: "rename", Path: rel, To: to, Ino: ino, CTime: ctimeOf(p)})
	case "remove":
		delete(r.names, rel)
		r.ops = append(r.ops, Op{Kind: "remove", Path: rel})
	case "syncdir":
		r.ops = append(r.ops, Op{Kind: "syncdir", Path: rel})
	}
}

// ino is the file at rel now, a new one if none was seen there (a file
// made by a writer the hook does not see).
func (r *Recorder) ino(rel string) int {
	if ino, ok := r.names[rel]; ok {
		return ino
	}
	r.next++
	r.names[rel] = r.next
	r.paths[r.next] = rel
	return r.next
}

// noteWrite notes a write when the file holds other bytes than at its
// last step: the writers' own writes are not hooked, and are seen at the
// next step on the file (a sync, a chmod, a rename).
func (r *Recorder) noteWrite(ino int, rel string, read func() ([]byte, error)) {
	data, err := read()
	if err != nil {
		return
	}
	if old, ok := r.held[ino]; ok && bytes.Equal(old, data) {
		return
	}
	r.held[ino] = data
	op := Op{Kind: "write", Path: rel, Ino: ino, Data: data}
	if fi, err := os.Stat(filepath.Join(r.root, r.paths[ino])); err == nil {
		op.MTime, op.CTime = fi.ModTime(), changeTime(fi)
	}
	r.ops = append(r.ops, op)
}

func readAll(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	n, err := f.ReadAt(data, 0)
	if n == len(data) {
		err = nil
	}
	return data[:n], err
}

func ctimeOf(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return changeTime(fi)
}

// A choice says what a cut did with one open step.
type choice uint8

const (
	lost choice = iota
	kept
	torn // a write: its first half kept
)

// State is what a cut after the first Cut steps leaves in the folder.
type State struct {
	Cut   int
	Dirs  []string // the folders, parents first
	Files map[string]*File
	Lost  []string // the open steps the cut undid (or tore), in words
}

// Key identifies what the state holds, for leaving out states already
// checked.
func (s *State) Key() string {
	names := make([]string, 0, len(s.Files))
	for n := range s.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, d := range s.Dirs {
		fmt.Fprintf(h, "%s/\x00", d)
	}
	for _, n := range names {
		f := s.Files[n]
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00%d\x00", n, f.Mode, f.MTime.UnixNano(), f.CTime.UnixNano())
		h.Write(f.Data)
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Durable says which of the first cut steps a cut right after them
// cannot undo (the rules in the package's comment); marks and syncs
// change nothing and count as durable.
func Durable(ops []Op, cut int) []bool {
	d := make([]bool, cut)
	for i := range cut {
		o := ops[i]
		switch o.Kind {
		case "write", "chmod":
			for _, l := range ops[i+1 : cut] {
				if l.Kind == "sync" && l.Ino == o.Ino {
					d[i] = true
					break
				}
			}
		case "mkdir", "create", "remove", "rename":
			need := map[string]bool{filepath.Dir(o.Path): true}
			if o.Kind == "rename" {
				need[filepath.Dir(o.To)] = true
			}
			for _, l := range ops[i+1 : cut] {
				if l.Kind == "syncdir" {
					delete(need, l.Path)
				}
			}
			d[i] = len(need) == 0
		default:
			d[i] = true
		}
	}
	return d
}

// States gives the states a cut after the first cut steps could leave:
// every durable step kept, and each open one lost, kept or (a write)
// torn, in every combination when there are at most limit of them.
// Beyond, a reduction: the open steps kept up to each point and lost
// after it (the order a file system that keeps its steps in order, as
// ext4's journal does for names, could leave); all kept but one lost;
// and all kept but one write torn. Every rule of what is kept is still
// exercised one step at a time.
func (r *Recorder) States(ops []Op, cut, limit int) []State {
	d := Durable(ops, cut)
	var open []int
	combos := 1
	for i, ok := range d {
		if !ok {
			open = append(open, i)
			n := 2
			if ops[i].Kind == "write" {
				n = 3
			}
			if combos <= limit {
				combos *= n
			}
		}
	}
	var plans [][]choice
	if combos <= limit {
		plan := make([]choice, len(open))
		var walk func(k int)
		walk = func(k int) {
			if k == len(open) {
				plans = append(plans, append([]choice(nil), plan...))
				return
			}
			for _, c := range []choice{lost, kept, torn} {
				if c == torn && ops[open[k]].Kind != "write" {
					continue
				}
				plan[k] = c
				walk(k + 1)
			}
		}
		walk(0)
	} else {
		for j := 0; j <= len(open); j++ {
			plan := make([]choice, len(open))
			for k := range j {
				plan[k] = kept
			}
			plans = append(plans, plan)
		}
		for one := range open {
			for _, c := range []choice{lost, torn} {
				if c == torn && ops[open[one]].Kind != "write" {
					continue
				}
				plan := make([]choice, len(open))
				for k := range plan {
					plan[k] = kept
				}
				plan[one] = c
				plans = append(plans, plan)
			}
		}
	}
	states := make([]State, 0, len(plans))
	for _, plan := range plans {
		how := make([]choice, cut)
		for i := range how {
			how[i] = kept
		}
		var words []string
		for k, i := range open {
			how[i] = plan[k]
			switch plan[k] {
			case lost:
				words = append(words, "lost "+ops[i].String())
			case torn:
				words = append(words, "tore "+ops[i].String())
			}
		}
		dirs, files := r.replay(ops[:cut], how)
		states = append(states, State{Cut: cut, Dirs: dirs, Files: files, Lost: words})
	}
	return states
}

// replay applies the steps as a cut left them to the folder's first
// state, and gives the files it then holds.
func (r *Recorder) replay(ops []Op, how []choice) ([]string, map[string]*File) {
	type inode struct {
		File
		live bool
	}
	files := map[int]*inode{}
	names := map[string]int{}
	dirs := map[string]bool{}
	for _, d := range r.dirs {
		dirs[d] = true
	}
	for p, f := range r.base {
		ino := r.baseIno[p]
		files[ino] = &inode{File: *f, live: true}
		names[p] = ino
	}
	for i, o := range ops {
		if how[i] == lost {
			continue
		}
		switch o.Kind {
		case "mkdir":
			dirs[o.Path] = true
		case "create":
			files[o.Ino] = &inode{File: File{Mode: 0o600}, live: true}
			names[o.Path] = o.Ino
		case "write":
			f := files[o.Ino]
			if f == nil {
				// Bytes of a file whose making was lost: nothing holds them.
				continue
			}
			f.Data = o.Data
			if how[i] == torn {
				f.Data = o.Data[:len(o.Data)/2]
			}
			f.MTime, f.CTime = o.MTime, o.CTime
		case "chmod":
			if f := files[o.Ino]; f != nil {
				f.Mode, f.CTime = o.Mode, o.CTime
			}
		case "rename":
			ino, ok := names[o.Path]
			if !ok || ino != o.Ino {
				continue // the file it moved is not there: nothing moves
			}
			delete(names, o.Path)
			names[o.To] = ino
			files[ino].CTime = o.CTime
		case "remove":
			delete(names, o.Path)
		}
	}
	// A name is reachable only through folders the cut kept.
	reachable := func(p string) bool {
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			if !dirs[d] {
				return false
			}
		}
		return true
	}
	var folders []string
	for d := range dirs {
		if d == "." || reachable(filepath.Join(d, "x")) {
			folders = append(folders, d)
		}
	}
	sort.Strings(folders)
	out := map[string]*File{}
	for p, ino := range names {
		if reachable(p) {
			f := files[ino].File
			out[p] = &f
		}
	}
	return folders, out
}

// Unseen lists the files under the folder that differ from what the
// recorded steps made (every step kept): files some writer made or
// changed without the hook seeing it, which no state would hold. Lock
// files (*.lock) hold nothing and are left out.
func (r *Recorder) Unseen(ops []Op) []string {
	how := make([]choice, len(ops))
	for i := range how {
		how[i] = kept
	}
	_, want := r.replay(ops, how)
	var out []string
	filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, _ := filepath.Rel(r.root, p)
		data, err := os.ReadFile(p)
		if f := want[rel]; err != nil || f == nil || !bytes.Equal(f.Data, data) {
			out = append(out, rel)
		}
		delete(want, rel)
		return nil
	})
	for rel := range want {
		out = append(out, rel+" (gone)")
	}
	sort.Strings(out)
	return out
}

// Rebuild empties the recorded folder and makes it hold s: the folders
// it had at the start, and s's files with their bytes, modes and
// modification times. (Their change times are the rebuild's; a test
// compares them through File.CTime.)
func (r *Recorder) Rebuild(s State) error {
	entries, err := os.ReadDir(r.root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(r.root, e.Name())
		makeWritable(p)
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	for _, d := range s.Dirs {
		if err := os.MkdirAll(filepath.Join(r.root, d), 0o700); err != nil {
			return err
		}
	}
	for p, f := range s.Files {
		full := filepath.Join(r.root, p)
		if err := os.WriteFile(full, f.Data, 0o600); err != nil {
			return err
		}
		if !f.MTime.IsZero() {
			if err := os.Chtimes(full, f.MTime, f.MTime); err != nil {
				return err
			}
		}
		if err := os.Chmod(full, f.Mode); err != nil {
			return err
		}
	}
	return nil
}

// makeWritable lets RemoveAll take read-only files and folders.
func makeWritable(root string) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
}

// ChangeTime is the change time of the file (zero where the system has
// none to read).
func ChangeTime(fi os.FileInfo) time.Time { return changeTime(fi) }
