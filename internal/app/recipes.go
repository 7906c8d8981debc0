package app

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"carrier/compose"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// Upload is a recipe applied: where one upload goes below an API root, how,
// with what metadata, and what people call it.
type Upload struct {
	Path        string // the media upload path below the API root
	Method      string // POST, or PUT to replace a draft's message
	Metadata    []byte // JSON sent with the media; nil for none
	ContentType string // message/rfc822, or the media's type
	Label       string // the job's name for people ("Report · to bob@example.com")
}

// Spec is the upload's job on the API at root (no trailing slash). The
// file (Path, SHA256) and the transfer settings are the caller's to add.
func (u Upload) Spec(root string) transfer.Spec {
	return transfer.Spec{URL: root + u.Path, Method: u.Method, ContentType: u.ContentType, Metadata: u.Metadata, Label: u.Label}
}

// The routes of Carrier's requests are delivery's table (delivery.Routes:
// paths, words for people, kinds), read one way by the recipes (a {id} is
// filled in) and the other by Describe (delivery.RouteAt).

// route is a request Carrier makes: its path, its words for people and a
// stable name for a front end to word it by (Place.Kind).
type route struct{ path, what, kind string }

func routeFrom(r delivery.Route) route { return route{r.Path, r.What, r.Kind} }

var (
	routeSend        = routeFrom(delivery.RouteSend)
	routeDraftSend   = routeFrom(delivery.RouteDraftSend)
	routeDraftUpdate = routeFrom(delivery.RouteDraftUpdate)
	routeDraft       = routeFrom(delivery.RouteDraft)
	routeImport      = routeFrom(delivery.RouteImport)
	routeInsert      = routeFrom(delivery.RouteInsert)
	routeAttach      = routeFrom(delivery.RouteAttach)
	routeTimeline    = routeFrom(delivery.RouteTimeline)
	routeStorage     = routeFrom(delivery.RouteStorage)

	routes = func() []route {
		var out []route
		for _, r := range delivery.Routes {
			out = append(out, routeFrom(r))
		}
		return out
	}()
)

func (r route) with(id string) string { return strings.Replace(r.path, "{id}", url.PathEscape(id), 1) }

// GmailOptions are what a message may say besides its method.
type GmailOptions struct {
	Thread    string   // the thread to put it in
	Labels    []string // label ids, for send, insert and import
	DraftID   string   // replace this draft's message (drafts.update)
	SendDraft string   // send this draft with the message (drafts.send)
}

// ErrLabels refuses label ids on a method that cannot carry them.
var ErrLabels = errors.New("labels are for send, insert and import")

// Message is the recipe of a message: the Gmail method it goes by, and
// where that is. A draft id or a draft to send makes it a draft's upload.
func Message(msg *compose.Message, method compose.Method, o GmailOptions) (Upload, error) {
	m := map[string]any{}
	if o.Thread != "" {
		m["threadId"] = o.Thread
	}
	if len(o.Labels) > 0 {
		if method != compose.Insert && method != compose.Import && method != compose.Send {
			return Upload{}, ErrLabels
		}
		m["labelIds"] = o.Labels
	}
	inThread := func() map[string]any {
		inner := map[string]any{}
		if o.Thread != "" {
			inner["threadId"] = o.Thread
		}
		return inner
	}
	up := Upload{Method: http.MethodPost, ContentType: "message/rfc822", Label: msg.Label()}
	switch {
	case o.SendDraft != "":
		up.Path, m = routeDraftSend.path, map[string]any{"id": o.SendDraft}
	case o.DraftID != "":
		up.Path, up.Method = routeDraftUpdate.with(o.DraftID), http.MethodPut
		m = map[string]any{"id": o.DraftID, "message": inThread()}
	case method == compose.Draft:
		up.Path, m = routeDraft.path, map[string]any{"message": inThread()}
	case method == compose.Insert:
		up.Path = routeInsert.path
	case method == compose.Import:
		up.Path = routeImport.path
	default:
		up.Path = routeSend.path
	}
	meta, err := json.Marshal(m)
	up.Metadata = meta
	return up, err
}

// Post is the recipe of a timeline post: a new item with the media and its
// caption, or, given an item id, the media added to that item (which keeps
// its caption).
func Post(media *compose.TimelineMedia, item compose.TimelineItem, itemID string) (Upload, error) {
	up := Upload{Method: http.MethodPost, ContentType: media.MediaType, Label: filepath.Base(media.Path) + " · to the timeline"}
	if itemID != "" {
		up.Path = routeAttach.with(itemID)
		return up, nil
	}
	up.Path = routeTimeline.path
	if item.Text != "" || item.HTML != "" || item.Notify {
		meta, err := item.Metadata()
		if err != nil {
			return Upload{}, err
		}
		up.Metadata = meta
	}
	return up, nil
}

// Checksums are the sums an upload's target checks and reports besides
// the SHA-256 (transfer.Spec.Checksums), from its URL: CRC32C for Cloud
// Storage, as its tools send and compare it; none elsewhere (Gmail and
// the Mirror timeline report no checksum). md5 adds MD5, which Storage
// checks too, for whoever asks.
func Checksums(uploadURL string, md5 bool) []string {
	u, err := url.Parse(uploadURL)
	if err != nil || whatAt(u.EscapedPath(), u.Path) != routeStorage.what {
		return nil
	}
	if md5 {
		return []string{transfer.SumCRC32C, transfer.SumMD5}
	}
	return []string{transfer.SumCRC32C}
}

// Describe names where an upload goes, for people, from its URL:
// "Gmail · send (sandbox, on this computer)", "Timeline at example.com".
// sandbox is the embedded sandbox's API root. The window words the same
// parts in its own language (Where).
func Describe(uploadURL, sandbox string) string {
	p, ok := Where(uploadURL, sandbox)
	switch {
	case !ok:
		return ""
	case p.Local:
		return p.What + " (sandbox, on this computer)"
	case p.Host == "":
		return p.What
	}
	return p.What + " at " + p.Host
}

// Place is where an upload goes, in parts: the kind of request (Kind, a
// stable name such as "gmail.send" or "drive.upload"; "" when the URL is
// none Carrier makes), its English words (What: "Gmail · send", or the
// URL's path for an unknown kind), the server's host unless it is the
// embedded sandbox, and whether it is that sandbox on this computer.
type Place struct {
	Kind, What, Host string
	Local            bool
}

// Where is where an upload goes, from its URL; sandbox is the embedded
// sandbox's API root. False when the URL does not parse.
func Where(uploadURL, sandbox string) (Place, bool) {
	u, err := url.Parse(uploadURL)
	if err != nil {
		return Place{}, false
	}
	r := routeAt(u.EscapedPath(), u.Path)
	p := Place{Kind: r.kind, What: r.what, Host: u.Host}
	if e, err := url.Parse(sandbox); err == nil && e.Host == u.Host {
		p.Local = strings.HasPrefix(u.Host, "127.0.0.1") || strings.HasPrefix(u.Host, "localhost")
		p.Host = ""
	}
	return p, true
}

// routeAt is the route whose path ends the URL's (delivery.RouteAt:
// escaped is the path escaped, p the same unescaped); an unknown one is
// named by its path.
func routeAt(escaped, p string) route { return routeFrom(delivery.RouteAt(escaped, p)) }

// whatAt names the route at a URL's path, as routeAt finds it.
func whatAt(escaped, p string) string { return routeAt(escaped, p).what }
