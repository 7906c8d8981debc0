package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"carrier/transfer"

	"carrier/internal/syncio"
)

// person is one person's Carrier: folders of their own (journal, data) in
// the row's scratch folder, the keychain of the private D-Bus session.
type person struct {
	bin   string
	env   []string
	state string // the journal's folder
	box   *box
}

func newPerson(bin, dir string, b *box) *person {
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	env := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "CARRIER_TOKEN" || strings.HasPrefix(k, "XDG_") && k != "XDG_RUNTIME_DIR" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	return &person{bin: bin, env: env, state: filepath.Join(home, "state", "carrier"), box: b}
}

var (
	consentForm = regexp.MustCompile(`<form method="post" action="([^"]+)"><input type="hidden" name="id" value="([^"]+)">`)
	allowButton = regexp.MustCompile(`<button id="allow" name="decision" value="allow">`)
)

// login runs `carrier login --no-browser` for account and plays the
// browser on the address it prints: the sandbox's consent page (Allow),
// then the redirect to Carrier's listener. It returns login's stdout.
func (p *person) login(ctx context.Context, account string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, "login", "--no-browser", "--endpoint", p.box.base, "--for", "send,links", "--account", account)
	// The sandbox signs in only who holds its token (the consent proof).
	cmd.Env = append(p.env, "CARRIER_TOKEN="+p.box.token)
	var errOut syncio.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var all strings.Builder
	browsed := make(chan error, 1)
	opened := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		if strings.HasPrefix(line, "http") && !opened {
			opened = true
			go func() { browsed <- visit(line) }()
		}
	}
	if err := cmd.Wait(); err != nil {
		return all.String(), fmt.Errorf("carrier login --account %s: %v; %s", account, err, lastLines(errOut.String(), 3))
	}
	if !opened {
		return all.String(), errors.New("carrier login printed no address to open")
	}
	// The browser may still be reading the page Carrier's listener
	// answered when login ends.
	select {
	case err := <-browsed:
		if err != nil {
			return all.String(), fmt.Errorf("the browser: %w", err)
		}
	case <-ctx.Done():
		return all.String(), errors.New("the browser did not come back")
	}
	if !strings.Contains(all.String(), "Signed in as "+account) {
		return all.String(), fmt.Errorf("carrier login did not sign in %s: %s", account, lastLines(all.String(), 3))
	}
	return all.String(), nil
}

func visit(authURL string) error {
	client := &http.Client{Timeout: 20 * time.Second}
	r, err := client.Get(authURL)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if m := consentForm.FindSubmatch(body); m != nil && allowButton.Match(body) {
		next, _ := r.Request.URL.Parse(html.UnescapeString(string(m[1])))
		form := url.Values{"id": {html.UnescapeString(string(m[2]))}, "decision": {"allow"}}
		req, _ := http.NewRequest(http.MethodPost, next.String(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", next.Scheme+"://"+next.Host)
		if r, err = client.Do(req); err != nil {
			return err
		}
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	if r.StatusCode != 200 || r.Request.URL.Hostname() != "127.0.0.1" || !strings.Contains(string(body), "close this window") {
		return fmt.Errorf("the browser ended at %s with %s", r.Request.URL.Redacted(), r.Status)
	}
	return nil
}

// proc is a carrier process running in the background.
type proc struct {
	cmd    *exec.Cmd
	out    syncio.Buffer
	errOut syncio.Buffer
	exited chan struct{}
	code   int
}

func (p *person) start(args ...string) (*proc, error) {
	pr := &proc{exited: make(chan struct{})}
	pr.cmd = exec.Command(p.bin, args...)
	pr.cmd.Env = p.env
	pr.cmd.Stdout, pr.cmd.Stderr = &pr.out, &pr.errOut
	if err := pr.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		pr.cmd.Wait()
		pr.code = pr.cmd.ProcessState.ExitCode()
		close(pr.exited)
	}()
	return pr, nil
}

func (pr *proc) running() bool {
	select {
	case <-pr.exited:
		return false
	default:
		return true
	}
}

func (pr *proc) kill() {
	pr.cmd.Process.Signal(syscall.SIGKILL)
	<-pr.exited
}

// wait waits for the process to end by itself, killing it at the deadline.
func (pr *proc) wait(ctx context.Context, limit time.Duration) (int, error) {
	select {
	case <-pr.exited:
		return pr.code, nil
	case <-ctx.Done():
	case <-time.After(limit):
	}
	pr.kill()
	return -1, fmt.Errorf("did not end within %s; stderr: %s", limit, lastLines(pr.errOut.String(), 3))
}

// retries counts the retry lines the CLI printed (each spent retry).
func (pr *proc) retries() int { return strings.Count(pr.errOut.String(), ": retrying in ") }

// record reads job id's record from the journal; id "" is the only job.
func (p *person) record(id string) (*transfer.Record, error) {
	j, err := transfer.OpenJournal(p.state)
	if err != nil {
		return nil, err
	}
	if id != "" {
		return j.Load(id)
	}
	recs, err := j.List()
	if err != nil {
		return nil, err
	}
	var ups []*transfer.Record
	for _, r := range recs {
		if r.Path != "" && r.Type == transfer.Resumable {
			ups = append(ups, r)
		}
	}
	if len(ups) != 1 {
		return nil, fmt.Errorf("%d uploads in the journal, want 1", len(ups))
	}
	return ups[0], nil
}

// await polls the journal (another process's files: there is no event to
// wait on) until cond holds for job id, or the process ends, or limit.
func (p *person) await(ctx context.Context, pr *proc, id string, limit time.Duration, what string, cond func(*transfer.Record) bool) (*transfer.Record, error) {
	deadline := time.Now().Add(limit)
	for {
		if rec, err := p.record(id); err == nil && cond(rec) {
			return rec, nil
		}
		if pr != nil && !pr.running() {
			if rec, err := p.record(id); err == nil && cond(rec) {
				return rec, nil
			}
			return nil, fmt.Errorf("the carrier process ended (exit %d) before %s; stderr: %s", pr.code, what, lastLines(pr.errOut.String(), 3))
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no %s within %s", what, limit)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sparseFile writes a file of size bytes that is mostly a hole, with 4 KiB
// of random bytes every 32 MiB so that an offset gone wrong changes the
// content; it returns its SHA-256.
func sparseFile(path string, size int64, seed uint64) (string, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return "", err
	}
	r := rand.New(rand.NewPCG(seed, uint64(size)))
	block := make([]byte, 4096)
	for off := int64(0); off < size; off += 32 << 20 {
		for i := range block {
			block[i] = byte(r.Uint32())
		}
		n := min(int64(len(block)), size-off)
		if _, err := f.WriteAt(block[:n], off); err != nil {
			f.Close()
			return "", err
		}
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	f, err = os.Open(path)
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
