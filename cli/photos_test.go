package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"carrier/sandbox"
	"carrier/transfer"
)

// runText runs a command against the sandbox and returns its stdout,
// stderr and exit code.
func (e *sendEnv) runText(args ...string) (string, string, int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--endpoint", e.url, "--token", "tok", "--state-dir", e.state, "--retry-base", "10ms")
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
	return out.String(), errOut.String(), code
}

func photoFiles(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for i := range n {
		b := make([]byte, 5000)
		rand.Read(b)
		copy(b, "\x89PNG\r\n\x1a\n")
		p := filepath.Join(dir, fmt.Sprintf("shot %d.png", i+1))
		os.WriteFile(p, b, 0o600)
		out = append(out, p)
	}
	return out
}

// `carrier photos` prints a line per file with its media item's id and
// link, progress lines for each step on stderr, and the album holds them.
func TestPhotosCommandPrintsEachItem(t *testing.T) {
	e := newSendEnv(t)
	files := photoFiles(t, 3)
	args := append([]string{"photos", "--album", "Holiday"}, files[:2]...)
	args = append(args, "--description", "beach", files[2])
	out, errs, code := e.runText(args...)
	if code != 0 {
		t.Fatalf("photos: %d\n%s\n%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || lines[0] != "3 files need 4 of Google Photos' 10,000 requests a day." {
		t.Fatalf("stdout does not begin with the plan:\n%s", out)
	}
	lines = lines[1:]
	if !regexp.MustCompile(`^album Holiday: AF1Qip\S+ http\S+/album/\S+ \(a new album\)$`).MatchString(lines[3]) {
		t.Fatalf("stdout:\n%s", out)
	}
	lines = lines[:3]
	line := regexp.MustCompile(`^shot (\d)\.png: (AF1Qip\S+) (http\S+/photo/\S+)$`)
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil || m[1] != fmt.Sprint(i+1) {
			t.Fatalf("line %d: %q", i, l)
		}
		if item := e.get("/v1/mediaItems/" + m[2]); item["description"] != "beach" || item["filename"] != fmt.Sprintf("shot %d.png", i+1) {
			t.Fatalf("item %s: %v", m[2], item)
		}
	}
	for _, want := range []string{"shot 1.png · to Google Photos): done", "(Google Photos · items 1–3 of 3 into Holiday): done"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	var jobs bytes.Buffer
	Main(context.Background(), &Env{Stdout: &jobs, Stderr: &jobs}, []string{"jobs", "--all", "--state-dir", e.state})
	for _, want := range []string{"Google Photos · items 1–3 of 3 into Holiday", "shot 3.png · to Google Photos"} {
		if !strings.Contains(jobs.String(), want) {
			t.Errorf("carrier jobs does not show %q:\n%s", want, jobs.String())
		}
	}
}

// Refused files are named before anything goes: sound, and no files.
func TestPhotosCommandRefusesBeforeSending(t *testing.T) {
	e := newSendEnv(t)
	dir := t.TempDir()
	song := filepath.Join(dir, "song.jpg")
	os.WriteFile(song, append([]byte("ID3\x04\x00"), make([]byte, 600)...), 0o600)
	_, errs, code := e.runText("photos", song)
	if code == 0 || !strings.Contains(errs, "song.jpg is sound") {
		t.Fatalf("code %d: %s", code, errs)
	}
	_, errs, code = e.runText("photos")
	if code == 0 || !strings.Contains(errs, "name the pictures and videos") {
		t.Fatalf("code %d: %s", code, errs)
	}
	if recs := e.records(); len(recs) != 0 {
		t.Fatalf("%d jobs queued", len(recs))
	}
}

// `carrier photos albums` lists the albums Carrier made, and --album of
// one of their titles adds to it rather than making a second.
func TestPhotosCommandReusesAnAlbum(t *testing.T) {
	e := newSendEnv(t)
	files := photoFiles(t, 2)
	if out, errs, code := e.runText("photos", "--album", "Holiday", files[0]); code != 0 {
		t.Fatalf("photos: %d\n%s\n%s", code, out, errs)
	}
	out, errs, code := e.runText("photos", "--album", "Holiday", files[1])
	if code != 0 || !strings.Contains(out, "(added to the album Carrier made before)") {
		t.Fatalf("photos again: %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = e.runText("photos", "albums")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !regexp.MustCompile(`^Holiday\s+2\s+http\S+/album/\S+$`).MatchString(lines[1]) {
		t.Fatalf("photos albums: %d\n%s\n%s", code, out, errs)
	}
}

// A batch interrupted before its call, resumed a day later: the call
// finds the uploads' tokens expired, the files go again in a further call
// queued as it ends, and `carrier resume` waits for that too before it
// exits, so every file is in the album when it does.
func TestResumeWaitsForPhotosMadeAgain(t *testing.T) {
	var skew atomic.Int64
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "tok", Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	var mu sync.Mutex
	var hook func(w http.ResponseWriter, r *http.Request) bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := hook
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, ":batchCreate") && h != nil && h(w, r) {
			return
		}
		sb.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := &sendEnv{t: t, url: srv.URL, state: t.TempDir()}
	files := photoFiles(t, 2)

	ctx, stop := context.WithCancel(context.Background())
	mu.Lock()
	hook = func(w http.ResponseWriter, r *http.Request) bool {
		stop() // interrupted with every file up and the call not made
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	mu.Unlock()
	var out, errs bytes.Buffer
	args := append([]string{"photos", "--album", "Later", "--endpoint", e.url, "--token", "tok", "--state-dir", e.state, "--retry-base", "10ms"}, files...)
	if code := Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs}, args); code == 0 {
		t.Fatalf("the interrupted batch exited 0:\n%s\n%s", out.String(), errs.String())
	}

	// A day asleep: the tokens expire at Photos, and the journal's
	// uploads ended a day before the call will.
	skew.Store(int64(25 * time.Hour))
	j, err := transfer.OpenJournal(e.state)
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := j.List()
	for _, r := range recs {
		if r.Protocol == transfer.ProtocolGoogUpload {
			r.Updated = r.Updated.Add(-25 * time.Hour)
			if err := j.Save(r); err != nil {
				t.Fatal(err)
			}
			if err := j.SaveProgress(r); err != nil { // its newer progress would stand
				t.Fatal(err)
			}
		}
	}
	var calls atomic.Int32
	mu.Lock()
	hook = func(w http.ResponseWriter, r *http.Request) bool { calls.Add(1); return false }
	mu.Unlock()
	out.Reset()
	errs.Reset()
	if code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs}, []string{"resume", "--endpoint", e.url, "--token", "tok", "--state-dir", e.state, "--retry-base", "10ms"}); code != 0 {
		t.Fatalf("resume: %d\n%s\n%s", code, out.String(), errs.String())
	}
	if calls.Load() != 2 {
		t.Fatalf("%d batchCreate calls, want 2 (the first, its items expired; then again)\n%s\n%s", calls.Load(), out.String(), errs.String())
	}
	albums := e.get("/v1/albums")["albums"].([]any)
	album := albums[0].(map[string]any)
	if len(albums) != 1 || album["mediaItemsCount"] != "2" {
		t.Fatalf("albums when resume exited: %v\n%s", albums, errs.String())
	}
}

// With --else-drive a file Photos refuses by its type goes to Drive
// instead, byte for byte, and the pictures to Photos.
func TestPhotosCommandElseDrive(t *testing.T) {
	e := newSendEnv(t)
	files := photoFiles(t, 1)
	song := filepath.Join(t.TempDir(), "song.mp3")
	data := append([]byte("ID3\x04\x00"), make([]byte, 6000)...)
	rand.Read(data[10:])
	os.WriteFile(song, data, 0o600)
	out, errs, code := e.runText("photos", "--else-drive", files[0], song)
	if code != 0 {
		t.Fatalf("photos --else-drive: %d\n%s\n%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:] // after the plan
	m := regexp.MustCompile(`^song\.mp3: not for Google Photos; in Google Drive: (\S+) http\S+$`).FindStringSubmatch(lines[len(lines)-1])
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "shot 1.png: AF1Qip") || m == nil {
		t.Fatalf("stdout:\n%s", out)
	}
	if got := e.getBytes("/drive/v3/files/" + m[1] + "?alt=media"); !bytes.Equal(got, data) {
		t.Fatalf("Drive holds %d bytes for the song, want its %d", len(got), len(data))
	}
}

// `carrier photos FOLDER` posts the folder's pictures; posted again with a
// picture added, it says what is there already and sends only the new
// one (the sandbox counts one upload more), and posted a third time it
// sends nothing and exits 0.
func TestPhotosCommandFolderTwice(t *testing.T) {
	e := newSendEnv(t)
	files := photoFiles(t, 3)
	dir := filepath.Dir(files[0])
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a picture"), 0o600)
	sessions := func() float64 { return e.get("/sandbox/v1/stats")["sessionsCreated"].(float64) }
	out, errs, code := e.runText("photos", "--album", "Trip", dir)
	if code != 0 || !strings.HasPrefix(out, "3 files need 4 of Google Photos' 10,000 requests a day.\n") || !strings.Contains(errs, "skipping what Google Photos does not take in the folders: notes.txt") {
		t.Fatalf("the first post: %d\n%s\n%s", code, out, errs)
	}
	before := sessions()
	b := make([]byte, 5000)
	rand.Read(b)
	copy(b, "\x89PNG\r\n\x1a\n")
	os.WriteFile(filepath.Join(dir, "shot 4.png"), b, 0o600)
	out, errs, code = e.runText("photos", "--album", "Trip", dir)
	if code != 0 || !strings.HasPrefix(out, "3 already in the album Trip, 1 new.\n1 file needs 2 of Google Photos' 10,000 requests a day.\nshot 4.png: AF1Qip") {
		t.Fatalf("the second post: %d\n%s\n%s", code, out, errs)
	}
	if n := sessions() - before; n != 1 {
		t.Fatalf("the second post started %v uploads, want 1", n)
	}
	before = sessions()
	out, errs, code = e.runText("photos", "--album", "Trip", dir)
	if code != 0 || !strings.HasPrefix(out, "Nothing new to send: all 4 files are already in the album Trip.\n") || sessions() != before {
		t.Fatalf("the third post: %d, %v uploads\n%s\n%s", code, sessions()-before, out, errs)
	}
}
