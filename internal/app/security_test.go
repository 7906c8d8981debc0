package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"carrier/transfer"

	"carrier/sandbox"
)

// folderProver answers the challenge as the sandbox serving dir would,
// from the folder's token, for the port the question came to.
type folderProver string

func (dir folderProver) Prove(_ context.Context, base string, nonce []byte) ([]byte, error) {
	u, _ := url.Parse(base)
	return sandbox.ProofMAC(readToken(string(dir)), nonce, u.Port()), nil
}

// proofHandler is the sandbox's side of sandbox.ProofPath as this client expects
// it: the MAC of the nonce, keyed with the token, bound to the local port
// the request reached.
func proofHandler(token string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		nonce, err := base64.RawURLEncoding.DecodeString(r.URL.Query().Get("nonce"))
		if err != nil || len(nonce) != 32 || r.Header.Get("Authorization") != "" {
			http.Error(w, "bad nonce", http.StatusBadRequest)
			return
		}
		_, port, _ := net.SplitHostPort(r.Context().Value(http.LocalAddrContextKey).(net.Addr).String())
		json.NewEncoder(w).Encode(map[string]string{"mac": base64.RawURLEncoding.EncodeToString(sandbox.ProofMAC(token, nonce, port))})
	}
}

// impostor listens at addr and keeps every Authorization header it sees.
type impostor struct {
	mu    sync.Mutex
	seen  []string // method path Authorization
	proof http.HandlerFunc
}

func (m *impostor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == sandbox.ProofPath && m.proof != nil {
		m.proof(w, r)
		return
	}
	m.mu.Lock()
	m.seen = append(m.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	m.mu.Unlock()
	http.Error(w, `{"error":{"message":"whatever"}}`, http.StatusUnauthorized)
}

func (m *impostor) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

func listenAt(t *testing.T, addr string, h http.Handler) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the impostor cannot take %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// deadPID is the id of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// Finding: the static sandbox token followed a stale port file to whoever
// listened there next. The attacker's steps: wait for the sandbox to stop
// (here: killed, leaving its running file), listen on its port, and wait
// for `carrier resume` (or the app) to ask for the folder's credential.
func TestSandboxTokenNotGivenToWhoeverTakesItsPort(t *testing.T) {
	for _, c := range []struct {
		name  string
		proof http.HandlerFunc
	}{
		{"impostor claims an old sandbox (no proof endpoint)", nil},
		{"impostor answers the proof with a guess", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"mac":"` + base64.RawURLEncoding.EncodeToString(make([]byte, 32)) + `"}`))
		}},
		{"impostor answers the proof with the MAC of another port", func(w http.ResponseWriter, r *http.Request) {
			// What a relay to the real sandbox elsewhere would get back.
			nonce, _ := base64.RawURLEncoding.DecodeString(r.URL.Query().Get("nonce"))
			w.Write([]byte(`{"mac":"` + base64.RawURLEncoding.EncodeToString(sandbox.ProofMAC("unknown", nonce, "1")) + `"}`))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := seededDir(t)
			e, err := StartEmbedded(context.Background(), dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			token := e.Token
			e.Close()
			// Killed rather than closed: the running file stays, its process gone.
			os.WriteFile(filepath.Join(dir, "running"), []byte("pid "+itoa(deadPID(t))+" at "+e.URL+"\n"), 0o600)

			m := &impostor{proof: c.proof}
			listenAt(t, strings.TrimPrefix(e.URL, "http://"), m)

			creds := NewCredentials(context.Background(), dir)
			start, _ := http.NewRequest("POST", e.URL+"/upload/gmail/v1/users/me/messages/send?uploadType=resumable", nil)
			if err := creds.Authorize(context.Background(), start); !errors.Is(err, ErrNotTheSandbox) || start.Header.Get("Authorization") != "" {
				t.Fatalf("start of a session at the impostor: %v, Authorization %q", err, start.Header.Get("Authorization"))
			}
			// Not even a session URI (and the message bytes) go there.
			session, _ := http.NewRequest("PUT", e.URL+"/upload/gmail/v1/users/me/messages/send?uploadType=resumable&upload_id=abc", nil)
			if err := creds.Authorize(context.Background(), session); !errors.Is(err, ErrNotTheSandbox) {
				t.Fatalf("session URI at the impostor: %v", err)
			}
			for _, r := range m.requests() {
				if strings.Contains(r, token) {
					t.Fatalf("the impostor got the token: %s", r)
				}
			}
			// And a new Carrier on the folder starts its own sandbox elsewhere.
			again, err := StartEmbedded(context.Background(), dir, nil)
			if err != nil || again.URL == e.URL || again.Sandbox() == nil {
				t.Fatalf("restart with the port taken: %+v %v", again, err)
			}
			again.Close()
		})
	}
}

// The sandbox that proves it serves the folder gets its token, whether
// the client finds it by the folder's port or by its running file.
func TestSandboxTokenGoesToTheSandboxThatServesTheFolder(t *testing.T) {
	t.Run("proof", func(t *testing.T) {
		dir := t.TempDir()
		token, _ := SandboxToken(dir)
		mux := http.NewServeMux()
		mux.HandleFunc("GET "+sandbox.ProofPath, proofHandler(token))
		var got string
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") })
		srv := httptest.NewServer(mux)
		defer srv.Close()
		os.WriteFile(filepath.Join(dir, portFile), []byte(mustPort(srv.URL)+"\n"), 0o600)
		tok, err := VerifiedToken(context.Background(), dir, srv.URL, nil)
		if err != nil || tok != token {
			t.Fatalf("VerifiedToken: %q %v", tok, err)
		}
		creds := NewCredentials(context.Background(), dir)
		req, _ := http.NewRequest("GET", srv.URL+"/gmail/v1/users/me/profile", nil)
		if err := creds.Authorize(context.Background(), req); err != nil || req.Header.Get("Authorization") != "Bearer "+token {
			t.Fatalf("Authorize: %v %q (%s)", err, req.Header.Get("Authorization"), got)
		}
	})
	t.Run("the app's sandbox, found by its running file", func(t *testing.T) {
		dir := seededDir(t)
		e, err := StartEmbedded(context.Background(), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		creds := NewCredentials(context.Background(), dir) // as `carrier resume` beside the app
		req, _ := http.NewRequest("GET", e.URL+"/gmail/v1/users/me/profile", nil)
		if err := creds.Authorize(context.Background(), req); err != nil || req.Header.Get("Authorization") != "Bearer "+e.Token {
			t.Fatalf("Authorize: %v %q", err, req.Header.Get("Authorization"))
		}
	})
}

// seededDir is a sandbox folder whose recorded port is a free one, so
// that tests keep off 8089, which a person's Carrier may want.
func seededDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	os.WriteFile(filepath.Join(dir, portFile), []byte(port+"\n"), 0o600)
	return dir
}

func mustPort(raw string) string { u, _ := url.Parse(raw); return u.Port() }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Finding: --token / CARRIER_TOKEN went to every host of the journal. The
// token given for one server goes to that origin alone.
func TestStaticTokenOnlyToItsOrigin(t *testing.T) {
	creds, err := NewCredentials(context.Background(), t.TempDir()).Static("HTTP://127.0.0.1:1234/upload/storage/v1/b/x/o", "given-token")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url, want string
		err       error
	}{
		{"http://127.0.0.1:1234/upload/storage/v1/b/x/o?uploadType=resumable", "Bearer given-token", nil},
		{"http://127.0.0.1:1234/upload/storage/v1/b/x/o?uploadType=resumable&upload_id=s", "Bearer given-token", nil},
		{"https://evil.example/upload/storage/v1/b/x/o?uploadType=resumable", "", ErrNoCredentials},
		{"http://127.0.0.1:1235/upload/storage/v1/b/x/o?uploadType=resumable", "", ErrNoCredentials},
		// A session URI a server points at another host carries nothing.
		{"https://evil.example/upload/storage/v1/b/x/o?uploadType=resumable&upload_id=s", "", nil},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("PUT", c.url, nil)
		err := creds.Authorize(context.Background(), req)
		if !errors.Is(err, c.err) || req.Header.Get("Authorization") != c.want {
			t.Errorf("%s: %v, Authorization %q", c.url, err, req.Header.Get("Authorization"))
		}
	}
	if _, err := NewCredentials(context.Background(), "").Static("not a url", "t"); err == nil {
		t.Error("a token for no server was accepted")
	}
}

// Finding: folders fell back to /tmp/carrier-* (which another user may
// make first), and an existing folder's owner and mode went unchecked.
func TestFoldersArePrivate(t *testing.T) {
	t.Run("mode", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("mode bits are Unix's; Windows gets an owner-only access list (internal/platform)")
		}
		dir := filepath.Join(t.TempDir(), "state")
		os.Mkdir(dir, 0o755)
		os.Chmod(dir, 0o755)
		if err := PrivateDir(dir); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
			t.Fatalf("mode %o, want 0700", fi.Mode().Perm())
		}
	})
	t.Run("link", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("making a symbolic link takes a privilege on Windows")
		}
		base := t.TempDir()
		os.Symlink(t.TempDir(), filepath.Join(base, "state"))
		if err := PrivateDir(filepath.Join(base, "state")); !errors.Is(err, ErrNotPrivate) {
			t.Fatalf("a link was taken for the folder: %v", err)
		}
	})
	t.Run("another user's", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("making a folder another user's takes root")
		}
		// The attacker's step: make the temporary fallback first, open to all.
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		t.Setenv("HOME", "")
		t.Setenv("XDG_DATA_HOME", "")
		t.Setenv("XDG_STATE_HOME", "")
		dirs := DefaultDirs()
		if !strings.HasPrefix(dirs.Data, filepath.Join(tmp, "carrier-0")) || !strings.HasPrefix(dirs.State, filepath.Join(tmp, "carrier-0")) {
			t.Fatalf("fallback folders %+v are not this user's own", dirs)
		}
		top := filepath.Join(tmp, "carrier-0")
		os.Mkdir(top, 0o777)
		os.Chmod(top, 0o777)
		os.Chown(top, 65534, 65534)
		if err := PrivateDir(dirs.State); !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "another user") {
			t.Fatalf("a folder under another user's was used: %v", err)
		}
		if _, err := StartEmbedded(context.Background(), dirs.Sandbox(), nil); !errors.Is(err, ErrNotPrivate) {
			t.Fatalf("the sandbox started in another user's folder: %v", err)
		}
		own := filepath.Join(t.TempDir(), "journal")
		os.Mkdir(own, 0o700)
		os.Chown(own, 65534, 65534)
		if _, err := OpenQueue(testQueueConfig(own), NewSpool(SpoolDir(own))); !errors.Is(err, ErrNotPrivate) {
			t.Fatalf("a journal in another user's folder was opened: %v", err)
		}
	})
}

func testQueueConfig(state string) transfer.Config {
	return transfer.Config{StateDir: state, Auth: transfer.StaticToken("t")}
}

// The desktop app finds the sandbox's port taken by another program: the
// sandbox moves, and jobs naming the old address send nothing there.
func TestAppBarsTheSandboxsOldAddress(t *testing.T) {
	dirs := Dirs{Data: t.TempDir(), State: t.TempDir()}
	m := &impostor{}
	srv := httptest.NewServer(m)
	defer srv.Close()
	os.MkdirAll(dirs.Sandbox(), 0o700)
	os.WriteFile(filepath.Join(dirs.Sandbox(), portFile), []byte(mustPort(srv.URL)+"\n"), 0o600)
	a, err := Open(context.Background(), dirs, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Sandbox.URL == srv.URL {
		t.Fatal("the sandbox shares its port with another program")
	}
	a.Creds.Reset() // a sign-in later on does not lift the bar
	session, _ := http.NewRequest("PUT", srv.URL+"/upload/gmail/v1/users/me/messages/send?uploadType=resumable&upload_id=abc", nil)
	if err := a.Creds.Authorize(context.Background(), session); !errors.Is(err, ErrNotTheSandbox) {
		t.Fatalf("a session URI at the old address: %v", err)
	}
	own, _ := http.NewRequest("GET", a.Sandbox.URL+"/gmail/v1/users/me/profile", nil)
	if err := a.Creds.Authorize(context.Background(), own); err != nil || own.Header.Get("Authorization") != "Bearer "+a.Sandbox.Token {
		t.Fatalf("the sandbox's own address: %v", err)
	}
}
