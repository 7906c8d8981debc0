package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Gmail: messages send/insert/import and drafts create/update/send, plus
// the read endpoints the desktop app's mailbox uses.

type messageRec struct {
	ID           string   `json:"id"`
	ThreadID     string   `json:"threadId"`
	LabelIDs     []string `json:"labelIds"`
	Snippet      string   `json:"snippet"`
	HistoryID    uint64   `json:"historyId"`
	InternalDate int64    `json:"internalDate"`
	Size         int64    `json:"size"`
	Blob         string   `json:"blob"`
	Headers      []header `json:"headers"` // top-level, decoded, in order
	MimeType     string   `json:"mimeType"`
}

// messageBrief is what a list needs of a message: decoding only these
// fields keeps a list of many messages with large headers small.
type messageBrief struct {
	ID        string   `json:"id"`
	ThreadID  string   `json:"threadId"`
	LabelIDs  []string `json:"labelIds"`
	HistoryID uint64   `json:"historyId"`
}

type threadRec struct {
	Messages []string `json:"messages"`
}

type draftRec struct {
	ID        string `json:"id"`
	MessageID string `json:"messageId"`
	Seq       uint64 `json:"seq"`
}

// gmailMeta is the metadata part of every Gmail upload method.
type gmailMeta struct {
	ID       string   `json:"id"`
	ThreadID string   `json:"threadId"`
	LabelIDs []string `json:"labelIds"`
	Message  *struct {
		ThreadID string   `json:"threadId"`
		LabelIDs []string `json:"labelIds"`
	} `json:"message"`
}

func parseGmailMeta(u *upload) (gmailMeta, *apiError) {
	var m gmailMeta
	if len(u.Metadata) > 0 {
		if err := json.Unmarshal(u.Metadata, &m); err != nil {
			return m, errorf(400, "parseError", "The metadata does not fit %s: %v", u.Method, err)
		}
	}
	if m.Message != nil {
		if m.ThreadID == "" {
			m.ThreadID = m.Message.ThreadID
		}
		if m.LabelIDs == nil {
			m.LabelIDs = m.Message.LabelIDs
		}
	}
	return m, nil
}

func (s *Sandbox) checkUser(userID string) *apiError {
	if userID == "me" || strings.EqualFold(userID, s.opts.Account) {
		return nil
	}
	return errorf(http.StatusForbidden, "forbidden", "Delegation denied for %s: this sandbox's mailbox is %s; use that address or \"me\" instead of %s.", s.opts.Account, s.opts.Account, userID)
}

func gmailPrepare(s *Sandbox, tx *bolt.Tx, u *upload) *apiError {
	if e := s.checkUser(u.Params["userId"]); e != nil {
		return e
	}
	meta, e := parseGmailMeta(u)
	if e != nil {
		return e
	}
	if meta.ThreadID != "" && tx.Bucket(bThreads).Get([]byte(meta.ThreadID)) == nil {
		return notFound("threadId %q names no thread in this mailbox.", meta.ThreadID)
	}
	switch u.Method {
	case "gmail.users.drafts.update":
		if meta.ID != "" && meta.ID != u.Params["id"] {
			return badRequest("The draft id in the metadata (%s) differs from the one in the URL (%s).", meta.ID, u.Params["id"])
		}
		if tx.Bucket(bDrafts).Get([]byte(u.Params["id"])) == nil {
			return notFound("No draft with id %s.", u.Params["id"])
		}
	case "gmail.users.drafts.send":
		if meta.ID == "" {
			return errorf(400, "required", "drafts.send needs the draft's id in the metadata: {\"id\":\"DRAFT_ID\"}.")
		}
		if tx.Bucket(bDrafts).Get([]byte(meta.ID)) == nil {
			return notFound("No draft with id %s.", meta.ID)
		}
	}
	return nil
}

// storeMessage files stored media as a message in its thread.
// The message was parsed before the write transaction began (finish):
// a bounded parse, but nothing slow holds the store's one writer.
func (s *Sandbox) storeMessage(tx *bolt.Tx, m *media, threadID string, labels []string, dateFromHeader bool) (*messageRec, string, *apiError) {
	root := m.root
	if root == nil {
		return nil, "", errorf(500, "backendError", "reading the message: not parsed")
	}
	msg := &messageRec{
		ID: newHexID(), LabelIDs: labels, Snippet: snippet(root), HistoryID: nextSeq(tx),
		InternalDate: s.now().UnixMilli(), Size: m.Size, Headers: root.Headers, MimeType: root.MimeType,
	}
	if dateFromHeader {
		if ms, ok := dateMillis(root.Headers); ok {
			msg.InternalDate = ms
		}
	}
	msg.Blob = "msg-" + msg.ID
	var th threadRec
	if threadID != "" {
		if err := getJSON(tx, bThreads, threadID, &th); err != nil {
			return nil, "", notFound("threadId %q names no thread in this mailbox.", threadID)
		}
	} else {
		threadID = msg.ID // Gmail names a new thread after its first message
	}
	msg.ThreadID = threadID
	th.Messages = append(th.Messages, msg.ID)
	if err := putJSON(tx, bThreads, threadID, &th); err != nil {
		return nil, "", errorf(500, "backendError", "%v", err)
	}
	if err := putJSON(tx, bMessages, msg.ID, msg); err != nil {
		return nil, "", errorf(500, "backendError", "%v", err)
	}
	return msg, msg.Blob, nil
}

// deleteMessage removes a message (a replaced or sent draft's old one).
func (s *Sandbox) deleteMessage(tx *bolt.Tx, id string) {
	var msg messageRec
	if getJSON(tx, bMessages, id, &msg) != nil {
		return
	}
	tx.Bucket(bMessages).Delete([]byte(id))
	var th threadRec
	if getJSON(tx, bThreads, msg.ThreadID, &th) == nil {
		th.Messages = slices.DeleteFunc(th.Messages, func(m string) bool { return m == id })
		if len(th.Messages) == 0 {
			tx.Bucket(bThreads).Delete([]byte(msg.ThreadID))
		} else {
			putJSON(tx, bThreads, msg.ThreadID, &th)
		}
	}
	tx.OnCommit(func() { os.Remove(s.blobPath(msg.Blob)) })
}

func withLabel(labels []string, must ...string) []string {
	out := append([]string{}, must...)
	for _, l := range labels {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

func gmailFinish(s *Sandbox, tx *bolt.Tx, u *upload, m *media) (any, string, *apiError) {
	if e := gmailPrepare(s, tx, u); e != nil {
		return nil, "", e
	}
	meta, _ := parseGmailMeta(u)
	switch u.Method {
	case "gmail.users.messages.send":
		msg, blob, e := s.storeMessage(tx, m, meta.ThreadID, withLabel(meta.LabelIDs, "SENT"), false)
		if e != nil {
			return nil, "", e
		}
		return msg.brief(), blob, nil
	case "gmail.users.messages.insert", "gmail.users.messages.import":
		labels := meta.LabelIDs
		if len(labels) == 0 {
			labels = []string{"INBOX", "UNREAD"}
		}
		src := u.Query.Get("internalDateSource")
		fromHeader := src == "dateHeader" || src == "" && u.Method == "gmail.users.messages.import"
		msg, blob, e := s.storeMessage(tx, m, meta.ThreadID, labels, fromHeader)
		if e != nil {
			return nil, "", e
		}
		return msg.brief(), blob, nil
	case "gmail.users.drafts.create":
		msg, blob, e := s.storeMessage(tx, m, meta.ThreadID, []string{"DRAFT"}, false)
		if e != nil {
			return nil, "", e
		}
		d := draftRec{ID: "r" + strconv.FormatUint(binary.BigEndian.Uint64(randomBytes(8))>>1, 10), MessageID: msg.ID, Seq: msg.HistoryID}
		if err := putJSON(tx, bDrafts, d.ID, &d); err != nil {
			return nil, "", errorf(500, "backendError", "%v", err)
		}
		return map[string]any{"id": d.ID, "message": msg.brief()}, blob, nil
	case "gmail.users.drafts.update":
		var d draftRec
		if err := getJSON(tx, bDrafts, u.Params["id"], &d); err != nil {
			return nil, "", notFound("No draft with id %s.", u.Params["id"])
		}
		threadID := meta.ThreadID
		var old messageRec
		if getJSON(tx, bMessages, d.MessageID, &old) == nil && threadID == "" && old.ThreadID != old.ID {
			threadID = old.ThreadID // an update stays in the reply's thread
		}
		s.deleteMessage(tx, d.MessageID)
		msg, blob, e := s.storeMessage(tx, m, threadID, []string{"DRAFT"}, false)
		if e != nil {
			return nil, "", e
		}
		d.MessageID, d.Seq = msg.ID, msg.HistoryID
		if err := putJSON(tx, bDrafts, d.ID, &d); err != nil {
			return nil, "", errorf(500, "backendError", "%v", err)
		}
		return map[string]any{"id": d.ID, "message": msg.brief()}, blob, nil
	case "gmail.users.drafts.send":
		var d draftRec
		if err := getJSON(tx, bDrafts, meta.ID, &d); err != nil {
			return nil, "", notFound("No draft with id %s.", meta.ID)
		}
		var old messageRec
		threadID := meta.ThreadID
		if getJSON(tx, bMessages, d.MessageID, &old) == nil && threadID == "" && old.ThreadID != old.ID {
			threadID = old.ThreadID
		}
		s.deleteMessage(tx, d.MessageID)
		tx.Bucket(bDrafts).Delete([]byte(d.ID))
		msg, blob, e := s.storeMessage(tx, m, threadID, []string{"SENT"}, false)
		if e != nil {
			return nil, "", e
		}
		return msg.brief(), blob, nil
	}
	return nil, "", errorf(500, "backendError", "unknown method %s", u.Method)
}

// brief is the answer to an upload: Gmail sends id, threadId, labelIds.
func (m *messageRec) brief() map[string]any {
	return map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": m.LabelIDs}
}

// resource renders the message in one of Gmail's formats.
// format=raw leaves the message's bytes to the returned streamedFile.
func (s *Sandbox) messageResource(m *messageRec, format string, metaHeaders []string) (map[string]any, *streamedFile, *apiError) {
	r := map[string]any{
		"id": m.ID, "threadId": m.ThreadID, "labelIds": m.LabelIDs, "snippet": m.Snippet,
		"historyId": strconv.FormatUint(m.HistoryID, 10), "internalDate": strconv.FormatInt(m.InternalDate, 10),
		"sizeEstimate": m.Size,
	}
	switch format {
	case "minimal":
	case "metadata":
		hs := m.Headers
		if len(metaHeaders) > 0 {
			hs = nil
			for _, h := range m.Headers {
				if slices.ContainsFunc(metaHeaders, func(n string) bool { return strings.EqualFold(n, h.Name) }) {
					hs = append(hs, h)
				}
			}
		}
		if hs == nil {
			hs = []header{}
		}
		r["payload"] = map[string]any{"mimeType": m.MimeType, "headers": hs}
	case "raw":
		sf := newStreamedFile(s.blobPath(m.Blob))
		r["raw"] = sf.placeholder
		return r, sf, nil
	case "full", "":
		p, err := parseMessage(s.blobPath(m.Blob), parseOptions{data: true})
		if err != nil {
			return nil, nil, errorf(500, "backendError", "the stored message is missing: %v", pathless(err))
		}
		r["payload"] = p
	default:
		return nil, nil, badRequest("Invalid format %q: use full, metadata, minimal or raw.", format)
	}
	return r, nil, nil
}

// heavyFormat says whether rendering a message reads its stored bytes.
func heavyFormat(format string) bool { return format == "" || format == "full" || format == "raw" }

func (s *Sandbox) gmailRoutes(mux *http.ServeMux) {
	user := func(h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if e := s.checkUser(r.PathValue("userId")); e != nil {
				writeError(w, e)
				return
			}
			h(w, r)
		}
	}
	s.handleFunc(mux, scopesGmailAny, "GET /gmail/v1/users/{userId}/profile", user(func(w http.ResponseWriter, r *http.Request) {
		var msgs, threads int
		var hist uint64
		s.db.View(func(tx *bolt.Tx) error {
			msgs, threads, hist = tx.Bucket(bMessages).Stats().KeyN, tx.Bucket(bThreads).Stats().KeyN, currentSeq(tx)
			return nil
		})
		writeJSON(w, 200, map[string]any{"emailAddress": s.opts.Account, "messagesTotal": msgs, "threadsTotal": threads, "historyId": strconv.FormatUint(hist, 10)})
	}))
	s.handleFunc(mux, scopesGmailList, "GET /gmail/v1/users/{userId}/messages", user(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		want := q["labelIds"]
		var all []*messageBrief
		err := s.db.View(func(tx *bolt.Tx) error {
			return forEach(tx, bMessages, func(_ string, m *messageBrief) error {
				for _, l := range want {
					if !slices.Contains(m.LabelIDs, l) {
						return nil
					}
				}
				all = append(all, m)
				return nil
			})
		})
		if err != nil {
			writeError(w, errorf(500, "backendError", "%v", err))
			return
		}
		sort.Slice(all, func(i, j int) bool { return all[i].HistoryID > all[j].HistoryID })
		page, next, e := paginate(len(all), q)
		if e != nil {
			writeError(w, e)
			return
		}
		out := map[string]any{"resultSizeEstimate": len(all)}
		var list []map[string]string
		for _, m := range all[page[0]:page[1]] {
			list = append(list, map[string]string{"id": m.ID, "threadId": m.ThreadID})
		}
		if len(list) > 0 {
			out["messages"] = list
		}
		if next != "" {
			out["nextPageToken"] = next
		}
		writeJSON(w, 200, out)
	}))
	s.handleFunc(mux, scopesGmailRead, "GET /gmail/v1/users/{userId}/messages/{id}", user(func(w http.ResponseWriter, r *http.Request) {
		var m messageRec
		if err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx, bMessages, r.PathValue("id"), &m) }); err != nil {
			writeError(w, notFound("Requested entity was not found: no message with id %s.", r.PathValue("id")))
			return
		}
		s.writeMessage(w, r, &m, func(res any) any { return res })
	}))
	s.handleFunc(mux, scopesGmailRead, "GET /gmail/v1/users/{userId}/messages/{id}/attachments/{attachmentId}", user(func(w http.ResponseWriter, r *http.Request) {
		var m messageRec
		if err := s.db.View(func(tx *bolt.Tx) error { return getJSON(tx, bMessages, r.PathValue("id"), &m) }); err != nil {
			writeError(w, notFound("Requested entity was not found: no message with id %s.", r.PathValue("id")))
			return
		}
		partID, ok := strings.CutPrefix(r.PathValue("attachmentId"), "att")
		partID = strings.ReplaceAll(partID, "_", ".")
		release, held := s.heavyLock(r)
		if !held {
			writeError(w, errBusy)
			return
		}
		defer release()
		// A first pass finds the part and its size; the second streams it.
		var size int64
		if ok {
			p, err := parseMessage(s.blobPath(m.Blob), parseOptions{wantPart: partID})
			part := findPart(p, partID)
			if err != nil || part == nil || len(part.Parts) > 0 || strings.HasPrefix(part.MimeType, "multipart/") {
				ok = false
			} else {
				size = part.Body.Size
			}
		}
		if !ok {
			writeError(w, notFound("No attachment %s in message %s.", r.PathValue("attachmentId"), m.ID))
			return
		}
		blob := s.blobPath(m.Blob)
		sf := &streamedFile{placeholder: "\x00" + streamNonce + "\x00att", write: func(out io.Writer) error {
			_, err := parseMessage(blob, parseOptions{wantPart: partID, partOut: out})
			return err
		}}
		writeJSONStreamed(w, 200, map[string]any{"attachmentId": r.PathValue("attachmentId"), "size": size, "data": sf.placeholder}, sf)
	}))
	s.handleFunc(mux, scopesGmailDrafts, "GET /gmail/v1/users/{userId}/drafts", user(func(w http.ResponseWriter, r *http.Request) {
		var drafts []draftRec
		msgs := map[string]*messageBrief{}
		err := s.db.View(func(tx *bolt.Tx) error {
			return forEach(tx, bDrafts, func(_ string, d *draftRec) error {
				drafts = append(drafts, *d)
				var m messageBrief
				if getJSON(tx, bMessages, d.MessageID, &m) == nil {
					msgs[d.ID] = &m
				}
				return nil
			})
		})
		if err != nil {
			writeError(w, errorf(500, "backendError", "%v", err))
			return
		}
		sort.Slice(drafts, func(i, j int) bool { return drafts[i].Seq > drafts[j].Seq })
		page, next, e := paginate(len(drafts), r.URL.Query())
		if e != nil {
			writeError(w, e)
			return
		}
		out := map[string]any{"resultSizeEstimate": len(drafts)}
		var list []map[string]any
		for _, d := range drafts[page[0]:page[1]] {
			entry := map[string]any{"id": d.ID, "message": map[string]string{"id": d.MessageID}}
			if m := msgs[d.ID]; m != nil {
				entry["message"] = map[string]string{"id": m.ID, "threadId": m.ThreadID}
			}
			list = append(list, entry)
		}
		if len(list) > 0 {
			out["drafts"] = list
		}
		if next != "" {
			out["nextPageToken"] = next
		}
		writeJSON(w, 200, out)
	}))
	s.handleFunc(mux, scopesGmailDrafts, "GET /gmail/v1/users/{userId}/drafts/{id}", user(func(w http.ResponseWriter, r *http.Request) {
		var d draftRec
		var m messageRec
		err := s.db.View(func(tx *bolt.Tx) error {
			if err := getJSON(tx, bDrafts, r.PathValue("id"), &d); err != nil {
				return err
			}
			return getJSON(tx, bMessages, d.MessageID, &m)
		})
		if err != nil {
			writeError(w, notFound("Requested entity was not found: no draft with id %s.", r.PathValue("id")))
			return
		}
		s.writeMessage(w, r, &m, func(res any) any { return map[string]any{"id": d.ID, "message": res} })
	}))
}

// writeMessage answers with m in the format asked for, wrapped by wrap (a
// draft holds its message): heavy formats a few at a time, a raw body
// streamed rather than held.
func (s *Sandbox) writeMessage(w http.ResponseWriter, r *http.Request, m *messageRec, wrap func(any) any) {
	format := r.URL.Query().Get("format")
	if heavyFormat(format) {
		release, ok := s.heavyLock(r)
		if !ok {
			writeError(w, errBusy)
			return
		}
		defer release()
	}
	res, raw, e := s.messageResource(m, format, r.URL.Query()["metadataHeaders"])
	if e != nil {
		writeError(w, e)
		return
	}
	if raw != nil {
		writeJSONStreamed(w, 200, wrap(res), raw)
		return
	}
	writeJSON(w, 200, wrap(res))
}

// paginate reads maxResults and pageToken (an offset) and returns the
// slice bounds and the next token.
func paginate(n int, q map[string][]string) ([2]int, string, *apiError) {
	max := 100
	if v := first(q["maxResults"]); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 1 {
			return [2]int{}, "", badRequest("Invalid maxResults %q: a positive number.", v)
		}
		max = min(m, 500)
	}
	start := 0
	if v := first(q["pageToken"]); v != "" {
		st, err := strconv.Atoi(v)
		if err != nil || st < 0 {
			return [2]int{}, "", badRequest("Invalid pageToken %q.", v)
		}
		start = min(st, n)
	}
	end := min(start+max, n)
	next := ""
	if end < n {
		next = strconv.Itoa(end)
	}
	return [2]int{start, end}, next, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
