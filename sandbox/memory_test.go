package sandbox

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"carrier/internal/memtest"
)

// zeroReader yields n bytes without holding them.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n)
	clear(p[:k])
	z.n -= k
	return int(k), nil
}

// Bytes go to disk as they arrive: a 150 MiB insert, in one request and
// resumably, never brings the heap near its size.
func TestLargeUploadsStayOnDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 300 MiB")
	}
	e := newEnv(t)
	const size = limitInsert
	header := "Subject: big\r\nContent-Type: application/octet-stream\r\n\r\n"
	body := func() io.Reader {
		return io.MultiReader(strings.NewReader(header), &zeroReader{n: size - int64(len(header))})
	}
	runtime.GC()
	peak := memtest.PeakHeap(func() {
		req, _ := http.NewRequest("POST", e.srv.URL+"/upload/gmail/v1/users/me/messages?uploadType=media", body())
		req.ContentLength = size
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "message/rfc822")
		r, err := e.srv.Client().Do(req)
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("media insert of 150 MiB: %v %v", r, err)
		}
		r.Body.Close()
		uri := e.initiate("POST", "/upload/gmail/v1/users/me/messages", "message/rfc822", size, "")
		req, _ = http.NewRequest("PUT", uri, body())
		req.ContentLength = size
		r, err = e.srv.Client().Do(req)
		if err != nil || r.StatusCode != 201 {
			t.Fatalf("resumable insert of 150 MiB: %v %v", r, err)
		}
		r.Body.Close()
	})
	t.Logf("peak heap %.1f MiB for two 150 MiB uploads", float64(peak)/(1<<20))
	if peak > 32<<20 {
		t.Fatalf("the heap reached %.1f MiB", float64(peak)/(1<<20))
	}
}
