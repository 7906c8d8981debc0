package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carrier/sandbox"
)

// Embedded is a sandbox Carrier talks to when no Google account is set up:
// one served in this process, or the one another Carrier process already
// serves on the same data folder.
type Embedded struct {
	URL   string
	Token string
	sb    *sandbox.Sandbox // nil when another process serves it
	stop  context.CancelFunc
	done  chan error
}

// Sandbox is the in-process sandbox, or nil when another process serves it.
func (e *Embedded) Sandbox() *sandbox.Sandbox { return e.sb }

// Close stops an in-process sandbox; it leaves another process's alone.
func (e *Embedded) Close() error {
	if e.sb == nil {
		return nil
	}
	e.stop()
	err := <-e.done
	if cerr := e.sb.Close(); err == nil {
		err = cerr
	}
	return err
}

// DefaultSandboxAddr is where the sandbox listens unless told otherwise.
const DefaultSandboxAddr = "127.0.0.1:8089"

const (
	tokenFile = "token"
	portFile  = "port"
)

// SandboxToken returns the data folder's token, making one on first use.
// It stays the same across runs so jobs in the journal can start their
// sessions again after a restart. The file is private, like the store.
func SandboxToken(dir string) (string, error) {
	tok, _, err := NewSandboxToken(dir)
	return tok, err
}

// NewSandboxToken is SandboxToken, and whether the token was made now (the
// one time it is worth printing).
func NewSandboxToken(dir string) (token string, made bool, err error) {
	if err := PrivateDir(dir); err != nil {
		return "", false, err
	}
	p := filepath.Join(dir, tokenFile)
	if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) >= 16 {
		return strings.TrimSpace(string(b)), false, nil
	}
	b := make([]byte, 24)
	rand.Read(b)
	tok := "sbx-" + base64.RawURLEncoding.EncodeToString(b)
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("cannot save the sandbox token: %w", err)
	}
	return tok, true, nil
}

// StartEmbedded opens the sandbox in dir and serves it on loopback, at the
// port it had last time when it can (session URIs in the journal name it),
// else 8089, else any free port. If another process already serves the
// folder, its address is used instead.
func StartEmbedded(ctx context.Context, dir string, logger *slog.Logger) (*Embedded, error) {
	if err := PrivateDir(dir); err != nil {
		return nil, err
	}
	token, err := SandboxToken(dir)
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Open(sandbox.Options{Dir: dir, Token: token, Logger: logger})
	var running *sandbox.ErrAlreadyRunning
	if errors.As(err, &running) {
		url := runningURL(running.Where)
		if url == "" {
			return nil, fmt.Errorf("%w, but it does not say where it listens", err)
		}
		// The token goes only to a process that shows it serves the folder.
		if _, err := VerifiedToken(ctx, dir, url, nil); err != nil {
			return nil, fmt.Errorf("a sandbox holds %s, but %w", dir, err)
		}
		return &Embedded{URL: url, Token: token}, nil
	}
	if err != nil {
		return nil, err
	}
	ln, err := listenStable(dir)
	if err != nil {
		sb.Close()
		return nil, err
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	e := &Embedded{URL: sandbox.URL(ln), Token: token, sb: sb, stop: stop, done: make(chan error, 1)}
	go func() { e.done <- sb.Serve(sctx, ln) }()
	return e, nil
}

func runningURL(where string) string {
	if i := strings.Index(where, "http://"); i >= 0 {
		return strings.Fields(where[i:])[0]
	}
	return ""
}

func listenStable(dir string) (net.Listener, error) {
	var tries []string
	if b, err := os.ReadFile(filepath.Join(dir, portFile)); err == nil {
		tries = append(tries, "127.0.0.1:"+strings.TrimSpace(string(b)))
	}
	tries = append(tries, DefaultSandboxAddr, "127.0.0.1:0")
	var lastErr error
	for _, addr := range tries {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			lastErr = err
			continue
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		os.WriteFile(filepath.Join(dir, portFile), []byte(port+"\n"), 0o600)
		return ln, nil
	}
	return nil, fmt.Errorf("cannot listen on loopback for the sandbox: %w", lastErr)
}

// SetFaults switches the sandbox's fault injection, in this process or
// through the control endpoint of the one that serves the folder.
func (e *Embedded) SetFaults(spec string) error {
	if e.sb != nil {
		return e.sb.SetFaults(spec)
	}
	req, err := http.NewRequest(http.MethodPut, e.URL+"/sandbox/v1/faults", strings.NewReader(spec))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.Token)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return errors.New(strings.TrimSpace(string(b)))
	}
	return nil
}
