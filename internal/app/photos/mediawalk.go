package photos

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// WalkMedia turns what was dropped or picked into files, in order: a
// folder gives every file under it, its subfolders' too, in name order
// (the order they are created in Photos, so an album reads as the folder
// does). Hidden files and folders (a leading dot: thumbnails caches,
// .DS_Store, .git) are a system's, not the person's pictures, and are
// skipped. Symbolic links are followed, since a folder of pictures often
// links to another disk, but a folder already walked is not entered
// again: a link back to a parent would otherwise never end. problems
// names what could not be read.
func WalkMedia(paths []string) (files []string, problems []error) {
	var seen []os.FileInfo // the folders entered, to know them through any link
	seenAt := map[string]bool{}
	entered := func(p string, fi os.FileInfo) bool {
		if runtime.GOOS == "windows" {
			// A folder is known by where its links lead: the identity
			// os.SameFile reads (volume and file index) is not one on
			// every Windows file system (Wine gives folders the same).
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				real = p
			}
			if abs, err := filepath.Abs(real); err == nil {
				real = abs
			}
			key := strings.ToLower(filepath.Clean(real))
			if seenAt[key] {
				return true
			}
			seenAt[key] = true
			return false
		}
		for _, s := range seen {
			if os.SameFile(s, fi) {
				return true
			}
		}
		seen = append(seen, fi)
		return false
	}
	var walk func(p string, fi os.FileInfo)
	walk = func(p string, fi os.FileInfo) {
		if !fi.IsDir() {
			if fi.Mode().IsRegular() {
				files = append(files, p)
			}
			return
		}
		if entered(p, fi) {
			return
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			problems = append(problems, err)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			child := filepath.Join(p, e.Name())
			var cfi os.FileInfo
			var err error
			if e.Type()&fs.ModeSymlink != 0 {
				cfi, err = os.Stat(child) // where the link leads
			} else {
				cfi, err = e.Info()
			}
			if err != nil {
				problems = append(problems, err)
				continue
			}
			walk(child, cfi)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		walk(p, fi)
	}
	return files, problems
}
