package app

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"carrier/sandbox"
)

// The embedded sandbox's token opens everything the person composed, so
// it goes only to a process that proves it serves the sandbox's data
// folder. A port recorded in the folder proves nothing: once the sandbox
// stops, anyone on the machine may listen there.
//
// The proof is a challenge. The client sends a fresh random nonce, with no
// credential, to sandbox.ProofPath; the sandbox answers with sandbox.ProofMAC
// of it, keyed
// with the folder's token (which only its owner can read) and bound to the
// port the request reached, so that a process on another port cannot relay
// the question to the real sandbox and pass its answer on.

// ErrNoProof says the server has no proof endpoint (it answers 401, 404
// or 405). Every sandbox Carrier starts answers the proof, so a server
// without it is not trusted with the token: what a data folder says (a
// port, a running file) is no proof, since anyone may listen on a port
// the sandbox left.
var ErrNoProof = errors.New("the server offers no proof of the folder it serves")

// ErrNotTheSandbox says a process listens where the embedded sandbox
// should, but could not show that it serves the sandbox's folder. Nothing
// is sent to it: not the token, not a message.
var ErrNotTheSandbox = errors.New("another program listens where Carrier's sandbox should")

// Prover asks the server at base for the MAC of nonce (see sandbox.ProofPath).
type Prover interface {
	Prove(ctx context.Context, base string, nonce []byte) (mac []byte, err error)
}

// HTTPProver asks over HTTP, without credentials and without following
// redirects.
type HTTPProver struct{ Client *http.Client }

func (p HTTPProver) Prove(ctx context.Context, base string, nonce []byte) ([]byte, error) {
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	noRedirect := *c
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+sandbox.ProofPath+"?nonce="+base64.RawURLEncoding.EncodeToString(nonce), nil)
	if err != nil {
		return nil, err
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusUnauthorized, http.StatusMethodNotAllowed:
		return nil, ErrNoProof
	default:
		return nil, fmt.Errorf("%w (it answered %s)", ErrNotTheSandbox, resp.Status)
	}
	var a struct {
		MAC string `json:"mac"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&a); err != nil {
		return nil, fmt.Errorf("%w (its proof is not JSON)", ErrNotTheSandbox)
	}
	mac, err := base64.RawURLEncoding.DecodeString(a.MAC)
	if err != nil {
		return nil, fmt.Errorf("%w (its proof is not base64url)", ErrNotTheSandbox)
	}
	return mac, nil
}

// VerifiedToken returns the token of the sandbox whose data folder is dir
// when the process at base proves it serves that folder; "" with a nil
// error when base is not where the folder says its sandbox serves (then
// the token is not base's business); "" with an error wrapping
// ErrNotTheSandbox when base is the folder's address but the process there
// cannot prove it serves the folder; "" with another error when nobody
// answers there.
func VerifiedToken(ctx context.Context, dir, base string, p Prover) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) || !folderNames(dir, u) {
		return "", nil
	}
	token := readToken(dir)
	if token == "" {
		return "", nil
	}
	if p == nil {
		p = HTTPProver{}
	}
	nonce := make([]byte, 32)
	rand.Read(nonce)
	b := origin(u)
	mac, err := p.Prove(ctx, b, nonce)
	switch {
	case err == nil:
		if hmac.Equal(mac, sandbox.ProofMAC(token, nonce, u.Port())) {
			return token, nil
		}
		return "", fmt.Errorf("%w: the program at %s gave a wrong proof of serving %s; nothing was sent to it. Stop that program, or start Carrier's sandbox (it moves to a free port)", ErrNotTheSandbox, b, dir)
	case errors.Is(err, ErrNoProof):
		return "", fmt.Errorf("%w: the program at %s offers no proof of serving %s (an impostor, or a Carrier older than this one still running); nothing was sent to it. Quit it, or start Carrier's sandbox (it moves to a free port)", ErrNotTheSandbox, b, dir)
	case errors.Is(err, ErrNotTheSandbox):
		return "", fmt.Errorf("%w: %s: %v; nothing was sent to it", ErrNotTheSandbox, b, err)
	}
	return "", err
}

// readRunning reads the sandbox's running file: "pid N at URL".
func readRunning(dir string) (pid int, where string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "running"))
	if err != nil {
		return 0, "", false
	}
	f := strings.Fields(string(b))
	if len(f) < 4 || f[0] != "pid" || f[2] != "at" {
		return 0, "", false
	}
	pid, err = strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, f[3], true
}

// folderNames reports whether the folder records u as its sandbox's
// address: the port it keeps, or where its running sandbox serves.
func folderNames(dir string, u *url.URL) bool {
	if b, err := os.ReadFile(filepath.Join(dir, portFile)); err == nil && strings.TrimSpace(string(b)) == u.Port() {
		return true
	}
	_, where, ok := readRunning(dir)
	return ok && Origin(where) == origin(u)
}

func readToken(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, tokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsEmbeddedAddress reports whether raw is on the address the embedded
// sandbox of dir keeps (its port on loopback) or serves at now.
func IsEmbeddedAddress(dir, raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "http" && isLoopbackHost(u.Hostname()) && folderNames(dir, u)
}

// recordedAddress is the address the folder's port file records, or "".
func recordedAddress(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, portFile))
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return ""
	}
	return "http://127.0.0.1:" + strings.TrimSpace(string(b))
}
