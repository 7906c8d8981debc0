package photos

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"carrier/transfer"
)

// TestMayRemakeLooksAtTheCallsUploads pins the test photosSettle makes
// before it reads the journal's whole history after a Photos call (issue
// 29): only when an upload the call quotes is old enough for its token to
// have expired, or is not held by the queue, may there be items to make
// again.
func TestMayRemakeLooksAtTheCallsUploads(t *testing.T) {
	state := t.TempDir()
	q, err := openQueue(transfer.Config{StateDir: state, Workers: 1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	src := filepath.Join(t.TempDir(), "a.png")
	os.WriteFile(src, []byte("a picture"), 0o600)
	id, err := q.Add(transfer.Spec{URL: "http://127.0.0.1:9/v1/uploads", Type: transfer.Media, ContentType: "image/png", Path: src})
	if err != nil {
		t.Fatal(err)
	}
	up, ok := q.Job(id)
	if !ok {
		t.Fatal("the upload is not held")
	}
	call := func(after time.Duration, quote ...string) transfer.Snapshot {
		return transfer.Snapshot{Type: transfer.Call, Quote: quote, Updated: up.Updated.Add(after)}
	}
	if q.mayRemake(call(time.Hour, id, "album.id")) {
		t.Error("a call an hour after its upload may make items again")
	}
	if !q.mayRemake(call(expiredAfter, id)) {
		t.Error("a call a day after its upload may not make items again")
	}
	if !q.mayRemake(call(time.Hour, id, "20300102T030405-00000001")) {
		t.Error("a call quoting an upload the queue does not hold may not make items again")
	}
}
