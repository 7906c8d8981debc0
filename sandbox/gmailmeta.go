package sandbox

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
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
		// base64 makes the message a third larger inside the JSON; what
		// is beyond that is refused unread.
		br := bufio.NewReaderSize(io.LimitReader(r.Body, m.Limit*4/3+4+2*maxMetadata), 64<<10)
		raws := map[string]*media{}
		defer func() {
			for _, md := range raws {
				os.Remove(md.Path)
			}
		}()
		var ae *apiError
		meta, err := scanRawJSON(br, func(path string, rd io.Reader) error {
			md, e := s.receiveRaw(w, m, rd)
			if old := raws[path]; old != nil {
				os.Remove(old.Path) // a key given twice: the last counts, as in json.Unmarshal
				delete(raws, path)
			}
			if md != nil {
				raws[path] = md
			}
			if e != nil {
				ae = e
				return e
			}
			return nil
		})
		if ae != nil {
			writeError(w, ae)
			return
		}
		if errors.Is(err, errNotJSON) {
			writeError(w, errorf(400, "parseError", "The request is not JSON: %v", err))
			return
		}
		if err != nil {
			writeError(w, badRequest("Could not read the request: %v", err))
			return
		}
		var in struct {
			Message *struct{} `json:"message"`
		}
		if err := json.Unmarshal(meta, &in); err != nil {
			writeError(w, errorf(400, "parseError", "The request is not JSON: %v", err))
			return
		}
		raw := raws["raw"]
		if raw == nil && in.Message != nil {
			raw = raws["message.raw"]
		}
		u.Metadata = meta
		if raw == nil {
			if m.Name == "gmail.users.drafts.send" {
				s.sendDraftAsIs(w, u)
				return
			}
			writeError(w, errorf(400, "invalidArgument", "'raw' RFC822 payload message string or uploading message via /upload/* URL required"))
			return
		}
		if e := s.prepare(m, u); e != nil {
			writeError(w, e)
			return
		}
		res, e := s.finish(m, u, raw, nil)
		if e != nil {
			writeError(w, e)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

// receiveRaw stores the decoded bytes of one raw string in a part file;
// nil media when the string is empty (as if raw were not given).
func (s *Sandbox) receiveRaw(w http.ResponseWriter, m *uploadMethod, rd io.Reader) (*media, *apiError) {
	b64 := &b64Either{r: rd}
	dec := base64.NewDecoder(base64.StdEncoding, b64)
	f, err := os.CreateTemp(filepath.Join(s.dir, "uploads"), "simple-*.part")
	if err != nil {
		return nil, errorf(500, "backendError", "store: %v", pathless(err))
	}
	defer f.Close()
	md := &media{Path: f.Name()}
	h := newHashes()
	n, err := s.copyBody(w, f, dec, m.Limit+1, h)
	if err == nil && n > m.Limit {
		rest, err := io.Copy(io.Discard, dec)
		if err == nil {
			return md, m.tooLarge(n + rest)
		}
	}
	if err != nil {
		var ce base64.CorruptInputError
		if b64.err != nil && !errors.Is(b64.err, errNotJSON) || errors.As(err, &ce) {
			return md, badRequest("'raw' is not base64url: %v", err)
		}
		if errors.Is(err, errNotJSON) {
			return md, errorf(400, "parseError", "The request is not JSON: %v", err)
		}
		return md, badRequest("Could not read the request: %v", err)
	}
	if b64.count == 0 {
		f.Close()
		os.Remove(md.Path)
		return nil, nil
	}
	if err := s.fsync(f); err != nil {
		return md, errorf(500, "backendError", "store: %v", pathless(err))
	}
	md.Size, md.MD5, md.CRC32C = n, h.md5.Sum(nil), h.crc.Sum32()
	return md, nil
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
