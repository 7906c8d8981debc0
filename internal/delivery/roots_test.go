package delivery

import (
	"testing"

	"carrier/transfer"
)

// A job's API root is its URL cut before its route's path, whatever the
// root holds before it (a path of its own, a port) and whatever follows
// (a query, an id): one table knows both the route and where it begins.
// A URL on no route is at no root Carrier knows.
func TestRouteRootCutsTheRouteOff(t *testing.T) {
	for _, c := range []struct{ url, kind, root string }{
		{"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send?uploadType=resumable", "gmail.send", "https://gmail.googleapis.com"},
		{"http://127.0.0.1:4000/api/upload/gmail/v1/users/me/drafts/send", "gmail.senddraft", "http://127.0.0.1:4000/api"},
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/drafts/r%2F42", "gmail.updatedraft", "http://127.0.0.1:4000"},
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/messages", "gmail.insert", "http://127.0.0.1:4000"},
		{"http://127.0.0.1:4000/upload/mirror/v1/timeline/item1/attachments", "timeline.attach", "http://127.0.0.1:4000"},
		{"http://127.0.0.1:4000/upload/mirror/v1/timeline//attachments", "timeline", "http://127.0.0.1:4000"},
		{"http://127.0.0.1:4000/upload/storage/v1/b/bucket/o?name=x", "storage", "http://127.0.0.1:4000"},
		{"https://www.googleapis.com/upload/drive/v3/files?fields=id%2Cname", KindDriveUpload, "https://www.googleapis.com"},
		{"https://www.googleapis.com/drive/v3/files/abc/permissions?sendNotificationEmail=false", KindDriveShare, "https://www.googleapis.com"},
		{"https://photoslibrary.googleapis.com/v1/uploads", KindPhotosUpload, "https://photoslibrary.googleapis.com"},
		{"http://127.0.0.1:5555/sandbox/v1/mediaItems:batchCreate", KindPhotosItems, "http://127.0.0.1:5555/sandbox"},
		{"https://photoslibrary.googleapis.com/v1/albums", KindPhotosAlbum, "https://photoslibrary.googleapis.com"},
		{"https://example.com/somewhere/else", "", ""},
		{"http://127.0.0.1:4000/gmail/v1/users/me/messages/send", "", ""},
		{"/upload/gmail/v1/users/me/messages/send", "gmail.send", ""}, // no server
		{"://not a url", "", ""},
	} {
		r, root := RouteRoot(c.url)
		if r.Kind != c.kind || root != c.root || RootOf(c.url) != c.root {
			t.Errorf("%s: kind %q root %q, want %q %q", c.url, r.Kind, root, c.kind, c.root)
		}
	}
	if !AtRoot("http://127.0.0.1:4000/upload/gmail/v1/users/me/messages/send", "http://127.0.0.1:4000/") {
		t.Error("a root given with its slash is the same root")
	}
	for _, c := range []struct{ url, root string }{
		{"http://127.0.0.1:40000/upload/gmail/v1/users/me/messages/send", "http://127.0.0.1:4000"}, // a longer port is another server
		{"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send", "http://127.0.0.1:4000"},
		{"http://127.0.0.1:4000/elsewhere", "http://127.0.0.1:4000"}, // on no route
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/messages/send", ""},
	} {
		if AtRoot(c.url, c.root) {
			t.Errorf("%s is not at %q", c.url, c.root)
		}
	}
}

// Photos' routes are its uploads, calls and albums, and no other's.
func TestPhotosRoutes(t *testing.T) {
	for url, want := range map[string]bool{
		"https://photoslibrary.googleapis.com/v1/uploads":                true,
		"https://photoslibrary.googleapis.com/v1/mediaItems:batchCreate": true,
		"http://127.0.0.1:5555/v1/albums":                                true,
		"https://www.googleapis.com/upload/drive/v3/files":               false,
		"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages": false,
		"https://example.com/v1/something":                               false,
	} {
		if got := RouteOf(url).Photos(); got != want {
			t.Errorf("%s: Photos %v, want %v", url, got, want)
		}
	}
}

// A job's role is the one its stored delivery gives it; its URL is read
// only for a job no stored delivery names (a journal from before
// deliveries, or a job that joins its delivery).
func TestRoleOfIsTheStoredDeliverys(t *testing.T) {
	d := &Delivery{ID: "d-1", Kind: KindMessage, Members: []Member{
		{Job: "file", Role: RoleDriveFile, File: "/home/ann/a.mov"},
		{Job: "msg", Role: RoleMessage},
	}}
	// A URL on no route, which alone reads as a plain upload.
	odd := transfer.Snapshot{ID: "file", URL: "https://example.com/somewhere", Path: "/home/ann/a.mov"}
	if r := RoleOf(d, odd); r != RoleDriveFile {
		t.Errorf("the stored member's role: %q, want %q", r, RoleDriveFile)
	}
	if m := MemberIn(d, odd); m.File != "/home/ann/a.mov" || m.Job != "file" {
		t.Errorf("the stored member: %+v", m)
	}
	if r := RoleOf(nil, odd); r != RoleUpload {
		t.Errorf("with no delivery stored, read off the URL: %q, want %q", r, RoleUpload)
	}
	joins := transfer.Snapshot{ID: "share", URL: root + "/drive/v3/files/F1/permissions"}
	if m := MemberIn(d, joins); m.Role != RoleDriveShare || m.Job != "share" {
		t.Errorf("a job the delivery does not name yet, read off its URL: %+v", m)
	}
	// A role the delivery's file names wrongly (a newer Carrier's) is not
	// taken: the URL's reading serves.
	bad := &Delivery{Members: []Member{{Job: "msg", Role: "telegram"}}}
	if r := RoleOf(bad, transfer.Snapshot{ID: "msg", URL: sendURL}); r != RoleMessage {
		t.Errorf("an unknown stored role: %q, want %q", r, RoleMessage)
	}
}
