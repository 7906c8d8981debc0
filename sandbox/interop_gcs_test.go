package sandbox_test

// The official Go client (storage/v1) asks the sandbox to check checksums:
// Crc32c or Md5Hash in the object it inserts (the metadata of a multipart
// upload, or of a resumable session's start), and with EnableAutoChecksum
// X-Goog-Hash on its last chunk. Right ones are accepted, wrong ones refused
// with a 400 the client reports, and nothing is stored.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"
)

// corrupter flips one byte of the request that carries an upload's
// checksum (a multipart request, or a chunk with X-Goog-Hash) when armed:
// damage in transit, after the client computed its checksum.
type corrupter struct {
	base  http.RoundTripper
	armed atomic.Bool
	hits  atomic.Int32
}

func (c *corrupter) RoundTrip(r *http.Request) (*http.Response, error) {
	carries := r.URL.Query().Get("uploadType") == "multipart" && !r.URL.Query().Has("upload_id") || r.Header.Get("X-Goog-Hash") != ""
	if !c.armed.Load() || !carries || r.Body == nil || !strings.HasPrefix(r.URL.Path, "/upload/") {
		return c.base.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(b) > 0 {
		b[len(b)/2] ^= 0x20
		c.hits.Add(1)
	}
	r2 := r.Clone(r.Context())
	r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return c.base.RoundTrip(r2)
}

func TestInteropStorageChecksums(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	cor := &corrupter{base: e.tap}
	cs, err := storage.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/storage/v1/"), option.WithHTTPClient(&http.Client{Transport: cor}))
	if err != nil {
		t.Fatal(err)
	}
	const bucket = "carrier-sums"
	octets := googleapi.ContentType("application/octet-stream")
	wrongCRC := func(data []byte) *storage.Object {
		_, _, crc := objectWant(append([]byte{0}, data...))
		return &storage.Object{Crc32c: crc}
	}
	wrongMD5 := func(data []byte) *storage.Object {
		_, md5Hash, _ := objectWant(append([]byte{0}, data...))
		return &storage.Object{Md5Hash: md5Hash}
	}
	rightCRC := func(data []byte) *storage.Object { _, _, crc := objectWant(data); return &storage.Object{Crc32c: crc} }
	rightMD5 := func(data []byte) *storage.Object { _, m, _ := objectWant(data); return &storage.Object{Md5Hash: m} }
	rightBoth := func(data []byte) *storage.Object {
		_, m, crc := objectWant(data)
		return &storage.Object{Crc32c: crc, Md5Hash: m}
	}
	cases := []struct {
		name    string
		size    int
		chunks  int // 0: multipart
		meta    func([]byte) *storage.Object
		auto    bool // EnableAutoChecksum
		corrupt bool // a byte flipped in the request carrying the checksum
		wrong   string
	}{
		{name: "multipart right crc32c", size: 50 << 10, meta: rightCRC},
		{name: "multipart right md5Hash", size: 50 << 10, meta: rightMD5},
		{name: "multipart right both", size: 50 << 10, meta: rightBoth},
		{name: "multipart wrong crc32c", size: 50 << 10, meta: wrongCRC, wrong: "CRC32C"},
		{name: "multipart wrong md5Hash", size: 50 << 10, meta: wrongMD5, wrong: "MD5"},
		{name: "multipart auto checksum, damaged", size: 50 << 10, auto: true, corrupt: true, wrong: "CRC32C"},
		{name: "resumable right crc32c", size: 2*chunk + 100, chunks: 3, meta: rightCRC},
		{name: "resumable right md5Hash", size: 2*chunk + 100, chunks: 3, meta: rightMD5},
		{name: "resumable right both", size: 3 * chunk, chunks: 3, meta: rightBoth},
		{name: "resumable wrong crc32c", size: 2*chunk + 100, chunks: 3, meta: wrongCRC, wrong: "CRC32C"},
		{name: "resumable wrong md5Hash", size: 2*chunk + 100, chunks: 3, meta: wrongMD5, wrong: "MD5"},
		{name: "resumable auto checksum", size: 2*chunk + 100, chunks: 3, auto: true},
		{name: "resumable auto checksum, last chunk damaged", size: 2*chunk + 100, chunks: 3, auto: true, corrupt: true, wrong: "CRC32C"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.tap.reset()
			name := "sums/" + strings.ReplaceAll(c.name, " ", "-")
			data := randomBytes(uint64(70+i), c.size)
			meta := &storage.Object{}
			if c.meta != nil {
				meta = c.meta(data)
			}
			meta.Name = name
			opts := []googleapi.MediaOption{octets, googleapi.ChunkSize(chunk)}
			if c.auto {
				opts = append(opts, googleapi.EnableAutoChecksum())
			}
			cor.armed.Store(c.corrupt)
			hits := cor.hits.Load()
			o, err := cs.Objects.Insert(bucket, meta).Media(bytes.NewReader(data), opts...).Do()
			cor.armed.Store(false)
			reqs := e.tap.uploads()
			if c.corrupt && cor.hits.Load() == hits {
				t.Fatalf("no request was damaged; the wire saw:\n%s", wireDump(reqs))
			}
			if c.wrong == "" {
				if err != nil {
					t.Fatalf("objects.insert with a right checksum: %v; the wire saw:\n%s", err, wireDump(reqs))
				}
				if c.chunks == 0 {
					checkMultipart(t, reqs, http.MethodPost)
				} else {
					checkResumable(t, reqs, http.MethodPost, c.chunks, http.StatusOK)
				}
				e.checkObject(t, o, bucket, name, "application/octet-stream", data)
				return
			}
			if err == nil {
				t.Fatalf("objects.insert with a wrong checksum succeeded; the wire saw:\n%s", wireDump(reqs))
			}
			ge := apiError(t, err, http.StatusBadRequest)
			if !strings.Contains(ge.Message, "Provided "+c.wrong) || !strings.Contains(ge.Message, "doesn't match calculated "+c.wrong) ||
				len(ge.Errors) != 1 || ge.Errors[0].Reason != "invalid" {
				t.Fatalf("the client saw %v; want Google's \"Provided %s ... doesn't match calculated %s ...\" with reason invalid", ge, c.wrong, c.wrong)
			}
			// The path the client took, up to the refusal.
			last := reqs[len(reqs)-1]
			switch {
			case c.chunks == 0 && (len(reqs) != 1 || reqs[0].UploadType != "multipart"):
				t.Fatalf("want one multipart request; the wire saw:\n%s", wireDump(reqs))
			case c.chunks > 0 && (reqs[0].UploadType != "resumable" || reqs[0].Session || len(reqs) < 1+c.chunks || !last.Session):
				t.Fatalf("want a session and %d chunks; the wire saw:\n%s", c.chunks, wireDump(reqs))
			case last.Status != http.StatusBadRequest:
				t.Fatalf("want the last request refused with 400; the wire saw:\n%s", wireDump(reqs))
			}
			if _, err := e.storage.Objects.Get(bucket, name).Do(); err == nil {
				t.Fatal("the refused object exists")
			} else {
				apiError(t, err, http.StatusNotFound)
			}
		})
	}
}

// TestInteropStorageDownloadHash: the hash a download carries is the one
// the client computes from the bytes it read.
func TestInteropStorageDownloadHash(t *testing.T) {
	t.Parallel()
	e := newInterop(t)
	data := randomBytes(90, 3*chunk+5)
	if _, err := e.storage.Objects.Insert("carrier-dl", &storage.Object{Name: "x"}).
		Media(bytes.NewReader(data), googleapi.ContentType("application/octet-stream"), googleapi.ChunkSize(chunk)).Do(); err != nil {
		t.Fatal(err)
	}
	res, err := e.storage.Objects.Get("carrier-dl", "x").Download()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "download", got, data)
	_, md5Hash, crc := objectWant(got)
	want := "crc32c=" + crc + ",md5=" + md5Hash
	if h := res.Header.Get("X-Goog-Hash"); h != want || res.Header.Get("X-Goog-Stored-Content-Encoding") != "identity" {
		t.Fatalf("X-Goog-Hash %q, X-Goog-Stored-Content-Encoding %q; want %q, identity", h, res.Header.Get("X-Goog-Stored-Content-Encoding"), want)
	}
}
