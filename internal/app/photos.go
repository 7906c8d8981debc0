package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"carrier/compose"
	"carrier/internal/delivery"
	"carrier/internal/platform"
	"carrier/transfer"
)

// A batch for Google Photos is one graph of jobs, all in the journal
// (PROTOCOL.md section 8), into an album found or made before it is
// queued (photosalbums.go) when one is asked for: each file's upload in the second resumable dialect
// (its result an upload token), then mediaItems:batchCreate in calls of
// at most 50 items in the files' order, each needing its files' uploads
// and the call before it (Photos takes these calls one at a
// time per person). A call names the tokens by quoting the jobs that
// produced them (transfer.Spec.Quote), so it is recorded
// before any byte goes and a kill -9 or a sleep between any two steps
// resumes where the journal stands. batchCreate is not idempotent in
// general, but Photos makes identical bytes one media item, and a token
// may be used again within its day: a call sent again after its answer
// was lost creates nothing new. A token a day old is refused per item;
// those files are uploaded again and created in a further call that
// needs the first (photosAgain), so an expiry is not fatal.

// Photos is the Library API the batch goes to, and the Drive beside it
// whose about.storageQuota is the account's storage (Photos has none).
type Photos struct {
	Root  string // https://photoslibrary.googleapis.com, or the sandbox's root
	Drive Drive
	// DailyRequests is the app's quota of Photos requests a day; 0:
	// Google's, PhotosDailyRequests.
	DailyRequests int
	// sent counts the requests made through call (nil: not counted), so
	// that a batch's plan knows what finding its album and listing it took.
	sent *atomic.Int64
}

// PhotosRoot is where the Photos Library API is for the API root of
// Gmail and Drive: Google's own host, or the sandbox, which serves all.
func PhotosRoot(root string) string {
	if u, err := url.Parse(root); err == nil && strings.HasSuffix(strings.ToLower(u.Hostname()), ".googleapis.com") {
		return "https://photoslibrary.googleapis.com"
	}
	return strings.TrimRight(root, "/")
}

// PhotosOptions are a batch's album and descriptions.
type PhotosOptions struct {
	Album       string            // the album Carrier made of this title, made now if there is none; "": none
	Description string            // for every item that has none of its own
	Describe    map[string]string // a file's own description, by path
	// Announce, if set, is told what the batch holds (the files already
	// there, the new ones, the quota it needs) before its first byte
	// goes, and when nothing is new.
	Announce func(*PhotosBatch)
}

// MaxPhotosBatch is how many items one batchCreate call may create.
const MaxPhotosBatch = 50

// maxPhotosDescription is Photos' limit: a description must be shorter.
const maxPhotosDescription = 1000

// ErrStorageFull says the files would not fit in the account's storage.
var ErrStorageFull = errors.New("Google storage has no room for these files")

// PhotosBatch is the jobs of one batch.
type PhotosBatch struct {
	// Album is the job that made the album in batches queued before
	// albums were found or made up front; "" in newer ones.
	Album      string
	AlbumID    string // the album the items go to, "" when none was asked for
	AlbumTitle string
	AlbumURL   string
	AlbumMade  bool // this batch made the album (it was not Carrier's already)
	// Already counts the files given that were posted to the album (or,
	// with none, to Google Photos) before and are there still: they are
	// not sent again. The uploads are the others, the new or changed.
	Already int
	Plan    PhotosPlan // what the new files need of the day's quota
	Sent    []string   // the files sent (the new or changed), in the uploads' order
	Uploads []string   // one per file, in the files' order
	Creates []string   // the batchCreate calls, in order
}

// Jobs are all the batch's jobs: the album's, the uploads, then the calls.
func (b *PhotosBatch) Jobs() []string {
	var out []string
	if b.Album != "" {
		out = append(out, b.Album)
	}
	out = append(out, b.Uploads...)
	return append(out, b.Creates...)
}

// CheckPhotos checks each file against what Photos takes, reading its type
// from its bytes, and returns them in order; the error names every file
// refused.
func CheckPhotos(paths []string) ([]*compose.PhotosMedia, error) {
	var out []*compose.PhotosMedia
	err := eachPhoto(paths, func(abs string) error {
		m, err := compose.CheckPhotos(abs)
		if err == nil {
			out = append(out, m)
		}
		return err
	})
	return out, err
}

// eachPhoto calls check with the absolute path of each file named, in
// order and once a file (the same file twice is one media item anyway),
// and joins what went wrong, file by file.
func eachPhoto(paths []string, check func(abs string) error) error {
	if len(paths) == 0 {
		return errors.New("no files given: name the pictures and videos to post")
	}
	var errs []error
	seen := map[string]bool{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err == nil && seen[abs] {
			continue
		}
		if err == nil {
			seen[abs] = true
			err = check(abs)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SplitPhotos sorts the files into those Photos takes and those it
// refuses by their type or size (compose.ErrNotForPhotos: sound, no
// picture or video, too large, empty), which may go to Drive instead; err
// names the files that cannot be read at all.
func SplitPhotos(paths []string) (photos, refused []string, why []error, err error) {
	err = eachPhoto(paths, func(abs string) error {
		_, cerr := compose.CheckPhotos(abs)
		switch {
		case cerr == nil:
			photos = append(photos, abs)
		case errors.Is(cerr, compose.ErrNotForPhotos):
			refused = append(refused, abs)
			why = append(why, cerr)
		default:
			return cerr
		}
		return nil
	})
	return photos, refused, why, err
}

// PhotosUpload queues the files for the person's Google Photos as one
// batch, after checking each against Photos' limits and the account's
// storage against their total, so nothing is sent that could not land.
// Files Carrier posted to the same album before (photosposted.go) and
// that it still holds are not sent again: the batch counts them
// (PhotosBatch.Already), and when nothing is new it queues nothing and
// has no uploads. settings adds the caller's transfer settings (chunk
// size) to each upload.
func (q *Queue) PhotosUpload(ctx context.Context, p Photos, paths []string, opts PhotosOptions, settings func(*transfer.Spec)) (*PhotosBatch, error) {
	if n := utf8.RuneCountInString(opts.Album); n > 500 {
		return nil, fmt.Errorf("an album's title has at most 500 characters, not %d", n)
	}
	var files []string
	var stats []os.FileInfo
	err := eachPhoto(paths, func(abs string) error {
		fi, err := os.Stat(abs)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a file", filepath.Base(abs))
		}
		files, stats = append(files, abs), append(stats, fi)
		return nil
	})
	if err != nil {
		return nil, err
	}
	describe := func(m *compose.PhotosMedia) string {
		if d, ok := opts.Describe[m.Path]; ok {
			return d
		}
		return opts.Description
	}
	// The storage and the album are read as the account the uploads go
	// with (settings binds them), not as the default one.
	var as transfer.Spec
	if settings != nil {
		settings(&as)
	}
	if as.Account == "" {
		q.accountMu.Lock()
		as.Account = q.account // Bind's
		q.accountMu.Unlock()
	}
	ctx = transfer.WithAccount(ctx, as.Account)
	b := &PhotosBatch{}
	if p.sent == nil {
		p.sent = new(atomic.Int64)
	}
	// The album is looked for first, and made only once there is
	// something to put in it: what was posted to it is remembered by its
	// id, and an album not there yet holds nothing.
	named := strings.TrimSpace(opts.Album) != ""
	var album PhotosAlbum
	found := false
	if named {
		if album, found, err = p.albumTitled(ctx, opts.Album); err != nil {
			return nil, err
		}
	}
	// What this Carrier sent to Photos today, as its journal shows: the
	// plan counts it, and with none left the album is not listed.
	now := q.dl.now()
	leftToday := q.PhotosLeftToday(p.Root, p.DailyRequests, now)
	media, sums, err := q.photosNew(ctx, p, as.Account, album.ID, !named || found, leftToday > 0, files, stats, b)
	if err != nil {
		return nil, err
	}
	var need int64
	for _, m := range media {
		if n := utf8.RuneCountInString(describe(m)); n >= maxPhotosDescription {
			return nil, fmt.Errorf("the description of %s has %d characters; Google Photos takes fewer than %d", m.Name, n, maxPhotosDescription)
		}
		need += m.Size
	}
	if len(media) == 0 {
		b.AlbumID, b.AlbumTitle, b.AlbumURL = album.ID, album.Title, album.ProductURL
		if opts.Announce != nil {
			opts.Announce(b)
		}
		return b, nil // nothing new: nothing to queue
	}
	free, err := p.Drive.StorageFree(ctx)
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot read the account's storage: %w", err)
	case free >= 0 && need > free:
		return nil, fmt.Errorf("%w: it has %s free; these %d files need %s. Free some space (Drive, Gmail and Photos share it), or post fewer files", ErrStorageFull, compose.HumanSize(free), len(media), compose.HumanSize(need))
	}
	if named {
		a, made := album, false
		if !found {
			if a, made, err = p.album(ctx, opts.Album, true); err != nil {
				return nil, err
			}
		}
		b.AlbumID, b.AlbumTitle, b.AlbumURL, b.AlbumMade = a.ID, a.Title, a.ProductURL, made
	}
	// The plan counts what this Carrier sent to Photos today, these
	// look-ups included.
	left := leftToday - int(p.sent.Load())
	b.Plan = PlanPhotos(len(media), p.DailyRequests, left, now)
	if opts.Announce != nil {
		opts.Announce(b)
	}
	// One delivery: the pictures' uploads, then the calls that make them
	// items (each needs its pictures, and so belongs to it too). It keeps
	// the album and the descriptions before any job is queued: a call
	// that makes expired items again is made from them (photosAgain).
	dl, err := q.begin(delivery.KindPhotos, photosLabel(len(media), opts.Album), as.Account, func(d *delivery.Delivery) {
		d.Album, d.AlbumID, d.Description = b.AlbumTitle, b.AlbumID, opts.Description
		for _, m := range media {
			if own := describe(m); own != opts.Description {
				if d.Describe == nil {
					d.Describe = map[string]string{}
				}
				d.Describe[m.Path] = own
			}
		}
	})
	if err != nil {
		return nil, err
	}
	q.dl.keepAlbum(dl.ID, photosTo{account: dl.Account, albumID: dl.AlbumID})
	defer q.end(dl)
	// The files' stamps wait for their calls in a file beside the
	// delivery, not in memory (photosstamps.go).
	stamps := q.newStampWriter(dl.ID)
	queued := false
	defer func() { stamps.close(queued) }()
	settings = owned(dl, settings)
	undo := func(err error) (*PhotosBatch, error) {
		jobs := b.Jobs()
		for i := len(jobs) - 1; i >= 0; i-- {
			q.Cancel(context.WithoutCancel(ctx), jobs[i])
		}
		return nil, err
	}
	root := strings.TrimRight(p.Root, "/")
	upURL := root + "/v1/uploads" // one string for every upload's record
	// Each call's fifty uploads are queued after the call before it and
	// need it: they start once it is done, so each call goes as soon as
	// its uploads are, before more uploads start, and at most one call's
	// uploads are outstanding. A day's quota is then spent on whole items:
	// uploads all queued first would spend it on uploads alone (the
	// engine takes what is ready in the order it became ready), and their
	// tokens would expire before the next day's calls.
	prev := ""
	for start := 0; start < len(media); start += MaxPhotosBatch {
		end := min(start+MaxPhotosBatch, len(media))
		sts := make([]postedStamp, 0, end-start)
		for _, m := range media[start:end] {
			id, err := q.addPhotosUploadTo(upURL, m.Path, m.MimeType, nil, prev, settings)
			if err != nil {
				return undo(err)
			}
			b.Uploads, b.Sent = append(b.Uploads, id), append(b.Sent, m.Path)
			sts = append(sts, sums[m.Path])
		}
		stamps.add(b.Uploads[start:end], sts, end == len(media))
		items := make([]photosNewItem, 0, end-start)
		for _, m := range media[start:end] {
			items = append(items, photosNewItem{Name: m.Name, Description: describe(m)})
		}
		label := fmt.Sprintf("Google Photos · items %d–%d of %d", start+1, end, len(media))
		if opts.Album != "" {
			label += " into " + opts.Album
		}
		id, err := q.addBatchCreate(root, "", b.AlbumID, b.Uploads[start:end], items, prev, label)
		if err != nil {
			return undo(err)
		}
		b.Creates = append(b.Creates, id)
		prev = id
	}
	queued = true
	return b, nil
}

// photosLabel names a batch for people: "12 files to Google Photos",
// "… into Trip".
func photosLabel(n int, album string) string {
	label := fmt.Sprintf("%d files to Google Photos", n)
	if n == 1 {
		label = "1 file to Google Photos"
	}
	if album != "" {
		label += " into " + album
	}
	return label
}

// addPhotosUpload queues one file's upload in Photos' resumable dialect,
// after the job after if given (the batch's call before its own).
func (q *Queue) addPhotosUpload(root, path, mimeType string, st *postedStamp, after string, settings func(*transfer.Spec)) (string, error) {
	return q.addPhotosUploadTo(root+"/v1/uploads", path, mimeType, st, after, settings)
}

// addPhotosUploadTo is addPhotosUpload to the uploads' URL (root's
// /v1/uploads), one string for a whole batch.
func (q *Queue) addPhotosUploadTo(url, path, mimeType string, st *postedStamp, after string, settings func(*transfer.Spec)) (string, error) {
	s := transfer.Spec{URL: url, Method: http.MethodPost, Protocol: transfer.ProtocolGoogUpload,
		ContentType: mimeType, Path: path, Label: filepath.Base(path) + " · to Google Photos"}
	if settings != nil {
		settings(&s)
	}
	s.Type, s.Metadata, s.Checksums, s.Existing, s.Needs = transfer.Resumable, nil, nil, "", nil
	if after != "" {
		s.Needs = []string{after}
	}
	id, err := q.Add(s)
	if err == nil && st != nil {
		// The file's SHA-256, read when it was matched against what was
		// posted before, is kept for the item it becomes: the engine
		// keeps a CRC32C of it, not the SHA-256 (sourcecheck_test.go).
		q.stamp(id, *st)
	}
	return id, err
}

type photosNewItem struct {
	Name        string
	Description string
}

// isBatchCreate tells a batch's creation calls among the journal's jobs.
func isBatchCreate(s transfer.Snapshot) bool {
	return s.Type == transfer.Call && delivery.RouteOf(s.URL).Kind == delivery.KindPhotosItems
}

// addBatchCreate queues the batchCreate call for uploads (with items'
// names and descriptions, in order), into the album albumID or the one
// made by job album if given, after job prev if given.
func (q *Queue) addBatchCreate(root, album, albumID string, uploads []string, items []photosNewItem, prev, label string) (string, error) {
	// The template's places for results are NULs (transfer.Spec.Quote);
	// a marker no description can hold stands for them while encoding.
	var nonce [12]byte
	rand.Read(nonce[:])
	mark := "carrier-quote-" + hex.EncodeToString(nonce[:])
	type simple struct {
		UploadToken string `json:"uploadToken"`
		FileName    string `json:"fileName"`
	}
	type newItem struct {
		Description     string `json:"description,omitempty"`
		SimpleMediaItem simple `json:"simpleMediaItem"`
	}
	body := struct {
		AlbumID       string    `json:"albumId,omitempty"`
		NewMediaItems []newItem `json:"newMediaItems"`
	}{}
	var quote, needs []string
	switch {
	case album != "":
		body.AlbumID = mark
		quote = append(quote, album+".id")
		needs = append(needs, album)
	case albumID != "":
		body.AlbumID = albumID
	}
	for i, it := range items {
		body.NewMediaItems = append(body.NewMediaItems, newItem{Description: it.Description, SimpleMediaItem: simple{UploadToken: mark, FileName: it.Name}})
		quote = append(quote, uploads[i])
		needs = append(needs, uploads[i])
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	// The album and the descriptions a call that makes its expired items
	// again needs are the delivery's (photosAgain): the spool file goes
	// once the call is done, and the process that saw it done may die
	// before it queued that call. Calls queued before deliveries kept
	// them in their record's Metadata (template).
	data = bytes.ReplaceAll(data, []byte(`"`+mark+`"`), []byte{0})
	if prev != "" {
		needs = append(needs, prev)
	}
	return q.addCallSpec(transfer.Spec{URL: root + "/v1/mediaItems:batchCreate", Label: label, Quote: quote, Needs: needs}, data)
}

// addCallData queues one API call whose body (data) is kept in the spool
// until the call is done; quote names the jobs whose results fill its
// template (transfer.Spec.Quote).
func (q *Queue) addCallData(url string, data []byte, label string, quote, needs []string) (string, error) {
	return q.addCallDataAs("", url, data, label, quote, needs)
}

// addCallDataAs is addCallData for a call that goes as account ("": as
// the jobs it needs, else the queue's).
func (q *Queue) addCallDataAs(account, url string, data []byte, label string, quote, needs []string) (string, error) {
	return q.addCallSpec(transfer.Spec{URL: url, Label: label, Quote: quote, Needs: needs, Account: account}, data)
}

// addCallSpec queues the call s (its URL, label, quotes, needs, account and
// what its record keeps) with data as its body, POSTed as JSON.
func (q *Queue) addCallSpec(s transfer.Spec, data []byte) (string, error) {
	if err := platform.MkdirAll(q.spool.Dir(), 0o700); err != nil {
		return "", fmt.Errorf("cannot write the spool: %w", err)
	}
	f, err := platform.CreateTemp(q.spool.Dir(), "call-*.json")
	if err != nil {
		return "", fmt.Errorf("cannot write the spool: %w", err)
	}
	path := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = platform.SyncFile(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// The record written next names the file: its name must be on
		// the disk first, or a power cut could keep a job without its
		// body.
		werr = platform.SyncDir(q.spool.Dir())
	}
	if werr != nil {
		os.Remove(path)
		return "", fmt.Errorf("cannot write the spool: %w", werr)
	}
	s.Method, s.Type, s.ContentType, s.Path = http.MethodPost, transfer.Call, "application/json", path
	id, err := q.Add(s)
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return id, nil
}

// batchCreateAnswer is what Photos says of each item of a call.
type batchCreateAnswer struct {
	Results []struct {
		UploadToken string `json:"uploadToken"`
		Status      struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
		MediaItem *struct {
			ID         string `json:"id"`
			ProductURL string `json:"productUrl"`
			Filename   string `json:"filename"`
		} `json:"mediaItem"`
	} `json:"newMediaItemResults"`
}

// PhotosResult is where one file of a batch stands.
type PhotosResult struct {
	Path       string
	State      transfer.State // of the step it is at
	Step       string         // "upload", "create", "album"
	ID         string         // the media item's, once made
	ProductURL string
	Error      string            // why it is not in Photos, in Photos' or the engine's words
	Cause      error             // the engine's named cause of a failed step, if any
	Failure    *transfer.Failure // the failed step's failure in parts, nil when none
}

// answersAtOnce is how many calls' answers PhotosResults reads from the
// journal at a time (a variable for tests).
var answersAtOnce = 64

// PhotosResults reads from the journal where each file of the batch
// stands, in the files' order: its media item, or the step it waits at,
// or why it failed (the item's own status when Photos refused it).
func (q *Queue) PhotosResults(b *PhotosBatch) ([]PhotosResult, error) {
	v, err := q.callsView()
	if err != nil {
		return nil, err
	}
	out := make([]PhotosResult, len(b.Uploads))
	index := make(map[string]int, len(b.Uploads)) // a file's path to its place
	for i, u := range b.Uploads {
		s := v.snap(u)
		index[s.Path] = i
		out[i] = PhotosResult{Path: s.Path, State: s.State, Step: "upload", Error: s.Error, Cause: s.Cause}
	}
	var album *transfer.Snapshot
	if b.Album != "" {
		if a, ok := v.look(b.Album); ok {
			album = &a
		}
	}
	// The calls in order, each followed by the calls that made again what
	// it could not (photosAgain): a later word on a file stands.
	var calls []*transfer.Snapshot
	var walk func(id string)
	walk = func(id string) {
		s, ok := v.byID[id]
		if !ok {
			return
		}
		calls = append(calls, s)
		for _, r := range v.againOf(s) {
			walk(r.ID)
		}
	}
	for _, c := range b.Creates {
		walk(c)
	}
	// The answers the journal holds, read answersAtOnce calls at a time:
	// those of calls archived by another Carrier's start are in the
	// archive, which is then read once for as many, not once per call;
	// and a camera roll's 400 answers (about 5 MB) are not held at once
	// beside its results (issue 29).
	var kept map[string]*transfer.Response
	for i, c := range calls {
		if i%answersAtOnce == 0 {
			var inJournal []string
			for _, c := range calls[i:min(i+answersAtOnce, len(calls))] {
				if c.State == transfer.StateDone && c.Response != nil && c.AnswerInJournal {
					inJournal = append(inJournal, c.ID)
				}
			}
			kept = nil
			if len(inJournal) > 0 {
				kept, _ = q.Queue.Answers(inJournal) // one not read is a file whose item is not known yet
			}
		}
		uploads := quotedUploads(*c)
		var ans batchCreateAnswer
		switch {
		case c.State != transfer.StateDone || c.Response == nil:
		case c.AnswerInJournal:
			if r := kept[c.ID]; r != nil {
				json.Unmarshal(r.Body, &ans)
			}
		default:
			json.Unmarshal(c.Response.Body, &ans)
		}
		for k, u := range uploads {
			up := v.snap(u)
			i, ok := index[up.Path]
			if !ok {
				continue
			}
			r := &out[i]
			if up.State != transfer.StateDone {
				r.State, r.Step, r.Error, r.Cause, r.Failure = up.State, "upload", up.Error, up.Cause, up.Failure
				continue
			}
			switch {
			case c.State == transfer.StateDone && k < len(ans.Results):
				res := ans.Results[k]
				r.State, r.Step, r.Cause = transfer.StateDone, "create", nil
				if res.Status.Code == 0 && res.MediaItem != nil {
					r.ID, r.ProductURL, r.Error = res.MediaItem.ID, res.MediaItem.ProductURL, ""
				} else {
					r.State = transfer.StateFailed
					r.Error = fmt.Sprintf("Google Photos did not create the item (status %d): %s", res.Status.Code, Printable(res.Status.Message))
				}
			case album != nil && album.State != transfer.StateDone:
				r.State, r.Step, r.Error, r.Cause, r.Failure = album.State, "album", album.Error, album.Cause, album.Failure
			default:
				r.State, r.Step, r.Error, r.Cause, r.Failure = c.State, "create", c.Error, c.Cause, c.Failure
			}
		}
	}
	return out, nil
}

// quotedUploads are the uploads a batchCreate call names, in its items'
// order (the album's id, quoted as "ID.id", is not one).
func quotedUploads(s transfer.Snapshot) []string {
	var out []string
	for _, q := range s.Quote {
		if !strings.Contains(q, ".") {
			out = append(out, q)
		}
	}
	return out
}

// photosView is the journal's history as the Photos front end looks at
// it: each job by id, pointing into the history read (not a copy of each
// snapshot), and the batchCreate calls alone, so that looking for the
// calls that make a call's items again goes through the calls, not
// through every upload (a camera roll: 400 calls among 20,400 jobs).
type photosView struct {
	byID  map[string]*transfer.Snapshot
	calls []*transfer.Snapshot // in the history's order
	// more looks up the jobs byID lacks (a view of the calls alone: the
	// uploads); nil: none.
	more func(id string) (transfer.Snapshot, bool)
}

// callsView is a view of the history's batchCreate calls alone, which
// looks up any other job (an upload) as the queue holds it, or in the
// whole history, read once if one is not held: a batch's end asks for
// its calls, and the queue holds its 20,000 uploads already.
func (q *Queue) callsView() (photosView, error) {
	calls, err := q.HistoryWhere(func(s *transfer.Snapshot) bool { return isBatchCreate(*s) })
	if err != nil {
		return photosView{}, err
	}
	v := viewOf(calls)
	var all map[string]*transfer.Snapshot
	read := false
	v.more = func(id string) (transfer.Snapshot, bool) {
		if s, ok := q.Job(id); ok {
			return s, true
		}
		if !read {
			read = true
			if recs, err := q.History(); err == nil {
				all = viewOf(recs).byID
			}
		}
		if s, ok := all[id]; ok {
			return *s, true
		}
		return transfer.Snapshot{}, false
	}
	return v, nil
}

// look is job id's snapshot, and whether the view has it.
func (v photosView) look(id string) (transfer.Snapshot, bool) {
	if s, ok := v.byID[id]; ok {
		return *s, true
	}
	if v.more != nil {
		return v.more(id)
	}
	return transfer.Snapshot{}, false
}

func viewOf(recs []transfer.Snapshot) photosView {
	v := photosView{byID: make(map[string]*transfer.Snapshot, len(recs))}
	for i := range recs {
		r := &recs[i]
		v.byID[r.ID] = r
		if isBatchCreate(*r) {
			v.calls = append(v.calls, r)
		}
	}
	return v
}

// snap is job id's snapshot, the zero one when the history has none.
func (v photosView) snap(id string) transfer.Snapshot {
	s, _ := v.look(id)
	return s
}

// againOf are the calls that make again items of call b, in the
// history's order.
func (v photosView) againOf(b *transfer.Snapshot) []*transfer.Snapshot {
	var out []*transfer.Snapshot
	for _, f := range v.calls {
		if again(*f, *b, v) {
			out = append(out, f)
		}
	}
	return out
}

// again reports whether call f makes again items of call b: f needs b and
// names uploads of files b named.
func again(f, b transfer.Snapshot, v photosView) bool {
	if !slices.Contains(f.Needs, b.ID) {
		return false
	}
	fu := quotedUploads(f)
	if len(fu) == 0 {
		return false
	}
	paths := map[string]bool{}
	for _, u := range quotedUploads(b) {
		paths[v.snap(u).Path] = true
	}
	return paths[v.snap(fu[0]).Path]
}

// tokenDay is how long Photos keeps an upload token; one refused at
// least expiredAfter after its upload ended is taken as expired (the
// server's clock and this one may differ a little).
const expiredAfter = 23 * time.Hour

// photosAgain looks at a batchCreate call that is done: the items Photos
// refused whose upload ended a day or more before the call are uploaded
// again and created in a call that needs this one, unless one was
// queued already (the caller holds photosMu). The album and each item's
// description are the call's delivery's; for a call queued before
// deliveries kept them, template's (the call's body as queued, nil when
// the spool no longer holds it).
func (q *Queue) photosAgain(c transfer.Snapshot, recs []transfer.Snapshot, template []byte) (bool, error) {
	q.photosLooks.Add(1)
	if !isBatchCreate(c) || c.State != transfer.StateDone || c.Response == nil {
		return false, nil
	}
	v := viewOf(recs)
	v.byID[c.ID] = &c
	if len(v.againOf(&c)) > 0 {
		return false, nil // made again already
	}
	var ans batchCreateAnswer
	if json.Unmarshal(q.answerBody(c), &ans) != nil {
		return false, nil
	}
	var tmpl struct {
		AlbumID       string `json:"albumId"`
		NewMediaItems []struct {
			Description string `json:"description"`
		} `json:"newMediaItems"`
	}
	// The delivery keeps them for every call queued since deliveries
	// did; a call from before has them in its record (Metadata).
	// Read once there is an item to make again.
	var kept *delivery.Delivery
	read := sync.OnceFunc(func() {
		if d, err := q.dl.store.Get(c.Owner); c.Owner != "" && len(c.Metadata) == 0 && err == nil && d.Kind == delivery.KindPhotos {
			kept = &d
		} else if template != nil {
			json.Unmarshal(bytes.ReplaceAll(template, []byte{0}, []byte(`""`)), &tmpl)
		}
	})
	uploads := quotedUploads(c)
	album := ""
	for _, qt := range c.Quote {
		if a, ok := strings.CutSuffix(qt, ".id"); ok {
			album = a
		}
	}
	// Uploads an earlier look at this call queued for it, in a process
	// that died before it queued their call: no call names them, and they
	// were queued after this call ended. They are used, not made a third
	// time.
	named := map[string]bool{}
	for _, r := range v.calls {
		for _, u := range quotedUploads(*r) {
			named[u] = true
		}
	}
	leftover := func(path string) string {
		for _, r := range recs {
			if r.Protocol == transfer.ProtocolGoogUpload && r.Path == path && r.URL == upRoot(c.URL)+"/v1/uploads" &&
				!named[r.ID] && r.State != transfer.StateCancelled && !r.Created.Before(c.Updated) {
				return r.ID
			}
		}
		return ""
	}
	var ids []string
	var items []photosNewItem
	for k, u := range uploads {
		up, ok := v.byID[u]
		if !ok || k >= len(ans.Results) || ans.Results[k].Status.Code == 0 || c.Updated.Sub(up.Updated) < expiredAfter {
			continue
		}
		read()
		id := leftover(up.Path)
		if id == "" {
			// As the account the first upload went with, not as whichever
			// this process is bound to: the call uses the token as that
			// account.
			var err error
			// The batch's delivery's too.
			id, err = q.addPhotosUpload(upRoot(c.URL), up.Path, up.ContentType, nil, "", func(s *transfer.Spec) { s.Account, s.Owner = up.Account, c.Owner })
			if err != nil {
				return len(ids) > 0, err
			}
		}
		named[id] = true
		ids = append(ids, id)
		it := photosNewItem{Name: filepath.Base(up.Path)}
		switch {
		case kept != nil:
			it.Description = kept.DescriptionOf(up.Path)
		case k < len(tmpl.NewMediaItems):
			it.Description = tmpl.NewMediaItems[k].Description
		}
		items = append(items, it)
	}
	if len(ids) == 0 {
		return false, nil
	}
	albumID := ""
	switch {
	case album != "":
	case kept != nil:
		albumID = kept.AlbumID
	default:
		albumID = tmpl.AlbumID
	}
	_, err := q.addBatchCreate(upRoot(c.URL), album, albumID, ids, items, c.ID, fmt.Sprintf("Google Photos · again: %d items whose upload expired", len(ids)))
	return true, err
}

// answerBody is the body of done job s's answer: its snapshot's, or
// the journal's when the queue let it go (dropAnswers).
func (q *Queue) answerBody(s transfer.Snapshot) []byte {
	switch {
	case s.Response == nil:
		return nil
	case s.AnswerInJournal:
		if r, err := q.Queue.Answer(s.ID); err == nil {
			return r.Body
		}
		return nil
	}
	return s.Response.Body
}

// dropAnswers lets the queue forget the answers of a batchCreate call
// just done and of the uploads it named, once the front end has seen its
// event (photosRecord remembered its items, photosSettle has its
// snapshot): the journal keeps them, read back by answerBody when a
// batch's results are asked. A camera roll's calls answer with about
// 0.9 KB per picture, which the queue would otherwise hold for every
// picture to the batch's end.
func (q *Queue) dropAnswers(e transfer.Event) {
	if e.Kind != transfer.EventDone || !isBatchCreate(e.Snap) {
		return
	}
	for _, u := range quotedUploads(e.Snap) {
		q.DropAnswer(u)
	}
	q.DropAnswer(e.Job)
}

// upRoot is the Photos root of a batchCreate call's URL, off the route
// table.
func upRoot(callURL string) string { return delivery.RootOf(callURL) }

// photosSweep makes again what done calls of the journal left expired
// with no call queued for them: the process that saw them done may have
// died before queueing it.
//
// recs is the history read, its jobs not done and its calls at least
// (err its failure), and ended when each upload ended; the history
// returned is recs, or the whole history read again when a call was
// queued.
func (q *Queue) photosSweep(recs []transfer.Snapshot, ended map[string]time.Time, err error) ([]transfer.Snapshot, error) {
	q.photosMu.Lock()
	defer q.photosMu.Unlock()
	if err != nil {
		return recs, err
	}
	// A call none of whose uploads ended a day before it has nothing
	// expired to make again, and is not looked at further (photosAgain
	// reads the whole history for each call it looks at: a camera roll
	// posted before is 400 calls of 50 over 20,400 records).
	out := recs
	var all []transfer.Snapshot // the whole history, read when a call needs it
	for _, r := range recs {
		if isBatchCreate(r) && r.State == transfer.StateDone && expiredUploads(r, ended) {
			if all == nil {
				if all, err = q.History(); err != nil {
					return out, err
				}
			}
			if added, _ := q.photosAgain(r, all, q.template(r)); added {
				if all, err = q.History(); err != nil {
					return all, err
				}
				out = all
			}
		}
	}
	return out, nil
}

// expiredUploads reports whether call c names an upload (when each
// ended: ended) that ended at least expiredAfter before c: only then may
// c have items to make again (photosAgain passes over the others, and
// over uploads no longer in the journal).
func expiredUploads(c transfer.Snapshot, ended map[string]time.Time) bool {
	for _, u := range quotedUploads(c) {
		if at, ok := ended[u]; ok && c.Updated.Sub(at) >= expiredAfter {
			return true
		}
	}
	return false
}

// template is the body of a call queued before deliveries kept its album
// and descriptions: its record's copy, or for a call queued before records
// kept one, kept from its spool file when it was done, or read from the
// spool while it is there.
func (q *Queue) template(c transfer.Snapshot) []byte {
	if len(c.Metadata) > 0 {
		return c.Metadata
	}
	if t, ok := q.photosTmpl[c.ID]; ok {
		return t
	}
	t, _ := os.ReadFile(c.Path)
	return t
}

// photosSettle makes the expired items of a call just done again from
// another goroutine, since the queue's events come through here; for a
// call with neither a delivery nor a template in its record (queued by an
// older Carrier) it first keeps the spool's, which goes once the event
// passes.
func (q *Queue) photosSettle(e transfer.Event) {
	if e.Kind != transfer.EventDone || !isBatchCreate(e.Snap) {
		return
	}
	if len(e.Snap.Metadata) == 0 && e.Snap.Owner == "" {
		tmpl, _ := os.ReadFile(e.Snap.Path)
		q.photosMu.Lock()
		if q.photosTmpl == nil {
			q.photosTmpl = map[string][]byte{}
		}
		q.photosTmpl[e.Snap.ID] = tmpl
		q.photosMu.Unlock()
	}
	go func() {
		q.photosMu.Lock()
		defer q.photosMu.Unlock()
		if !q.mayRemake(e.Snap) {
			return
		}
		if recs, err := q.History(); err == nil {
			q.photosAgain(e.Snap, recs, q.template(e.Snap))
		}
	}()
}

// PhotosCalls makes sure the items of the batch's done calls that expired
// are being made again, and returns every creation call of the batch, in
// order, those made for expired items included: a front end waits for
// them all.
func (q *Queue) PhotosCalls(b *PhotosBatch) ([]string, error) {
	q.photosMu.Lock()
	defer q.photosMu.Unlock()
	for {
		v, err := q.callsView()
		if err != nil {
			return nil, err
		}
		var recs []transfer.Snapshot // the whole history, read when a call may have items to make again
		var calls []string
		added := false
		var walk func(id string) error
		walk = func(id string) error {
			s, ok := v.byID[id]
			if !ok {
				return nil
			}
			calls = append(calls, id)
			if s.State == transfer.StateDone && q.mayRemake(*s) {
				if recs == nil {
					if recs, err = q.History(); err != nil {
						return err
					}
				}
				a, err := q.photosAgain(*s, recs, q.template(*s))
				if err != nil {
					return err
				}
				added = added || a
			}
			for _, r := range v.againOf(s) {
				if err := walk(r.ID); err != nil {
					return err
				}
			}
			return nil
		}
		for _, c := range b.Creates {
			if err := walk(c); err != nil {
				return nil, err
			}
		}
		if !added {
			return calls, nil
		}
	}
}

// PhotosDailyReset is when Google's daily quotas turn over after t:
// midnight, Pacific time.
func PhotosDailyReset(t time.Time) time.Time {
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		loc = time.FixedZone("PST", -8*3600)
	}
	p := t.In(loc)
	return time.Date(p.Year(), p.Month(), p.Day()+1, 0, 0, 0, 0, loc)
}

// PhotosQuotaWords says a daily quota is used up and when it resets, in
// the person's local time.
func PhotosQuotaWords(now time.Time) string {
	return PhotosQuotaWordsAt(now, PhotosDailyReset(now))
}

// PhotosQuotaWordsAt says the same of the reset at, as seen at now.
func PhotosQuotaWordsAt(now, at time.Time) string {
	return fmt.Sprintf("Google Photos' quota for today is used up; it resets at %s (midnight Pacific time), in %s", at.Local().Format("15:04 Mon 2 Jan"), at.Sub(now).Round(time.Minute))
}

// PhotosMore makes sure the items that job id, a batchCreate call just
// done, found expired are being made again, and returns the jobs doing it
// (their uploads, then the call); none for any other job. A front end
// that waits for a list of jobs, as `carrier resume` does, waits for
// these too: they are queued after the list was made.
func (q *Queue) PhotosMore(id string) ([]string, error) {
	q.photosMu.Lock()
	defer q.photosMu.Unlock()
	recs, err := q.History()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(recs, func(r transfer.Snapshot) bool { return r.ID == id })
	if i < 0 || !isBatchCreate(recs[i]) || recs[i].State != transfer.StateDone {
		return nil, nil
	}
	c := recs[i]
	added, err := q.photosAgain(c, recs, q.template(c))
	if err != nil {
		return nil, err
	}
	if added {
		if recs, err = q.History(); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, r := range viewOf(recs).againOf(&c) {
		out = append(append(out, quotedUploads(*r)...), r.ID)
	}
	return out, nil
}
