package photos

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A batch larger than the open files the computer allows Carrier (each
// job keeps its journal lock open until it ends) is refused in words
// that say why and what to do, and nothing of it is left queued: it used
// to end with "cannot write the upload journal: ... too many open files".
func TestPhotosBatchOverTheOpenFileLimitSaysSo(t *testing.T) {
	env := newPhotosEnv(t)
	files := pictures(t, 400)
	q := env.open(t.TempDir(), nil)
	p := env.photos()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = uint64(len(fds) + 150)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	_, err = q.PhotosUpload(context.Background(), p, files, PhotosOptions{}, nil)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	var tooMany *TooManyOpenError
	if !errors.As(err, &tooMany) {
		t.Fatalf("a batch over the open-file limit: %v", err)
	}
	if tooMany.Files != 400 || tooMany.Queued <= 0 || tooMany.Queued >= 400 ||
		!strings.Contains(err.Error(), "400 files are too many to queue at once on this computer") || !strings.Contains(err.Error(), "ulimit -n") {
		t.Fatalf("the words: %v (%+v)", err, tooMany)
	}
	for _, s := range q.Jobs() {
		if s.State.Unfinished() {
			t.Fatalf("%s (%s) is left %s", s.ID, s.Label, s.State)
		}
	}
}
