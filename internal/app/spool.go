package app

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carrier/compose"
	"carrier/internal/platform"
)

// SweepGrace is how old a spool file must be before a sweep may take it
// for an orphan or a crash's leftover. Another Carrier process sharing the
// folder writes a message (a .tmp) and then records its job: a file that
// young may be on its way into that process's journal.
const SweepGrace = time.Hour

// Spool is the folder where built messages wait for their upload. A file
// lives as long as a job may still send it: it goes when its job is done,
// cancelled or forgotten, and a sweep at start takes what no job needs.
// Only the spool's own files are ever removed: a job's file anywhere else
// (a picture posted to the timeline) is the person's.
type Spool struct {
	dir   string
	grace time.Duration
	now   func() time.Time
}

// NewSpool is the spool in dir; the folder is made when a message is built.
func NewSpool(dir string) *Spool {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &Spool{dir: filepath.Clean(dir), grace: SweepGrace, now: time.Now}
}

// Dir is the spool's folder.
func (s *Spool) Dir() string { return s.dir }

// Build writes msg to a new spool file (private, immutable from here on).
func (s *Spool) Build(ctx context.Context, msg *compose.Message, method compose.Method) (*compose.Spool, error) {
	return compose.Build(ctx, msg, method, s.dir)
}

// owns reports whether path is a file of this spool. A relative path is
// taken from the working folder, as the engine opens it.
func (s *Spool) owns(path string) bool {
	abs, err := filepath.Abs(path)
	return path != "" && err == nil && filepath.Dir(abs) == s.dir
}

// Release removes path when it is a spool file: its job will not send it
// again. Any other file is left alone; a file already gone is no error.
func (s *Spool) Release(path string) error {
	if !s.owns(path) {
		return nil
	}
	if err := platform.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sweep removes the spool files no job needs (needed says which one does;
// nil when the journal could not be read whole, and then every message is
// kept) and the leftovers of builds that never finished (.tmp), both only
// once older than the grace. It returns what it removed.
func (s *Spool) Sweep(needed func(path string) bool) ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(s.dir, e.Name())
		if !strings.HasSuffix(e.Name(), ".tmp") && (needed == nil || needed(p)) {
			continue
		}
		fi, err := e.Info()
		if err != nil || s.now().Sub(fi.ModTime()) < s.grace {
			continue // gone meanwhile, or maybe another process's new message
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
