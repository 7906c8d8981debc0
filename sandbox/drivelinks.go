package sandbox

import (
	"fmt"
	"html"
	"mime"
	"net/http"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// The links a Drive File carries, for a person's browser rather than an
// API client: webViewLink (/file/d/ID/view, /drive/folders/ID) answers a
// small page, webContentLink (/uc?id=ID&export=download) the bytes as a
// download. A browser sends no bearer token, so these are served before
// the API's token check, with Drive's rule for links: a file shared with
// anyone (type anyone, "anyone with the link") opens to everyone; any
// other opens only to a request that carries the sandbox's token or a
// token with a Drive scope. The sandbox has no browser sign-in, so a file
// shared with one person by address does not open by its link alone.

func isDriveLink(p string) bool {
	return p == "/uc" || strings.HasPrefix(p, "/file/d/") || strings.HasPrefix(p, "/drive/folders/")
}

// linkID is the file id in a link's path, or "" when the path is not one.
func linkID(r *http.Request) (id string, download bool) {
	p := r.URL.Path
	switch {
	case p == "/uc":
		return r.URL.Query().Get("id"), true
	case strings.HasPrefix(p, "/file/d/"):
		rest := strings.TrimPrefix(p, "/file/d/")
		id, tail, _ := strings.Cut(rest, "/")
		if tail == "" || tail == "view" || tail == "edit" {
			return id, false
		}
	case strings.HasPrefix(p, "/drive/folders/"):
		id := strings.TrimPrefix(p, "/drive/folders/")
		if !strings.Contains(id, "/") {
			return id, false
		}
	}
	return "", false
}

// linkOpen says whether a link opens for this request.
func (s *Sandbox) linkOpen(tx *bolt.Tx, r *http.Request, f *driveFileRec) bool {
	for _, p := range s.filePerms(tx, f.ID) {
		if p.Type == "anyone" {
			return true
		}
	}
	c := s.credential(r)
	if c.static {
		return true
	}
	if !strings.EqualFold(c.account, s.opts.Account) {
		return false // another account's token: the file is not shared with it
	}
	for _, sc := range scopesDriveRead {
		if c.ok && slices.Contains(c.scopes, fullScope(sc)) {
			return true
		}
	}
	return false
}

func (s *Sandbox) serveDriveLink(w http.ResponseWriter, r *http.Request) {
	id, download := linkID(r)
	if id == "" || id == s.driveRoot() {
		oauthPage(w, http.StatusNotFound, "Not found", "The sandbox's Drive has no page at this address.", "")
		return
	}
	if download {
		if e := r.URL.Query().Get("export"); e != "" && e != "download" && e != "view" {
			oauthPage(w, http.StatusBadRequest, "Bad request", "export must be download or view.", "")
			return
		}
	}
	var f *driveFileRec
	var open bool
	var children []*driveFileRec
	err := s.db.View(func(tx *bolt.Tx) error {
		var e *apiError
		if f, e = s.getFile(tx, id); e != nil {
			return e
		}
		open = s.linkOpen(tx, r, f)
		if open && f.folder() && !download {
			return forEach(tx, bDriveFiles, func(_ string, c *driveFileRec) error {
				if c.Parent == f.ID && len(children) < 200 {
					children = append(children, c)
				}
				return nil
			})
		}
		return nil
	})
	switch {
	case f == nil || err != nil:
		oauthPage(w, http.StatusNotFound, "Sorry, the file you have requested does not exist.",
			"Make sure that you have the correct URL and that the file exists.", "")
		return
	case !open:
		oauthPage(w, http.StatusForbidden, "You need access",
			"This file is not shared with anyone who has the link. Its owner can share it (a permission of type anyone), "+
				"or a program can fetch it with the sandbox's token or a Drive token.", "")
		return
	case download && f.folder():
		oauthPage(w, http.StatusNotFound, "Not a file", "A folder has no content to download.", "")
		return
	case download:
		s.serveDriveBytes(w, r, f, true)
		return
	}
	var b strings.Builder
	if f.folder() {
		b.WriteString("<p>Folder</p><ul>")
		for _, c := range children {
			link := "/file/d/" + c.ID + "/view"
			if c.folder() {
				link = "/drive/folders/" + c.ID
			}
			fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, html.EscapeString(link), html.EscapeString(c.Name))
		}
		b.WriteString("</ul>")
	} else {
		fmt.Fprintf(&b, "<p>%s &middot; %s</p>", html.EscapeString(f.MimeType), html.EscapeString(humanSize(f.Size)))
		fmt.Fprintf(&b, `<p><a id="download" href="%s">Download</a></p>`, html.EscapeString("/uc?id="+f.ID+"&export=download"))
	}
	oauthPage(w, http.StatusOK, f.Name, "", b.String())
}

// contentDisposition names a download, in UTF-8 when the name needs it.
func contentDisposition(name string) string {
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": name}); v != "" {
		return v
	}
	return "attachment"
}
