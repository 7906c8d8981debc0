package app

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"carrier/internal/app/message"
	"carrier/transfer"
)

// Attachments from programs. A program's "Send by email" on Windows calls
// Carrier's Simple MAPI DLL (scripts/windows/mapi), which copies each file
// it is handed, since the program may delete its temporary file once the
// call returns, into DATA\Attachments from programs\<message>\<n>\<name>,
// and hands the copies to Compose. Carrier reads attachments in place, so
// a copy is needed while Compose holds it (the person's message, and the
// copy of it kept on disk), while a job may read it (a file sent as a
// Drive link) and while a message naming it may be reopened (a failed or
// cancelled one's kept fields). Once none of these names it, it goes: when
// Compose lets go of it (the file taken out, the message discarded), when
// the message that carried it is sent, forgotten or replaced, and at the
// start, what nothing names once its folder is ProgramCopiesGrace old.
// Nothing else in the data folder is ever touched.

// ProgramCopiesDir is the folder of the copies the MAPI DLL makes, in the
// data folder dataDir (%LOCALAPPDATA%\Carrier on Windows).
func ProgramCopiesDir(dataDir string) string {
	return filepath.Join(dataDir, "Attachments from programs")
}

// ProgramCopiesGrace is how old a message's copies must be before the
// sweep at start takes those nothing names: the DLL makes them before the
// window is handed the link (a second launch, or a window still starting),
// and a copy must not go between the two.
const ProgramCopiesGrace = 3 * 24 * time.Hour

// UseProgramCopies has the queue look after the copies in dir: those the
// unsent store (Compose's copy) lets go of, and those of messages whose
// fields the queue stops keeping, go when nothing else names them, and
// what nothing names is swept now once older than ProgramCopiesGrace. The
// sweep runs in the background; Close waits for it.
func (q *Queue) UseProgramCopies(dir string, unsent *message.UnsentStore) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	q.copiesMu.Lock()
	if q.copiesClosed {
		q.copiesMu.Unlock()
		return
	}
	q.copies, q.unsent = filepath.Clean(dir), unsent
	q.releasing.Add(1)
	q.copiesMu.Unlock()
	if unsent != nil {
		unsent.SetLetGo(q.releaseCopies)
	}
	go func() {
		defer q.releasing.Done()
		q.sweepCopies(ProgramCopiesGrace)
	}()
}

// pathKey is how paths are compared: Windows' names ignore case.
func pathKey(p string) string {
	p = filepath.Clean(p)
	if runtime.GOOS == "windows" {
		p = strings.ToLower(p)
	}
	return p
}

// isCopy reports whether path is one of the DLL's copies: a file two
// folders down from dir, DIR\<message>\<n>\<name>.
func isCopy(dir, path string) bool {
	if dir == "" || !filepath.IsAbs(path) {
		return false
	}
	rel, err := filepath.Rel(pathKey(dir), pathKey(path))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	return len(strings.Split(rel, string(filepath.Separator))) == 3
}

// copiesInUse are the copies (by pathKey) something still names: Compose's
// copy on disk, a job not ended, a message kept to reopen. An error when
// any of them could not be read whole: then everything is kept.
func (q *Queue) copiesInUse() (map[string]bool, error) {
	q.copiesMu.Lock()
	unsent := q.unsent
	q.copiesMu.Unlock()
	used := map[string]bool{}
	if unsent != nil {
		names, err := unsent.Attachments()
		if err != nil {
			return nil, err
		}
		for _, p := range names {
			used[pathKey(p)] = true
		}
	}
	recs, err := q.History()
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if needsFile(r.State) && r.Path != "" {
			used[pathKey(r.Path)] = true
		}
	}
	ds, err := q.dl.store.List()
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d.Composed != nil {
			for _, p := range d.Composed.Attachments {
				used[pathKey(p)] = true
			}
		}
	}
	// The fields a Carrier before deliveries kept.
	if q.kept != "" {
		entries, err := os.ReadDir(q.kept)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(q.kept, e.Name()))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			var c message.Composed
			if json.Unmarshal(data, &c) == nil {
				for _, p := range c.Attachments {
					used[pathKey(p)] = true
				}
			}
		}
	}
	return used, nil
}

// releaseCopies removes those of paths that are the DLL's copies and that
// nothing names any longer, with their folders once empty. Run off the
// caller's goroutine (the queue's event pump, the unsent store's writer);
// Close waits for it.
func (q *Queue) releaseCopies(paths []string) {
	q.copiesMu.Lock()
	defer q.copiesMu.Unlock()
	dir := q.copies
	var mine []string
	for _, p := range paths {
		if isCopy(dir, p) {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 || q.copiesClosed {
		return
	}
	q.releasing.Add(1) // under copiesMu: never after Close began waiting
	go func() {
		defer q.releasing.Done()
		q.releaseMu.Lock() // one look at what is named, then the removals, at a time
		defer q.releaseMu.Unlock()
		used, err := q.copiesInUse()
		if err != nil {
			return
		}
		for _, p := range mine {
			if !used[pathKey(p)] {
				removeCopy(dir, p)
			}
		}
	}()
}

// removeCopy removes the copy p, then its folder and its message's folder
// if nothing else is left in them.
func removeCopy(dir, p string) {
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if err := os.Remove(p); err != nil {
		return
	}
	n := filepath.Dir(p)
	os.Remove(n) // refused unless empty
	if m := filepath.Dir(n); pathKey(filepath.Dir(m)) == pathKey(dir) {
		os.Remove(m)
	}
}

// sweepCopies removes the copies nothing names in the messages' folders
// whose newest change is older than grace, and such folders left empty,
// and the long links' files (MailLinksDir beside dir) older than grace.
func (q *Queue) sweepCopies(grace time.Duration) {
	q.copiesMu.Lock()
	dir := q.copies
	q.copiesMu.Unlock()
	if dir == "" {
		return
	}
	now := time.Now
	if q.spool != nil {
		now = q.spool.now
	}
	// A long link's file (linkfile.go) Carrier never read: it died
	// before, or was never started.
	links := MailLinksDir(filepath.Dir(dir))
	if entries, err := os.ReadDir(links); err == nil {
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && now().Sub(fi.ModTime()) >= grace {
				os.Remove(filepath.Join(links, e.Name()))
			}
		}
	}
	msgs, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	q.releaseMu.Lock()
	defer q.releaseMu.Unlock()
	used, err := q.copiesInUse()
	if err != nil {
		return // something unread may name any of them
	}
	old := func(p string) bool {
		fi, err := os.Lstat(p)
		return err == nil && now().Sub(fi.ModTime()) >= grace
	}
	for _, m := range msgs {
		if !m.IsDir() { // a link is not followed
			continue
		}
		md := filepath.Join(dir, m.Name())
		ns, err := os.ReadDir(md)
		if err != nil || !old(md) {
			continue
		}
		aged := true
		for _, n := range ns {
			if n.IsDir() && !old(filepath.Join(md, n.Name())) {
				aged = false
			}
		}
		if !aged {
			continue
		}
		for _, n := range ns {
			if !n.IsDir() {
				continue
			}
			nd := filepath.Join(md, n.Name())
			files, _ := os.ReadDir(nd)
			for _, f := range files {
				if p := filepath.Join(nd, f.Name()); f.Type().IsRegular() && !used[pathKey(p)] {
					os.Remove(p)
				}
			}
			os.Remove(nd)
		}
		os.Remove(md)
	}
}

// attachmentsOf are the files a snapshot's message kept to reopen names,
// read before its fields are dropped.
func (q *Queue) attachmentsOf(s transfer.Snapshot) []string {
	q.copiesMu.Lock()
	dir := q.copies
	q.copiesMu.Unlock()
	if dir == "" {
		return nil
	}
	var names []string
	if s.Owner != "" {
		if d, err := q.dl.store.Get(s.Owner); err == nil && d.Composed != nil {
			names = append(names, d.Composed.Attachments...)
		}
	}
	if p := q.keptPath(s.Path); p != "" {
		if data, err := os.ReadFile(p); err == nil {
			var c message.Composed
			if json.Unmarshal(data, &c) == nil {
				names = append(names, c.Attachments...)
			}
		}
	}
	return names
}
