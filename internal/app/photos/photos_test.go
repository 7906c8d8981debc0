package photos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"carrier/internal/app"
	"carrier/internal/apptest"
	"carrier/sandbox"
	"carrier/transfer"
)

// skewClock is the system's clock with the wall moved ahead on demand: a
// sleep of that long, as the queue and the sandbox both see it.
type skewClock struct {
	transfer.Clock
	skew atomic.Int64
}

func (c *skewClock) Now() time.Time { return c.Clock.Now().Add(time.Duration(c.skew.Load())) }

// setPacific moves the wall to h:m Pacific on the day it shows there,
// back or ahead, before anything has used it. A test of a day's quota
// starts in the evening, as a real day's quota runs out, so that an
// upload token made on one day is under a day old at the next day's
// start; the system's wall put it wherever CI ran (once, five minutes
// past midnight Pacific: the first day's tokens had expired by the
// second day and the batch took a day more than its plan).
func (c *skewClock) setPacific(h, m int) {
	now := c.Now()
	reset := PhotosDailyReset(now)
	at := time.Date(reset.Year(), reset.Month(), reset.Day()-1, h, m, 0, 0, reset.Location())
	c.skew.Add(int64(at.Sub(now)))
}

// photosEnv is a sandbox serving Photos, reached through a proxy whose
// hook sees each batchCreate call first (to hold it, lose its answer or
// count it).
type photosEnv struct {
	t       *testing.T
	sb      *sandbox.Sandbox
	root    string // the proxy's
	token   string
	clock   *skewClock
	creates atomic.Int32 // batchCreate calls that reached the sandbox
	starts  atomic.Int32 // upload sessions asked for
	// abandoned counts the upload starts and batchCreate calls whose
	// client went before their answer: the sandbox may have counted them,
	// and the client sends them again.
	abandoned atomic.Int32
	mu        sync.Mutex
	hook      func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool
	// albumHook sees each albums.create first, as hook sees batchCreate.
	albumHook  func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool
	albumsMade atomic.Int32 // albums.create calls that reached the sandbox
	client     *http.Client // the test's own reads
}

func newPhotosEnv(t *testing.T) *photosEnv {
	t.Helper()
	env := &photosEnv{t: t, token: "photos-test-token", clock: &skewClock{Clock: transfer.SystemClock()}}
	env.clock.setPacific(20, 0)
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: env.token, Now: env.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	env.sb = sb
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { sb.Serve(ctx, ln); close(served) }()
	target, _ := url.Parse("http://" + ln.Addr().String())
	// The proxy and the test's own reads have transports of their own:
	// every httptest.Server.Close in a parallel test closes the idle
	// connections of http.DefaultTransport, and net/http can hand one
	// back to its pool a moment before the body is read, so a shared
	// pool sometimes cut a listing short (200, then "unexpected end of
	// JSON input").
	tr := &http.Transport{}
	env.client = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() { tr.CloseIdleConnections(); env.client.CloseIdleConnections() })
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: tr}
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ":batchCreate") {
			body, _ := io.ReadAll(r.Body)
			forward := func(w http.ResponseWriter) {
				r2 := r.Clone(context.WithoutCancel(r.Context()))
				r2.Body = io.NopCloser(bytes.NewReader(body))
				env.creates.Add(1)
				proxy.ServeHTTP(w, r2)
				if r.Context().Err() != nil {
					env.abandoned.Add(1) // the client gave up on it, and sends it again
				}
			}
			env.mu.Lock()
			hook := env.hook
			env.mu.Unlock()
			if hook == nil || !hook(w, r, forward) {
				forward(w)
			}
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/v1/albums" {
			body, _ := io.ReadAll(r.Body)
			forward := func(w http.ResponseWriter) {
				r2 := r.Clone(context.WithoutCancel(r.Context()))
				r2.Body = io.NopCloser(bytes.NewReader(body))
				env.albumsMade.Add(1)
				proxy.ServeHTTP(w, r2)
			}
			env.mu.Lock()
			hook := env.albumHook
			env.mu.Unlock()
			if hook == nil || !hook(w, r, forward) {
				forward(w)
			}
			return
		}
		if r.Header.Get("X-Goog-Upload-Command") == "start" {
			env.starts.Add(1)
			proxy.ServeHTTP(w, r)
			if r.Context().Err() != nil {
				env.abandoned.Add(1) // the client gave up on it (a stall under load), and starts again
			}
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(pln)
	env.root = "http://" + pln.Addr().String()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-served
		sb.Close()
	})
	return env
}

func (env *photosEnv) setHook(h func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool) {
	env.mu.Lock()
	env.hook = h
	env.mu.Unlock()
}

func (env *photosEnv) photos() Photos {
	return Photos{Root: env.root, Drive: app.Drive{Root: env.root, Auth: transfer.StaticToken(env.token)}}
}

func (env *photosEnv) open(state string, events chan transfer.Event) *Queue {
	env.t.Helper()
	q, err := openQueue(transfer.Config{StateDir: state, Auth: transfer.StaticToken(env.token), Events: events, RetryBase: 10 * time.Millisecond, Clock: env.clock})
	if err != nil {
		env.t.Fatal(err)
	}
	env.t.Cleanup(func() { q.Close() })
	return q
}

// get asks the sandbox's Photos API (as the app, reading what it made).
func (env *photosEnv) api(method, path string, body any, v any) {
	env.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, env.root+path, rd)
	req.Header.Set("Authorization", "Bearer "+env.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := env.client.Do(req)
	if err != nil {
		env.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		env.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	if resp.StatusCode != 200 {
		env.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		env.t.Fatal(err)
	}
}

type listedItem struct {
	ID       string `json:"id"`
	Filename string `json:"filename"`
}

// items lists the media items the app made, or those of an album, in
// the order Photos keeps them.
func (env *photosEnv) items(album string) []listedItem {
	var all []listedItem
	page := ""
	for {
		var out struct {
			MediaItems    []listedItem `json:"mediaItems"`
			NextPageToken string       `json:"nextPageToken"`
		}
		if album != "" {
			env.api("POST", "/v1/mediaItems:search", map[string]any{"albumId": album, "pageSize": 100, "pageToken": page}, &out)
		} else {
			env.api("GET", "/v1/mediaItems?pageSize=100&pageToken="+url.QueryEscape(page), nil, &out)
		}
		all = append(all, out.MediaItems...)
		if out.NextPageToken == "" {
			return all
		}
		page = out.NextPageToken
	}
}

// pictures writes n small JPEG files, each of different bytes.
func pictures(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for i := range n {
		b := make([]byte, 3000)
		rand.Read(b)
		copy(b, "\xff\xd8\xff\xe0")
		p := filepath.Join(dir, fmt.Sprintf("IMG_%04d.jpg", i+1))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// albumID is the album the batch went into.
func albumID(t *testing.T, q *Queue, b *PhotosBatch) string {
	t.Helper()
	if b.AlbumID != "" {
		return b.AlbumID
	}
	s := apptest.JobOf(t, q, b.Album)
	if s.Response == nil {
		t.Fatalf("the album's job has no answer: %s", s.State)
	}
	var a struct{ ID string }
	json.Unmarshal(s.Response.Body, &a)
	return a.ID
}

// checkBatch checks the album holds the files once each, in their order,
// and that Photos holds no more items than files.
func checkBatch(t *testing.T, env *photosEnv, q *Queue, b *PhotosBatch, files []string) {
	t.Helper()
	items := env.items(albumID(t, q, b))
	if len(items) != len(files) {
		t.Fatalf("the album holds %d items, want %d", len(items), len(files))
	}
	for i, it := range items {
		if it.Filename != filepath.Base(files[i]) {
			t.Fatalf("item %d of the album is %s, want %s", i, it.Filename, filepath.Base(files[i]))
		}
	}
	if all := env.items(""); len(all) != len(files) {
		t.Fatalf("Photos holds %d items for %d files", len(all), len(files))
	}
	res, err := q.PhotosResults(b)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range res {
		if r.ID == "" || r.ProductURL == "" || seen[r.ID] || r.Path != files[i] {
			t.Fatalf("file %d: %+v", i, r)
		}
		seen[r.ID] = true
	}
}

// Sixty files are two batchCreate calls, in the files' order, into one
// album Carrier made: sixty items, each once.
func TestPhotosBatchOfSixty(t *testing.T) {
	env := newPhotosEnv(t)
	q := env.open(t.TempDir(), nil)
	files := pictures(t, 60)
	var sizes []int
	env.setHook(func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		var body struct{ NewMediaItems []json.RawMessage }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		env.mu.Lock()
		sizes = append(sizes, len(body.NewMediaItems))
		env.mu.Unlock()
		return false
	})
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip", Description: "Summer"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Creates) != 2 || len(b.Uploads) != 60 || b.AlbumID == "" || !b.AlbumMade {
		t.Fatalf("the graph: %d calls, %d uploads, album %q", len(b.Creates), len(b.Uploads), b.AlbumID)
	}
	apptest.WaitDone(t, q, b.Jobs())
	if n := env.creates.Load(); n != 2 {
		t.Fatalf("%d batchCreate calls, want 2", n)
	}
	checkBatch(t, env, q, b, files)
	h, _ := q.History()
	g, err := app.GraphOf(h, b.Uploads[0])
	if err != nil || g.Msg.ID != b.Creates[1] || len(g.Parts) != 60+1 {
		t.Fatalf("the batch's graph from its first file: top %s (want the last call %s), %d parts, %v", g.Msg.ID, b.Creates[1], len(g.Parts), err)
	}
	var albums struct{ Albums []struct{ Title string } }
	env.api("GET", "/v1/albums", nil, &albums)
	if len(albums.Albums) != 1 || albums.Albums[0].Title != "Trip" {
		t.Fatalf("albums: %+v", albums.Albums)
	}
}

// A queue closed between the uploads and the first call, and again
// between the two calls, then opened again on the same folders, creates
// every item once; so does a call whose answer was lost and that was
// sent again.
func TestPhotosBatchResumesBetweenSteps(t *testing.T) {
	env := newPhotosEnv(t)
	state := t.TempDir()
	files := pictures(t, 51)
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	hold := func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		select {
		case held <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	env.setHook(hold)
	q := env.open(state, nil)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-held // every upload is done: the first call needs them all
	q.Close()
	if env.creates.Load() != 0 {
		t.Fatal("a call reached the sandbox while held")
	}

	// The second start lets the first call through, with its answer lost
	// once, and holds the second.
	var lost atomic.Bool
	env.setHook(func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		if env.creates.Load() == 0 {
			rec := &discard{header: http.Header{}}
			forward(rec)
			lost.Store(true)
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
			return true
		}
		if env.creates.Load() >= 2 { // the first, twice: hold the second
			return hold(w, r, forward)
		}
		return false
	})
	q = env.open(state, nil)
	if _, err := q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, []string{b.Creates[0]})
	<-held
	q.Close()
	if !lost.Load() {
		t.Fatal("the first call's answer was not lost")
	}

	env.setHook(nil)
	q = env.open(state, nil)
	if _, err := q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	if n := env.creates.Load(); n != 3 {
		t.Fatalf("%d calls reached the sandbox, want 3 (the first twice, its answer lost once)", n)
	}
	checkBatch(t, env, q, b, files)
}

type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// Tokens a day old (a sleep between the uploads and the call) are
// refused per item; those files are uploaded again and created in a
// further call, into the same album, each once.
func TestPhotosExpiredTokensAreUploadedAgain(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 3)
	first := make(chan struct{})
	var once sync.Once
	env.setHook(func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		once.Do(func() {
			env.clock.skew.Add(int64(25 * time.Hour)) // the laptop slept a day
			close(first)
		})
		return false
	})
	events := make(chan transfer.Event, 1024)
	q := env.open(t.TempDir(), events)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip", Description: "kept"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	<-first
	var again string
	deadline := time.After(30 * time.Second)
	for again == "" {
		select {
		case e := <-events:
			if e.Kind == transfer.EventQueued || e.Kind == transfer.EventWaiting {
				if isBatchCreate(e.Snap) && e.Job != b.Creates[0] {
					again = e.Job
				}
			}
		case <-deadline:
			t.Fatal("no call was queued for the expired items")
		}
	}
	s := apptest.JobOf(t, q, again)
	apptest.WaitDone(t, q, append(quotedUploads(s), again))
	checkBatch(t, env, q, b, files)
	if n := env.creates.Load(); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
	var item struct{ Description string }
	res, _ := q.PhotosResults(b)
	env.api("GET", "/v1/mediaItems/"+res[0].ID, nil, &item)
	if item.Description != "kept" {
		t.Fatalf("the item made again lost its description: %q", item.Description)
	}
}

// Storage too small for the files is refused before any job is queued.
func TestPhotosStorageFullRefusedBeforeAnyByte(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 4)
	env.sb.SetDriveQuota(sandbox.DriveQuota{Limit: 10000, OtherUsage: 0}) // 4 × 3000 bytes do not fit
	state := t.TempDir()
	q := env.open(state, nil)
	_, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{}, nil)
	if !errors.Is(err, ErrStorageFull) || !strings.Contains(err.Error(), "need 11.7 KiB") {
		t.Fatalf("got %v", err)
	}
	if h, _ := q.History(); len(h) != 0 {
		t.Fatalf("%d jobs were queued", len(h))
	}
}

// The day's quota used up stops the batch at once with its cause, not
// retried all night; PhotosQuotaWords says when it resets.
func TestPhotosDailyQuotaStops(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 2)
	q := env.open(t.TempDir(), nil)
	env.sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: 1}) // one upload's start
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stopped := -1
	for i, id := range b.Uploads {
		s, err := q.Wait(ctx, id)
		switch {
		case err != nil:
			t.Fatal(err)
		case s.State == transfer.StateFailed && errors.Is(s.Cause, transfer.ErrDailyQuota):
			stopped = i
		case s.State != transfer.StateDone:
			t.Fatalf("upload %s: %s %s", id, s.State, s.Error)
		}
	}
	if stopped < 0 {
		t.Fatal("no upload was stopped by the day's quota")
	}
	if n := env.starts.Load(); n != 2 {
		t.Fatalf("%d upload starts for 2 files; the refused one was sent again", n)
	}
	res, _ := q.PhotosResults(b)
	if r := res[stopped]; !errors.Is(r.Cause, transfer.ErrDailyQuota) || r.Step != "upload" || !strings.Contains(r.Error, "per day") {
		t.Fatalf("the file's result: %+v", r)
	}
	now := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC) // 23:00 the day before, Pacific
	if w := PhotosQuotaWords(now); !strings.Contains(w, "in 1h0m0s") {
		t.Fatalf("the words: %s", w)
	}
}

// Photos' per-minute upload quota answers 400 (not 429): the uploads are
// paced until the minute passes, none failed, every item made once.
func TestPhotosPerMinuteQuotaIsPaced(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 3)
	env.sb.SetPhotosQuota(sandbox.PhotosQuota{UploadsPerMinute: 1})
	events := make(chan transfer.Event, 1024)
	q := env.open(t.TempDir(), events)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	paced, done := 0, 0
	deadline := time.After(60 * time.Second)
	for done < len(b.Uploads) {
		select {
		case e := <-events:
			switch e.Kind {
			case transfer.EventRetrying:
				if !strings.Contains(e.Reason, "slow down") {
					t.Fatalf("retried for %s", e.Reason)
				}
				paced++
				env.clock.skew.Add(int64(61 * time.Second)) // the minute passes
			case transfer.EventFailed:
				t.Fatalf("%s failed: %s", e.Snap.Label, e.Message)
			case transfer.EventDone:
				if !isBatchCreate(e.Snap) && e.Snap.Type != transfer.Call {
					done++
				}
			}
		case <-deadline:
			t.Fatalf("%d uploads done, %d paced", done, paced)
		}
	}
	if paced == 0 {
		t.Fatal("no upload was refused by the quota: the test did not test it")
	}
	apptest.WaitDone(t, q, b.Jobs())
	if n := len(env.items("")); n != 3 {
		t.Fatalf("%d items for 3 files", n)
	}
}

// An albums.create whose answer is lost after the album was made is not
// sent again blindly: Carrier lists its albums, finds the one it made and
// puts the items there; Photos holds one album of the title.
func TestPhotosAlbumLostAnswerMakesOneAlbum(t *testing.T) {
	env := newPhotosEnv(t)
	q := env.open(t.TempDir(), nil)
	files := pictures(t, 2)
	env.mu.Lock()
	env.albumHook = func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		if env.albumsMade.Load() > 0 {
			return false
		}
		forward(&discard{header: http.Header{}})
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
		return true
	}
	env.mu.Unlock()
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if env.albumsMade.Load() != 1 || b.AlbumID == "" {
		t.Fatalf("%d albums.create calls, album %q", env.albumsMade.Load(), b.AlbumID)
	}
	apptest.WaitDone(t, q, b.Jobs())
	checkBatch(t, env, q, b, files)
	all, err := env.photos().Albums(context.Background())
	if err != nil || len(all) != 1 || all[0].ID != b.AlbumID || all[0].Items != 2 {
		t.Fatalf("albums %+v, %v; want one, %s, of 2 items", all, err, b.AlbumID)
	}
}

// An album Carrier made before, even one listed on a later page, is added
// to rather than made again, by a batch of the same title; a batch of
// another title makes its own.
func TestPhotosAlbumOfTheTitleIsReused(t *testing.T) {
	env := newPhotosEnv(t)
	q := env.open(t.TempDir(), nil)
	var trip PhotosAlbum
	env.api("POST", "/v1/albums", map[string]any{"album": map[string]string{"title": "Trip"}}, &trip)
	for i := range 55 { // newer: they come first, and Trip on the second page
		var a PhotosAlbum
		env.api("POST", "/v1/albums", map[string]any{"album": map[string]string{"title": fmt.Sprintf("Other %d", i)}}, &a)
	}
	made := env.albumsMade.Load()
	files := pictures(t, 2)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files[:1], PhotosOptions{Album: "Trip"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.AlbumID != trip.ID || b.AlbumMade || env.albumsMade.Load() != made {
		t.Fatalf("album %q (made %v), want %q; %d creates", b.AlbumID, b.AlbumMade, trip.ID, env.albumsMade.Load()-made)
	}
	apptest.WaitDone(t, q, b.Jobs())
	b2, err := q.PhotosUpload(context.Background(), env.photos(), files[1:], PhotosOptions{Album: "Trip"}, nil)
	if err != nil || b2.AlbumID != trip.ID {
		t.Fatalf("the second batch: %+v %v", b2, err)
	}
	apptest.WaitDone(t, q, b2.Jobs())
	if items := env.items(trip.ID); len(items) != 2 {
		t.Fatalf("Trip holds %d items, want 2", len(items))
	}
	b3, err := q.PhotosUpload(context.Background(), env.photos(), files[:1], PhotosOptions{Album: "trip"}, nil)
	if err != nil || b3.AlbumID == trip.ID || !b3.AlbumMade {
		t.Fatalf("another title reused Trip: %+v %v", b3, err)
	}
	all, err := env.photos().Albums(context.Background())
	if err != nil || len(all) != 57 {
		t.Fatalf("%d albums listed, want 57: %v", len(all), err)
	}
}

// diedBeforeRemake posts files as a batch whose tokens all expire before
// its call (a day asleep), in a process that dies after the call found
// them expired and before it queued the call that makes them again (its
// goroutine waits on photosMu for ever); meanwhile, if given, then runs
// before the end. The journal is left in state.
func diedBeforeRemake(t *testing.T, env *photosEnv, state string, files []string, opts PhotosOptions, settings func(*transfer.Spec), meanwhile func(*Queue, *PhotosBatch)) *PhotosBatch {
	t.Helper()
	var once sync.Once
	env.setHook(func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) bool {
		once.Do(func() { env.clock.skew.Add(int64(25 * time.Hour)) })
		return false
	})
	defer env.setHook(nil)
	q := env.open(state, nil)
	q.photosMu.Lock()
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, opts, settings)
	if err != nil {
		t.Fatal(err)
	}
	apptest.WaitDone(t, q, b.Jobs())
	if meanwhile != nil {
		meanwhile(q, b)
	}
	q.Close()
	first := apptest.JobOf(t, q, b.Creates[0])
	if _, err := os.Stat(first.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the first call's spool file is still there (%v): the restart would not be the one tested", err)
	}
	for _, s := range func() []transfer.Snapshot { h, _ := q.History(); return h }() {
		if isBatchCreate(s) && s.ID != first.ID {
			t.Fatal("the remake was queued before the restart")
		}
	}
	return b
}

// remade opens the journal again and waits for the call that makes the
// batch's expired items again, and its uploads.
func remade(t *testing.T, env *photosEnv, state string, b *PhotosBatch) (*Queue, transfer.Snapshot) {
	t.Helper()
	q := env.open(state, nil)
	if _, err := q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	calls, err := q.PhotosCalls(b)
	if err != nil || len(calls) != 2 {
		t.Fatalf("the batch's calls after the restart: %v %v; want the first and its remake", calls, err)
	}
	remake := apptest.JobOf(t, q, calls[1])
	apptest.WaitDone(t, q, append(quotedUploads(remake), remake.ID))
	return q, apptest.JobOf(t, q, remake.ID)
}

// A process that dies after a call found expired tokens but before it
// queued the call that makes those items again leaves only the journal:
// the next start makes them again into the same album, each with its own
// description, although the first call's spool file is gone.
func TestPhotosRemakeAfterARestartKeepsAlbumAndDescriptions(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 3)
	state := t.TempDir()
	describe := map[string]string{}
	for i, f := range files {
		describe[f] = fmt.Sprintf("picture %d of the trip", i+1)
	}
	b := diedBeforeRemake(t, env, state, files, PhotosOptions{Album: "Trip", Description: "for all", Describe: describe}, nil, nil)
	q2, _ := remade(t, env, state, b)
	checkBatch(t, env, q2, b, files)
	// What makes the items again belongs to the batch's delivery.
	h, _ := q2.History()
	for _, s := range h {
		if s.Owner != h[0].Owner {
			t.Errorf("%s (%s) belongs to %s, the batch to %s", s.ID, s.Label, s.Owner, h[0].Owner)
		}
	}
	res, err := q2.PhotosResults(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		var item struct{ Description string }
		env.api("GET", "/v1/mediaItems/"+r.ID, nil, &item)
		if want := describe[files[i]]; item.Description != want {
			t.Errorf("%s made again with the description %q, want %q", filepath.Base(files[i]), item.Description, want)
		}
	}
}

// An upload queued to make an expired item again by a process that died
// before it queued the call is used by the next start's call, not
// uploaded a third time; the uploads made again go as the account the
// batch went with, not as the one the restarted process is bound to.
func TestPhotosRemakeUsesLeftoverUploadsAndTheBatchAccount(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 2)
	state := t.TempDir()
	const zoe = "zoe@example.com"
	var leftover string
	b := diedBeforeRemake(t, env, state, files, PhotosOptions{Album: "Trip"}, func(s *transfer.Spec) { s.Account = zoe }, func(q *Queue, b *PhotosBatch) {
		var err error
		if leftover, err = q.addPhotosUpload(env.root, files[0], "image/jpeg", nil, "", func(s *transfer.Spec) { s.Account = zoe }); err != nil {
			t.Fatal(err)
		}
	})
	q2, remake := remade(t, env, state, b)
	checkBatch(t, env, q2, b, files)
	ups := quotedUploads(remake)
	if len(ups) != 2 || ups[0] != leftover {
		t.Fatalf("the remake names the uploads %v; want the leftover %s first", ups, leftover)
	}
	h, _ := q2.History()
	n := 0
	for _, s := range h {
		if s.Path == files[0] {
			n++
		}
		if s.Account != zoe {
			t.Errorf("%s (%s) goes as %q, want %s", s.ID, s.Label, s.Account, zoe)
		}
	}
	if n != 2 {
		t.Fatalf("%s was queued for upload %d times, want 2 (the first and the leftover)", filepath.Base(files[0]), n)
	}
}

// A batch several times larger than a day's Photos quota: each day's
// requests become items (a call goes as soon as its uploads are done,
// before more uploads start), so at the end of a day at most one call's
// uploads wait for their items, and those go in the next day's first call
// with their tokens still good. No file is uploaded twice, no item made
// again, and the batch ends.
func TestPhotosDailyQuotaIsSpentOnWholeItems(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 250)
	const perDay = 100 // an upload is a request, a call another
	env.sb.SetPhotosQuota(sandbox.PhotosQuota{RequestsPerDay: perDay})
	q := env.open(t.TempDir(), nil)
	b, err := q.PhotosUpload(context.Background(), env.photos(), files, PhotosOptions{Album: "Camera roll"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	finished := false
	for day := 1; !finished; day++ {
		if day > 6 {
			t.Fatalf("the batch did not end in %d days", day-1)
		}
		// The day is over once every job has ended, or waits for one the
		// quota stopped.
		finished = true
		for _, id := range append(append([]string(nil), b.Uploads...), b.Creates...) {
			s, err := q.Wait(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			finished = finished && s.State == transfer.StateDone
		}
		res, err := q.PhotosResults(b)
		if err != nil {
			t.Fatal(err)
		}
		uploaded, made := 0, 0
		for _, r := range res {
			if r.ID != "" {
				made++
			}
		}
		h, err := q.History()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range h {
			if s.Protocol == transfer.ProtocolGoogUpload && s.State == transfer.StateDone {
				uploaded++
			}
		}
		t.Logf("day %d: %d files uploaded, %d items made", day, uploaded, made)
		if uploaded-made > MaxPhotosBatch {
			t.Fatalf("day %d ended with %d files uploaded and %d items made: the quota went on uploads whose items wait", day, uploaded, made)
		}
		if made == 0 {
			t.Fatalf("day %d made no item", day)
		}
		if finished {
			break
		}
		// Midnight Pacific: what the quota stopped goes on, as the
		// QuotaWait does at the reset.
		now := env.clock.Now()
		env.clock.skew.Add(int64(PhotosDailyReset(now).Sub(now) + time.Minute))
		for _, s := range h {
			if _, ok := QuotaStopped(s); ok {
				if err := q.Retry(ctx, s.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	env.sb.SetPhotosQuota(sandbox.PhotosQuota{}) // the test's own reads
	checkBatch(t, env, q, b, files)
	h, _ := q.History()
	uploads, calls := 0, 0
	for _, s := range h {
		switch {
		case isBatchCreate(s):
			calls++
		case s.Protocol == transfer.ProtocolGoogUpload:
			uploads++
		}
	}
	if uploads != len(files) || calls != len(b.Creates) {
		t.Fatalf("%d uploads and %d calls for %d files in %d calls: something was made again", uploads, calls, len(files), len(b.Creates))
	}
}

// A kill after the batch's jobs were queued and before its delivery was
// stored with them leaves the delivery as it was stored first, with no
// member: it already holds the album and the descriptions, and the next
// start makes the expired items again with them.
func TestPhotosRemakeAfterAKillBeforeTheDeliveryListedItsJobs(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 2)
	state := t.TempDir()
	describe := map[string]string{files[1]: "the second, its own"}
	b := diedBeforeRemake(t, env, state, files, PhotosOptions{Album: "Trip", Description: "for all", Describe: describe}, nil, func(q *Queue, b *PhotosBatch) {
		d, err := q.DeliveryStore().Get(apptest.JobOf(t, q, b.Creates[0]).Owner)
		if err != nil {
			t.Fatal(err)
		}
		d.Members = nil
		if err := q.DeliveryStore().Put(d); err != nil {
			t.Fatal(err)
		}
	})
	q2, _ := remade(t, env, state, b)
	checkBatch(t, env, q2, b, files)
	res, err := q2.PhotosResults(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		var item struct{ Description string }
		env.api("GET", "/v1/mediaItems/"+r.ID, nil, &item)
		want := "for all"
		if i == 1 {
			want = describe[files[1]]
		}
		if item.Description != want {
			t.Errorf("%s made again with the description %q, want %q", filepath.Base(files[i]), item.Description, want)
		}
	}
}
