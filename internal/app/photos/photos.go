package photos

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/delivery"
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
	Drive app.Drive
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
	// Queuing, if set, is told how many of the batch's new files are
	// queued, after each call's fifty (and their call) are: a camera
	// roll's 20,000 take minutes to queue, each job written to the disk
	// first, while the first of them are already on their way.
	Queuing func(queued, total int)
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
		as.Account = q.AccountOr("") // Bind's
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
	now := q.Now()
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
	dl, err := q.BeginDelivery(delivery.KindPhotos, photosLabel(len(media), opts.Album), as.Account, func(d *delivery.Delivery) {
		d.Album, d.AlbumID, d.Description, d.Files, d.Bytes = b.AlbumTitle, b.AlbumID, opts.Description, len(media), need
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
	q.keepAlbum(dl.ID, photosTo{account: dl.Account, albumID: dl.AlbumID})
	defer q.EndDelivery(dl)
	// The files' stamps wait for their calls in a file beside the
	// delivery, not in memory (photosstamps.go).
	stamps := q.newStampWriter(dl.ID)
	queued := false
	defer func() { stamps.close(queued) }()
	settings = app.Owned(dl, settings)
	undo := func(err error) (*PhotosBatch, error) {
		jobs := b.Jobs()
		for i := len(jobs) - 1; i >= 0; i-- {
			q.Cancel(context.WithoutCancel(ctx), jobs[i])
		}
		if errors.Is(err, syscall.EMFILE) {
			err = &TooManyOpenError{Files: len(media), Queued: len(b.Uploads), Err: err}
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
		if opts.Queuing != nil {
			opts.Queuing(end, len(media))
		}
	}
	queued = true
	return b, nil
}

// TooManyOpenError is a batch refused by the open-file limit of the
// computer: each of its jobs keeps its journal lock (an open file) from
// its queuing until it ends, so a batch larger than the limit cannot be
// queued whole (docs/PERFORMANCE.md, the batch queued in parts). The
// jobs queued were cancelled.
type TooManyOpenError struct {
	Files  int // the batch's new files
	Queued int // the uploads queued when the limit was met
	Err    error
}

func (e *TooManyOpenError) Error() string {
	part := max(e.Queued/2/MaxPhotosBatch*MaxPhotosBatch, MaxPhotosBatch)
	return fmt.Sprintf("%d files are too many to queue at once on this computer: each keeps a file of Carrier's open until it is sent, and the limit on open files was met after %d. The batch was cancelled. Post them in parts of at most %d (a folder posted again sends only what is not in the album yet), or raise the limit (ulimit -n)", e.Files, e.Queued, part)
}

func (e *TooManyOpenError) Unwrap() error { return e.Err }

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
