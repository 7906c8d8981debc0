package photos

import (
	"carrier/internal/apptest"
	"context"
	"net/http"
	"os"
	"sync"
	"testing"
)

// heldFirstCall holds the first batchCreate call that reaches the sandbox
// until release is closed; held is closed once it arrived.
func heldFirstCall(env *photosEnv) (held, release chan struct{}) {
	held, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	env.setHook(func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		first := false
		once.Do(func() { first = true; close(held) })
		if first {
			select {
			case <-release:
			case <-r.Context().Done():
				return true
			}
		}
		return false
	})
	return held, release
}

// checkRemembered checks every file became an item remembered with its
// SHA-256, and that no file was read for it after the batch was queued.
func checkRemembered(t *testing.T, q *Queue, albumID string, files []string, readsQueued int64) {
	t.Helper()
	if n := sha256Reads.Load() - readsQueued; n != 0 {
		t.Errorf("%d files read again for their SHA-256 at their calls' ends; their stamps were kept", n)
	}
	mem, err := openPosted(q.posted, "", albumID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		sum, _ := fileSHA256(f)
		if en := mem.byPath[f]; en.Item == "" || en.SHA256 != sum {
			t.Fatalf("%s remembered as %+v", f, en)
		}
	}
}

// A batch's stamps (each file as it was matched) wait for their calls in
// a file beside the delivery, not in memory (issue 29), and each call's
// end takes its own: every file is remembered, none read again, and the
// file goes with the last call.
func TestPhotosStampsWaitOnDisk(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	q := env.open(state, nil)
	files := pictures(t, 2*MaxPhotosBatch+20)
	held, release := heldFirstCall(env)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Roll"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reads := sha256Reads.Load()
	<-held
	q.stampMu.Lock()
	inMemory := len(q.stamps)
	q.stampMu.Unlock()
	if inMemory != 0 {
		t.Errorf("%d stamps held in memory while the batch waits for its first call", inMemory)
	}
	ds, err := q.DeliveryStore().List()
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries: %d, %v", len(ds), err)
	}
	path := q.stampsPath(ds[0].ID)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the batch's stamps file: %v", err)
	}
	close(release)
	apptest.WaitDone(t, q, b.Jobs())
	q.Close()
	checkRemembered(t, q, b.AlbumID, files, reads)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the stamps file is left after the batch's last call: %v", err)
	}
}

// A Carrier killed while its batch waits for its first call leaves the
// stamps on the disk: the next one's calls take them, every file becomes
// one item and is remembered, and none is read again.
func TestPhotosStampsOutliveAKill(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	q := env.open(state, nil)
	files := pictures(t, 2*MaxPhotosBatch+20)
	held, release := heldFirstCall(env)
	defer close(release)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Roll"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reads := sha256Reads.Load()
	<-held
	q.Close() // what the next Carrier finds is as after a kill: the journal and the stamps file
	env.setHook(nil)
	q = env.open(state, nil)
	if _, err := q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	q.Close()
	if items := env.items(b.AlbumID); len(items) != len(files) {
		t.Fatalf("the album holds %d items for %d files", len(items), len(files))
	}
	checkRemembered(t, q, b.AlbumID, files, reads)
}

// PhotosResults reads the calls' answers from the journal a few calls at
// a time (a camera roll's 400 are not held at once): every file still
// finds its item, whichever part its call's answer was read in.
func TestPhotosResultsReadsAnswersInParts(t *testing.T) {
	defer func(n int) { answersAtOnce = n }(answersAtOnce)
	answersAtOnce = 2
	env := newPhotosEnv(t)
	q := env.open(t.TempDir(), nil)
	files := pictures(t, 2*MaxPhotosBatch+20)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Roll"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	q.Close() // the front end has seen every event, and let go of every answer
	for _, c := range b.Creates {
		if s := apptest.JobOf(t, q, c); !s.AnswerInJournal {
			t.Fatalf("call %s keeps its answer in memory: the test reads none from the journal", c)
		}
	}
	checkBatch(t, env, q, b, files)
}

// The last call's block says it is the last, so the call that reads it
// removes the file even when it ends before PhotosUpload has returned (a
// small batch's one call can, a large batch's last may): the file was
// otherwise left beside the delivery for good. A call with no block
// finds nothing.
func TestPhotosStampsFileGoesWithTheLastBlock(t *testing.T) {
	env := newPhotosEnv(t)
	q := env.open(t.TempDir(), nil)
	sw := q.newStampWriter("d-small")
	st := func(n int64) postedStamp { return postedStamp{size: n, modified: n * 10} }
	sw.add([]string{"u1", "u2"}, []postedStamp{st(1), st(2)}, false)
	sw.add([]string{"u3"}, []postedStamp{st(3)}, true)
	// The calls end, in their order, before PhotosUpload returns (its
	// sw.close comes last).
	if got := q.callStamps("d-small", []string{"u9"}); got != nil {
		t.Fatalf("a call with no block found %+v", got)
	}
	if got := q.callStamps("d-small", []string{"u1", "u2"}); got["u1"] != st(1) || got["u2"] != st(2) {
		t.Fatalf("the first call's stamps: %+v", got)
	}
	if got := q.callStamps("d-small", []string{"u3"}); got["u3"] != st(3) {
		t.Fatalf("the last call's stamps: %+v", got)
	}
	if _, err := os.Stat(q.stampsPath("d-small")); !os.IsNotExist(err) {
		t.Fatalf("the stamps file is left after its last block was read: %v", err)
	}
	sw.close(true)
}
