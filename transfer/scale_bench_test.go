package transfer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkPhotosBatch queues a batch of the Photos shape (n uploads, then
// one call per 50 uploads needing those 50 and the call before) against a
// trivial target that answers every request at once, and reports the
// engine's cost per job (ns/job, and cpu-ns/job: the whole process's CPU,
// the target's included): it should not grow with n. The journal is
// put on /dev/shm where there is one, so the disk's fsync does not hide
// the engine's own work.
func BenchmarkPhotosBatch(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x"}`))
	}))
	defer srv.Close()
	src := filepath.Join(b.TempDir(), "picture.png")
	os.WriteFile(src, []byte("a small picture"), 0o600)
	call := filepath.Join(b.TempDir(), "batch.json")
	os.WriteFile(call, []byte(`{"newMediaItems":[]}`), 0o600)
	for _, n := range []int{600, 6000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			jobs := 0
			cpu0 := processCPU()
			for b.Loop() {
				dir := benchStateDir(b)
				q, err := New(Config{StateDir: dir, Workers: 3, RetryBase: time.Millisecond})
				if err != nil {
					b.Fatal(err)
				}
				var prev string
				var batch []string
				for i := range n {
					id, err := q.Add(Spec{URL: srv.URL + "/upload", Type: Media, ContentType: "image/png", Path: src})
					if err != nil {
						b.Fatal(err)
					}
					batch = append(batch, id)
					if len(batch) == 50 || i == n-1 {
						if prev != "" {
							batch = append(batch, prev)
						}
						prev, err = q.Add(Spec{URL: srv.URL + "/v1/mediaItems:batchCreate", Type: Call, ContentType: "application/json", Path: call, Needs: batch})
						if err != nil {
							b.Fatal(err)
						}
						batch = nil
					}
				}
				s, err := q.Wait(context.Background(), prev)
				if err != nil || s.State != StateDone {
					b.Fatalf("the last call: %s %q, %v", s.State, s.Blocked, err)
				}
				q.Close()
				os.RemoveAll(dir)
				jobs += n + (n+49)/50
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(jobs), "ns/job")
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(jobs), "cpu-ns/job")
		})
	}
}

// benchStateDir is a fresh journal folder, in memory where the system has
// one.
func benchStateDir(b *testing.B) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "carrier-bench-"); err == nil {
			return dir
		}
	}
	return b.TempDir()
}
