package photos

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carrier/internal/platform"
)

// What Carrier posted to Google Photos, remembered per account and album,
// so that a folder posted again sends only what is new or changed.
//
// The memory of an account's album is a private folder in the state
// folder (PostedDir, then a name made of the account and the album's id)
// of small files, each written whole by platform.WriteFile: the entries
// of one batchCreate call, written when its answer is read (a kill loses
// at most the entries of the call in flight; a file is remembered only
// once its item exists), the names a renamed file is known by now, and
// the files the album no longer holds. Each entry says a file (its path,
// size, modification time and SHA-256) became a media item; the newest
// word on a path stands, and a "gone" entry forgets it. Reading takes
// every file of the folder once a batch, whatever its size (20,000
// entries are a few megabytes of JSON); past postedCompactAt files they
// are written again as one, and the files read removed (a file another
// Carrier writes meanwhile has another name and stays).
//
// A batch into an album lists the album first (mediaItems.search, 100 a
// page): the album is the truth, and a remembered item it no longer holds
// (the person took it out, or deleted it) is forgotten, so its file is
// sent again. A batch into no album is remembered under the album id ""
// and checked against the app's whole library the same way
// (mediaItems.list, 100 a page): an item deleted from Google Photos is
// sent again there too.

// PostedDir is the folder of what Carrier posted to Google Photos, in
// stateDir.
func PostedDir(stateDir string) string { return filepath.Join(stateDir, "photos-posted") }

// postedVersion is the version of the files this Carrier writes; a newer
// one's are refused, not misread.
const postedVersion = 1

// postedCompactAt is how many files a memory may have before a read
// writes them again as one.
const postedCompactAt = 64

// postedEntry is one word of the memory: the file at Path (of Size bytes,
// last changed at Modified) with bytes of SHA256 is the media item Item;
// Gone: the path's item is forgotten.
type postedEntry struct {
	Path     string    `json:"path"`
	Size     int64     `json:"size,omitempty"`
	Modified time.Time `json:"modified,omitzero"` // zero: unknown, the file is hashed to match
	SHA256   string    `json:"sha256,omitempty"`
	Item     string    `json:"item,omitempty"`
	At       time.Time `json:"at"`
	Gone     bool      `json:"gone,omitempty"`
}

// postedFile is one file of a memory.
type postedFile struct {
	Version int           `json:"version"`
	Account string        `json:"account"`
	AlbumID string        `json:"albumId"`
	Entries []postedEntry `json:"entries"`
}

// postedMemory is an account's album's memory, read.
type postedMemory struct {
	dir     string
	account string
	albumID string
	byPath  map[string]postedEntry // the live entries
	byHash  map[string]string      // a SHA-256 to the item made of those bytes
	read    []string               // the files read
}

// postedKey names the folder of an account's album's memory: a hash, so
// that no address or id becomes a file name.
func postedKey(account, albumID string) string {
	h := sha256.Sum256([]byte(account + "\x00" + albumID))
	return hex.EncodeToString(h[:16])
}

// openPosted reads the memory of account's album albumID in dir
// (PostedDir), strictly: a file that cannot be read or does not say what
// it should is an error naming it.
func openPosted(dir, account, albumID string) (*postedMemory, error) {
	m := &postedMemory{dir: filepath.Join(dir, postedKey(account, albumID)), account: account, albumID: albumID,
		byPath: map[string]postedEntry{}, byHash: map[string]string{}}
	entries, err := os.ReadDir(m.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read what Carrier posted to Google Photos: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue // a write in flight
		}
		path := filepath.Join(m.dir, name)
		f, err := readPostedFile(path)
		if err != nil {
			return nil, err
		}
		if f.Account != account || f.AlbumID != albumID {
			return nil, fmt.Errorf("%s holds what was posted to another account or album; remove it to post anyway (its files are then sent again)", path)
		}
		for _, en := range f.Entries {
			m.take(en)
		}
		m.read = append(m.read, path)
	}
	for _, en := range m.byPath {
		m.byHash[en.SHA256] = en.Item
	}
	return m, nil
}

// take folds one entry in: the newest word on a path stands.
func (m *postedMemory) take(en postedEntry) {
	old, ok := m.byPath[en.Path]
	if ok && old.At.After(en.At) {
		return
	}
	if en.Gone {
		delete(m.byPath, en.Path)
		return
	}
	m.byPath[en.Path] = en
}

// readPostedFile reads one file of a memory and checks each entry.
func readPostedFile(path string) (*postedFile, error) {
	data, err := platform.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read what Carrier posted to Google Photos: %w", err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s is not a memory of what Carrier posted to Google Photos (%s); remove it to post anyway (its files are then sent again)", path, fmt.Sprintf(format, a...))
	}
	var probe struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, bad("%v", err)
	}
	if probe.Version > postedVersion {
		return nil, fmt.Errorf("%s was written by a newer Carrier (version %d); this one knows version %d: update Carrier", path, probe.Version, postedVersion)
	}
	var f postedFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, bad("%v", err)
	}
	if dec.More() {
		return nil, bad("more after its end")
	}
	if f.Version != postedVersion {
		return nil, bad("version %d", f.Version)
	}
	for i, en := range f.Entries {
		switch {
		case !filepath.IsAbs(en.Path):
			return nil, bad("entry %d names no full path", i+1)
		case en.At.IsZero():
			return nil, bad("entry %d has no time", i+1)
		case en.Gone:
		case en.Size <= 0:
			return nil, bad("entry %d has size %d", i+1, en.Size)
		case len(en.SHA256) != 64 || strings.Trim(en.SHA256, "0123456789abcdef") != "":
			return nil, bad("entry %d has no SHA-256", i+1)
		case en.Item == "":
			return nil, bad("entry %d names no media item", i+1)
		}
	}
	return &f, nil
}

// postedAt names a new file of a memory: its time, so that a listing
// reads in order, and some random bytes, so that two Carriers never
// write the same.
func postedName(now time.Time) string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%020d-%s.json", now.UnixNano(), hex.EncodeToString(b[:]))
}

// writePosted adds entries to the memory of account's album albumID in
// dir, as one new file.
func writePosted(dir, account, albumID string, entries []postedEntry) error {
	if len(entries) == 0 {
		return nil
	}
	folder := filepath.Join(dir, postedKey(account, albumID))
	if err := platform.MkdirPrivate(folder); err != nil {
		return fmt.Errorf("cannot remember what was posted to Google Photos: %w", err)
	}
	data, err := json.Marshal(postedFile{Version: postedVersion, Account: account, AlbumID: albumID, Entries: entries})
	if err != nil {
		return err
	}
	if err := platform.WriteFile(filepath.Join(folder, postedName(time.Now())), data); err != nil {
		return fmt.Errorf("cannot remember what was posted to Google Photos: %w", err)
	}
	return nil
}

// add writes entries to the memory and folds them in.
func (m *postedMemory) add(entries []postedEntry) error {
	if err := writePosted(filepath.Dir(m.dir), m.account, m.albumID, entries); err != nil {
		return err
	}
	for _, en := range entries {
		m.take(en)
		if !en.Gone {
			m.byHash[en.SHA256] = en.Item
		}
	}
	return nil
}

// compact writes the memory as one file, once it has many, and removes the
// files it was read from.
func (m *postedMemory) compact() error {
	if len(m.read) <= postedCompactAt {
		return nil
	}
	entries := make([]postedEntry, 0, len(m.byPath))
	for _, en := range m.byPath {
		entries = append(entries, en)
	}
	if err := writePosted(filepath.Dir(m.dir), m.account, m.albumID, entries); err != nil {
		return err
	}
	var errs []error
	for _, p := range m.read {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	m.read = nil
	return errors.Join(errs...)
}

// forgetMissing forgets the remembered items not in held (the album's, or
// the library's), so that their files are sent again, and returns how
// many were forgotten.
func (m *postedMemory) forgetMissing(held map[string]bool, now time.Time) (int, error) {
	var gone []postedEntry
	for p, en := range m.byPath {
		if !held[en.Item] {
			gone = append(gone, postedEntry{Path: p, At: now, Gone: true})
		}
	}
	if err := m.add(gone); err != nil {
		return 0, err
	}
	m.byHash = map[string]string{}
	for _, en := range m.byPath {
		m.byHash[en.SHA256] = en.Item
	}
	return len(gone), nil
}
