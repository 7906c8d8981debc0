package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"carrier/internal/memtest"
)

// Drive's bytes go to disk as they arrive and come back streamed: a 64 MiB
// file uploaded by each type (multipart and resumable with its SHA-256 as
// well) and downloaded never brings the heap near its size.
func TestDriveUploadsStayOnDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 192 MiB")
	}
	e := newEnv(t)
	const size = 64 << 20
	var ids []string
	runtime.GC()
	peak := memtest.PeakHeap(func() {
		code, out := e.stream("POST", driveFiles+"?uploadType=media", "application/octet-stream", &zeroReader{n: size})
		if code != 200 {
			t.Fatalf("media: %d %s", code, out)
		}
		var f struct{ ID string }
		json.Unmarshal(out, &f)
		ids = append(ids, f.ID)
		body := io.MultiReader(strings.NewReader("--B\r\nContent-Type: application/json\r\n\r\n{\"name\":\"big\"}\r\n--B\r\nContent-Type: video/mp4\r\n\r\n"),
			&zeroReader{n: size}, strings.NewReader("\r\n--B--\r\n"))
		if code, out := e.stream("POST", driveFiles+"?uploadType=multipart", "multipart/related; boundary=B", body); code != 200 {
			t.Fatalf("multipart: %d %s", code, out)
		}
		uri := e.initiate("POST", driveFiles, "application/octet-stream", size, `{"name":"big"}`)
		req, _ := http.NewRequest("PUT", uri, &zeroReader{n: size})
		req.ContentLength = size
		r, err := e.srv.Client().Do(req)
		if err != nil || r.StatusCode != 201 {
			t.Fatalf("resumable: %v %v", r, err)
		}
		r.Body.Close()
		code, out = e.stream("GET", "/drive/v3/files/"+ids[0]+"?alt=media", "", nil)
		if code != 200 {
			t.Fatalf("download: %d", code)
		}
	})
	t.Logf("peak heap %.1f MiB for three 64 MiB uploads and a download", float64(peak)/(1<<20))
	if peak > 16<<20 {
		t.Fatalf("the heap reached %.1f MiB", float64(peak)/(1<<20))
	}
	f := e.driveGet(ids[0], "?fields=size,sha256Checksum").json(t)
	if f["size"] != "67108864" || f["sha256Checksum"] != "3b6a07d0d404fab4e23b6d34bc6696a6a312dd92821332385e5af7c01c421351" {
		t.Fatalf("64 MiB of zeros: %v", f)
	}
}
