package delivery

import (
	"net/url"
	"slices"
	"strings"
)

// Route is a request Carrier makes: its path below an API root, its
// English words for people and a stable name a front end words it by
// (Kind: "gmail.send", "drive.upload", "photos.items"). This is the one
// table of them: the recipes read it one way (a {id} is filled in:
// With) and RouteAt the other (a {id} matches any one segment).
type Route struct{ Path, What, Kind string }

// The upload paths of Gmail and the Mirror timeline.
const (
	gmailUsers     = "/upload/gmail/v1/users/me"
	mirrorTimeline = "/upload/mirror/v1/timeline"
)

// The routes Carrier builds requests from, and those it only recognises
// (Photos, Drive: built by their own code, named here so that a job's
// kind is read in one place).
var (
	RouteSend        = Route{gmailUsers + "/messages/send", "Gmail · send", "gmail.send"}
	RouteDraftSend   = Route{gmailUsers + "/drafts/send", "Gmail · send draft", "gmail.senddraft"}
	RouteDraftUpdate = Route{gmailUsers + "/drafts/{id}", "Gmail · update draft", "gmail.updatedraft"}
	RouteDraft       = Route{gmailUsers + "/drafts", "Gmail · save draft", "gmail.savedraft"}
	RouteImport      = Route{gmailUsers + "/messages/import", "Gmail · import", "gmail.import"}
	RouteInsert      = Route{gmailUsers + "/messages", "Gmail · insert", "gmail.insert"}
	RouteAttach      = Route{mirrorTimeline + "/{id}/attachments", "Timeline · add to item", "timeline.attach"}
	RouteTimeline    = Route{mirrorTimeline, "Timeline", "timeline"}
	RouteStorage     = Route{"/upload/storage/v1/b/{id}/o", "Storage", "storage"}

	// Routes are the upload routes, in the order RouteAt tries them (the
	// first match wins).
	Routes = []Route{RouteSend, RouteDraftSend, RouteDraftUpdate, RouteDraft, RouteImport, RouteInsert, RouteAttach, RouteTimeline, RouteStorage}
)

// The kinds of the routes matched by their ends rather than by Routes.
const (
	KindPhotosUpload = "photos.upload"
	KindPhotosItems  = "photos.items"
	KindPhotosAlbum  = "photos.album"
	KindDriveUpload  = "drive.upload"
	KindDriveShare   = "drive.share"
)

// With is the route's path with its {id} filled in (escaped).
func (r Route) With(id string) string { return strings.Replace(r.Path, "{id}", url.PathEscape(id), 1) }

// RouteOf is the route of a job's URL; a URL that does not parse is the
// zero Route.
func RouteOf(rawURL string) Route {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Route{}
	}
	return RouteAt(u.EscapedPath(), u.Path)
}

// RouteAt is the route whose path ends the URL's (escaped, so that an id
// holding a slash stays one segment; p is the same path unescaped): an
// API root may have a path of its own before it. An unknown one is named
// by its path, with no Kind.
func RouteAt(escaped, p string) Route {
	segs := strings.Split(strings.TrimSuffix(escaped, "/"), "/")
	for _, r := range Routes {
		want := segments(r.Path)
		if len(want) <= len(segs) && matches(segs[len(segs)-len(want):], want) {
			return r
		}
	}
	switch {
	case strings.HasSuffix(p, "/v1/uploads"):
		return Route{What: "Google Photos · upload", Kind: KindPhotosUpload}
	case strings.HasSuffix(p, "/v1/mediaItems:batchCreate"):
		return Route{What: "Google Photos · media items made", Kind: KindPhotosItems}
	case strings.HasSuffix(p, "/v1/albums"):
		return Route{What: "Google Photos · album", Kind: KindPhotosAlbum}
	case strings.Contains(p, "/mirror/v1/timeline"):
		return RouteTimeline
	case strings.Contains(p, "/storage/v1/b/"):
		return RouteStorage
	case strings.HasSuffix(p, "/upload/drive/v3/files"):
		return Route{What: p, Kind: KindDriveUpload}
	case strings.HasSuffix(p, "/permissions") && strings.Contains(p, "/drive/v3/files/"):
		return Route{What: p, Kind: KindDriveShare}
	}
	return Route{What: p}
}

// below are the paths under the API root of the routes RouteAt names by
// their ends (Routes carry their own).
var below = map[string]string{
	KindPhotosUpload: "/v1/uploads",
	KindPhotosItems:  "/v1/mediaItems:batchCreate",
	KindPhotosAlbum:  "/v1/albums",
	KindDriveUpload:  "/upload/drive/v3/files",
	KindDriveShare:   "/drive/v3/files/{id}/permissions",
}

// Photos reports whether r is a call of Google Photos' Library API (an
// upload, a batchCreate, an album): Photos' daily quota is theirs.
func (r Route) Photos() bool { return strings.HasPrefix(r.Kind, "photos.") }

// RouteRoot is the route of a job's URL (RouteOf) and the API root it
// goes to: the URL's scheme, host and whatever path comes before the
// route's own ("https://photoslibrary.googleapis.com",
// "http://127.0.0.1:4000/api"), with no query. The root is "" for a URL
// on no route of the table, or one that does not parse: such a job is at
// no API root Carrier knows.
func RouteRoot(rawURL string) (Route, string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Route{}, ""
	}
	r := RouteAt(u.EscapedPath(), u.Path)
	pattern := r.Path
	if pattern == "" {
		pattern = below[r.Kind]
	}
	if r.Kind == "" || pattern == "" || u.Host == "" {
		return r, ""
	}
	segs := strings.Split(strings.TrimSuffix(u.EscapedPath(), "/"), "/")
	want := segments(pattern)
	n := -1
	if len(want) <= len(segs) && matches(segs[len(segs)-len(want):], want) {
		n = len(segs) - len(want)
	} else {
		// Named by what it holds (the timeline's attachments of an
		// empty id, a bucket's deeper path): the root ends where the
		// route's fixed start begins.
		fixed := want
		for i, w := range want {
			if w == "{id}" {
				fixed = want[:i]
				break
			}
		}
		for i := 0; i+len(fixed) <= len(segs) && len(fixed) > 0; i++ {
			if slices.Equal(segs[i:i+len(fixed)], fixed) {
				n = i
				break
			}
		}
	}
	if n < 0 {
		return r, ""
	}
	return r, u.Scheme + "://" + u.Host + strings.Join(segs[:n], "/")
}

// RootOf is the API root a job's URL goes to (RouteRoot), "" when it is
// on no route of the table.
func RootOf(rawURL string) string {
	_, root := RouteRoot(rawURL)
	return root
}

// AtRoot reports whether a job's URL goes to the API root root (a
// trailing slash aside): on a route of the table, under that root.
func AtRoot(rawURL, root string) bool {
	got := RootOf(rawURL)
	return got != "" && got == strings.TrimRight(root, "/")
}

// split are the paths of Routes and below in segments, split once: a
// camera roll's 20,400 jobs are each read off the table.
var split = func() map[string][]string {
	m := map[string][]string{}
	for _, r := range Routes {
		m[r.Path] = strings.Split(strings.TrimPrefix(r.Path, "/"), "/")
	}
	for _, p := range below {
		m[p] = strings.Split(strings.TrimPrefix(p, "/"), "/")
	}
	return m
}()

// segments is a route's path in segments.
func segments(path string) []string {
	if s, ok := split[path]; ok {
		return s
	}
	return strings.Split(strings.TrimPrefix(path, "/"), "/")
}

// matches reports whether the segments tail are the route's want, a
// {id} matching any one segment but an empty one.
func matches(tail, want []string) bool {
	for i, w := range want {
		if w != tail[i] && (w != "{id}" || tail[i] == "") {
			return false
		}
	}
	return true
}

// roleOf is the part a job at route r plays in a delivery, read off its
// route alone (Adopt's guess for a job recorded without an owner).
func roleOf(r Route) Role {
	switch r.Kind {
	case KindDriveUpload:
		return RoleDriveFile
	case KindDriveShare:
		return RoleDriveShare
	case KindPhotosUpload:
		return RolePhoto
	case KindPhotosAlbum:
		return RoleAlbum
	case KindPhotosItems:
		return RoleItems
	}
	if strings.HasPrefix(r.Kind, "gmail.") {
		return RoleMessage
	}
	return RoleUpload
}

// sends reports whether a message going by route r reaches its
// recipients (messages.send, drafts.send).
func sends(r Route) bool { return r == RouteSend || r == RouteDraftSend }

// savesDraft reports whether a message going by route r is a draft
// saved (drafts.create or drafts.update), not sent.
func savesDraft(r Route) bool { return r == RouteDraft || r == RouteDraftUpdate }
