package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

type newItem struct {
	Description     string `json:"description,omitempty"`
	SimpleMediaItem struct {
		UploadToken string `json:"uploadToken"`
		FileName    string `json:"fileName,omitempty"`
	} `json:"simpleMediaItem"`
}

func itemsOf(tokens ...string) []newItem {
	out := make([]newItem, len(tokens))
	for i, t := range tokens {
		out[i].SimpleMediaItem.UploadToken = t
	}
	return out
}

func (e *testEnv) photosJSON(method, path string, body any, hdr map[string]string) resp {
	e.t.Helper()
	if hdr == nil {
		hdr = auth()
	}
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
		hdr["Content-Type"] = "application/json"
	}
	return e.do(method, path, hdr, b)
}

func (e *testEnv) batchCreate(album string, items []newItem) resp {
	e.t.Helper()
	body := map[string]any{"newMediaItems": items}
	if album != "" {
		body["albumId"] = album
	}
	return e.photosJSON("POST", "/v1/mediaItems:batchCreate", body, nil)
}

type itemResult struct {
	UploadToken string         `json:"uploadToken"`
	Status      map[string]any `json:"status"`
	MediaItem   map[string]any `json:"mediaItem"`
}

func (r resp) results(t *testing.T) []itemResult {
	t.Helper()
	var out struct {
		NewMediaItemResults []itemResult `json:"newMediaItemResults"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("batchCreate answer: %v %s", err, r.body)
	}
	return out.NewMediaItemResults
}

// createOne makes one media item of a token and returns it.
func (e *testEnv) createOne(token, fileName, album string) map[string]any {
	e.t.Helper()
	items := itemsOf(token)
	items[0].SimpleMediaItem.FileName = fileName
	r := e.batchCreate(album, items)
	res := r.results(e.t)
	if r.code != 200 || len(res) != 1 || res[0].Status["message"] != "Success" || res[0].MediaItem["id"] == nil {
		e.t.Fatalf("batchCreate: %d %s", r.code, r.body)
	}
	return res[0].MediaItem
}

func (e *testEnv) photosBytes(item map[string]any) []byte {
	e.t.Helper()
	r := e.do("GET", item["baseUrl"].(string)+"=d", auth(), nil)
	if r.code != 200 {
		e.t.Fatalf("bytes of %v: %d %s", item["id"], r.code, r.body)
	}
	return r.body
}

// listItems pages through mediaItems.list (album "") or an album's search.
func (e *testEnv) listItems(album string) []map[string]any {
	e.t.Helper()
	var all []map[string]any
	token := ""
	for {
		var r resp
		if album == "" {
			r = e.do("GET", "/v1/mediaItems?pageSize=2&pageToken="+token, auth(), nil)
		} else {
			r = e.photosJSON("POST", "/v1/mediaItems:search", map[string]any{"albumId": album, "pageSize": 2, "pageToken": token}, nil)
		}
		if r.code != 200 {
			e.t.Fatalf("list: %d %s", r.code, r.body)
		}
		var page struct {
			MediaItems    []map[string]any `json:"mediaItems"`
			NextPageToken string           `json:"nextPageToken"`
		}
		json.Unmarshal(r.body, &page)
		all = append(all, page.MediaItems...)
		if token = page.NextPageToken; token == "" {
			return all
		}
	}
}

func (e *testEnv) createAlbum(title string) string {
	e.t.Helper()
	r := e.photosJSON("POST", "/v1/albums", map[string]any{"album": map[string]any{"title": title}}, nil)
	m := r.json(e.t)
	if r.code != 200 || m["title"] != title || m["id"] == nil {
		e.t.Fatalf("albums.create: %d %s", r.code, r.body)
	}
	return m["id"].(string)
}

// Identical bytes are one media item, however often and by whichever
// upload type they come, and count once against storage.
func TestPhotosIdenticalBytesAreOneItem(t *testing.T) {
	e := newEnv(t)
	data := jpegBytes(10, 70000)
	t1, t2 := e.photosToken(data), e.photosToken(data)
	if t1 == t2 {
		t.Fatal("two uploads got one token")
	}
	u := e.photosStart()
	t3 := string(e.photosSend(u, "upload, finalize", 0, data).body)
	r := e.batchCreate("", itemsOf(t1, t2))
	res := r.results(t)
	if r.code != 200 || len(res) != 2 || res[0].MediaItem["id"] != res[1].MediaItem["id"] {
		t.Fatalf("same bytes in one call: %d %s", r.code, r.body)
	}
	if again := e.createOne(t3, "", ""); again["id"] != res[0].MediaItem["id"] {
		t.Fatalf("same bytes resumably: %v, want %v", again["id"], res[0].MediaItem["id"])
	}
	other := e.createOne(e.photosToken(jpegBytes(11, 70000)), "", "")
	if other["id"] == res[0].MediaItem["id"] {
		t.Fatal("different bytes became the same item")
	}
	if n := len(e.listItems("")); n != 2 {
		t.Fatalf("%d items, want 2", n)
	}
	about := e.do("GET", "/drive/v3/about?fields=storageQuota", auth(), nil).json(t)["storageQuota"].(map[string]any)
	if about["usage"] != "140000" {
		t.Fatalf("storage usage %v, want 140000 (two items of 70000 bytes)", about["usage"])
	}
}

// batchCreate's rules: 1 to 50 items, a status per item, descriptions
// under 1,000 characters, tokens that exist and have not expired, albums
// the app created.
func TestPhotosBatchCreateRules(t *testing.T) {
	e, clk := newOAuthEnv(t)
	good := e.photosToken(jpegBytes(20, 1000))
	var many []string
	for range 51 {
		many = append(many, good)
	}
	if r := e.batchCreate("", itemsOf(many...)); r.code != 400 || !strings.Contains(r.errMessage(t), "at most 50") {
		t.Fatalf("51 items: %d %s", r.code, r.body)
	}
	if r := e.batchCreate("", itemsOf(many[:50]...)); r.code != 200 || len(r.results(t)) != 50 {
		t.Fatalf("50 items: %d %s", r.code, r.body)
	}
	if r := e.batchCreate("", nil); r.code != 400 {
		t.Fatalf("no items: %d %s", r.code, r.body)
	}
	old := e.photosToken(jpegBytes(21, 1000))
	clk.Advance(24*time.Hour - time.Second)
	if item := e.createOne(old, "", ""); item["id"] == nil {
		t.Fatal("a token a second short of a day")
	}
	expired := e.photosToken(jpegBytes(22, 1000))
	clk.Advance(24 * time.Hour)
	fresh := e.photosToken(jpegBytes(23, 1000))
	items := itemsOf(fresh, fresh, expired, "no-such-token", fresh, "")
	items[0].Description = strings.Repeat("é", 999)
	items[1].Description = strings.Repeat("é", 1000)
	r := e.batchCreate("", items)
	res := r.results(t)
	if r.code != http.StatusMultiStatus || len(res) != 6 {
		t.Fatalf("mixed batch: %d %s", r.code, r.body)
	}
	want := []struct {
		ok   bool
		text string
	}{{true, ""}, {false, "shorter than 1000"}, {false, "expired"}, {false, "Unknown upload token"}, {true, ""}, {false, "No uploadToken"}}
	for i, w := range want {
		msg, _ := res[i].Status["message"].(string)
		if w.ok != (res[i].MediaItem != nil && msg == "Success") || !w.ok && (res[i].Status["code"] != 3.0 || !strings.Contains(msg, w.text)) {
			t.Errorf("item %d: %v %v, want ok=%v %q", i, res[i].Status, res[i].MediaItem, w.ok, w.text)
		}
	}
	if res[0].MediaItem["description"] != strings.Repeat("é", 999) {
		t.Errorf("description: %v", res[0].MediaItem["description"])
	}

	personal, err := e.sb.AddPersonalAlbum("Mine, made in Google Photos")
	if err != nil {
		t.Fatal(err)
	}
	if r := e.batchCreate(personal, itemsOf(fresh)); r.code != 403 || !strings.Contains(r.errMessage(t), "No permission") {
		t.Fatalf("into an album the app did not create: %d %s", r.code, r.body)
	}
	if r := e.batchCreate("nosuchalbum", itemsOf(fresh)); r.code != 400 {
		t.Fatalf("into no album: %d %s", r.code, r.body)
	}
	album := e.createAlbum("Trip")
	second := e.photosToken(jpegBytes(24, 1000))
	e.createOne(second, "", album)
	e.createOne(fresh, "", album)
	e.createOne(second, "", album) // already there: stays once
	in := e.listItems(album)
	if len(in) != 2 || in[0]["id"] == in[1]["id"] {
		t.Fatalf("album holds %v", in)
	}
	a := e.do("GET", "/v1/albums/"+album, auth(), nil).json(t)
	if a["mediaItemsCount"] != "2" || a["isWriteable"] != true {
		t.Fatalf("album: %v", a)
	}
}

// batchCreate calls run one at a time per user: one made while another
// runs gets 409 ABORTED, and the first is unharmed.
func TestPhotosBatchCreateOneAtATime(t *testing.T) {
	e := newEnv(t)
	token := e.photosToken(jpegBytes(30, 1000))
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.sb.photos.mu.Lock()
	e.sb.photos.batchHook = func() {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
	e.sb.photos.mu.Unlock()
	first := make(chan resp, 1)
	go func() { first <- e.batchCreate("", itemsOf(token)) }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first call never ran")
	}
	r := e.batchCreate("", itemsOf(token))
	if st, _ := r.rpc(t); r.code != 409 || st != "ABORTED" {
		t.Fatalf("concurrent call: %d %s", r.code, r.body)
	}
	close(release)
	if r := <-first; r.code != 200 {
		t.Fatalf("first call: %d %s", r.code, r.body)
	}
	if r := e.batchCreate("", itemsOf(token)); r.code != 200 {
		t.Fatalf("a call after the first ended: %d %s", r.code, r.body)
	}
}

// The app sees only what it created: albums made in Google Photos are
// neither listed nor readable; lists page.
func TestPhotosOnlyWhatTheAppCreated(t *testing.T) {
	e := newEnv(t)
	personal, _ := e.sb.AddPersonalAlbum("Family")
	mine := []string{e.createAlbum("A"), e.createAlbum("B"), e.createAlbum("C")}
	r := e.do("GET", "/v1/albums?pageSize=2", auth(), nil)
	page := r.json(t)
	if len(page["albums"].([]any)) != 2 || page["nextPageToken"] == nil {
		t.Fatalf("first page: %s", r.body)
	}
	r = e.do("GET", "/v1/albums?pageSize=2&pageToken="+page["nextPageToken"].(string), auth(), nil)
	rest := r.json(t)["albums"].([]any)
	if len(rest) != 1 || strings.Contains(string(r.body), personal) {
		t.Fatalf("second page: %s", r.body)
	}
	if r := e.do("GET", "/v1/albums/"+personal, auth(), nil); r.code != 403 {
		t.Fatalf("albums.get of a personal album: %d", r.code)
	}
	if r := e.photosJSON("POST", "/v1/mediaItems:search", map[string]any{"albumId": personal}, nil); r.code != 403 {
		t.Fatalf("search in a personal album: %d", r.code)
	}
	if r := e.do("GET", "/v1/albums/"+mine[0], auth(), nil); r.code != 200 {
		t.Fatalf("albums.get: %d", r.code)
	}
	if r := e.do("GET", "/v1/mediaItems/nosuchitem", auth(), nil); r.code != 404 {
		t.Fatalf("mediaItems.get of nothing: %d", r.code)
	}
	for i := range 5 {
		e.createOne(e.photosToken(jpegBytes(uint64(40+i), 600)), fmt.Sprintf("p%d.jpg", i), "")
	}
	items := e.listItems("")
	if len(items) != 5 || items[0]["filename"] != "p4.jpg" {
		t.Fatalf("items, newest first, 2 a page: %v", items)
	}
	got := e.do("GET", "/v1/mediaItems/"+items[2]["id"].(string), auth(), nil).json(t)
	if got["filename"] != "p2.jpg" || got["mimeType"] != "image/jpeg" {
		t.Fatalf("mediaItems.get: %v", got)
	}
	if r := e.photosJSON("POST", "/v1/albums", map[string]any{"album": map[string]any{"title": ""}}, nil); r.code != 400 {
		t.Fatalf("an album with no title: %d", r.code)
	}
}

// The type comes from the bytes, never the name or the declared type;
// sound and what is no picture or video are refused with words.
func TestPhotosTypeFromTheBytes(t *testing.T) {
	e := newEnv(t)
	var pngBuf bytes.Buffer
	png.Encode(&pngBuf, image.NewGray(image.Rect(0, 0, 64, 48)))
	r := e.photosRaw(pngBuf.Bytes(), "X-Goog-Upload-File-Name", "song.mp3", "X-Goog-Upload-Content-Type", "audio/mpeg")
	item := e.createOne(string(r.body), "", "")
	meta := item["mediaMetadata"].(map[string]any)
	if item["mimeType"] != "image/png" || item["filename"] != "song.mp3" || meta["width"] != "64" || meta["height"] != "48" {
		t.Fatalf("a PNG named song.mp3: %v", item)
	}
	mov := randomData(50, 4000)
	copy(mov, "\x00\x00\x00\x14ftypqt  ")
	if it := e.createOne(e.photosToken(mov), "clip.jpg", ""); it["mimeType"] != "video/quicktime" || it["mediaMetadata"].(map[string]any)["video"] == nil {
		t.Fatalf("a MOV named clip.jpg: %v", it)
	}
	for name, data := range map[string][]byte{
		"MP3":  append([]byte("ID3\x04\x00\x00"), randomData(51, 3000)...),
		"M4A":  append([]byte("\x00\x00\x00\x20ftypM4A "), randomData(52, 3000)...),
		"WAV":  append([]byte("RIFF\x00\x10\x00\x00WAVEfmt "), randomData(53, 3000)...),
		"text": []byte(strings.Repeat("not a picture at all\n", 100)),
		"none": nil,
	} {
		r := e.photosRaw(data, "X-Goog-Upload-File-Name", "IMG_0002.JPG")
		if r.code != 400 {
			t.Errorf("%s: %d %s", name, r.code, r.body)
			continue
		}
		msg := r.errMessage(t)
		switch name {
		case "MP3", "M4A", "WAV":
			if !strings.Contains(msg, "sound") || !strings.Contains(msg, "Drive") {
				t.Errorf("%s: %s", name, msg)
			}
		default:
			if !strings.Contains(msg, "picture or a video") {
				t.Errorf("%s: %s", name, msg)
			}
		}
	}
	// Resumably, the first chunk decides, and a refused one stores nothing.
	u := e.photosStart()
	wav := append([]byte("RIFF\x00\x10\x00\x00WAVEfmt "), randomData(54, chunkGranularity)...)[:chunkGranularity]
	if r := e.photosSend(u, "upload", 0, wav); r.code != 400 || !strings.Contains(r.errMessage(t), "sound") || r.received(t) != 0 {
		t.Fatalf("a WAV chunk: %d %s", r.code, r.body)
	}
}

// Pictures up to 200 MiB, videos up to 20 GiB: 413 above, as soon as a
// declared size or the bytes pass the limit.
func TestPhotosSizeLimits(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.DriveQuota = -1 })
	if r := e.photosStartResp("X-Goog-Upload-Raw-Size", formatInt(PhotosVideoLimit+1)); r.code != 413 {
		t.Fatalf("a start declaring 20 GiB + 1: %d %s", r.code, r.body)
	}
	u := e.photosStart("X-Goog-Upload-Raw-Size", formatInt(PhotosVideoLimit))
	if r := e.photosSend(u, "upload", 0, mp4Bytes(60, chunkGranularity)); r.code != 200 {
		t.Fatalf("a video declaring 20 GiB: %d %s", r.code, r.body)
	}
	u = e.photosStart("X-Goog-Upload-Raw-Size", formatInt(PhotosPictureLimit+1))
	if r := e.photosSend(u, "upload", 0, jpegBytes(61, chunkGranularity)); r.code != 413 || !strings.Contains(r.errMessage(t), "200 MiB") {
		t.Fatalf("a picture declaring 200 MiB + 1: %d %s", r.code, r.body)
	}
	if testing.Short() {
		return
	}
	// Undeclared, the bytes themselves pass the limit: what passes it is
	// refused, and the session stays where it was.
	u = e.photosStart()
	body := io.MultiReader(bytes.NewReader(jpegBytes(62, 4096)), &zeroReader{n: PhotosPictureLimit - 4096 + 1})
	req, _ := http.NewRequest("POST", u, body)
	req.Header.Set("X-Goog-Upload-Command", "upload, finalize")
	req.Header.Set("X-Goog-Upload-Offset", "0")
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 413 {
		t.Fatalf("a picture of 200 MiB + 1 sent whole: %d", res.StatusCode)
	}
	if q := e.photosSend(u, "query", -1, nil); q.received(t) != 0 || q.h.Get("X-Goog-Upload-Status") != "active" {
		t.Fatalf("after the refusal: %v", q.h)
	}
	exact := io.MultiReader(bytes.NewReader(jpegBytes(62, 4096)), &zeroReader{n: PhotosPictureLimit - 4096})
	req, _ = http.NewRequest("POST", u, exact)
	req.Header.Set("X-Goog-Upload-Command", "upload, finalize")
	req.Header.Set("X-Goog-Upload-Offset", "0")
	res, err = e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("a picture of exactly 200 MiB: %d", res.StatusCode)
	}
}

// Photos' storage is the account's, shared with Drive: an upload that
// cannot fit is refused before its bytes, items count in Drive's
// about.storageQuota, and what Photos used is gone for Drive.
func TestPhotosStorageSharedWithDrive(t *testing.T) {
	e := newEnv(t)
	e.sb.SetDriveQuota(DriveQuota{Limit: 100000})
	if r := e.photosStartResp("X-Goog-Upload-Raw-Size", "100001"); r.code != 403 || !strings.Contains(r.errMessage(t), "storage is full") {
		t.Fatalf("a start larger than the room: %d %s", r.code, r.body)
	}
	if r := e.doExpect("POST", photosUploads, auth("X-Goog-Upload-Protocol", "raw"), jpegBytes(70, 100001)); r.code != 403 {
		t.Fatalf("a raw upload larger than the room: %d %s", r.code, r.body)
	}
	a := e.photosToken(jpegBytes(71, 60000))
	b := e.photosToken(jpegBytes(72, 60000))
	e.createOne(a, "", "")
	r := e.batchCreate("", itemsOf(b))
	if res := r.results(t); r.code != 207 || res[0].Status["code"] != 8.0 || !strings.Contains(res[0].Status["message"].(string), "storage") {
		t.Fatalf("an item that no longer fits: %d %s", r.code, r.body)
	}
	about := e.do("GET", "/drive/v3/about?fields=storageQuota", auth(), nil).json(t)["storageQuota"].(map[string]any)
	if about["usage"] != "60000" || about["usageInDrive"] != "0" {
		t.Fatalf("about.storageQuota: %v", about)
	}
	if r := e.doExpect("POST", driveFiles+"?uploadType=media", auth("Content-Type", "application/octet-stream"), make([]byte, 50000)); r.code != 403 {
		t.Fatalf("Drive after Photos used the room: %d %s", r.code, r.body)
	}
}

// albums.batchRemoveMediaItems takes items out of an album the app made,
// as the person does in Google Photos; they stay in the library, and a
// batchCreate of the same bytes puts them back. An item not in the album,
// a personal album, or no ids are refused.
func TestPhotosAlbumRemoveItems(t *testing.T) {
	e := newEnv(t)
	album := e.createAlbum("Trip")
	personal, _ := e.sb.AddPersonalAlbum("Family")
	data := jpegBytes(7, 600)
	it := e.createOne(e.photosToken(data), "a.jpg", album)
	other := e.createOne(e.photosToken(jpegBytes(8, 600)), "b.jpg", album)
	remove := func(album string, ids ...string) resp {
		return e.photosJSON("POST", "/v1/albums/"+album+":batchRemoveMediaItems", map[string]any{"mediaItemIds": ids}, nil)
	}
	if r := remove(album, it["id"].(string)); r.code != 200 {
		t.Fatalf("batchRemoveMediaItems: %d %s", r.code, r.body)
	}
	if items := e.listItems(album); len(items) != 1 || items[0]["id"] != other["id"] {
		t.Fatalf("the album after a removal: %v", items)
	}
	if items := e.listItems(""); len(items) != 2 {
		t.Fatalf("the library after a removal: %d items, want both", len(items))
	}
	if r := remove(album, it["id"].(string)); r.code != 400 {
		t.Fatalf("removing an item not in the album: %d", r.code)
	}
	if r := remove(personal, other["id"].(string)); r.code != 403 {
		t.Fatalf("removing from a personal album: %d", r.code)
	}
	if r := remove(album); r.code != 400 {
		t.Fatalf("removing nothing: %d", r.code)
	}
	back := e.createOne(e.photosToken(data), "a.jpg", album)
	if back["id"] != it["id"] || len(e.listItems(album)) != 2 {
		t.Fatalf("the same bytes again: item %v, album %d items", back["id"], len(e.listItems(album)))
	}
}
