package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"carrier/sandbox"
	"carrier/transfer"
)

const testToken = "cli-test-token"

func uploadSandbox(t *testing.T, faults string) (*sandbox.Sandbox, string) {
	t.Helper()
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: testToken, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sb.Close() })
	return sb, srv.URL
}

func readObject(t *testing.T, base, name string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/storage/v1/b/cli-test/o/"+url.PathEscape(name)+"?alt=media", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("read back: %d %s", resp.StatusCode, b)
	}
	return b
}

func randomFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	x := uint32(n)
	for i := range data {
		x = x*1664525 + 1013904223
		data[i] = byte(x >> 24)
	}
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// kill -9 of the real binary part-way, then `carrier resume` finishes the
// same session, re-sending at most one chunk.
func TestKillThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the carrier binary")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("builds the carrier binary and needs go on PATH (none under Wine)")
	}
	const chunk = 256 << 10
	bin := filepath.Join(t.TempDir(), "carrier")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A bandwidth cap so the upload is still going when it is killed.
	sb, base := uploadSandbox(t, "rate=2MB")
	state := t.TempDir()
	path, data := randomFile(t, 24*chunk+123)
	target := base + "/upload/storage/v1/b/cli-test/o?name=killed"
	cmd := exec.Command(bin, "upload", "--url", target, "--file", path, "--content-type", "application/octet-stream",
		"--chunk-size", "262144", "--state-dir", state)
	cmd.Env = append(os.Environ(), "CARRIER_TOKEN="+testToken)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once the journal shows confirmed progress.
	j, err := transfer.OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs, _ := j.List()
		if len(recs) == 1 && recs[0].Confirmed >= 4*chunk {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no progress recorded; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling another process's files: there is no event to wait on
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	recs, _ := j.List()
	if len(recs) != 1 || recs[0].State != transfer.StateRunning || recs[0].Session == "" { // its process died holding it
		t.Fatalf("after the kill: %+v", recs)
	}
	session := recs[0].Session
	before := sb.Stats()
	sb.SetFaults("")

	var out, errOut bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	t.Setenv("CARRIER_TOKEN", testToken)
	if code := Main(context.Background(), env, []string{"resume", "--state-dir", state}); code != 0 {
		t.Fatalf("resume exit %d\n%s", code, errOut.String())
	}
	var obj struct{ Name, Size string }
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil || obj.Name != "killed" {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if !bytes.Equal(readObject(t, base, "killed"), data) {
		t.Fatal("bytes differ")
	}
	after := sb.Stats()
	if after.SessionsCreated != before.SessionsCreated || after.Completions != 1 {
		t.Errorf("sessions %d -> %d, completions %d: resume must finish the same session", before.SessionsCreated, after.SessionsCreated, after.Completions)
	}
	resent := after.BytesReceived - int64(len(data))
	t.Logf("re-sent %d bytes after the kill (chunk %d)", resent, chunk)
	if resent > chunk {
		t.Errorf("re-sent %d bytes, more than one chunk", resent)
	}
	rec, _ := j.Load(recs[0].ID)
	if rec.Session != session || rec.State != transfer.StateDone {
		t.Errorf("journal after resume: %s, same session %v", rec.State, rec.Session == session)
	}
	// Nothing left.
	out.Reset()
	errOut.Reset()
	if code := Main(context.Background(), env, []string{"resume", "--state-dir", state, "--list"}); code != 0 || strings.Contains(out.String(), rec.ID) {
		t.Errorf("list after resume (%d): %s", code, out.String())
	}
}

func TestResumeRefusesOneShotWithoutDecision(t *testing.T) {
	state := t.TempDir()
	j, _ := transfer.OpenJournal(state)
	path, _ := randomFile(t, 10)
	fi, _ := os.Stat(path)
	rec := &transfer.Record{Version: 1, ID: "m1", Created: time.Now(), URL: "http://127.0.0.1:1/upload/x", Method: "POST",
		Type: transfer.Media, ContentType: "image/png", Path: path, Size: 10, ModTime: fi.ModTime(), ChunkSize: 256 << 10,
		SHA256: strings.Repeat("00", 32), State: transfer.StateQueued, Sent: true, Updated: time.Now()}
	if err := j.Save(rec); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errOut}
	if code := Main(context.Background(), env, []string{"resume", "--state-dir", state, "--list"}); code != 0 || !strings.Contains(out.String(), "needs your decision") {
		t.Errorf("list: %d %s", code, out.String())
	}
	out.Reset()
	if code := Main(context.Background(), env, []string{"resume", "--state-dir", state}); code != 1 || !strings.Contains(errOut.String(), "not sent again") {
		t.Errorf("resume: %d %s", code, errOut.String())
	}
}
