package transfer

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// sparseFile makes a file of size bytes without writing them.
func sparseFile(t testing.TB, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// Memory stays flat whatever the chunk size: a 96 MiB upload in 64 MiB
// chunks allocates a small fraction of one chunk.
func TestMemoryFlatWithLargeChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 96 MiB")
	}
	const size = 96 << 20
	const chunk = 64 << 20
	srv, received := discardServer(t)
	path := sparseFile(t, size)
	h := newHarness(t, Config{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	id := h.add(Spec{URL: srv.URL + "/upload?name=x", ContentType: "application/octet-stream", Path: path, ChunkSize: chunk})
	h.mustDone(id)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB in all (client, server and hashing) for a %d MiB upload in %d MiB chunks", alloc>>10, size>>20, chunk>>20)
	// Client and the in-process server together; a single chunk buffer
	// anywhere would be 64 MiB.
	if alloc > chunk/8 {
		t.Errorf("allocated %d bytes; want far less than one chunk (%d)", alloc, chunk)
	}
	if received.Load() != size {
		t.Errorf("received %d bytes", received.Load())
	}
}

// discardServer answers like a resumable endpoint without keeping bytes.
func discardServer(tb testing.TB) (*httptest.Server, *atomic.Int64) {
	var received atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		received.Add(n)
		switch {
		case r.URL.Query().Get("uploadType") == "resumable" && r.URL.Query().Get("upload_id") == "":
			w.Header().Set("Location", "http://"+r.Host+"/s?upload_id=x")
		case r.Method == http.MethodPut && r.URL.Query().Get("upload_id") != "":
			cr := r.Header.Get("Content-Range")
			span, total, _ := strings.Cut(strings.TrimPrefix(cr, "bytes "), "/")
			_, last, _ := strings.Cut(span, "-")
			if last != "" && fmt.Sprint(mustInt(last)+1) != total {
				w.Header().Set("Range", "bytes=0-"+last)
				w.WriteHeader(308)
				return
			}
			w.WriteHeader(200)
			fmt.Fprintf(w, `{"size":%q}`, total) // the object's, as Storage states it
		}
	}))
	tb.Cleanup(s.Close)
	return s, &received
}

func mustInt(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

func BenchmarkUploadEngine(b *testing.B) {
	for _, chunk := range []int64{8 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("chunk=%dMiB", chunk>>20), func(b *testing.B) {
			const size = 64 << 20
			srv, _ := discardServer(b)
			path := sparseFile(b, size)
			q, err := New(Config{StateDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				id, err := q.Add(Spec{URL: srv.URL + "/upload?name=x", ContentType: "application/octet-stream", Path: path, ChunkSize: chunk})
				if err != nil {
					b.Fatal(err)
				}
				rec, err := q.Wait(b.Context(), id)
				if err != nil || rec.State != StateDone {
					b.Fatalf("%s %v %s", rec.State, err, rec.Error)
				}
			}
		})
	}
}

// BenchmarkPlainPUT is the floor: one PUT of the whole file, no journal,
// no hashing, no chunks.
func BenchmarkPlainPUT(b *testing.B) {
	const size = 64 << 20
	srv, _ := discardServer(b)
	path := sparseFile(b, size)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/plain", f)
		req.ContentLength = size
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		f.Close()
	}
}
