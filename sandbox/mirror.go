package sandbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Mirror API timeline: items with media attachments. Google no longer
// serves it; the sandbox is its one live target.

type timelineRec struct {
	ID          string          `json:"id"`
	Seq         uint64          `json:"seq"`
	Created     time.Time       `json:"created"`
	Updated     time.Time       `json:"updated"`
	Meta        json.RawMessage `json:"meta,omitempty"` // the client's fields
	Attachments []string        `json:"attachments"`
}

type attachmentRec struct {
	ID          string `json:"id"`
	ItemID      string `json:"itemId"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	Blob        string `json:"blob"`
}

func attachmentKey(itemID, id string) string { return itemID + "/" + id }

// serverFields are set by the server; a client's values are dropped.
var serverFields = []string{"kind", "id", "selfLink", "created", "updated", "etag", "attachments", "isDeleted"}

func mirrorMeta(u *upload) (map[string]any, *apiError) {
	meta := map[string]any{}
	if u.Method == "mirror.timeline.attachments.insert" || len(u.Metadata) == 0 {
		return meta, nil
	}
	if err := json.Unmarshal(u.Metadata, &meta); err != nil {
		return nil, errorf(400, "parseError", "The metadata is not a TimelineItem: %v", err)
	}
	if n, ok := meta["notification"]; ok {
		nm, ok := n.(map[string]any)
		if !ok {
			return nil, badRequest("notification must be an object such as {\"level\":\"DEFAULT\"}.")
		}
		if l, ok := nm["level"]; ok && l != "DEFAULT" {
			return nil, badRequest("Invalid notification level %v: the only level is DEFAULT.", l)
		}
	}
	for _, f := range serverFields {
		delete(meta, f)
	}
	return meta, nil
}

func mirrorPrepare(s *Sandbox, tx *bolt.Tx, u *upload) *apiError {
	if _, e := mirrorMeta(u); e != nil {
		return e
	}
	id := u.Params["id"]
	if id == "" {
		id = u.Params["itemId"]
	}
	if id != "" && tx.Bucket(bTimeline).Get([]byte(id)) == nil {
		return notFound("No timeline item with id %s.", id)
	}
	return nil
}

func (s *Sandbox) addAttachment(tx *bolt.Tx, item *timelineRec, u *upload, m *media) (*attachmentRec, *apiError) {
	a := &attachmentRec{ID: newHexID(), ItemID: item.ID, ContentType: u.MediaType, Size: m.Size}
	a.Blob = "att-" + item.ID + "-" + a.ID
	if err := putJSON(tx, bAttachments, attachmentKey(item.ID, a.ID), a); err != nil {
		return nil, errorf(500, "backendError", "%v", err)
	}
	item.Attachments = append(item.Attachments, a.ID)
	return a, nil
}

func (s *Sandbox) dropAttachments(tx *bolt.Tx, item *timelineRec) {
	for _, id := range item.Attachments {
		var a attachmentRec
		if getJSON(tx, bAttachments, attachmentKey(item.ID, id), &a) == nil {
			tx.Bucket(bAttachments).Delete([]byte(attachmentKey(item.ID, id)))
			tx.OnCommit(func() { os.Remove(s.blobPath(a.Blob)) })
		}
	}
	item.Attachments = nil
}

func mirrorFinish(s *Sandbox, tx *bolt.Tx, u *upload, m *media) (any, string, *apiError) {
	if e := mirrorPrepare(s, tx, u); e != nil {
		return nil, "", e
	}
	meta, _ := mirrorMeta(u)
	now := s.now().UTC()
	item := &timelineRec{}
	switch u.Method {
	case "mirror.timeline.insert":
		item = &timelineRec{ID: newHexID() + newHexID(), Created: now}
	default:
		id := u.Params["id"]
		if id == "" {
			id = u.Params["itemId"]
		}
		if err := getJSON(tx, bTimeline, id, item); err != nil {
			return nil, "", notFound("No timeline item with id %s.", id)
		}
	}
	if u.Method == "mirror.timeline.update" {
		s.dropAttachments(tx, item)
	}
	if u.Method != "mirror.timeline.attachments.insert" {
		item.Meta, _ = json.Marshal(meta)
	}
	a, e := s.addAttachment(tx, item, u, m)
	if e != nil {
		return nil, "", e
	}
	item.Updated, item.Seq = now, nextSeq(tx)
	if err := putJSON(tx, bTimeline, item.ID, item); err != nil {
		return nil, "", errorf(500, "backendError", "%v", err)
	}
	if u.Method == "mirror.timeline.attachments.insert" {
		return a.resource(u.Base), a.Blob, nil
	}
	return s.itemResource(tx, item, u.Base), a.Blob, nil
}

func (a *attachmentRec) resource(base string) map[string]any {
	return map[string]any{
		"id": a.ID, "contentType": a.ContentType, "isProcessingContent": false,
		"contentUrl": base + "/mirror/v1/timeline/" + url.PathEscape(a.ItemID) + "/attachments/" + url.PathEscape(a.ID) + "?alt=media",
	}
}

func (s *Sandbox) itemResource(tx *bolt.Tx, item *timelineRec, base string) map[string]any {
	r := map[string]any{}
	if len(item.Meta) > 0 {
		json.Unmarshal(item.Meta, &r)
	}
	r["kind"] = "mirror#timelineItem"
	r["id"] = item.ID
	r["selfLink"] = base + "/mirror/v1/timeline/" + item.ID
	r["created"] = item.Created.Format("2006-01-02T15:04:05.000Z07:00")
	r["updated"] = item.Updated.Format("2006-01-02T15:04:05.000Z07:00")
	r["etag"] = `"` + item.Updated.Format("20060102150405.000") + `"`
	r["isDeleted"] = false
	var atts []map[string]any
	for _, id := range item.Attachments {
		var a attachmentRec
		if getJSON(tx, bAttachments, attachmentKey(item.ID, id), &a) == nil {
			atts = append(atts, a.resource(base))
		}
	}
	if len(atts) > 0 {
		r["attachments"] = atts
	}
	return r
}

func (s *Sandbox) mirrorRoutes(mux *http.ServeMux) {
	s.handleFunc(mux, scopesTimeline, "GET /mirror/v1/timeline", func(w http.ResponseWriter, r *http.Request) {
		var items []*timelineRec
		var out map[string]any
		err := s.db.View(func(tx *bolt.Tx) error {
			if err := forEach(tx, bTimeline, func(_ string, it *timelineRec) error { items = append(items, it); return nil }); err != nil {
				return err
			}
			sort.Slice(items, func(i, j int) bool { return items[i].Seq > items[j].Seq })
			page, next, e := paginate(len(items), r.URL.Query())
			if e != nil {
				out = map[string]any{"error": e}
				return nil
			}
			list := []map[string]any{}
			for _, it := range items[page[0]:page[1]] {
				list = append(list, s.itemResource(tx, it, baseURL(r)))
			}
			out = map[string]any{"kind": "mirror#timeline", "items": list}
			if next != "" {
				out["nextPageToken"] = next
			}
			return nil
		})
		if err != nil {
			writeError(w, errorf(500, "backendError", "%v", err))
			return
		}
		if e, ok := out["error"].(*apiError); ok {
			writeError(w, e)
			return
		}
		writeJSON(w, 200, out)
	})
	s.handleFunc(mux, scopesTimeline, "GET /mirror/v1/timeline/{id}", func(w http.ResponseWriter, r *http.Request) {
		var res map[string]any
		err := s.db.View(func(tx *bolt.Tx) error {
			var it timelineRec
			if err := getJSON(tx, bTimeline, r.PathValue("id"), &it); err != nil {
				return err
			}
			res = s.itemResource(tx, &it, baseURL(r))
			return nil
		})
		if err != nil {
			writeError(w, notFound("No timeline item with id %s.", r.PathValue("id")))
			return
		}
		writeJSON(w, 200, res)
	})
	s.handleFunc(mux, scopesTimeline, "GET /mirror/v1/timeline/{itemId}/attachments", func(w http.ResponseWriter, r *http.Request) {
		var list []map[string]any
		err := s.db.View(func(tx *bolt.Tx) error {
			var it timelineRec
			if err := getJSON(tx, bTimeline, r.PathValue("itemId"), &it); err != nil {
				return err
			}
			list = []map[string]any{}
			for _, id := range it.Attachments {
				var a attachmentRec
				if getJSON(tx, bAttachments, attachmentKey(it.ID, id), &a) == nil {
					list = append(list, a.resource(baseURL(r)))
				}
			}
			return nil
		})
		if err != nil {
			writeError(w, notFound("No timeline item with id %s.", r.PathValue("itemId")))
			return
		}
		writeJSON(w, 200, map[string]any{"kind": "mirror#attachmentsList", "items": list})
	})
	s.handleFunc(mux, scopesTimeline, "GET /mirror/v1/timeline/{itemId}/attachments/{attachmentId}", func(w http.ResponseWriter, r *http.Request) {
		var a attachmentRec
		var it timelineRec
		err := s.db.View(func(tx *bolt.Tx) error {
			if err := getJSON(tx, bTimeline, r.PathValue("itemId"), &it); err != nil {
				return err
			}
			return getJSON(tx, bAttachments, attachmentKey(it.ID, r.PathValue("attachmentId")), &a)
		})
		if err != nil || !slices.Contains(it.Attachments, a.ID) {
			writeError(w, notFound("No attachment %s on timeline item %s.", r.PathValue("attachmentId"), r.PathValue("itemId")))
			return
		}
		if r.URL.Query().Get("alt") == "media" {
			s.serveBlob(w, r, a.Blob, a.ContentType, it.Updated)
			return
		}
		writeJSON(w, 200, a.resource(baseURL(r)))
	})
}
