// Command photosdemo is issue 19's Show, repeatable (make demo-photos):
// the real carrier binary posts 40 pictures and a 2 GiB video into a new
// Google Photos album of the embedded sandbox (served by `carrier
// sandbox` on its default data folder, which `carrier photos` finds and
// proves as the desktop app would), and is put through
//
//   - kill -9 while the video goes up (a quarter of it confirmed);
//   - a sleep, as logind announces it over the system bus (python-dbusmock's
//     logind template on a private bus): Carrier must stop sending and let
//     go of its sleep inhibitor, then go on at the wake;
//   - kill -9 between two steps of the batch: the batchCreate call has made
//     the items, its answer is held by the sandbox (holdBatchAnswers), and
//     Carrier dies before it reads it, so nothing of it is in the journal;
//
// then `carrier resume` finishes. Through the sandbox's Photos API it then
// checks the album holds exactly the 41 items, each once, whose bytes
// (downloaded) hash as the files do, with the description given, and that
// Photos holds no other item; and it reports the bytes that arrived against
// the files' total. It prints a short report and exits non-zero when a
// check fails.
//
// Everything talks to 127.0.0.1 and a private D-Bus; the child processes
// get a home of their own in a scratch folder. Every wait is bounded.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"

	"carrier/transfer"

	"carrier/internal/syncio"
)

type config struct {
	bin       string
	pictures  int
	videoSize int64
	timeout   time.Duration
	keep      bool
	sleepFor  time.Duration
	seed      uint64
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/carrier", "the carrier binary (go build -o bin/carrier .)")
	flag.IntVar(&c.pictures, "pictures", 40, "pictures in the batch")
	flag.Int64Var(&c.videoSize, "video-size", 2<<30, "the video's size, bytes")
	flag.DurationVar(&c.timeout, "timeout", 15*time.Minute, "bound on the whole run")
	flag.BoolVar(&c.keep, "keep", false, "keep the scratch folder (files, journal, sandbox) for inspection")
	flag.DurationVar(&c.sleepFor, "sleep", 3*time.Second, "how long the simulated machine sleeps")
	flag.Uint64Var(&c.seed, "seed", 19, "seed of the files' bytes and of where in a chunk the first kill lands")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	d := &demo{c: c, started: time.Now()}
	err := d.run(ctx)
	d.cleanup()
	d.print(os.Stdout, err)
	if err != nil || len(d.problems) > 0 {
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s photosdemo: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, a...))
}

type demo struct {
	c       config
	started time.Time
	scratch string
	env     []string
	state   string
	sandbox string // its URL
	token   string
	bus     *dbus.Conn
	stops   []func() // of the processes started, in order
	files   []string
	video   string
	total   int64
	album   string

	// What the report says.
	killVideoAt   int64         // the video's confirmed offset at the first kill
	killDelay     time.Duration // after the confirmation it waited for: the kill lands within the next chunk
	letGo         time.Duration // from the sleep's announcement to Carrier letting go of its inhibitor
	sleptBytes    int64         // bytes that arrived while asleep (after Carrier let go of its inhibitor)
	wakeToBytes   time.Duration // from the wake to the next bytes arriving
	sleepAt       int64         // the video's confirmed offset at the sleep
	itemsAtKill2  int           // items Photos held when the second kill came
	callAtKill2   string        // the batchCreate call's state in the journal then
	sameSession   bool          // the video went on in the session it started in
	items         int
	albumItems    int
	identical     int
	described     int
	bytesReceived int64
	resumes       int
	problems      []string
}

func (d *demo) problem(format string, a ...any) {
	p := fmt.Sprintf(format, a...)
	logf("PROBLEM: %s", p)
	d.problems = append(d.problems, p)
}

func (d *demo) run(ctx context.Context) error {
	bin, err := filepath.Abs(d.c.bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("the carrier binary: %w (build it with `go build -o bin/carrier .`)", err)
	}
	d.c.bin = bin
	if d.scratch, err = os.MkdirTemp("", "carrier-photosdemo-"); err != nil {
		return err
	}
	if d.c.keep {
		logf("scratch folder %s", d.scratch)
	}
	home := filepath.Join(d.scratch, "home")
	os.MkdirAll(home, 0o700)
	d.state = filepath.Join(home, "state", "carrier")
	busAddr, err := d.startBus(ctx)
	if err != nil {
		return fmt.Errorf("the simulated system bus: %w", err)
	}
	d.env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"DBUS_SYSTEM_BUS_ADDRESS="+busAddr, "DBUS_SESSION_BUS_ADDRESS=", "CARRIER_TOKEN=")
	if err := d.makeFiles(); err != nil {
		return err
	}
	if err := d.startSandbox(ctx); err != nil {
		return err
	}
	d.album = "Photos demo " + time.Now().Format("2006-01-02 15:04:05")

	// 1. carrier photos, killed while the video goes up.
	args := append([]string{"photos", "--album", d.album, "--description", "issue 19's demonstration", "--state-dir", d.state, d.video}, d.files...)
	p, err := d.start(ctx, "photos", args...)
	if err != nil {
		return err
	}
	if err := d.waitFor(ctx, p, "a quarter of the video confirmed", 5*time.Minute, func() bool {
		v := d.videoJob()
		return v != nil && v.Confirmed >= d.c.videoSize/4
	}); err != nil {
		return err
	}
	d.killDelay = time.Duration(rand.New(rand.NewPCG(d.c.seed, 1)).IntN(150)) * time.Millisecond
	select {
	case <-time.After(d.killDelay):
	case <-p.exited:
	}
	p.kill()
	session := ""
	if v := d.videoJob(); v != nil {
		d.killVideoAt, session = v.Confirmed, v.Session
	}
	logf("kill -9 of `carrier photos` with %d of the video's %d bytes confirmed", d.killVideoAt, d.c.videoSize)

	// 2. carrier resume: a sleep while the video goes on, then killed with
	// the batchCreate's items made and its answer held.
	if _, err := d.control(map[string]any{"holdBatchAnswers": true}); err != nil {
		return err
	}
	r, err := d.start(ctx, "resume 1", "resume", "--state-dir", d.state)
	if err != nil {
		return err
	}
	d.resumes++
	if err := d.waitFor(ctx, r, "Carrier's sleep inhibitor", time.Minute, func() bool { return d.inhibitors() == 1 }); err != nil {
		return err
	}
	if err := d.waitFor(ctx, r, "half of the video confirmed", 5*time.Minute, func() bool {
		v := d.videoJob()
		return v != nil && v.Confirmed >= d.c.videoSize/2
	}); err != nil {
		return err
	}
	if err := d.sleepAndWake(ctx, r); err != nil {
		return err
	}
	if err := d.waitFor(ctx, r, "the batchCreate call's answer held", 5*time.Minute, func() bool {
		st, err := d.control(nil)
		return err == nil && st["batchAnswersHeld"] == 1.0
	}); err != nil {
		return err
	}
	r.kill()
	for _, c := range d.jobs() {
		if c.Type == transfer.Call {
			d.callAtKill2 = string(c.State)
		}
	}
	items, err := d.listItems("")
	if err != nil {
		return err
	}
	d.itemsAtKill2 = len(items)
	logf("kill -9 of `carrier resume` with the batchCreate's answer held: Photos holds %d items", d.itemsAtKill2)
	if _, err := d.control(map[string]any{"holdBatchAnswers": false}); err != nil {
		return err
	}

	// 3. carrier resume to the end.
	r, err = d.start(ctx, "resume 2", "resume", "--state-dir", d.state)
	if err != nil {
		return err
	}
	d.resumes++
	select {
	case <-r.exited:
	case <-ctx.Done():
		r.kill()
		return errors.New("`carrier resume` did not finish in time")
	}
	if v := d.videoJob(); v == nil || session == "" || v.Session != session || v.State != transfer.StateDone {
		d.problem("the video did not end done in the session it started in")
	} else {
		d.sameSession = true
	}
	if r.ProcessState.ExitCode() != 0 {
		d.problem("`carrier resume` exited %d: %s", r.ProcessState.ExitCode(), lastLines(r.stderr.String(), 5))
	}
	return d.check(ctx)
}

// sleepAndWake announces a sleep as logind does, checks Carrier let go of
// its inhibitor and sent nothing while asleep, then wakes it and times the
// first bytes after.
func (d *demo) sleepAndWake(ctx context.Context, r *child) error {
	if v := d.videoJob(); v != nil {
		d.sleepAt = v.Confirmed
	}
	announced := time.Now()
	if err := d.prepareForSleep(true); err != nil {
		return err
	}
	// A delay inhibitor is let go once the app has made ready to sleep.
	if err := d.waitFor(ctx, r, "Carrier letting go of its inhibitor before the sleep", 30*time.Second, func() bool { return d.inhibitors() == 0 }); err != nil {
		return err
	}
	d.letGo = time.Since(announced)
	before, err := d.stats()
	if err != nil {
		return err
	}
	select {
	case <-time.After(d.c.sleepFor):
	case <-ctx.Done():
		return ctx.Err()
	}
	asleep, err := d.stats()
	if err != nil {
		return err
	}
	d.sleptBytes = asleep.BytesReceived - before.BytesReceived
	logf("asleep %s at %d of the video: %d bytes arrived meanwhile", d.c.sleepFor, d.sleepAt, d.sleptBytes)
	if d.sleptBytes > 0 {
		d.problem("%d bytes arrived while the machine slept", d.sleptBytes)
	}
	woke := time.Now()
	if err := d.prepareForSleep(false); err != nil {
		return err
	}
	if err := d.waitFor(ctx, r, "bytes after the wake", 30*time.Second, func() bool {
		st, err := d.stats()
		return err == nil && st.BytesReceived > asleep.BytesReceived
	}); err != nil {
		return err
	}
	d.wakeToBytes = time.Since(woke)
	logf("woke: bytes again after %s", d.wakeToBytes.Round(time.Millisecond))
	return nil
}

// check reads what Photos holds through its API, as the app may.
func (d *demo) check(ctx context.Context) error {
	var albums struct {
		Albums []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"albums"`
	}
	if err := d.api(ctx, "GET", "/v1/albums?pageSize=50", nil, &albums); err != nil {
		return err
	}
	albumID := ""
	for _, a := range albums.Albums {
		if a.Title == d.album {
			if albumID != "" {
				d.problem("two albums titled %q", d.album)
			}
			albumID = a.ID
		}
	}
	if albumID == "" {
		return fmt.Errorf("no album titled %q", d.album)
	}
	all, err := d.listItems("")
	if err != nil {
		return err
	}
	inAlbum, err := d.listItems(albumID)
	if err != nil {
		return err
	}
	d.items, d.albumItems = len(all), len(inAlbum)
	want := map[string]string{} // file name to SHA-256
	for _, f := range append([]string{d.video}, d.files...) {
		sum, err := fileSHA(f)
		if err != nil {
			return err
		}
		want[filepath.Base(f)] = sum
	}
	if d.albumItems != len(want) || d.items != len(want) {
		d.problem("the album holds %d items and Photos %d, want exactly %d", d.albumItems, d.items, len(want))
	}
	seen := map[string]bool{}
	for _, it := range inAlbum {
		if seen[it.Filename] {
			d.problem("%s is in the album twice", it.Filename)
		}
		seen[it.Filename] = true
		if it.Description == "issue 19's demonstration" {
			d.described++
		} else {
			d.problem("%s has the description %q", it.Filename, it.Description)
		}
		sum, err := d.download(ctx, it)
		switch {
		case err != nil:
			d.problem("%s: %v", it.Filename, err)
		case want[it.Filename] == "":
			d.problem("%s is no file of the batch", it.Filename)
		case sum != want[it.Filename]:
			d.problem("%s: its bytes differ from the file's", it.Filename)
		default:
			d.identical++
		}
	}
	st, err := d.stats()
	if err != nil {
		return err
	}
	d.bytesReceived = st.BytesReceived
	return nil
}

type item struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
	BaseURL     string `json:"baseUrl"`
}

func (d *demo) listItems(album string) ([]item, error) {
	var out []item
	page := ""
	for range 1000 {
		var res struct {
			MediaItems    []item `json:"mediaItems"`
			NextPageToken string `json:"nextPageToken"`
		}
		var err error
		if album == "" {
			err = d.api(context.Background(), "GET", "/v1/mediaItems?pageSize=100&pageToken="+url.QueryEscape(page), nil, &res)
		} else {
			err = d.api(context.Background(), "POST", "/v1/mediaItems:search", map[string]any{"albumId": album, "pageSize": 100, "pageToken": page}, &res)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, res.MediaItems...)
		if page = res.NextPageToken; page == "" {
			return out, nil
		}
	}
	return nil, errors.New("mediaItems keeps answering with more pages")
}

// download hashes a media item's bytes as its baseUrl serves them.
func (d *demo) download(ctx context.Context, it item) (string, error) {
	suffix := "=d"
	if strings.HasPrefix(it.MimeType, "video/") {
		suffix = "=dv"
	}
	req, err := http.NewRequestWithContext(ctx, "GET", it.BaseURL+suffix, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("its bytes: %s", resp.Status)
	}
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fileSHA(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// makeFiles writes the pictures (JPEG's magic, then random bytes, 0.5 to
// 3 MiB) and the video (an MP4's ftyp box, then random bytes): the sandbox
// reads the type from the bytes, and random bytes are each file's own.
func (d *demo) makeFiles() error {
	dir := filepath.Join(d.scratch, "files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], d.c.seed)
	src := rand.NewChaCha8(seed)
	r := rand.New(src)
	write := func(name string, head []byte, size int64) (string, error) {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			return "", err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		w.Write(head)
		buf := make([]byte, 1<<20)
		for left := size - int64(len(head)); left > 0; left -= int64(len(buf)) {
			b := buf[:min(left, int64(len(buf)))]
			src.Read(b)
			if _, err := w.Write(b); err != nil {
				f.Close()
				return "", err
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return "", err
		}
		d.total += size
		return p, f.Close()
	}
	var err error
	if d.video, err = write("VID_0001.mp4", []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), d.c.videoSize); err != nil {
		return err
	}
	for i := range d.c.pictures {
		size := int64(512<<10 + r.IntN(5<<19))
		p, err := write(fmt.Sprintf("IMG_%04d.jpg", i+1), []byte("\xff\xd8\xff\xe0"), size)
		if err != nil {
			return err
		}
		d.files = append(d.files, p)
	}
	logf("%d pictures and a %d-byte video written: %d bytes", d.c.pictures, d.c.videoSize, d.total)
	return nil
}

// startBus starts a private bus as the system's, with python-dbusmock's
// logind on it, and returns its address.
func (d *demo) startBus(ctx context.Context) (string, error) {
	if exec.Command("/usr/bin/python3", "-c", "import dbusmock").Run() != nil {
		return "", errors.New("python3-dbusmock is not installed (make deps-test installs it)")
	}
	daemon := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address")
	out, err := daemon.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := daemon.Start(); err != nil {
		return "", fmt.Errorf("dbus-daemon: %w (make deps-test installs it)", err)
	}
	d.stops = append(d.stops, func() { daemon.Process.Kill(); daemon.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return "", err
	}
	addr = strings.TrimSpace(addr)
	mock := exec.Command("/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "logind")
	mock.Env = append(os.Environ(), "DBUS_SYSTEM_BUS_ADDRESS="+addr)
	if err := mock.Start(); err != nil {
		return "", err
	}
	d.stops = append(d.stops, func() { mock.Process.Kill(); mock.Wait() })
	if d.bus, err = dbus.Connect(addr); err != nil {
		return "", err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var has bool
		if d.bus.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.login1").Store(&has) == nil && has {
			return addr, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", errors.New("dbusmock's logind never took its name")
		}
		time.Sleep(50 * time.Millisecond) // another process's start: nothing to wait on but the bus
	}
}

func (d *demo) prepareForSleep(sleeping bool) error {
	call := d.bus.Object("org.freedesktop.login1", "/org/freedesktop/login1").Call("org.freedesktop.DBus.Mock.EmitSignal", 0,
		"org.freedesktop.login1.Manager", "PrepareForSleep", "b", []any{sleeping})
	return call.Err
}

// inhibitors counts Carrier's sleep delay inhibitors that logind holds.
func (d *demo) inhibitors() int {
	var list [][]any
	if d.bus.Object("org.freedesktop.login1", "/org/freedesktop/login1").Call("org.freedesktop.login1.Manager.ListInhibitors", 0).Store(&list) != nil {
		return -1
	}
	n := 0
	for _, in := range list {
		if len(in) >= 4 && in[0] == "sleep" && in[1] == "Carrier" && in[3] == "delay" {
			n++
		}
	}
	return n
}

// startSandbox serves the embedded sandbox's data folder with `carrier
// sandbox`, so it outlives the killed clients and counts every byte.
func (d *demo) startSandbox(ctx context.Context) error {
	c, err := d.start(ctx, "sandbox", "sandbox", "--addr", "127.0.0.1:0", "--quiet")
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for d.token == "" {
		out := c.stdout.String()
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "http://") {
				d.sandbox = strings.TrimSpace(l)
			}
			if t, ok := strings.CutPrefix(l, "token: "); ok {
				d.token = strings.TrimSpace(t)
			}
		}
		select {
		case <-c.exited:
			return fmt.Errorf("`carrier sandbox` ended: %s", lastLines(c.stderr.String(), 3))
		case <-time.After(20 * time.Millisecond): // its first lines: nothing to wait on but its output
		}
		if time.Now().After(deadline) {
			return errors.New("`carrier sandbox` printed no address and token within 30 s")
		}
	}
	logf("sandbox at %s", d.sandbox)
	return nil
}

type stats struct {
	BytesReceived int64 `json:"bytesReceived"`
}

func (d *demo) stats() (stats, error) {
	var s stats
	err := d.api(context.Background(), "GET", "/sandbox/v1/stats", nil, &s)
	return s, err
}

// control reads, and with a body sets, the sandbox's Photos controls.
func (d *demo) control(body map[string]any) (map[string]any, error) {
	method := "GET"
	if body != nil {
		method = "PUT"
	}
	var out map[string]any
	err := d.api(context.Background(), method, "/sandbox/v1/photos", body, &out)
	return out, err
}

func (d *demo) api(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.sandbox+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, lastLines(string(data), 2))
	}
	return json.Unmarshal(data, out)
}

// jobs are the journal's.
func (d *demo) jobs() []*transfer.Record {
	j, err := transfer.OpenJournal(d.state)
	if err != nil {
		return nil
	}
	recs, _ := j.List()
	return recs
}

// videoJob is the video's upload in the journal.
func (d *demo) videoJob() *transfer.Record {
	var v *transfer.Record
	for _, r := range d.jobs() {
		if r.Path == d.video && (v == nil || r.Created.After(v.Created)) {
			v = r
		}
	}
	return v
}

type child struct {
	*exec.Cmd
	name           string
	stdout, stderr syncio.Buffer
	exited         chan struct{}
}

func (c *child) kill() {
	c.Process.Signal(syscall.SIGKILL)
	<-c.exited
}

func (d *demo) start(ctx context.Context, name string, args ...string) (*child, error) {
	c := &child{Cmd: exec.Command(d.c.bin, args...), name: name, exited: make(chan struct{})}
	c.Env = d.env
	c.Stdout, c.Stderr = &c.stdout, &c.stderr
	if err := c.Start(); err != nil {
		return nil, err
	}
	go func() { c.Wait(); close(c.exited) }()
	d.stops = append(d.stops, func() {
		c.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			c.kill()
		}
	})
	logf("started carrier %s (pid %d)", name, c.Process.Pid)
	return c, nil
}

// waitFor polls cond (another process's journal and the sandbox's
// counters have no event to wait on) until it holds, c ends or the time is
// up.
func (d *demo) waitFor(ctx context.Context, c *child, what string, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case <-c.exited:
			return fmt.Errorf("carrier %s ended (exit %d) before %s: %s", c.name, c.ProcessState.ExitCode(), what, lastLines(c.stderr.String(), 5))
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s within %s", what, timeout)
		}
	}
	return nil
}

func (d *demo) cleanup() {
	for i := len(d.stops) - 1; i >= 0; i-- {
		d.stops[i]()
	}
	if d.bus != nil {
		d.bus.Close()
	}
	if d.scratch != "" && !d.c.keep {
		os.RemoveAll(d.scratch)
	}
}

func (d *demo) print(w io.Writer, err error) {
	fmt.Fprintf(w, "Photos demonstration (make demo-photos), %s, %s/%s, %d CPUs\n", d.started.UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(w, "  files: %d pictures and a %s video, %s in all\n", d.c.pictures, size(d.c.videoSize), size(d.total))
	fmt.Fprintf(w, "  kill -9 of `carrier photos` during the video: %s after %s of %s was confirmed\n", d.killDelay, size(d.killVideoAt), size(d.c.videoSize))
	fmt.Fprintf(w, "  sleep (logind PrepareForSleep) at %s of the video: inhibitor let go after %s, %d bytes arrived while asleep %s; bytes again %s after the wake\n",
		size(d.sleepAt), d.letGo.Round(time.Millisecond), d.sleptBytes, d.c.sleepFor, d.wakeToBytes.Round(time.Millisecond))
	fmt.Fprintf(w, "  kill -9 of `carrier resume` with batchCreate's items made and its answer unread: Photos held %d items, the journal had the call %s\n", d.itemsAtKill2, d.callAtKill2)
	fmt.Fprintf(w, "  after %d resumes: the album holds %d items (Photos %d), %d with bytes identical to the files', %d with the description\n",
		d.resumes, d.albumItems, d.items, d.identical, d.described)
	if d.total > 0 {
		fmt.Fprintf(w, "  bytes that arrived: %d for %d bytes of files: %.4fx (%d more); the video finished in the session it started in: %v\n",
			d.bytesReceived, d.total, float64(d.bytesReceived)/float64(d.total), d.bytesReceived-d.total, d.sameSession)
	}
	fmt.Fprintf(w, "  elapsed: %s\n", time.Since(d.started).Round(time.Second))
	if err != nil {
		fmt.Fprintf(w, "  STOPPED: %v\n", err)
	}
	for _, p := range d.problems {
		fmt.Fprintf(w, "  PROBLEM: %s\n", p)
	}
	if err == nil && len(d.problems) == 0 {
		fmt.Fprintln(w, "  OK")
	}
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
