package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"carrier/compose"
	"carrier/internal/app"
	"carrier/internal/app/message"
	"carrier/internal/app/photos"
	"carrier/internal/apptest"
	"carrier/internal/crashdisk"
	"carrier/sandbox"
	"carrier/transfer"
)

// cutServer is the sandbox behind one address for a whole power-cut test.
// While a run is recorded, it handles one request at a time and, after
// each that may change what the server holds, copies the sandbox's folder
// (an epoch) before the answer leaves: the server's state at any step of
// the recording is one of the epochs. A recovery then runs against a copy
// of the epoch of its cut: the server is not cut, it keeps what it did.
type cutServer struct {
	t      *testing.T
	token  string
	root   string
	client *http.Client
	work   string // the folder of the sandbox serving now

	mu     sync.Mutex
	sb     *sandbox.Sandbox
	rec    *crashdisk.Recorder
	epochs []string // epochs[n]: the sandbox after n changing requests
}

func newCutServer(t *testing.T) *cutServer {
	t.Helper()
	c := &cutServer{t: t, token: "power-cut-token", client: &http.Client{Transport: &http.Transport{}}, work: filepath.Join(t.TempDir(), "sandbox")}
	if err := os.Mkdir(c.work, 0o700); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(sandbox.Options{Dir: c.work, Token: c.token})
	if err != nil {
		t.Fatal(err)
	}
	c.sb = sb
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: c}
	go srv.Serve(ln)
	c.root = "http://" + ln.Addr().String()
	t.Cleanup(func() {
		srv.Close()
		c.client.CloseIdleConnections()
		c.mu.Lock()
		c.sb.Close()
		c.mu.Unlock()
	})
	return c
}

func (c *cutServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Every request may change what the server holds (Drive's
	// generateIds is a GET that reserves ids).
	if c.rec == nil {
		c.sb.Handler().ServeHTTP(w, r)
		return
	}
	n := len(c.epochs)
	c.rec.Mark(fmt.Sprintf("request %d", n))
	rr := httptest.NewRecorder()
	c.sb.Handler().ServeHTTP(rr, r)
	dir := filepath.Join(c.t.TempDir(), "epoch")
	if err := copyTree(c.work, dir); err != nil {
		c.t.Errorf("cannot copy the sandbox: %v", err)
	}
	c.epochs = append(c.epochs, dir)
	c.rec.Mark(fmt.Sprintf("answer %d", n))
	for k, v := range rr.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rr.Code)
	w.Write(rr.Body.Bytes())
}

// record starts recording the steps under state, and the server's epochs.
func (c *cutServer) record(state string) *crashdisk.Recorder {
	c.t.Helper()
	rec, err := crashdisk.Record(state)
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	dir := filepath.Join(c.t.TempDir(), "epoch")
	if err := copyTree(c.work, dir); err != nil {
		c.t.Fatal(err)
	}
	c.epochs = []string{dir}
	c.rec = rec
	return rec
}

func (c *cutServer) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rec.Stop()
	c.rec = nil
}

// serve has the sandbox hold epoch n afresh.
func (c *cutServer) serve(n int) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sb.Close()
	if err := os.RemoveAll(c.work); err != nil {
		c.t.Fatal(err)
	}
	if err := copyTree(c.epochs[n], c.work); err != nil {
		c.t.Fatal(err)
	}
	sb, err := sandbox.Open(sandbox.Options{Dir: c.work, Token: c.token})
	if err != nil {
		c.t.Fatal(err)
	}
	c.sb = sb
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
}

func (c *cutServer) get(path string, auth bool) (int, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.root+path, nil)
	if auth {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, data
}

func (c *cutServer) getJSON(path string, v any) {
	c.t.Helper()
	code, data := c.get(path, true)
	if code != http.StatusOK {
		c.t.Fatalf("GET %s: %d %s", path, code, data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
}

// sent gives the raw messages in the sandbox's mailbox.
func (c *cutServer) sent() []string {
	var list struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	c.getJSON("/gmail/v1/users/me/messages?maxResults=500", &list)
	var out []string
	for _, m := range list.Messages {
		var raw struct{ Raw string }
		c.getJSON("/gmail/v1/users/me/messages/"+m.ID+"?format=raw", &raw)
		b, err := base64.URLEncoding.DecodeString(raw.Raw)
		if err != nil {
			b, err = base64.RawURLEncoding.DecodeString(raw.Raw)
		}
		if err != nil {
			c.t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// driveFiles counts Drive's files of a name.
func (c *cutServer) driveFiles(name string) int {
	var list struct {
		Files []struct{ ID, Name string } `json:"files"`
	}
	c.getJSON("/drive/v3/files?pageSize=1000&fields=files(id,name)", &list)
	n := 0
	for _, f := range list.Files {
		if f.Name == name {
			n++
		}
	}
	return n
}

// openRecovered opens the queue on state as a start after the cut does,
// resumes what the journal holds, and waits until each job ends.
func (c *cutServer) recover(state string) error {
	// Jobs that need jobs done before the cut (not taken again) look at
	// the journal every few wake checks: often, so a case takes
	// milliseconds.
	q, err := app.OpenQueue(transfer.Config{StateDir: state, Auth: transfer.StaticToken(c.token), RetryBase: 10 * time.Millisecond, WakeCheck: 5 * time.Millisecond}, app.NewSpool(app.SpoolDir(state)))
	if err != nil {
		return fmt.Errorf("the queue does not open: %w", err)
	}
	defer q.Close()
	if _, err := q.Deliveries(); err != nil {
		return fmt.Errorf("the deliveries cannot be read: %w", err)
	}
	ids, err := q.ResumeJournal(true)
	if err != nil {
		return fmt.Errorf("the journal does not resume: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, id := range ids {
		s, err := q.Wait(ctx, id)
		if err != nil && err != transfer.ErrUnknownJob {
			return fmt.Errorf("job %s: %w", id, err)
		}
		if err == nil && s.State != transfer.StateDone {
			return fmt.Errorf("job %s (%s) ended %s: %s", id, s.Label, s.State, s.Error)
		}
	}
	return nil
}

// keepChangeTimes stands in for the change times a rebuild cannot give:
// a record that names a file of the state folder with the change time
// that file had when the cut's state holds it gets the rebuilt file's
// change time, so that the resume's check sees "unchanged" exactly when
// the disk after the cut would have shown the file unchanged.
func keepChangeTimes(t *testing.T, state string, s crashdisk.State) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(state, "jobs", "*.json"))
	for _, p := range recs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := transfer.DecodeRecord(data)
		if err != nil || r.ChangeTime.IsZero() {
			continue
		}
		rel, err := filepath.Rel(state, r.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		f := s.Files[rel]
		if f == nil || !f.CTime.Equal(r.ChangeTime) {
			continue
		}
		fi, err := os.Stat(r.Path)
		if err != nil {
			continue
		}
		r.ChangeTime = crashdisk.ChangeTime(fi)
		out, err := transfer.EncodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, out, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A cut to check: a state of the disk, and the server's epoch.
type cutCase struct {
	state    crashdisk.State
	epoch    int
	accepted bool   // the person was told the send is queued
	lostAns  bool   // the server did the request in flight; its answer was lost
	at       string // the step the cut came after
}

// cutCases lists the distinct cases of every cut of ops: each state the
// cut can leave, with the server as the last answer left it, and, when a
// request was in flight, as it was once that request was done (its answer
// lost with the power). accepted is the index of the mark saying the
// person was told.
func cutCases(rec *crashdisk.Recorder, ops []crashdisk.Op, accepted, limit int) (cases []cutCase, cuts, states int) {
	seen := map[string]bool{}
	epoch, inFlight := 0, false
	for cut := 0; cut <= len(ops); cut++ {
		if cut > 0 {
			if o := ops[cut-1]; o.Kind == "mark" {
				switch {
				case strings.HasPrefix(o.Mark, "request "):
					inFlight = true
				case strings.HasPrefix(o.Mark, "answer "):
					inFlight = false
					epoch++
				}
			}
		}
		at := "the start"
		if cut > 0 {
			at = ops[cut-1].String()
		}
		cuts++
		for _, s := range rec.States(ops, cut, limit) {
			states++
			epochs := []int{epoch}
			if inFlight {
				epochs = append(epochs, epoch+1)
			}
			for _, e := range epochs {
				c := cutCase{state: s, epoch: e, accepted: cut > accepted, lostAns: e > epoch, at: at}
				key := fmt.Sprintf("%s|%d|%v", s.Key(), e, c.accepted)
				if !seen[key] {
					seen[key] = true
					cases = append(cases, c)
				}
			}
		}
	}
	return cases, cuts, states
}

// sample keeps every case when the run is long, else n of them spread
// evenly over the cuts (always the first and the last), deterministically.
func sample(cases []cutCase, n int) []cutCase {
	if os.Getenv("CARRIER_POWERCUT_ALL") != "" || len(cases) <= n {
		return cases
	}
	out := make([]cutCase, 0, n)
	for i := range n {
		out = append(out, cases[i*(len(cases)-1)/(n-1)])
	}
	return out
}

// howMany is the number of cases a run checks: all with
// CARRIER_POWERCUT_ALL set, fewer with -short.
func howMany() int {
	if testing.Short() {
		return 20
	}
	return 60
}

var driveLink = regexp.MustCompile(`/file/d/([A-Za-z0-9_-]+)/view`)

// A power cut at any step of sending a message with a Drive link loses
// nothing once the person was told it is queued, and sends nothing twice:
// the send is recorded step by step (the journal, the spool, the
// deliveries), every state a cut at every step could leave is rebuilt
// (crashdisk's rules), with the server as it stood then, and a start on
// that state resumes: the mailbox then holds the message once (or, for a
// cut before the person was told, at most once), Drive holds the file
// once, and the message's link opens it.
func TestPowerCutDuringASendWithALink(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the power-cut model is Linux's (fsync(2), ext4); the writers take the same steps elsewhere")
	}
	c := newCutServer(t)
	state := t.TempDir()
	// The first start is recorded too: the folders it makes.
	rec := c.record(state)
	q, err := app.OpenQueue(transfer.Config{StateDir: state, Auth: transfer.StaticToken(c.token), RetryBase: 10 * time.Millisecond}, app.NewSpool(app.SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	film := []byte(strings.Repeat("film ", 40000))
	file := filepath.Join(t.TempDir(), "film.mov")
	if err := os.WriteFile(file, film, 0o600); err != nil {
		t.Fatal(err)
	}
	msg := &compose.Message{From: sandbox.DefaultAccount, To: []string{"zoe@example.com"}, Subject: "Film", Text: "Here it is.", Attachments: []string{file}}
	up, err := app.Message(msg, compose.Send, app.GmailOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drive := app.Drive{Root: c.root, Auth: transfer.StaticToken(c.token)}

	ids, err := q.SendWithLinks(context.Background(), drive, msg, compose.Send, up, app.LinkOptions{Policy: compose.LinksAlways, Share: message.ShareAnyone}, nil)
	if err != nil {
		t.Fatal(err)
	}
	accepted := rec.Mark("accepted")
	apptest.WaitDone(t, q, ids)
	q.Close()
	c.stop()
	ops := rec.Ops()

	check := func(cc cutCase) error {
		msgs := c.sent()
		switch {
		case len(msgs) > 1:
			return fmt.Errorf("the message was sent %d times", len(msgs))
		case len(msgs) == 0 && cc.accepted:
			return fmt.Errorf("the message was lost")
		case len(msgs) == 0:
			return nil
		}
		if n := c.driveFiles("film.mov"); n != 1 {
			return fmt.Errorf("Drive holds the file %d times", n)
		}
		m := driveLink.FindStringSubmatch(strings.ReplaceAll(msgs[0], "=\r\n", ""))
		if m == nil {
			return fmt.Errorf("the message has no Drive link")
		}
		code, data := c.get("/uc?id="+m[1]+"&export=download", false)
		if code != http.StatusOK || string(data) != string(film) {
			return fmt.Errorf("the message's link gives %d and %d bytes, not the file", code, len(data))
		}
		return nil
	}
	runCuts(t, c, rec, ops, accepted, state, check)
}

func lostWords(s crashdisk.State) string {
	if len(s.Lost) == 0 {
		return "nothing"
	}
	return strings.Join(s.Lost, "; ")
}

// referencesHold checks, in a state a cut left (without recovering from
// it), that every job the journal holds and has yet to finish finds its
// file in the state folder whole: as big as recorded, with the
// modification and change times recorded. A record must never be durable
// before what it names.
func referencesHold(state string, s crashdisk.State) error {
	for name, f := range s.Files {
		if filepath.Dir(name) != "jobs" || !strings.HasSuffix(name, ".json") || strings.HasPrefix(filepath.Base(name), ".") {
			continue
		}
		r, err := transfer.DecodeRecord(f.Data)
		if err != nil {
			return fmt.Errorf("the record %s cannot be read: %w", name, err)
		}
		if r.State == transfer.StateDone || r.State == transfer.StateCancelled || r.Path == "" {
			continue
		}
		rel, err := filepath.Rel(state, r.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // the person's own file, outside the state folder
		}
		g := s.Files[rel]
		switch {
		case g == nil:
			return fmt.Errorf("job %s (%s) names %s, which the cut took away", r.ID, r.Label, rel)
		case int64(len(g.Data)) != r.Size:
			return fmt.Errorf("job %s (%s) names %s of %d bytes; the cut left %d", r.ID, r.Label, rel, r.Size, len(g.Data))
		case !g.MTime.Equal(r.ModTime):
			return fmt.Errorf("job %s (%s) names %s, whose modification time the cut changed", r.ID, r.Label, rel)
		case !r.ChangeTime.IsZero() && !g.CTime.Equal(r.ChangeTime):
			return fmt.Errorf("job %s (%s) names %s, whose change time the cut changed", r.ID, r.Label, rel)
		}
	}
	return nil
}

// runCuts recovers from every case of the recording (or a sample) and
// checks each.
func runCuts(t *testing.T, c *cutServer, rec *crashdisk.Recorder, ops []crashdisk.Op, accepted int, state string, check func(cutCase) error) {
	t.Helper()
	if unseen := rec.Unseen(ops); len(unseen) > 0 {
		t.Errorf("files of the state folder written without the disk hook seeing it (no cut's state holds them): %v", unseen)
	}
	cases, cuts, states := cutCases(rec, ops, accepted, 64)
	broken := 0
	for _, cc := range cases {
		if err := referencesHold(state, cc.state); err != nil {
			broken++
			if broken <= 4 {
				t.Errorf("a cut after step %d (%s), which lost %s: %v", cc.state.Cut, cc.at, lostWords(cc.state), err)
			}
		}
	}
	kinds := map[string]int{}
	for _, o := range ops {
		kinds[o.Kind]++
	}
	run := sample(cases, howMany())
	start := time.Now()
	failed := 0
	for _, cc := range run {
		if err := rec.Rebuild(cc.state); err != nil {
			t.Fatal(err)
		}
		keepChangeTimes(t, state, cc.state)
		c.serve(cc.epoch)
		err := c.recover(state)
		if err == nil {
			err = check(cc)
		}
		if err != nil {
			failed++
			if failed <= 8 {
				lost := lostWords(cc.state)
				answer := ""
				if cc.lostAns {
					answer = " (the server did the request in flight, its answer lost)"
				}
				t.Errorf("a cut after step %d (%s), which lost %s, server at epoch %d%s: %v", cc.state.Cut, cc.at, lost, cc.epoch, answer, err)
			}
		}
	}
	names := make([]string, 0, len(kinds))
	for k, n := range kinds {
		names = append(names, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(names)
	t.Logf("%d steps (%s), %d cut points, %d states, %d distinct cases with the server's epochs, each checked for its references (%d broken); %d recovered and checked in %v, %d failed",
		len(ops), strings.Join(names, ", "), cuts, states, len(cases), broken, len(run), time.Since(start).Round(time.Millisecond), failed)
}

// A power cut at any step of posting a batch of pictures to an album,
// with descriptions, loses nothing once the person was told the batch is
// queued, and makes nothing twice: after a start on each state the cut
// could leave (with the server as it stood), the album is there once and
// holds each picture once, with its description; before the person was
// told, each picture is in Photos at most once.
func TestPowerCutDuringAPhotosBatch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the power-cut model is Linux's (fsync(2), ext4); the writers take the same steps elsewhere")
	}
	c := newCutServer(t)
	state := t.TempDir()
	// The first start is recorded too: the folders it makes.
	rec := c.record(state)
	q, err := app.OpenQueue(transfer.Config{StateDir: state, Auth: transfer.StaticToken(c.token), RetryBase: 10 * time.Millisecond}, app.NewSpool(app.SpoolDir(state)))
	if err != nil {
		t.Fatal(err)
	}
	files := pictures(t, 3)
	describe := map[string]string{}
	for i, f := range files {
		describe[f] = fmt.Sprintf("Picture %d of the trip", i+1)
	}
	lib := photos.Photos{Root: c.root, Drive: app.Drive{Root: c.root, Auth: transfer.StaticToken(c.token)}}

	b, err := photos.Of(q).PhotosUpload(context.Background(), lib, files, photos.PhotosOptions{Album: "Trip", Describe: describe}, nil)
	if err != nil {
		t.Fatal(err)
	}
	accepted := rec.Mark("accepted")
	apptest.WaitDone(t, q, b.Jobs())
	q.Close()
	c.stop()
	ops := rec.Ops()

	type item struct {
		ID, Filename, Description string
	}
	items := func(album string) ([]item, error) {
		var all []item
		page := ""
		for {
			var out struct {
				MediaItems    []item `json:"mediaItems"`
				NextPageToken string `json:"nextPageToken"`
			}
			path := "/v1/mediaItems?pageSize=100&pageToken=" + page
			method, body := http.MethodGet, ""
			if album != "" {
				method, path = http.MethodPost, "/v1/mediaItems:search"
				b, _ := json.Marshal(map[string]any{"albumId": album, "pageSize": 100, "pageToken": page})
				body = string(b)
			}
			req, _ := http.NewRequest(method, c.root+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+c.token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.client.Do(req)
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("%s %s: %d %s (%v)", method, path, resp.StatusCode, data, err)
			}
			if err := json.Unmarshal(data, &out); err != nil {
				return nil, err
			}
			all = append(all, out.MediaItems...)
			if out.NextPageToken == "" {
				return all, nil
			}
			page = out.NextPageToken
		}
	}
	check := func(cc cutCase) error {
		all, err := items("")
		if err != nil {
			return err
		}
		seen := map[string]int{}
		for _, it := range all {
			seen[it.Filename]++
		}
		for _, f := range files {
			if n := seen[filepath.Base(f)]; n > 1 {
				return fmt.Errorf("%s is in Photos %d times", filepath.Base(f), n)
			}
		}
		if !cc.accepted {
			return nil
		}
		var albums struct {
			Albums []struct{ ID, Title string } `json:"albums"`
		}
		c.getJSON("/v1/albums?pageSize=50", &albums)
		var trip []string
		for _, a := range albums.Albums {
			if a.Title == "Trip" {
				trip = append(trip, a.ID)
			}
		}
		if len(trip) != 1 {
			return fmt.Errorf("%d albums named Trip, want 1", len(trip))
		}
		in, err := items(trip[0])
		if err != nil {
			return err
		}
		if len(in) != len(files) {
			return fmt.Errorf("the album holds %d items, want %d", len(in), len(files))
		}
		for i, it := range in {
			if it.Filename != filepath.Base(files[i]) || it.Description != describe[files[i]] {
				return fmt.Errorf("item %d of the album is %s (%q), want %s (%q)", i, it.Filename, it.Description, filepath.Base(files[i]), describe[files[i]])
			}
		}
		return nil
	}
	runCuts(t, c, rec, ops, accepted, state, check)
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
