package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"carrier/internal/app"
	"carrier/transfer"

	"carrier/internal/syncio"
)

// recorder is a server that keeps what it was sent and answers as told.
type recorder struct {
	mu     sync.Mutex
	auths  []string
	answer func(w http.ResponseWriter, r *http.Request)
}

func (s *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.auths = append(s.auths, r.Method+" "+r.URL.Path+" ["+r.Header.Get("Authorization")+"]")
	s.mu.Unlock()
	if s.answer != nil {
		s.answer(w, r)
		return
	}
	http.Error(w, `{"error":{"code":401,"message":"who are you"}}`, http.StatusUnauthorized)
}

func (s *recorder) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

// queueJob records an unfinished resumable job in the journal of state,
// as `carrier upload` leaves one when it is stopped before starting.
func queueJob(t *testing.T, state, id, url string) {
	t.Helper()
	j, err := transfer.OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := randomFile(t, 1000)
	fi, _ := os.Stat(path)
	rec := &transfer.Record{Version: 1, ID: id, Created: time.Now(), URL: url, Method: "POST", Type: transfer.Resumable,
		ContentType: "application/octet-stream", Path: path, Size: fi.Size(), ModTime: fi.ModTime(), ChunkSize: 256 << 10,
		State: transfer.StateQueued, Updated: time.Now()}
	if err := j.Save(rec); err != nil {
		t.Fatal(err)
	}
}

func tokenFile(t *testing.T, tok string) string {
	p := filepath.Join(t.TempDir(), "token")
	os.WriteFile(p, []byte(tok+"\n"), 0o600)
	return p
}

// Finding: `carrier resume` sent --token / CARRIER_TOKEN to every host in
// the journal. The attacker's step: get a job of theirs into the person's
// journal (any upload to their server), and wait for the next resume.
func TestResumeSendsTheTokenOnlyToItsServer(t *testing.T) {
	_, base := uploadSandbox(t, "")
	evil := &recorder{}
	evilSrv := httptest.NewServer(evil)
	defer evilSrv.Close()
	state := t.TempDir()
	queueJob(t, state, "mine", base+"/upload/storage/v1/b/cli-test/o?name=mine")
	queueJob(t, state, "theirs", evilSrv.URL+"/upload/storage/v1/b/x/o?name=theirs")
	dirs := app.Dirs{Data: t.TempDir(), State: state}

	// A token on the command line names no server: refused.
	var out, errOut bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errOut, Dirs: dirs}
	if code := Main(context.Background(), env, []string{"resume", "--token-file", tokenFile(t, testToken), "--max-retries", "1", "--retry-base", "1ms"}); code != 2 || !strings.Contains(errOut.String(), "--endpoint") {
		t.Fatalf("a token for no server: exit %d\n%s", code, errOut.String())
	}
	t.Setenv("CARRIER_TOKEN", testToken)
	out.Reset()
	errOut.Reset()
	code := Main(context.Background(), env, []string{"resume", "--endpoint", base, "--max-retries", "1", "--retry-base", "1ms"})
	for _, r := range evil.seen() {
		if strings.Contains(r, testToken) {
			t.Fatalf("the other server got the token: %s", r)
		}
	}
	// The other server's job has no credential: it waits for a sign-in
	// there (exit 4), sending nothing.
	if code != ExitSignIn || !strings.Contains(out.String(), `"mine"`) || !strings.Contains(errOut.String(), "carrier login --endpoint "+evilSrv.URL) {
		t.Fatalf("exit %d; the job for the token's server should be done, the other waiting for a sign-in there\nstdout %s\nstderr %s", code, out.String(), errOut.String())
	}
}

// freePort is a loopback port nobody listens on now.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// Finding: the embedded sandbox's token followed its stale port file to
// whoever listened there next, and `carrier resume` never started the
// sandbox. Now resume starts it, and a program in its old place gets
// nothing.
func TestResumeStartsTheEmbeddedSandbox(t *testing.T) {
	setup := func(t *testing.T) (app.Dirs, string) {
		dirs := app.Dirs{Data: t.TempDir(), State: t.TempDir()}
		os.MkdirAll(dirs.Sandbox(), 0o700)
		os.WriteFile(filepath.Join(dirs.Sandbox(), "port"), []byte(freePort(t)+"\n"), 0o600)
		e, err := app.StartEmbedded(context.Background(), dirs.Sandbox(), nil)
		if err != nil {
			t.Fatal(err)
		}
		e.Close() // Carrier quit with a job unfinished
		queueJob(t, dirs.State, "job", e.URL+"/upload/storage/v1/b/cli-test/o?name=resumed")
		return dirs, e.URL
	}
	t.Run("nobody serves it", func(t *testing.T) {
		dirs, _ := setup(t)
		var out, errOut bytes.Buffer
		code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut, Dirs: dirs}, []string{"resume", "--max-retries", "1", "--retry-base", "1ms"})
		if code != 0 || !strings.Contains(out.String(), `"resumed"`) {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out.String(), errOut.String())
		}
	})
	t.Run("another program took its port", func(t *testing.T) {
		dirs, url := setup(t)
		token, _ := app.SandboxToken(dirs.Sandbox())
		imp := &recorder{}
		ln, err := net.Listen("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: imp}
		go srv.Serve(ln)
		defer srv.Close()
		var out, errOut bytes.Buffer
		code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut, Dirs: dirs}, []string{"resume", "--max-retries", "1", "--retry-base", "1ms"})
		for _, r := range imp.seen() {
			if strings.Contains(r, token) {
				t.Fatalf("the program on the old port got the sandbox's token: %s", r)
			}
		}
		if len(imp.seen()) != 0 {
			t.Errorf("the program on the old port was sent %v", imp.seen())
		}
		if code != 1 || !strings.Contains(errOut.String(), "another program") {
			t.Fatalf("exit %d\nstderr %s", code, errOut.String())
		}
	})
}

// Finding: what a server writes reached the terminal with its control
// characters. The attacker's step: answer with escape sequences that
// retitle the terminal, clear it, or hide text.
func TestServerTextReachesTheTerminalDefused(t *testing.T) {
	const nasty = "\x1b]0;owned\x07\x1b[2J\x1b[1;1Hall good\u202e\x00"
	msg, _ := json.Marshal(nasty)
	for _, c := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		code   int
	}{
		{"refusal", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"code":400,"message":`+string(msg)+`}}`, http.StatusBadRequest)
		}, 1},
		{"answer body", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"id":`+string(msg)+`}`) }, 0},
		// Not a resource at all: the upload is not called done, and the
		// answer is shown nowhere.
		{"raw answer", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, nasty) }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(&recorder{answer: c.answer})
			defer srv.Close()
			path, _ := randomFile(t, 10)
			var out, errOut bytes.Buffer
			code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, []string{"upload", "--url", srv.URL + "/upload/x", "--file", path,
				"--content-type", "a/b", "--upload-type", "media", "--state-dir", t.TempDir(), "--token-file", tokenFile(t, "t")})
			if code != c.code {
				t.Fatalf("exit %d\n%q", code, errOut.String())
			}
			for name, s := range map[string]string{"stdout": out.String(), "stderr": errOut.String()} {
				if strings.ContainsAny(s, "\x1b\x07\x00\u202e") {
					t.Errorf("%s holds the server's controls: %q", name, s)
				}
			}
			if c.name != "raw answer" && !strings.Contains(out.String()+errOut.String(), "all good") {
				t.Errorf("the server's words are gone altogether: %q %q", out.String(), errOut.String())
			}
		})
	}
}

// Finding: the sandbox printed its token at every start, and --token shows
// in the process list.
func TestTokenHygiene(t *testing.T) {
	dir := t.TempDir()
	first := runSandboxOnce(t, "--addr", "127.0.0.1:0", "--data", dir)
	token, _ := app.SandboxToken(dir)
	if !strings.Contains(first, "token: "+token) {
		t.Fatalf("the first start does not print the new token:\n%s", first)
	}
	if again := runSandboxOnce(t, "--addr", "127.0.0.1:0", "--data", dir); strings.Contains(again, token) || !strings.Contains(again, "--print-token") {
		t.Fatalf("a later start printed the token, or not where it is:\n%s", again)
	}
	if asked := runSandboxOnce(t, "--addr", "127.0.0.1:0", "--data", dir, "--print-token"); !strings.Contains(asked, "token: "+token) {
		t.Fatalf("--print-token did not print it:\n%s", asked)
	}
	// --token works, with a warning; --token-file without.
	_, base := uploadSandbox(t, "")
	path, _ := randomFile(t, 10)
	for _, c := range []struct {
		flag, value string
		warn        bool
	}{{"--token", testToken, true}, {"--token-file", tokenFile(t, testToken), false}} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, []string{"upload", "--url", base + "/upload/storage/v1/b/cli-test/o?name=h", "--file", path,
			"--content-type", "a/b", "--state-dir", t.TempDir(), c.flag, c.value})
		if code != 0 || strings.Contains(errOut.String(), "process list") != c.warn {
			t.Errorf("%s: exit %d, warned %v\n%s", c.flag, code, !c.warn, errOut.String())
		}
	}
}

// runSandboxOnce starts `carrier sandbox`, waits until it serves, stops it
// and returns all it wrote to stdout and stderr.
func runSandboxOnce(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, &Env{Stdout: pw, Stderr: &syncio.Writer{W: &stderr}}, append([]string{"sandbox"}, args...))
		pw.Close()
		done <- code
	}()
	var out strings.Builder
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("carrier sandbox printed nothing: %s", stderr.String())
	}
	out.WriteString(sc.Text() + "\n") // the URL: it serves
	cancel()
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return out.String() + stderr.String()
}
