package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUpload(t *testing.T) {
	sb, base := uploadSandbox(t, "seed=3,err5xx=0.2,partial=0.3")
	path, data := randomFile(t, 700000)
	meta := filepath.Join(t.TempDir(), "meta.json")
	os.WriteFile(meta, []byte(`{"metadata":{"k":"v"}}`), 0o600)
	for _, typ := range []string{"resumable", "multipart", "media"} {
		t.Run(typ, func(t *testing.T) {
			name := "cli-" + typ
			args := []string{"upload", "--url", base + "/upload/storage/v1/b/cli-test/o?name=" + name, "--file", path,
				"--content-type", "application/octet-stream", "--upload-type", typ, "--chunk-size", "262144",
				"--state-dir", t.TempDir(), "--retry-base", "1ms", "--token", testToken}
			if typ != "media" {
				args = append(args, "--metadata", "@"+meta)
			}
			var out, errOut bytes.Buffer
			code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, args)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut.String())
			}
			var obj struct{ Name string }
			if err := json.Unmarshal(out.Bytes(), &obj); err != nil || obj.Name != name {
				t.Fatalf("stdout %q", out.String())
			}
			if !bytes.Equal(readObject(t, base, name), data) {
				t.Fatal("bytes differ")
			}
			// Storage reports the CRC32C of what it holds: the last line says
			// the bytes were checked.
			if !strings.Contains(errOut.String(), "done") || !strings.Contains(errOut.String(), "verified (crc32c)") || strings.Contains(errOut.String(), "upload_id") {
				t.Errorf("stderr:\n%s", errOut.String())
			}
		})
	}
	_ = sb
}

func TestUploadExitCodes(t *testing.T) {
	_, base := uploadSandbox(t, "")
	path, _ := randomFile(t, 10)
	target := base + "/upload/storage/v1/b/cli-test/o?name=x"
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no url", []string{"--file", path, "--content-type", "a/b"}, 2, "--url"},
		{"bad type", []string{"--url", target, "--file", path, "--content-type", "a/b", "--upload-type", "simple"}, 2, "upload-type"},
		{"bad chunk", []string{"--url", target, "--file", path, "--content-type", "a/b", "--chunk-size", "1000"}, 2, "262144"},
		{"bad metadata", []string{"--url", target, "--file", path, "--content-type", "a/b", "--metadata", "{"}, 2, "JSON"},
		{"bad bwlimit", []string{"--url", target, "--file", path, "--content-type", "a/b", "--bwlimit", "08:00,1M 19:00,fast"}, 2, `--bwlimit: bandwidth timetable "08:00,1M 19:00,fast": entry "19:00,fast": "fast" is not a rate`},
		{"bad min-speed", []string{"--url", target, "--file", path, "--content-type", "a/b", "--min-speed", "10k/soon"}, 2, `--min-speed: minimum speed "10k/soon": "soon" is not a window`},
		{"bad on-metered", []string{"--url", target, "--file", path, "--content-type", "a/b", "--on-metered", "wait"}, 2, "--on-metered must be pause or continue"},
		{"wrong token", []string{"--url", target, "--file", path, "--content-type", "a/b", "--token", "nope"}, 1, "401"},
		{"missing file", []string{"--url", target, "--file", path + ".none", "--content-type", "a/b", "--token", testToken}, 1, "cannot read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"upload", "--state-dir", t.TempDir()}, c.args...)
			code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, args)
			if code != c.code || !strings.Contains(errOut.String(), c.msg) {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, errOut.String())
			}
			if out.Len() != 0 {
				t.Errorf("stdout on failure: %q", out.String())
			}
		})
	}
}

// A failed job's advice comes from its failure's code: the server kept
// failing, so the session is kept and `carrier resume` goes on.
func TestUploadFailureAdviceByCode(t *testing.T) {
	_, base := uploadSandbox(t, "seed=1,err5xx=1")
	path, _ := randomFile(t, 10)
	var out, errOut bytes.Buffer
	code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, []string{"upload", "--state-dir", t.TempDir(),
		"--url", base + "/upload/storage/v1/b/cli-test/o?name=advice", "--file", path, "--content-type", "a/b",
		"--token", testToken, "--max-retries", "1", "--retry-base", "1ms"})
	if code != 1 || !strings.Contains(errOut.String(), "kept failing") || !strings.Contains(errOut.String(), "run `carrier resume` later to go on where it stopped") {
		t.Errorf("exit %d; stderr:\n%s", code, errOut.String())
	}
}
