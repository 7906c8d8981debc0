package photos

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"carrier/internal/apptest"
	"carrier/sandbox"
	"carrier/transfer"
)

// postTwice posts files into album with a queue of its own on state, waits
// for every item and closes the queue (which writes the last call's
// memory), and returns the batch.
func postOnce(t *testing.T, env *photosEnv, state string, files []string, album string) *PhotosBatch {
	t.Helper()
	q := env.open(state, nil)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: album}, nil)
	if err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.PostedError(); err != nil {
		t.Fatal(err)
	}
	return b
}

// albumFiles are the file names of the album's items, sorted.
func albumFiles(env *photosEnv, album string) []string {
	var names []string
	for _, it := range env.items(album) {
		names = append(names, it.Filename)
	}
	slices.Sort(names)
	return names
}

// A folder posted again sends only the file added since: the others are
// matched by path, size and time, and no upload starts for them.
func TestPhotosPostedAgainSendsOnlyNew(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 3)
	b := postOnce(t, env, state, files, "Trip")
	if b.Already != 0 || len(b.Uploads) != 3 {
		t.Fatalf("the first post: %d already, %d uploads; want 0 and 3", b.Already, len(b.Uploads))
	}
	starts := env.starts.Load()
	more := append(slices.Clone(files), pictures(t, 1)...)
	b = postOnce(t, env, state, more, "Trip")
	if b.Already != 3 || len(b.Uploads) != 1 {
		t.Fatalf("the second post: %d already, %d uploads; want 3 and 1", b.Already, len(b.Uploads))
	}
	if n := env.starts.Load() - starts; n != 1 {
		t.Fatalf("the second post started %d uploads; want 1, the new file's", n)
	}
	if got := albumFiles(env, b.AlbumID); len(got) != 4 {
		t.Fatalf("the album holds %q; want the 4 files", got)
	}
	// A third post has nothing new: nothing is queued, and no album is
	// made.
	starts = env.starts.Load()
	q := env.open(state, nil)
	b, err := q.PhotosUpload(context.Background(), env.photos(), more, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Already != 4 || len(b.Jobs()) != 0 || env.starts.Load() != starts {
		t.Fatalf("the third post: %d already, jobs %q, %d uploads started; want 4, none, none", b.Already, b.Jobs(), env.starts.Load()-starts)
	}
	// A remembered file of the same path, size and time is not read: new
	// bytes behind the same size and time go unnoticed (as rsync's quick
	// check), which shows no read.
	fi, err := os.Stat(files[2])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[2], append([]byte("\xff\xd8\xff\xe0"), make([]byte, fi.Size()-4)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(files[2], fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	b, err = q.PhotosUpload(context.Background(), env.photos(), more, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Already != 4 || len(b.Jobs()) != 0 {
		t.Fatalf("a file of the same path, size and time was read: %d already, jobs %q; want 4, none", b.Already, b.Jobs())
	}
	// A changed file (its bytes and time) is sent again.
	if err := os.WriteFile(files[1], append([]byte("\xff\xd8\xff\xe0"), make([]byte, 5000)...), 0o600); err != nil {
		t.Fatal(err)
	}
	q.Close()
	b = postOnce(t, env, state, more, "Trip")
	if b.Already != 3 || len(b.Uploads) != 1 {
		t.Fatalf("after a file changed: %d already, %d uploads; want 3 and 1", b.Already, len(b.Uploads))
	}
}

// A file renamed or moved, its bytes the same, is not sent again: it is
// known by its SHA-256, and its new path is remembered.
func TestPhotosPostedRenamedNotSentAgain(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 3)
	postOnce(t, env, state, files, "Trip")
	moved := filepath.Join(t.TempDir(), "renamed.jpg")
	if err := os.Rename(files[0], moved); err != nil {
		t.Fatal(err)
	}
	starts := env.starts.Load()
	now := []string{moved, files[1], files[2]}
	b := postOnce(t, env, state, now, "Trip")
	if b.Already != 3 || len(b.Uploads) != 0 || env.starts.Load() != starts {
		t.Fatalf("after a rename: %d already, %d uploads, %d started; want 3, 0, 0", b.Already, len(b.Uploads), env.starts.Load()-starts)
	}
	// The new path is remembered: it matches by path, size and time now.
	q := env.open(state, nil)
	defer q.Close()
	mem, err := openPosted(q.posted, "", b.AlbumID)
	if err != nil {
		t.Fatal(err)
	}
	if en, ok := mem.byPath[moved]; !ok || en.Modified.IsZero() {
		t.Fatalf("the renamed file's path is not remembered with its time: %+v", en)
	}
}

// The album is the truth: an item the person took out of the album is
// forgotten, and its file sent again by the next post.
func TestPhotosPostedRemovedFromAlbumSentAgain(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 3)
	b := postOnce(t, env, state, files, "Trip")
	items := env.items(b.AlbumID)
	if len(items) != 3 {
		t.Fatalf("the album holds %d items, want 3", len(items))
	}
	var gone string
	for _, it := range items {
		if it.Filename == filepath.Base(files[1]) {
			gone = it.ID
		}
	}
	var out struct{}
	env.api("POST", "/v1/albums/"+b.AlbumID+":batchRemoveMediaItems", map[string]any{"mediaItemIds": []string{gone}}, &out)
	if n := len(env.items(b.AlbumID)); n != 2 {
		t.Fatalf("the album holds %d items after one was removed, want 2", n)
	}
	starts := env.starts.Load()
	b = postOnce(t, env, state, files, "Trip")
	if b.Already != 2 || len(b.Uploads) != 1 || env.starts.Load()-starts != 1 {
		t.Fatalf("after an item left the album: %d already, %d uploads, %d started; want 2, 1, 1", b.Already, len(b.Uploads), env.starts.Load()-starts)
	}
	if got := albumFiles(env, b.AlbumID); len(got) != 3 || !slices.Contains(got, filepath.Base(files[1])) {
		t.Fatalf("the album holds %q; want the 3 files again", got)
	}
}

// A batch into no album is remembered too, and checked against the app's
// whole library: a second post sends nothing.
func TestPhotosPostedWithoutAlbum(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 2)
	postOnce(t, env, state, files, "")
	starts := env.starts.Load()
	b := postOnce(t, env, state, files, "")
	if b.Already != 2 || len(b.Uploads) != 0 || env.starts.Load() != starts {
		t.Fatalf("the second post into no album: %d already, %d uploads, %d started; want 2, 0, 0", b.Already, len(b.Uploads), env.starts.Load()-starts)
	}
}

// A batch whose call is answered in another process than the one that
// queued it (the window closed, `carrier resume` finished it) is
// remembered all the same: the files are read for their SHA-256 then.
func TestPhotosPostedWhenAnotherProcessFinishes(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 3)
	held := make(chan struct{})
	var once sync.Once
	env.setHook(func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		once.Do(func() { close(held) })
		<-r.Context().Done() // never answered: the queue closes first
		return true
	})
	q := env.open(state, nil)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-held
	q.Close()
	env.setHook(nil)
	q = env.open(state, nil)
	if _, err := q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	q.Close()
	starts := env.starts.Load()
	b = postOnce(t, env, state, files, "Trip")
	if b.Already != 3 || len(b.Uploads) != 0 || env.starts.Load() != starts {
		t.Fatalf("after another process finished the batch: %d already, %d uploads, %d started; want 3, 0, 0", b.Already, len(b.Uploads), env.starts.Load()-starts)
	}
	// Matched by path, size and time: the time was remembered.
	q = env.open(state, nil)
	defer q.Close()
	mem, err := openPosted(q.posted, "", b.AlbumID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if en := mem.byPath[f]; en.Modified.IsZero() || en.Item == "" {
			t.Fatalf("%s remembered as %+v", filepath.Base(f), en)
		}
	}
}

// With the day's quota used up the album cannot be listed: the memory is
// trusted, and the new file is queued to wait for the reset as before.
func TestPhotosPostedQuotaUsedUpTrustsTheMemory(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 2)
	postOnce(t, env, state, files, "")
	env.sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1}) // used up already
	q := env.open(state, nil)
	defer q.Close()
	b, err := q.PhotosUpload(context.Background(), env.photos(), append(slices.Clone(files), pictures(t, 1)...), PhotosOptions{}, nil)
	if err != nil {
		t.Fatalf("a post with the quota used up: %v", err)
	}
	if b.Already != 2 || len(b.Uploads) != 1 {
		t.Fatalf("with the quota used up: %d already, %d uploads; want 2 and 1", b.Already, len(b.Uploads))
	}
}

// The end of each of a batch's calls remembers its items under the
// batch's album without reading the batch's delivery again: a camera
// roll's delivery lists 20,400 jobs, and its 400 calls would decode it
// 400 times. The memory still holds every file.
func TestPhotosRecordDoesNotReadTheDeliveryPerCall(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 2*MaxPhotosBatch+3)
	q := env.open(state, nil)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Creates) != 3 {
		t.Fatalf("%d calls; want 3", len(b.Creates))
	}
	apptest.WaitDone(t, q, b.Jobs())
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if reads := q.reads.Load(); reads != 0 {
		t.Fatalf("the calls' ends read the batch's delivery %d times; want none (this process began it)", reads)
	}
	mem, err := openPosted(q.posted, "", b.AlbumID)
	if err != nil {
		t.Fatal(err)
	}
	if len(mem.byPath) != len(files) {
		t.Fatalf("the memory holds %d files; want %d", len(mem.byPath), len(files))
	}
}

// A start looks at a done call's items to make again only when one of
// its uploads ended a day before it: a camera roll posted before is 400
// calls over 20,400 records, and each look reads them all.
func TestPhotosSweepLooksOnlyAtCallsWithExpiredUploads(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	b := postOnce(t, env, state, pictures(t, 2*MaxPhotosBatch+3), "Trip")
	q := env.open(state, nil) // its start sweeps the journal
	defer q.Close()
	if n := q.photosLooks.Load(); n != 0 {
		t.Fatalf("the start looked at %d of the %d calls done, none of whose uploads expired; want none", n, len(b.Creates))
	}
	// Which calls are looked at: those naming an upload a day older.
	c := transfer.Snapshot{Quote: []string{"u1", "u2", "a1.id"}, Updated: time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		ended map[string]time.Time
		want  bool
	}{
		{map[string]time.Time{"u1": c.Updated.Add(-time.Hour), "u2": c.Updated.Add(-2 * time.Hour)}, false},
		{map[string]time.Time{"u1": c.Updated.Add(-time.Hour), "u2": c.Updated.Add(-expiredAfter)}, true},
		{map[string]time.Time{"u1": c.Updated.Add(-time.Hour)}, false}, // u2 forgotten: nothing to upload again
		{map[string]time.Time{"a1": c.Updated.Add(-48 * time.Hour)}, false},
	} {
		if got := expiredUploads(c, tc.ended); got != tc.want {
			t.Errorf("expiredUploads with %v: %v; want %v", tc.ended, got, tc.want)
		}
	}
}

// Once a call is done and its items remembered, the queue no longer holds
// its answer, nor its uploads' tokens (a camera roll's answers are about
// 0.9 KB a picture): the journal has them, and the batch's results,
// read from there, still name every item.
func TestPhotosCallsAnswersLeaveMemory(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, MaxPhotosBatch+2)
	q := env.open(t.TempDir(), nil)
	defer q.Close()
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	held := func() (n int) {
		for _, id := range b.Jobs() {
			if s, ok := q.Job(id); ok && s.Response != nil && s.Response.Body != nil {
				n++
			}
		}
		return n
	}
	// The pump lets go of a call's answers after its event; Wait may
	// return before that.
	for deadline := time.Now().Add(20 * time.Second); held() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := held(); n != 0 {
		t.Fatalf("the queue holds %d answers of the batch's %d jobs; want none", n, len(b.Jobs()))
	}
	for _, c := range b.Creates {
		if s, _ := q.Job(c); !s.AnswerInJournal {
			t.Fatalf("call %s: its snapshot does not say its answer is in the journal", c)
		}
	}
	checkBatch(t, env, q, b, files)
}
