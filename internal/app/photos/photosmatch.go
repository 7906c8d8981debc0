package photos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"carrier/compose"
	"carrier/internal/gapi"
	"carrier/transfer"
)

// A batch's files matched against what was posted before (photosNew),
// and a call's items remembered as it ends (photosRecord): the memory
// they read and write is photosposted.go's.

// sha256Reads counts the files fileSHA256 read (for tests: a batch's
// stamps spare the reads at its calls' ends).
var sha256Reads atomic.Int64

// fileSHA256 reads a file's bytes once for their SHA-256.
func fileSHA256(path string) (string, error) {
	sha256Reads.Add(1)
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("cannot read %s: %w", filepath.Base(path), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// heldItems lists the ids of the media items an album holds (albumID
// ""): every item the app made), every page of 100.
func (p Photos) heldItems(ctx context.Context, albumID string) (map[string]bool, error) {
	held := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		if pages > 100000 {
			return nil, errors.New("Google Photos keeps answering with more pages of items")
		}
		var page struct {
			MediaItems []struct {
				ID string `json:"id"`
			} `json:"mediaItems"`
			NextPageToken string `json:"nextPageToken"`
		}
		var err error
		if albumID != "" {
			body, _ := json.Marshal(map[string]any{"albumId": albumID, "pageSize": 100, "pageToken": token})
			err = p.call(ctx, http.MethodPost, "/v1/mediaItems:search", body, &page)
		} else {
			q := url.Values{"pageSize": {"100"}}
			if token != "" {
				q.Set("pageToken", token)
			}
			err = p.call(ctx, http.MethodGet, "/v1/mediaItems?"+q.Encode(), nil, &page)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot list what Google Photos holds: %w", err)
		}
		for _, it := range page.MediaItems {
			held[it.ID] = true
		}
		if page.NextPageToken == "" || page.NextPageToken == token {
			return held, nil
		}
		token = page.NextPageToken
	}
}

// photosRecord remembers the files a batchCreate call just made items of
// (the queue's pump calls it for each event, before passing it on, so a
// front end that closes the queue after the call finds them remembered).
// The account and album are the call's delivery's; a call of a batch
// queued before deliveries kept them is not remembered.
func (q *Queue) photosRecord(e transfer.Event) {
	if e.Kind != transfer.EventDone || !isBatchCreate(e.Snap) || e.Snap.Response == nil || e.Snap.Owner == "" || q.posted == "" {
		return
	}
	d, err := q.albumOf(e.Snap.Owner)
	if err != nil {
		return
	}
	var ans batchCreateAnswer
	if json.Unmarshal(e.Snap.Response.Body, &ans) != nil {
		return
	}
	now := q.Now().UTC()
	var entries []postedEntry
	var unstamped []transfer.Snapshot
	var items []string
	quoted := quotedUploads(e.Snap)
	kept := q.callStamps(e.Snap.Owner, quoted)
	for k, u := range quoted {
		if k >= len(ans.Results) {
			break
		}
		res := ans.Results[k]
		st, stamped := kept[u]
		if !stamped {
			st, stamped = q.takeStamp(u)
		}
		if res.Status.Code != 0 || res.MediaItem == nil || res.MediaItem.ID == "" {
			continue
		}
		if !stamped {
			if up := q.Snap(u); up.Path != "" {
				unstamped, items = append(unstamped, up), append(items, res.MediaItem.ID)
			}
			continue
		}
		entries = append(entries, postedEntry{Path: q.Snap(u).Path, Size: st.size, Modified: time.Unix(0, st.modified).UTC(),
			SHA256: hex.EncodeToString(st.sum[:]), Item: res.MediaItem.ID, At: now})
	}
	q.keepPosted(d.account, d.albumID, entries)
	if len(unstamped) == 0 {
		return
	}
	// Uploads another process queued (a batch resumed after a restart, or
	// the next day's): their files are read for their SHA-256 now, if
	// unchanged since they were queued (the engine sent them unchanged
	// since then, so a time after that is a change since), away from the
	// pump; Close waits for it.
	q.recording.Add(1)
	go func() {
		defer q.recording.Done()
		var entries []postedEntry
		for i, up := range unstamped {
			fi, err := os.Stat(up.Path)
			if err != nil || fi.Size() != up.Size || fi.ModTime().After(up.Created) {
				continue
			}
			sum, err := fileSHA256(up.Path)
			if err != nil {
				continue
			}
			if fi2, err := os.Stat(up.Path); err != nil || !fi2.ModTime().Equal(fi.ModTime()) || fi2.Size() != fi.Size() {
				continue
			}
			entries = append(entries, postedEntry{Path: up.Path, Size: fi.Size(), Modified: fi.ModTime().UTC(), SHA256: sum, Item: items[i], At: now})
		}
		q.keepPosted(d.account, d.albumID, entries)
	}()
}

// keepPosted writes entries to the memory, keeping the failure to say.
func (q *Queue) keepPosted(account, albumID string, entries []postedEntry) {
	if err := writePosted(q.posted, account, albumID, entries); err != nil {
		q.postedErr.Store(&err)
	}
}

// photosNew matches the files (with their stats) against what was posted
// to account's album albumID before (known: the album is there, or none
// was asked for; else nothing was posted to it) and returns the new or
// changed ones, checked against what Photos takes, with their SHA-256 by
// path; b counts the others. A file of the same path, size and time as
// one remembered is not read; another is read once for its SHA-256, and
// bytes remembered under another path (a file renamed or moved) are not
// sent again: the new path is remembered too. Before matching, the album
// (or the library) is listed, and what it no longer holds is forgotten;
// unless list is false (the journal shows the day's quota used up), when
// the memory is trusted.
func (q *Queue) photosNew(ctx context.Context, p Photos, account, albumID string, known, list bool, files []string, stats []os.FileInfo, b *PhotosBatch) ([]*compose.PhotosMedia, map[string]postedStamp, error) {
	mem := &postedMemory{byPath: map[string]postedEntry{}, byHash: map[string]string{}}
	now := q.Now().UTC()
	if known && q.posted != "" {
		var err error
		if mem, err = openPosted(q.posted, account, albumID); err != nil {
			return nil, nil, err
		}
		if err := mem.compact(); err != nil {
			return nil, nil, err
		}
		if len(mem.byPath) > 0 && list {
			// With the day's quota used up the album cannot be listed;
			// the memory is trusted until the next post, and the batch
			// waits for the reset as any other.
			held, err := p.heldItems(ctx, albumID)
			var refused *gapi.Error
			switch {
			case errors.As(err, &refused) && refused.Code == http.StatusTooManyRequests:
			case err != nil:
				return nil, nil, err
			default:
				if _, err := mem.forgetMissing(held, now); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	var media []*compose.PhotosMedia
	sums := map[string]postedStamp{}
	var aliases []postedEntry
	var errs []error
	for i, abs := range files {
		fi := stats[i]
		if en, ok := mem.byPath[abs]; ok && en.Size == fi.Size() && !en.Modified.IsZero() && en.Modified.Equal(fi.ModTime()) {
			b.Already++
			continue
		}
		m, err := compose.CheckPhotos(abs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sum, err := fileSHA256(abs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if item, ok := mem.byHash[sum]; ok {
			b.Already++
			aliases = append(aliases, postedEntry{Path: abs, Size: fi.Size(), Modified: fi.ModTime(), SHA256: sum, Item: item, At: now})
			continue
		}
		media = append(media, m)
		sums[abs] = newStamp(fi, sum)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	if mem.dir != "" {
		if err := mem.add(aliases); err != nil {
			return nil, nil, err
		}
	}
	return media, sums, nil
}

// PostedError is the last failure to remember what was posted to Google
// Photos (nil: none): those files are sent again by the next post of
// them, and Photos makes them the same items.
func (q *Queue) PostedError() error {
	if e := q.postedErr.Load(); e != nil {
		return *e
	}
	return nil
}

// postedStamp is a file as it was matched before its upload was queued.
type postedStamp struct {
	sum      [32]byte
	size     int64
	modified int64 // Unix nanoseconds
}

// stamp keeps upload job id's file as it was matched, until the item it
// becomes is remembered.
func (q *Queue) stamp(id string, st postedStamp) {
	q.stampMu.Lock()
	if q.stamps == nil {
		q.stamps = map[string]postedStamp{}
	}
	q.stamps[id] = st
	q.stampMu.Unlock()
}

// takeStamp returns and forgets upload job id's stamp, if this process
// queued it.
func (q *Queue) takeStamp(id string) (postedStamp, bool) {
	q.stampMu.Lock()
	defer q.stampMu.Unlock()
	st, ok := q.stamps[id]
	delete(q.stamps, id)
	return st, ok
}

// newStamp is a file's stamp: its stat, and its SHA-256 in hex.
func newStamp(fi os.FileInfo, sum string) postedStamp {
	st := postedStamp{size: fi.Size(), modified: fi.ModTime().UnixNano()}
	hex.Decode(st.sum[:], []byte(sum))
	return st
}
