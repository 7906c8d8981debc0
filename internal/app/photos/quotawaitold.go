package photos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"carrier/transfer"
)

// The side file that held the jobs Hold paused before deliveries kept
// their reset (STATE/photos-quota.json): read once, moved into the
// deliveries, then removed (quotawait.go).

// quotaFile kept the jobs Hold paused, beside the journal, before
// deliveries kept their reset: only read.
const quotaFile = "photos-quota.json"

// migrate moves what the side file of a Carrier before deliveries held
// into the held jobs' deliveries, and removes the file once nothing in it
// is left elsewhere: it is read once and never written.
func (w *QuotaWait) migrate(recs []transfer.Snapshot) error {
	if w.path == "" || w.store == nil {
		return nil
	}
	old, err := w.load()
	if err != nil || len(old) == 0 {
		return err
	}
	byID := map[string]transfer.Snapshot{}
	for _, s := range recs {
		byID[s.ID] = s
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for id, at := range old {
		s, ok := byID[id]
		switch {
		case !ok || s.State != transfer.StatePaused:
			// resumed, cancelled or forgotten meanwhile
		case s.Owner == "":
			return errors.Join(errs...) // a job from before deliveries: the file stays
		default:
			if cur, ok := w.resets[s.Owner]; !ok || at.After(cur) {
				errs = append(errs, w.setResetLocked(s.Owner, at))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for id := range old {
		delete(w.held, id)
	}
	if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

type quotaHeld struct {
	Held map[string]time.Time `json:"held"` // job → the reset it waits for
}

// load reads the side file of a Carrier before deliveries.
func (w *QuotaWait) load() (map[string]time.Time, error) {
	if w.path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the uploads held for Google Photos' quota: %w", err)
	}
	var h quotaHeld
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("cannot read the uploads held for Google Photos' quota (%s): %w", w.path, err)
	}
	return h.Held, nil
}
