package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"carrier/sandbox"
)

const (
	token  = "soak-token"
	bucket = "soak"
)

// inproc is a sandbox served from this process, for the phases that need
// no restart: its counters and faults are at hand without HTTP.
type inproc struct {
	sb   *sandbox.Sandbox
	dir  string
	base string
	addr string // host:port
	stop context.CancelFunc
	done chan error
}

func openInproc(dir, faults string, publicHosts ...string) (*inproc, error) {
	sb, err := sandbox.Open(sandbox.Options{Dir: dir, Token: token, Faults: faults, PublicHosts: publicHosts})
	if err != nil {
		return nil, err
	}
	ln, err := sandbox.Listen("127.0.0.1:0")
	if err != nil {
		sb.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &inproc{sb: sb, dir: dir, base: sandbox.URL(ln), addr: ln.Addr().String(), stop: stop, done: make(chan error, 1)}
	go func() { s.done <- sb.Serve(ctx, ln) }()
	return s, nil
}

// close stops serving and lets go of the store, so that it can be read.
func (s *inproc) close() {
	// The sandbox first: it lets go of stalled requests, which would
	// otherwise hold the server's graceful shutdown for its full 5 s.
	s.sb.SetFaults("")
	s.stop()
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
	}
	s.sb.Close()
}

// child is the sandbox as its own process (`carrier sandbox`), for the
// phase that stops and starts it again on the same folder and address.
type child struct {
	bin, dir, addr, faults string
	cmd                    *exec.Cmd
	exited                 chan struct{}
	base                   string
	stderr                 *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // only the tail matters in a failure report
		l.b.Reset()
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs the sandbox and waits for its base URL, the first line it
// prints. The address is the one of the first start on later starts.
func (c *child) start(ctx context.Context) error {
	addr := c.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cmd := exec.Command(c.bin, "sandbox", "--addr", addr, "--data", c.dir, "--token", token, "--faults", c.faults, "--quiet")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if c.stderr == nil {
		c.stderr = &lockedBuffer{}
	}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s sandbox: %w", c.bin, err)
	}
	c.cmd = cmd
	c.exited = make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out) // the pipe must not fill up
	}()
	go func() { cmd.Wait(); close(c.exited) }()
	select {
	case line, ok := <-lines:
		if !ok {
			<-c.exited
			return fmt.Errorf("the sandbox exited before printing its URL: %s", lastLines(c.stderr.String(), 5))
		}
		u, err := url.Parse(strings.TrimSpace(line))
		if err != nil || u.Host == "" {
			return fmt.Errorf("the sandbox's first line is not its URL: %q", line)
		}
		c.base = u.String()
		c.addr = u.Host
		return nil
	case <-time.After(20 * time.Second):
	case <-ctx.Done():
	}
	c.kill(syscall.SIGKILL)
	return errors.New("the sandbox did not print its URL within 20 s")
}

// kill stops the process with sig and waits for it to be gone.
func (c *child) kill(sig syscall.Signal) error {
	if c.cmd == nil || c.cmd.Process == nil {
		return nil
	}
	c.cmd.Process.Signal(sig)
	select {
	case <-c.exited:
		return nil
	case <-time.After(15 * time.Second):
	}
	c.cmd.Process.Kill()
	<-c.exited
	return fmt.Errorf("the sandbox (pid %d) did not stop on %s within 15 s", c.cmd.Process.Pid, sig)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// api is a plain client for the sandbox's read endpoints; it never goes
// through the engine, so it cannot hide the engine's mistakes.
var api = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}}

func apiGet(base, path string) ([]byte, int, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := api.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}

func apiJSON(base, path string, v any) error {
	b, code, err := apiGet(base, path)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, code, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, v)
}

func stats(base string) (sandbox.Stats, error) {
	var s sandbox.Stats
	err := apiJSON(base, "/sandbox/v1/stats", &s)
	return s, err
}

func setFaults(base, spec string) error {
	req, _ := http.NewRequest(http.MethodPut, base+"/sandbox/v1/faults", strings.NewReader(spec))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := api.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT faults %q: %d %s", spec, resp.StatusCode, b)
	}
	return nil
}

func storageURL(base, name string) string {
	return base + "/upload/storage/v1/b/" + bucket + "/o?name=" + url.QueryEscape(name)
}

func gmailSendURL(base string) string { return base + "/upload/gmail/v1/users/me/messages/send" }

// object is the part of the Storage Object resource the soak checks.
type object struct {
	Name       string `json:"name"`
	Size       string `json:"size"`
	MD5Hash    string `json:"md5Hash"`
	Generation string `json:"generation"`
}

// checkObject reads an object back and compares it with the source: bytes
// (alt=media), md5Hash of the stored object and of the engine's final
// answer, and the generation (a later second completion would change it).
func checkObject(base, name string, data []byte, answer []byte) error {
	var fromAnswer object
	if err := json.Unmarshal(answer, &fromAnswer); err != nil {
		return fmt.Errorf("the final answer is not an Object: %v", err)
	}
	var stored object
	if err := apiJSON(base, "/storage/v1/b/"+bucket+"/o/"+url.PathEscape(name), &stored); err != nil {
		return err
	}
	sum := md5.Sum(data)
	want := base64.StdEncoding.EncodeToString(sum[:])
	switch {
	case fromAnswer.Name != name:
		return fmt.Errorf("the final answer names %q", fromAnswer.Name)
	case fromAnswer.MD5Hash != want || stored.MD5Hash != want:
		return fmt.Errorf("md5Hash: answer %s, stored %s, source %s", fromAnswer.MD5Hash, stored.MD5Hash, want)
	case stored.Size != fmt.Sprint(len(data)):
		return fmt.Errorf("size: stored %s, source %d", stored.Size, len(data))
	case stored.Generation != fromAnswer.Generation:
		return fmt.Errorf("%w: generation %s answered, %s stored", errDuplicate, fromAnswer.Generation, stored.Generation)
	}
	got, code, err := apiGet(base, "/storage/v1/b/"+bucket+"/o/"+url.PathEscape(name)+"?alt=media")
	if err != nil {
		return err
	}
	if code != http.StatusOK || !bytes.Equal(got, data) {
		return fmt.Errorf("read back %d bytes (status %d) that differ from the %d sent", len(got), code, len(data))
	}
	return nil
}

var errDuplicate = errors.New("created more than once")

// checkMessage reads a Gmail message back in raw form.
func checkMessage(base string, data []byte, answer []byte) error {
	var msg struct {
		ID       string   `json:"id"`
		LabelIDs []string `json:"labelIds"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil || msg.ID == "" {
		return fmt.Errorf("the final answer is not a Message: %s", answer)
	}
	var raw struct {
		Raw string `json:"raw"`
	}
	if err := apiJSON(base, "/gmail/v1/users/me/messages/"+url.PathEscape(msg.ID)+"?format=raw", &raw); err != nil {
		return err
	}
	got, err := base64.URLEncoding.DecodeString(raw.Raw)
	if err != nil {
		return fmt.Errorf("raw is not base64url: %v", err)
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("message read back: %d bytes that differ from the %d sent", len(got), len(data))
	}
	return nil
}

func messagesTotal(base string) (int, error) {
	var p struct {
		MessagesTotal int `json:"messagesTotal"`
	}
	err := apiJSON(base, "/gmail/v1/users/me/profile", &p)
	return p.MessagesTotal, err
}

// storeSessions counts, from the sandbox's own store, the completed
// resumable sessions per target (method and object name). It is the record
// that outlives the sandbox's in-memory counters across restarts. The
// layout (bucket "sessions", JSON with upload.method, upload.query, done,
// resultCode) is the sandbox's private format: if it changes, this fails
// loudly rather than counting nothing.
func storeSessions(dir string) (created int, done map[string]int, err error) {
	db, err := bolt.Open(filepath.Join(dir, "sandbox.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return 0, nil, fmt.Errorf("open the sandbox's store: %w", err)
	}
	defer db.Close()
	done = map[string]int{}
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("sessions"))
		if b == nil {
			return errors.New("the sandbox's store has no sessions bucket: its layout changed; update soak/sandboxes.go")
		}
		return b.ForEach(func(k, v []byte) error {
			var s struct {
				Upload *struct {
					Method string              `json:"method"`
					Query  map[string][]string `json:"query"`
				} `json:"upload"`
				Done       bool `json:"done"`
				ResultCode int  `json:"resultCode"`
			}
			if err := json.Unmarshal(v, &s); err != nil || s.Upload == nil || s.Upload.Method == "" {
				return fmt.Errorf("session %s does not decode as expected (%v): the store's layout changed", k, err)
			}
			created++
			if s.Done && s.ResultCode < 300 {
				name := ""
				if n := s.Upload.Query["name"]; len(n) > 0 {
					name = n[0]
				}
				done[s.Upload.Method+" "+name]++
			}
			return nil
		})
	})
	return created, done, err
}

// countingTransport counts the request body bytes the engine hands to the
// network for session requests (the media bytes), resends included: the
// client's side of "bytes sent", next to the sandbox's BytesReceived.
type countingTransport struct {
	base  http.RoundTripper
	media atomic.Int64
}

func newCountingTransport() *countingTransport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // everything is on 127.0.0.1
	return &countingTransport{base: t}
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody && req.URL.Query().Has("upload_id") {
		req = req.Clone(req.Context())
		req.Body = &countingBody{rc: req.Body, n: &t.media}
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections passes on what the engine does after a wake.
func (t *countingTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type countingBody struct {
	rc io.ReadCloser
	n  *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (b *countingBody) Close() error { return b.rc.Close() }

// addrFree reports whether addr can be listened on now: after a crash
// the address must come back for the journal's session URIs to work.
func addrFree(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func writeFileData(dir, name string, data []byte) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, data, 0o600)
}

// carrierBinary is the absolute path of the carrier binary that the kill
// and restart phases run, which must be there.
func carrierBinary(c *config) (string, error) {
	bin, err := filepath.Abs(c.bin)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("the carrier binary: %w (build it with `go build -o bin/carrier .`)", err)
	}
	return bin, nil
}
