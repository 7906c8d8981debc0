package message

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"carrier/internal/platform"
)

// What Compose holds is kept as the person writes it: one small private
// file beside the journal (STATE/compose.json), written by the window a
// moment after each change and once more as it closes, read back at the
// next start. The file goes once Compose is empty: the message was sent
// or saved as a draft (its job queued, its fields kept in
// STATE/composed/ from then on), or the person discarded it.

// unsentFile is the copy of Compose beside the journal.
const unsentFile = "compose.json"

// Unsent is what Compose holds: the message as written so far, and the
// account it goes as.
type Unsent struct {
	Composed
	// From is the account chosen to send as; "" for the default.
	From string `json:",omitempty"`
}

// UnsentStore keeps one Unsent in the state folder. Its methods may be
// called from any goroutine.
type UnsentStore struct {
	path string

	mu  sync.Mutex
	off error // why nothing may be written: the file there could not be read, and is kept

	// last are the attachments of the copy last read or written; letGo
	// is told, after a write, those the copy no longer names
	// (app's Queue.UseProgramCopies).
	last  []string
	letGo func([]string)
}

// SetLetGo has f told the attachments each write drops
// (app's Queue.UseProgramCopies).
func (s *UnsentStore) SetLetGo(f func([]string)) {
	s.mu.Lock()
	s.letGo = f
	s.mu.Unlock()
}

// Attachments are the files the copy on disk names: nil when there is no
// copy, an error when it cannot be read, or is not being written (then
// what Compose holds is not known).
func (s *UnsentStore) Attachments() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off != nil {
		return nil, s.off
	}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var u Unsent
	if err := json.Unmarshal(data, &u); err != nil {
		return nil, err
	}
	return u.Attachments, nil
}

// NewUnsentStore keeps Compose's copy beside the journal of stateDir (a
// private folder: the queue's, which app.OpenQueue makes so).
func NewUnsentStore(stateDir string) *UnsentStore {
	return &UnsentStore{path: filepath.Join(stateDir, unsentFile)}
}

// Path is where the copy is.
func (s *UnsentStore) Path() string { return s.path }

// UnsentError says the copy could not be read back. Its bytes are not
// lost: moved aside to Kept when they are not a message, or, when the
// file could not be read at all (Kept ""), left at Path, and then nothing
// is written over it while the store lives.
type UnsentError struct {
	Path, Kept string
	Err        error
}

func (e *UnsentError) Error() string {
	if e.Kept != "" {
		return fmt.Sprintf("what Compose held when Carrier closed could not be read back (%v); the file is kept as %s", e.Err, e.Kept)
	}
	return fmt.Sprintf("what Compose held when Carrier closed could not be read (%v); it is left in %s, and what Compose holds now is not kept", e.Err, e.Path)
}

func (e *UnsentError) Unwrap() error { return e.Err }

// Load reads the copy: nil, nil when there is none. A file that is not a
// message is moved aside under a new name, so the next write loses
// nothing; one that cannot be read, or moved, is left where it is and
// nothing is written over it while this store lives. Either way the
// error is an *UnsentError that says where the bytes are.
func (s *UnsentStore) Load() (*Unsent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		s.off = &UnsentError{Path: s.path, Err: err}
		return nil, s.off
	}
	var u Unsent
	if err := json.Unmarshal(data, &u); err != nil {
		kept := fmt.Sprintf("%s.damaged-%s", s.path, time.Now().Format("20060102-150405.000000000"))
		if rerr := platform.ReplaceFile(s.path, kept); rerr != nil {
			s.off = &UnsentError{Path: s.path, Err: fmt.Errorf("%v; setting it aside failed: %w", err, rerr)}
			return nil, s.off
		}
		return nil, &UnsentError{Path: s.path, Kept: kept, Err: err}
	}
	s.last = append([]string(nil), u.Attachments...)
	return &u, nil
}

// Save writes u in place of the copy, whole or not at all, private to
// the person (recipients, text and file names are theirs); u nil removes
// it.
func (s *UnsentStore) Save(u *Unsent) error {
	s.mu.Lock()
	dropped, letGo, err := s.save(u)
	s.mu.Unlock()
	if letGo != nil && len(dropped) > 0 {
		letGo(dropped)
	}
	return err
}

// save is Save under the lock: the attachments the copy no longer names
// once written, and whom to tell.
func (s *UnsentStore) save(u *Unsent) ([]string, func([]string), error) {
	if s.off != nil {
		return nil, nil, s.off
	}
	var now []string
	if u == nil {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("cannot remove Compose's copy: %w", err)
		}
	} else {
		data, err := json.Marshal(u)
		if err != nil {
			return nil, nil, err
		}
		if err := platform.WriteFile(s.path, data); err != nil {
			return nil, nil, fmt.Errorf("cannot keep what Compose holds: %w", err)
		}
		now = u.Attachments
	}
	var dropped []string
	for _, p := range s.last {
		if !slices.Contains(now, p) {
			dropped = append(dropped, p)
		}
	}
	s.last = append([]string(nil), now...)
	return dropped, s.letGo, nil
}
