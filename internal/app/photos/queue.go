package photos

import (
	"sync"
	"sync/atomic"
	"time"

	"carrier/internal/app"
	"carrier/transfer"
)

// Queue is a Carrier queue's Google Photos side: the batches it queues
// (PhotosUpload), where their files stand (PhotosResults), the items
// whose upload expired made again (photosagain.go) and what was posted
// remembered (photosposted.go). Every queue app.OpenQueue opens in a
// program that has this package has one, built as it opens (init): Of
// finds it.
type Queue struct {
	*app.Queue

	// ended is when each upload ended, read with the history as the
	// queue opened, for Opened's sweep; dropped after it.
	ended map[string]time.Time

	// photosMu orders the making again of a batch's expired items
	// (photosagain.go), so it is queued once; photosTmpl keeps the bodies of
	// calls done, whose spool files go.
	photosMu    sync.Mutex
	photosTmpl  map[string][]byte
	photosLooks atomic.Int64 // calls photosAgain looked at

	// posted is the folder of what was posted to Google Photos
	// (photosposted.go); postedErr the last failure to remember it.
	posted    string
	postedErr atomic.Pointer[error]
	stampMu   sync.Mutex
	stamps    map[string]postedStamp // an upload's file as it was matched, by its job, when its delivery's stamps file could not be written
	// stampFiles are where each delivery's stamps file was read to
	// (photosstamps.go), under stampMu.
	stampFiles map[string]*stampReader
	recording  sync.WaitGroup // files of another process's uploads read to be remembered

	// albums are the account and album id of Photos deliveries, by id,
	// as this process began them or first read them: a batch of 20,000
	// pictures is a delivery file of 20,400 members, which each of its
	// 400 calls' ends would otherwise read and decode again (n²).
	albumsMu sync.Mutex
	albums   map[string]photosTo
	reads    atomic.Int64 // deliveries read from the store for albumOf
}

func init() {
	app.AddPart(func(q *app.Queue) app.Part {
		return &Queue{Queue: q, posted: PostedDir(q.StateDir()), ended: map[string]time.Time{}}
	})
}

// Of is q's Google Photos side.
func Of(q *app.Queue) *Queue {
	for _, p := range q.Parts() {
		if pq, ok := p.(*Queue); ok {
			return pq
		}
	}
	panic("photos: a queue opened without its Google Photos side")
}

// Keeps keeps the Photos calls among the history read as the queue
// opens, and when each upload ended (app.Part).
func (q *Queue) Keeps(s *transfer.Snapshot) bool {
	if s.Protocol == transfer.ProtocolGoogUpload {
		q.ended[s.ID] = s.Updated
	}
	return isBatchCreate(*s)
}

// Opened makes again what done calls left expired (photosSweep) as the
// queue opens (app.Part).
func (q *Queue) Opened(recs []transfer.Snapshot, err error) ([]transfer.Snapshot, error) {
	ended := q.ended
	q.ended = nil
	return q.photosSweep(recs, ended, err)
}

// See remembers what each batchCreate call just done made, makes its
// expired items again and lets the queue forget its answers (app.Part);
// as the queue closes, it only remembers.
func (q *Queue) See(e transfer.Event, live bool) {
	q.photosRecord(e)
	if live {
		q.photosSettle(e)
		q.dropAnswers(e)
	}
}

// Closed waits for the files of another process's uploads being read to
// be remembered (app.Part).
func (q *Queue) Closed() { q.recording.Wait() }

// mayRemake reports whether photosAgain may find items of the Photos call
// c, done, to make again (photosSettle and PhotosCalls ask it first): an upload it quotes is old enough for its
// token to have expired, or is not held by this queue (only the journal
// can tell its age). photosAgain makes again only items whose upload is
// that old; asking the queue after c's fifty uploads spares it the
// journal's whole history after every call, which made a batch of n
// pictures cost n²/50 snapshots (issue 29).
func (q *Queue) mayRemake(c transfer.Snapshot) bool {
	for _, u := range quotedUploads(c) {
		up, ok := q.Job(u)
		if !ok || c.Updated.Sub(up.Updated) >= expiredAfter {
			return true
		}
	}
	return false
}

// photosTo is where a Photos delivery's items go.
type photosTo struct{ account, albumID string }

// keepAlbum keeps where delivery id's items go (neither changes once the
// delivery is stored).
func (q *Queue) keepAlbum(id string, to photosTo) {
	q.albumsMu.Lock()
	defer q.albumsMu.Unlock()
	if q.albums == nil {
		q.albums = map[string]photosTo{}
	}
	q.albums[id] = to
}

// albumOf is where delivery id's items go: kept, or read from the store
// once and kept.
func (q *Queue) albumOf(id string) (photosTo, error) {
	q.albumsMu.Lock()
	to, ok := q.albums[id]
	q.albumsMu.Unlock()
	if ok {
		return to, nil
	}
	q.reads.Add(1)
	d, err := q.DeliveryStore().Get(id)
	if err != nil {
		return photosTo{}, err
	}
	to = photosTo{account: d.Account, albumID: d.AlbumID}
	q.keepAlbum(id, to)
	return to, nil
}
