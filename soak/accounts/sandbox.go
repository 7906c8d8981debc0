package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"carrier/sandbox"
)

// box is an in-process sandbox behind a handler that sees what a counting
// proxy would: the body bytes each session's requests delivered, and the
// refresh tokens the token endpoint hands out (kept in memory only, to
// revoke one as a person does at myaccount.google.com; never printed).
type box struct {
	sb    *sandbox.Sandbox
	base  string
	token string // the sandbox's static token: only `carrier login` gets it, for the consent proof
	srv   *http.Server
	tcp   atomic.Int64 // every byte read from the sandbox's connections, headers and all
	skew  atomic.Int64 // how far the sandbox's clock is ahead of the real one

	mu       sync.Mutex
	bySess   map[string]int64 // upload_id -> body bytes read by the sandbox
	refresh  []string         // in the order issued
	requests int
}

func openBox(dir string, needsToken bool, tokenTTL, refreshTTL time.Duration, accounts []string) (*box, error) {
	var tb [16]byte
	rand.Read(tb[:])
	b := &box{token: hex.EncodeToString(tb[:]), bySess: map[string]int64{}}
	now := func() time.Time { return time.Now().Add(time.Duration(b.skew.Load())) }
	sb, err := sandbox.Open(sandbox.Options{Dir: dir, Token: b.token, AutoConsent: true, TokenTTL: tokenTTL, RefreshTokenTTL: refreshTTL,
		SessionNeedsToken: needsToken, Accounts: accounts, NoSync: true, DriveQuota: -1, Now: now})
	if err != nil {
		return nil, err
	}
	ln, err := sandbox.Listen("127.0.0.1:0")
	if err != nil {
		sb.Close()
		return nil, err
	}
	b.sb, b.base = sb, sandbox.URL(ln)
	b.srv = &http.Server{Handler: b.handler(sb.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go b.srv.Serve(countingListener{ln, &b.tcp})
	return b, nil
}

func (b *box) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.srv.Shutdown(ctx)
	b.srv.Close()
	b.sb.Close()
}

// countingListener counts what arrives on its connections, as a counting
// proxy in front of the sandbox would.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type countingBody struct {
	io.ReadCloser
	n *int64
	b *box
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.b.mu.Lock()
	*c.n += int64(n)
	c.b.mu.Unlock()
	return n, err
}

func (b *box) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.URL.Query().Get("upload_id"); id != "" && r.Body != nil {
			b.mu.Lock()
			b.requests++
			b.mu.Unlock()
			var got int64
			r.Body = countingBody{ReadCloser: r.Body, n: &got, b: b}
			defer func() {
				b.mu.Lock()
				b.bySess[id] += got
				b.mu.Unlock()
			}()
		}
		if r.URL.Path != "/token" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var m struct {
			Refresh string `json:"refresh_token"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &m) == nil && m.Refresh != "" {
			b.mu.Lock()
			b.refresh = append(b.refresh, m.Refresh)
			b.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// lastRefresh is the refresh token issued last (by the sign-in just made).
func (b *box) lastRefresh() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.refresh) == 0 {
		return ""
	}
	return b.refresh[len(b.refresh)-1]
}

// sessionBytes is what the sandbox read of the bodies sent to the session
// whose URI is session.
func (b *box) sessionBytes(session string) int64 {
	u, err := url.Parse(session)
	if err != nil {
		return -1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bySess[u.Query().Get("upload_id")]
}

// revoke ends a refresh token (and its access tokens) as Google's revoke
// endpoint does.
func (b *box) revoke(refresh string) error {
	resp, err := http.PostForm(b.base+"/revoke", url.Values{"token": {refresh}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoke: %s", resp.Status)
	}
	return nil
}

// driveFile reads a file's size and SHA-256 as Drive states them, with
// the static token (the default account's).
func (b *box) driveFile(id string) (size int64, sha string, err error) {
	req, _ := http.NewRequest(http.MethodGet, b.base+"/drive/v3/files/"+url.PathEscape(id)+"?fields=size,sha256Checksum", nil)
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, "", fmt.Errorf("files.get %s: %s %s", id, resp.Status, strings.TrimSpace(string(body)))
	}
	var f struct {
		Size   string `json:"size"`
		SHA256 string `json:"sha256Checksum"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil {
		return 0, "", err
	}
	fmt.Sscan(f.Size, &size)
	return size, f.SHA256, nil
}
