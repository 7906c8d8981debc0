package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"carrier/transfer"
)

// kill -9 of `carrier send` with a file going by Drive link, once during
// the Drive upload and once while a share is being made, then `carrier
// resume`: one Drive file, its bytes the file's, one share per
// recipient, one message with the link.
func TestSendLinksKilledThenResumed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the carrier binary")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("builds the carrier binary and needs go on PATH (none under Wine)")
	}
	bin := filepath.Join(t.TempDir(), "carrier")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, when := range []string{"during the Drive upload", "while sharing"} {
		t.Run(when, func(t *testing.T) {
			sb, base := uploadSandbox(t, "")
			if when == "during the Drive upload" {
				sb.SetFaults("rate=2MB") // still going when it is killed
			}
			// A proxy that can hold the share calls, so the kill lands
			// while one is under way.
			var holdShares atomic.Bool
			holdShares.Store(when == "while sharing")
			var shareSeen sync.Once
			sharing := make(chan struct{})
			release := make(chan struct{})
			up, _ := url.Parse(base)
			proxy := httputil.NewSingleHostReverseProxy(up)
			// A pool of its own: a parallel test's httptest.Server.Close
			// closes http.DefaultTransport's idle connections.
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			proxy.Transport = tr
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/permissions") && r.Method == "POST" && holdShares.Load() {
					io.Copy(io.Discard, r.Body) // then the server notices the client is gone
					shareSeen.Do(func() { close(sharing) })
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				r.Host = up.Host // the sandbox answers only to its own address
				proxy.ServeHTTP(w, r)
			}))
			defer front.Close()
			defer close(release) // before the server closes: it waits for the held calls
			state := t.TempDir()
			path, data := namedRandomFile(t, "film.mov", 30<<20)
			cmd := exec.Command(bin, "send", "--to", "zoe@example.com, max@example.com", "--subject", "Film", "--body", "Here.",
				"--attach", path, "--endpoint", front.URL, "--state-dir", state, "--chunk-size", "1048576")
			cmd.Env = append(os.Environ(), "CARRIER_TOKEN="+testToken)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			j, err := transfer.OpenJournal(state)
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for ready := false; !ready; {
				if when == "while sharing" {
					select {
					case <-sharing:
						ready = true
					case <-time.After(20 * time.Millisecond):
					}
				} else {
					recs, _ := j.List()
					for _, r := range recs {
						if strings.HasSuffix(r.Label, "to Google Drive") && r.Confirmed >= 2<<20 {
							ready = true
						}
					}
					time.Sleep(20 * time.Millisecond) // polling another process's files
				}
				select {
				case err := <-exited:
					t.Fatalf("carrier send ended (%v) before the kill; stderr:\n%s", err, stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("never got there; stderr:\n%s", stderr.String())
				}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			holdShares.Store(false)
			sb.SetFaults("")

			var out, errOut bytes.Buffer
			t.Setenv("CARRIER_TOKEN", testToken)
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
			if code := Main(context.Background(), env, []string{"resume", "--state-dir", state, "--endpoint", front.URL}); code != 0 {
				t.Fatalf("resume exit %d\n%s\nfirst run:\n%s", code, errOut.String(), stderr.String())
			}
			tokGet := func(path string) map[string]any {
				req, _ := http.NewRequest("GET", base+path, nil)
				req.Header.Set("Authorization", "Bearer "+testToken)
				return getJSON(t, req)
			}
			files := tokGet("/drive/v3/files?fields=files(id)")["files"].([]any)
			if len(files) != 1 {
				t.Fatalf("%d Drive files", len(files))
			}
			id := files[0].(map[string]any)["id"].(string)
			req, _ := http.NewRequest("GET", base+"/drive/v3/files/"+id+"?alt=media", nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			if !bytes.Equal(getBody(t, req), data) {
				t.Fatal("the Drive file's bytes are not the file's")
			}
			var readers []string
			for _, p := range tokGet("/drive/v3/files/" + id + "/permissions?fields=permissions(role,emailAddress)")["permissions"].([]any) {
				if pm := p.(map[string]any); pm["role"] == "reader" {
					readers = append(readers, pm["emailAddress"].(string))
				}
			}
			if len(readers) != 2 {
				t.Fatalf("readers %v", readers)
			}
			msgs := tokGet("/gmail/v1/users/me/messages")["messages"].([]any)
			if len(msgs) != 1 {
				t.Fatalf("%d messages", len(msgs))
			}
			req, _ = http.NewRequest("GET", base+"/gmail/v1/users/me/messages/"+msgs[0].(map[string]any)["id"].(string)+"?format=raw", nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			var raw struct{ Raw string }
			json.Unmarshal(getBody(t, req), &raw)
			msg, _ := base64.URLEncoding.DecodeString(raw.Raw)
			if m := driveLink.FindSubmatch(msg); m == nil || string(m[1]) != id {
				t.Fatalf("the message does not link to the Drive file %s:\n%.2000s", id, msg)
			}
		})
	}
}

func getBody(t *testing.T, req *http.Request) []byte {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	return b
}

func getJSON(t *testing.T, req *http.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(getBody(t, req), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
