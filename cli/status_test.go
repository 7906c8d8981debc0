package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// `carrier status` says where each thing sent stands, one line each: a
// Photos batch of three pictures and their call is one line, "done",
// listed only with --all; an upload the server refused is one line
// saying it failed, why, and what to do, listed without --all too.
func TestStatusSaysWhereEachDeliveryStands(t *testing.T) {
	e := newSendEnv(t)
	files := photoFiles(t, 3)
	if out, errs, code := e.runText(append([]string{"photos", "--album", "Holiday"}, files...)...); code != 0 {
		t.Fatalf("photos: %d\n%s\n%s", code, out, errs)
	}
	status := func(args ...string) (string, string) {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errOut}, append([]string{"status", "--state-dir", e.state}, args...)); code != 0 {
			t.Fatalf("status %v: exit %d\n%s", args, code, errOut.String())
		}
		return out.String(), errOut.String()
	}
	out, errs := status()
	if strings.Count(out, "\n") != 1 || !strings.Contains(errs, "nothing is on its way") {
		t.Fatalf("status lists a batch that is done:\n%s\n%s", out, errs)
	}
	out, _ = status("--all")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[1], "  done") || !strings.Contains(lines[1], "Holiday") ||
		!strings.Contains(lines[1], "14.6 KiB/14.6 KiB") {
		t.Fatalf("status --all: want the batch on one line, done, its bytes all confirmed:\n%s", out)
	}

	// An upload refused for a wrong token: one more line, failed, with why.
	path, _ := randomFile(t, 10)
	var sink bytes.Buffer
	Main(context.Background(), &Env{Stdout: &sink, Stderr: &sink}, []string{"upload", "--state-dir", e.state,
		"--url", e.url + "/upload/storage/v1/b/cli-test/o?name=x", "--file", path, "--content-type", "a/b", "--token", "nope"})
	out, _ = status()
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "  f.bin  failed: f.bin: ") || !strings.Contains(lines[1], "401") ||
		!strings.HasSuffix(lines[1], "Sign in again (`carrier login`), then run `carrier resume`") {
		t.Fatalf("status after a refused upload:\n%s", out)
	}
}
