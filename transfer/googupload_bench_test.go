package transfer

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkProtocols sends the same 64 MiB file through the Uploader in
// each resumable dialect to a loopback fake that keeps only a hash of the
// bytes: the second dialect's headers and answers should cost nothing
// beside the bytes (compare the two lines' ns/op, B/op and allocs/op).
func BenchmarkProtocols(b *testing.B) {
	const size = 64 << 20
	path, data := writeFile(b, size)
	want := sha(data)
	q, err := New(Config{StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()

	first := &fakeServer{sessions: map[string]*fakeSession{}, counts: map[string]int{}, discard: true, stop: make(chan struct{})}
	first.srv = httptest.NewServer(http.HandlerFunc(first.serve))
	defer first.srv.Close()
	second := newGoogFake(b)
	second.discard = true

	for _, c := range []struct {
		name string
		spec Spec
	}{
		{"resumable", Spec{URL: first.url(), ContentType: "video/mp4", Path: path}},
		{"goog-upload", Spec{URL: second.url(), Protocol: ProtocolGoogUpload, ContentType: "video/mp4", Path: path}},
	} {
		b.Run(c.name, func(b *testing.B) {
			rec, err := q.newRecord(c.spec)
			if err != nil {
				b.Fatal(err)
			}
			up := NewUploader(Uploader{})
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := up.Upload(context.Background(), Work{Record: *rec})
				if err != nil {
					b.Fatal(err)
				}
				if c.spec.Protocol == ProtocolGoogUpload && string(resp.Body) != "TOKEN-"+want || c.spec.Protocol == "" && resourceSHA256(resp.Body) != want {
					b.Fatalf("the server holds other bytes: %.100s", resp.Body)
				}
			}
		})
	}
}

// resourceSHA256 reads the sha256 a first-protocol fake resource reports.
func resourceSHA256(body []byte) string {
	var v struct{ SHA256 string }
	if err := json.Unmarshal(body, &v); err != nil {
		return ""
	}
	return v.SHA256
}
