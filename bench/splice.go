package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// writePart is the end of a run of one part alone (-cpu-only,
// -photos-only): its section on stdout without -out, or put into the page
// the last whole run wrote, leaving the other parts as they were.
func writePart(cfg *config, name, section, begin, end string) error {
	if cfg.out == "" {
		fmt.Print(section)
		return nil
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(cfg.out, "PERFORMANCE.md")
	if err := splicePart(path, name, section, begin, end); err != nil {
		return err
	}
	logf("wrote the %s part's section of %s", name, path)
	return nil
}

// splicePart puts the section of the part called name into the page at
// path: in place of the one between begin and end, or before "## What was
// measured" in a page written before the part existed. A page with begin
// but not end is refused rather than guessed at: the rest of it would go.
func splicePart(path, name, section, begin, end string) error {
	page, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return os.WriteFile(path, []byte(section), 0o644)
	}
	if err != nil {
		return err
	}
	var out []byte
	if i := bytes.Index(page, []byte(begin)); i >= 0 {
		j := bytes.Index(page[i:], []byte(end))
		if j < 0 {
			return fmt.Errorf("%s has the %s part's first marker but not its last; mend it or run the whole harness", path, name)
		}
		out = append(append(append(out, page[:i]...), section...), page[i+j+len(end):]...)
	} else if i := bytes.Index(page, []byte("## What was measured")); i >= 0 {
		out = append(append(append(out, page[:i]...), section+"\n"...), page[i:]...)
	} else {
		out = append(append(page, '\n'), section...)
	}
	tmp := filepath.Join(filepath.Dir(path), ".PERFORMANCE.md.tmp")
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
