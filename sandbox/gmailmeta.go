package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Gmail's metadata URIs take the message inside the JSON as "raw"
// (base64url), the way small messages are usually sent; drafts.send there
// takes only the draft's id and sends the draft as it stands.

func (s *Sandbox) gmailMetadataRoutes(mux *http.ServeMux) {
	for _, m := range uploadMethods {
		if !strings.HasPrefix(m.Name, "gmail.") {
			continue
		}
		s.handle(mux, m.HTTPMethod+" "+strings.TrimPrefix(m.Pattern, "/upload"), routeAccess{scopes: methodScopes[m.Name]}, s.gmailMetadataHandler(m))
	}
}

func (s *Sandbox) gmailMetadataHandler(m *uploadMethod) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := &upload{Method: m.Name, Params: map[string]string{}, Query: r.URL.Query(), Base: baseURL(r), MediaType: "message/rfc822"}
		for _, p := range patternParams(m.Pattern) {
			u.Params[p] = r.PathValue(p)
		}
		// base64 makes the message a third larger inside the JSON.
		body, err := io.ReadAll(io.LimitReader(r.Body, m.Limit*4/3+maxMetadata))
		if err != nil {
			writeError(w, badRequest("Could not read the request: %v", err))
			return
		}
		var in struct {
			Raw     string `json:"raw"`
			Message *struct {
				Raw string `json:"raw"`
			} `json:"message"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			writeError(w, errorf(400, "parseError", "The request is not JSON: %v", err))
			return
		}
		raw := in.Raw
		if in.Message != nil && raw == "" {
			raw = in.Message.Raw
		}
		u.Metadata = body
		if raw == "" {
			if m.Name == "gmail.users.drafts.send" {
				s.sendDraftAsIs(w, u)
				return
			}
			writeError(w, errorf(400, "invalidArgument", "'raw' RFC822 payload message string or uploading message via /upload/* URL required"))
			return
		}
		data, err := base64.URLEncoding.DecodeString(padBase64(raw))
		if err != nil {
			if data, err = base64.StdEncoding.DecodeString(padBase64(raw)); err != nil {
				writeError(w, badRequest("'raw' is not base64url: %v", err))
				return
			}
		}
		if int64(len(data)) > m.Limit {
			writeError(w, m.tooLarge(int64(len(data))))
			return
		}
		if e := s.prepare(m, u); e != nil {
			writeError(w, e)
			return
		}
		f, err := os.CreateTemp(filepath.Join(s.dir, "uploads"), "simple-*.part")
		if err != nil {
			writeError(w, errorf(500, "backendError", "store: %v", err))
			return
		}
		h := newHashes()
		_, werr := f.Write(data)
		h.Write(data)
		if werr == nil {
			werr = s.fsync(f)
		}
		f.Close()
		defer os.Remove(f.Name())
		if werr != nil {
			writeError(w, errorf(500, "backendError", "store: %v", werr))
			return
		}
		res, e := s.finish(m, u, &media{Path: f.Name(), Size: int64(len(data)), MD5: h.md5.Sum(nil), CRC32C: h.crc.Sum32()}, nil)
		if e != nil {
			writeError(w, e)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

func padBase64(s string) string {
	s = strings.TrimRight(s, "=")
	if n := len(s) % 4; n != 0 {
		s += strings.Repeat("=", 4-n)
	}
	return s
}

// sendDraftAsIs turns a draft's message into a sent one.
func (s *Sandbox) sendDraftAsIs(w http.ResponseWriter, u *upload) {
	var res map[string]any
	var ae *apiError
	err := s.db.Update(func(tx *bolt.Tx) error {
		if ae = gmailPrepare(s, tx, u); ae != nil {
			return nil
		}
		meta, _ := parseGmailMeta(u)
		var d draftRec
		var msg messageRec
		if getJSON(tx, bDrafts, meta.ID, &d) != nil || getJSON(tx, bMessages, d.MessageID, &msg) != nil {
			ae = notFound("No draft with id %s.", meta.ID)
			return nil
		}
		msg.LabelIDs = []string{"SENT"}
		msg.HistoryID = nextSeq(tx)
		msg.InternalDate = s.now().UnixMilli()
		if err := putJSON(tx, bMessages, msg.ID, &msg); err != nil {
			return err
		}
		res = msg.brief()
		return tx.Bucket(bDrafts).Delete([]byte(d.ID))
	})
	if err != nil {
		writeError(w, errorf(500, "backendError", "store: %v", err))
		return
	}
	if ae != nil {
		writeError(w, ae)
		return
	}
	s.stats.completions.Add(1)
	writeJSON(w, http.StatusOK, res)
}
