package delivery

import "testing"

// One table names every job Carrier makes, by the end of its URL, whatever
// the API root before it.
func TestRouteOfNamesEveryJobCarrierMakes(t *testing.T) {
	for _, c := range []struct {
		url, kind string
		role      Role
	}{
		{"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send?uploadType=resumable", "gmail.send", RoleMessage},
		{"http://127.0.0.1:4000/api/upload/gmail/v1/users/me/drafts/send", "gmail.senddraft", RoleMessage},
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/drafts/r%2F42", "gmail.updatedraft", RoleMessage},
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/drafts", "gmail.savedraft", RoleMessage},
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/messages/import", "gmail.import", RoleMessage},
		{"http://127.0.0.1:4000/upload/gmail/v1/users/me/messages", "gmail.insert", RoleMessage},
		{"http://127.0.0.1:4000/upload/mirror/v1/timeline/item1/attachments", "timeline.attach", RoleUpload},
		{"http://127.0.0.1:4000/upload/mirror/v1/timeline", "timeline", RoleUpload},
		{"http://127.0.0.1:4000/upload/storage/v1/b/bucket/o?name=x", "storage", RoleUpload},
		{"https://www.googleapis.com/upload/drive/v3/files?fields=id%2Cname", KindDriveUpload, RoleDriveFile},
		{"https://www.googleapis.com/drive/v3/files/abc/permissions?sendNotificationEmail=false", KindDriveShare, RoleDriveShare},
		{"https://photoslibrary.googleapis.com/v1/uploads", KindPhotosUpload, RolePhoto},
		{"https://photoslibrary.googleapis.com/v1/mediaItems:batchCreate", KindPhotosItems, RoleItems},
		{"https://photoslibrary.googleapis.com/v1/albums", KindPhotosAlbum, RoleAlbum},
		{"https://example.com/somewhere/else", "", RoleUpload},
		{"://not a url", "", RoleUpload},
	} {
		r := RouteOf(c.url)
		if r.Kind != c.kind || roleOf(r) != c.role {
			t.Errorf("%s: kind %q role %q, want %q %q", c.url, r.Kind, roleOf(r), c.kind, c.role)
		}
	}
	if got := RouteDraftUpdate.With("r/42"); got != "/upload/gmail/v1/users/me/drafts/r%2F42" {
		t.Errorf("With: %s", got)
	}
}
