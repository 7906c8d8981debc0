package sandbox_test

// Drive interop: the official Go client (google.golang.org/api/drive/v3)
// against the sandbox, with the wire tap of interop_test.go proving which
// upload path the client took.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"carrier/sandbox"
)

func newDriveInterop(t *testing.T) (*interop, *drive.Service) {
	t.Helper()
	e := newInterop(t)
	// drive/v3's BasePath carries its API path, like storage/v1's.
	ds, err := drive.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/drive/v3/"), option.WithHTTPClient(&http.Client{Transport: e.tap}))
	if err != nil {
		t.Fatal(err)
	}
	return e, ds
}

const driveFields = "kind,id,name,size,mimeType,md5Checksum,sha256Checksum,webViewLink,webContentLink"

func hexSum(data []byte) (md5hex, sha256hex string) {
	m, s := md5.Sum(data), sha256.Sum256(data)
	return hex.EncodeToString(m[:]), hex.EncodeToString(s[:])
}

// checkDriveFile compares a File from the client with what was sent, then
// reads the bytes back with files.get alt=media, whole and by Range.
func checkDriveFile(t *testing.T, ds *drive.Service, base string, f *drive.File, name, mimeType string, data []byte) {
	t.Helper()
	md, sh := hexSum(data)
	if f.Kind != "drive#file" || f.Name != name || f.MimeType != mimeType || f.Size != int64(len(data)) ||
		f.Md5Checksum != md || f.Sha256Checksum != sh ||
		f.WebViewLink != base+"/file/d/"+f.Id+"/view?usp=drivesdk" || f.WebContentLink != base+"/uc?id="+f.Id+"&export=download" {
		t.Fatalf("file %s", jsonOf(f))
	}
	got, err := ds.Files.Get(f.Id).Fields("id,size,md5Checksum,sha256Checksum").Do()
	if err != nil || got.Size != f.Size || got.Md5Checksum != md || got.Sha256Checksum != sh || got.Name != "" {
		t.Fatalf("files.get with fields: %v %s", err, jsonOf(got))
	}
	res, err := ds.Files.Get(f.Id).Download()
	if err != nil {
		t.Fatalf("files.get alt=media: %v", err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "download of "+name, body, data)
	if len(data) > 100 {
		call := ds.Files.Get(f.Id)
		call.Header().Set("Range", "bytes=10-99")
		res, err := call.Download()
		if err != nil {
			t.Fatalf("download with Range: %v", err)
		}
		part, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusPartialContent || !bytes.Equal(part, data[10:100]) {
			t.Fatalf("download with Range: %d, %d bytes", res.StatusCode, len(part))
		}
	}
}

// TestInteropDriveUploads creates files below the client's chunk size
// (one multipart request) and above it (a resumable session), with and
// without a pre-generated id, and reads them back.
func TestInteropDriveUploads(t *testing.T) {
	t.Parallel()
	e, ds := newDriveInterop(t)
	ids, err := ds.Files.GenerateIds().Count(3).Do()
	if err != nil || ids.Kind != "drive#generatedIds" || ids.Space != "drive" || len(ids.Ids) != 3 {
		t.Fatalf("files.generateIds: %v %s", err, jsonOf(ids))
	}
	cases := []struct {
		name, file, mimeType string
		id                   string
		size                 int
		opts                 []googleapi.MediaOption
		chunks               int // 0: multipart
	}{
		{name: "multipart", file: "small.pdf", mimeType: "application/pdf", size: 100 << 10,
			opts: []googleapi.MediaOption{googleapi.ContentType("application/pdf")}},
		{name: "multipart with a generated id", file: "with-id.bin", mimeType: "application/octet-stream", id: ids.Ids[0], size: 5000,
			opts: []googleapi.MediaOption{googleapi.ContentType("application/octet-stream")}},
		{name: "resumable", file: "video größer.mp4", mimeType: "video/mp4", size: 1<<20 + 12345,
			opts: []googleapi.MediaOption{googleapi.ContentType("video/mp4"), googleapi.ChunkSize(chunk)}, chunks: 5},
		{name: "resumable exact multiple, generated id", file: "exact.bin", mimeType: "application/zip", id: ids.Ids[1], size: 4 * chunk,
			opts: []googleapi.MediaOption{googleapi.ContentType("application/zip"), googleapi.ChunkSize(chunk)}, chunks: 5},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.tap.reset()
			data := randomBytes(uint64(70+i), c.size)
			f, err := ds.Files.Create(&drive.File{Name: c.file, Id: c.id, Description: "interop"}).
				Media(bytes.NewReader(data), c.opts...).Fields(driveFields).Do()
			if err != nil {
				t.Fatalf("files.create: %v; the wire saw:\n%s", err, wireDump(e.tap.uploads()))
			}
			reqs := e.tap.uploads()
			if c.chunks == 0 {
				checkMultipart(t, reqs, http.MethodPost)
			} else {
				checkResumable(t, reqs, http.MethodPost, c.chunks, http.StatusCreated)
			}
			if c.id != "" && f.Id != c.id {
				t.Fatalf("id %q, want the generated %q", f.Id, c.id)
			}
			checkDriveFile(t, ds, e.srv.URL, f, c.file, c.mimeType, data)
		})
	}
	// A retry with the same id after an ambiguous failure: 409, and the
	// first file is untouched.
	for _, c := range []struct {
		name string
		opts []googleapi.MediaOption
	}{{"multipart", nil}, {"resumable", []googleapi.MediaOption{googleapi.ChunkSize(chunk)}}} {
		_, err := ds.Files.Create(&drive.File{Id: ids.Ids[0], Name: "again"}).Media(bytes.NewReader(randomBytes(9, 2*chunk)), c.opts...).Do()
		ge := apiError(t, err, http.StatusConflict)
		if len(ge.Errors) != 1 || ge.Errors[0].Reason != "duplicate" {
			t.Fatalf("%s retry with a used id: %v", c.name, ge)
		}
	}
	if _, err := ds.Files.Create(&drive.File{Id: "1NotGeneratedByTheServer0000000000", Name: "x"}).Media(strings.NewReader("x")).Do(); err == nil {
		t.Fatal("create with an id the sandbox did not generate succeeded")
	} else if ge := apiError(t, err, http.StatusBadRequest); ge.Errors[0].Reason != "fileIdNotUsable" {
		t.Fatalf("made-up id: %v", ge)
	}
	// files.list finds them; files.delete removes one.
	list, err := ds.Files.List().Q("name = 'small.pdf' and trashed = false").Fields("files(id,name,size)", "nextPageToken").Do()
	if err != nil || len(list.Files) != 1 || list.Files[0].Size != 100<<10 {
		t.Fatalf("files.list: %v %s", err, jsonOf(list))
	}
	if err := ds.Files.Delete(list.Files[0].Id).Do(); err != nil {
		t.Fatalf("files.delete: %v", err)
	}
	if _, err := ds.Files.Get(list.Files[0].Id).Do(); err == nil {
		t.Fatal("a deleted file is still there")
	} else {
		apiError(t, err, http.StatusNotFound)
	}
}

// TestInteropDrivePermissionsAndAbout shares a file with someone for a
// month and with anyone who has the link, and reads the quota.
func TestInteropDrivePermissionsAndAbout(t *testing.T) {
	t.Parallel()
	_, ds := newDriveInterop(t)
	data := randomBytes(80, 3*chunk)
	f, err := ds.Files.Create(&drive.File{Name: "shared.bin"}).Media(bytes.NewReader(data)).Fields(driveFields).Do()
	if err != nil {
		t.Fatal(err)
	}
	expiry := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	p, err := ds.Permissions.Create(f.Id, &drive.Permission{Type: "user", Role: "reader", EmailAddress: "zoe@example.com",
		ExpirationTime: expiry.Format(time.RFC3339)}).SendNotificationEmail(false).Fields("id,type,role,emailAddress,expirationTime").Do()
	if err != nil || p.Type != "user" || p.Role != "reader" || p.EmailAddress != "zoe@example.com" || p.Id == "" {
		t.Fatalf("permissions.create user: %v %s", err, jsonOf(p))
	}
	if got, err := time.Parse(time.RFC3339, p.ExpirationTime); err != nil || !got.Equal(expiry) {
		t.Fatalf("expirationTime %q, want %s", p.ExpirationTime, expiry)
	}
	link, err := ds.Permissions.Create(f.Id, &drive.Permission{Type: "anyone", Role: "reader"}).Do()
	if err != nil || link.Id != "anyoneWithLink" || link.Kind != "drive#permission" {
		t.Fatalf("permissions.create anyone: %v %s", err, jsonOf(link))
	}
	_, err = ds.Permissions.Create(f.Id, &drive.Permission{Type: "anyone", Role: "reader", ExpirationTime: expiry.Format(time.RFC3339)}).Do()
	if ge := apiError(t, err, http.StatusBadRequest); ge.Errors[0].Reason != "cannotSetExpirationOnAnyoneOrDomain" {
		t.Fatalf("expiry on anyone: %v", ge)
	}
	perms, err := ds.Permissions.List(f.Id).Fields("permissions(id,type,role)").Do()
	if err != nil || len(perms.Permissions) != 3 || perms.Permissions[0].Role != "owner" {
		t.Fatalf("permissions.list: %v %s", err, jsonOf(perms))
	}
	// The link now opens in a browser, which has no token.
	res, err := http.Get(f.WebContentLink)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("webContentLink: %d", res.StatusCode)
	}
	sameBytes(t, "webContentLink", body, data)

	about, err := ds.About.Get().Fields("storageQuota,maxUploadSize").Do()
	if err != nil {
		t.Fatalf("about.get: %v", err)
	}
	q := about.StorageQuota
	if about.MaxUploadSize != 5120<<30 || q.Limit != sandbox.DefaultDriveQuota || q.Usage != int64(len(data)) || q.UsageInDrive != int64(len(data)) || about.User != nil {
		t.Fatalf("about: %s", jsonOf(about))
	}
	if _, err := ds.About.Get().Do(); err == nil {
		t.Fatal("about.get without fields succeeded")
	} else {
		apiError(t, err, http.StatusBadRequest)
	}
}

// TestInteropDriveQuota: a full Drive refuses the client's upload with
// 403 storageQuotaExceeded, multipart at once and resumable when its bytes
// pass the room (the client declares no size).
func TestInteropDriveQuota(t *testing.T) {
	t.Parallel()
	e, ds := newDriveInterop(t)
	e.sb.SetDriveQuota(sandbox.DriveQuota{Limit: 3 * chunk, OtherUsage: chunk})
	for _, c := range []struct {
		name string
		size int
		opts []googleapi.MediaOption
	}{
		{"multipart", 2*chunk + 1, nil},
		{"resumable", 4 * chunk, []googleapi.MediaOption{googleapi.ChunkSize(chunk)}},
	} {
		e.tap.reset()
		_, err := ds.Files.Create(&drive.File{Name: c.name}).Media(bytes.NewReader(randomBytes(81, c.size)), c.opts...).Do()
		if ge := apiError(t, err, http.StatusForbidden); ge.Errors[0].Reason != "storageQuotaExceeded" {
			t.Fatalf("%s over quota: %v", c.name, ge)
		}
		reqs := e.tap.uploads()
		if c.name == "resumable" && (len(reqs) < 3 || !reqs[1].Session || reqs[1].Override != "308") {
			t.Fatalf("want the refusal mid-way, after a chunk that fit; the wire saw:\n%s", wireDump(reqs))
		}
	}
	if f, err := ds.Files.Create(&drive.File{Name: "fits"}).Media(bytes.NewReader(randomBytes(82, 2*chunk))).Do(); err != nil {
		t.Fatalf("an upload that fits: %v %v", err, f)
	}
}

// TestInteropDriveFaults: injected 5xx on the chunks of a resumable
// upload, which the client retries on its own; the file ends
// byte-identical with the right sums.
func TestInteropDriveFaults(t *testing.T) {
	t.Parallel()
	e, ds := newDriveInterop(t)
	// Faults start once the session exists: the client retries chunks,
	// not the request that starts a session.
	armed := false
	ds2, err := drive.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/drive/v3/"), option.WithHTTPClient(&http.Client{
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if !armed && r.URL.Query().Has("upload_id") {
				armed = true
				if err := e.sb.SetFaults("seed=4,err5xx=0.25"); err != nil {
					t.Error(err)
				}
			}
			return e.tap.RoundTrip(r)
		})}))
	if err != nil {
		t.Fatal(err)
	}
	data := randomBytes(83, 2<<20+777)
	f, err := ds2.Files.Create(&drive.File{Name: "faults.bin"}).Media(bytes.NewReader(data), googleapi.ChunkSize(chunk)).Fields(driveFields).Do()
	if err != nil {
		t.Fatalf("files.create under faults: %v; the wire saw:\n%s", err, wireDump(e.tap.uploads()))
	}
	reqs := e.tap.uploads()
	ok, failed := failedAttempts(reqs)
	if failed == 0 {
		t.Fatalf("no fault was injected; the wire saw:\n%s", wireDump(reqs))
	}
	checkResumable(t, ok, http.MethodPost, 9, http.StatusCreated)
	e.sb.SetFaults("")
	checkDriveFile(t, ds, e.srv.URL, f, "faults.bin", "application/octet-stream", data)
	if !slices.ContainsFunc(reqs, func(r wireReq) bool { return r.Status >= 500 }) {
		t.Fatalf("no 5xx on the wire:\n%s", wireDump(reqs))
	}
	t.Logf("%d of %d requests failed by injection", failed, len(reqs))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
