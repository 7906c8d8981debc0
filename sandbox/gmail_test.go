package sandbox

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
)

const testMail = "From: =?UTF-8?Q?Ren=C3=A9e?= <renee@example.com>\r\n" +
	"To: you@carrier.sandbox\r\n" +
	"Subject: =?UTF-8?B?0J/RgNC40LLQtdGCLCDkuJbnlYw=?=\r\n" +
	"Date: Mon, 02 Jan 2006 15:04:05 -0700\r\n" +
	"Message-ID: <1@example.com>\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=\"outer\"\r\n" +
	"\r\n" +
	"--outer\r\n" +
	"Content-Type: multipart/alternative; boundary=\"inner\"\r\n" +
	"\r\n" +
	"--inner\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"Caf=C3=A9   at    noon, it's <fine>.\r\n" +
	"--inner\r\n" +
	"Content-Type: text/html; charset=utf-8\r\n" +
	"\r\n" +
	"<p>Caf\xc3\xa9 at noon</p>\r\n" +
	"--inner--\r\n" +
	"--outer\r\n" +
	"Content-Type: application/pdf; name=\"=?UTF-8?Q?r=C3=A9sum=C3=A9.pdf?=\"\r\n" +
	"Content-Disposition: attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"JVBERi0xLjQKJcOkw7zDtsOfCg==\r\n" +
	"--outer--\r\n"

func (e *testEnv) sendMail(path, meta string, mail string) map[string]any {
	e.t.Helper()
	uri := e.initiate("POST", path, "message/rfc822", int64(len(mail)), meta)
	r := e.chunk(uri, []byte(mail), 0, int64(len(mail)))
	if r.code != 201 {
		e.t.Fatalf("%s: %d %s", path, r.code, r.body)
	}
	return r.json(e.t)
}

func labels(v any) []string {
	var out []string
	for _, l := range v.([]any) {
		out = append(out, l.(string))
	}
	return out
}

func TestGmailSemantics(t *testing.T) {
	e := newEnv(t)
	sent := e.sendMail("/upload/gmail/v1/users/me/messages/send", "", testMail)
	id := sent["id"].(string)
	if sent["threadId"] != id || !slices.Equal(labels(sent["labelIds"]), []string{"SENT"}) {
		t.Fatalf("send: %v", sent)
	}
	reply := e.sendMail("/upload/gmail/v1/users/you@carrier.sandbox/messages/send", `{"threadId":"`+id+`"}`, "Subject: Re\r\n\r\nreply\r\n")
	if reply["threadId"] != id {
		t.Fatalf("reply left the thread: %v", reply)
	}
	ins := e.sendMail("/upload/gmail/v1/users/me/messages", "", "Subject: in\r\n\r\nx\r\n")
	if !slices.Equal(labels(ins["labelIds"]), []string{"INBOX", "UNREAD"}) || ins["threadId"] == id {
		t.Fatalf("insert: %v", ins)
	}
	imp := e.sendMail("/upload/gmail/v1/users/me/messages/import", `{"labelIds":["Label_1"]}`, testMail)
	if !slices.Equal(labels(imp["labelIds"]), []string{"Label_1"}) {
		t.Fatalf("import: %v", imp)
	}
	got := e.do("GET", "/gmail/v1/users/me/messages/"+imp["id"].(string)+"?format=minimal", auth(), nil).json(t)
	if got["internalDate"] != "1136239445000" {
		t.Errorf("import takes internalDate from the Date header: %v", got["internalDate"])
	}
	if _, has := got["payload"]; has {
		t.Error("format=minimal has a payload")
	}

	full := e.do("GET", "/gmail/v1/users/me/messages/"+id, auth(), nil).json(t)
	if full["snippet"] != "Café at noon, it&#39;s &lt;fine&gt;." {
		t.Errorf("snippet %q", full["snippet"])
	}
	if full["sizeEstimate"] != float64(len(testMail)) || full["historyId"] == "" || full["internalDate"] == "" {
		t.Errorf("message fields: %v", full)
	}
	payload := full["payload"].(map[string]any)
	if payload["mimeType"] != "multipart/mixed" || payload["partId"] != "" {
		t.Errorf("payload: %v", payload)
	}
	subject := ""
	for _, h := range payload["headers"].([]any) {
		if h.(map[string]any)["name"] == "Subject" {
			subject = h.(map[string]any)["value"].(string)
		}
	}
	if subject != "Привет, 世界" {
		t.Errorf("decoded Subject %q", subject)
	}
	parts := payload["parts"].([]any)
	att := parts[1].(map[string]any)
	if att["filename"] != "résumé.pdf" || att["partId"] != "1" {
		t.Errorf("attachment part: %v", att)
	}
	attID := att["body"].(map[string]any)["attachmentId"].(string)
	a := e.do("GET", "/gmail/v1/users/me/messages/"+id+"/attachments/"+attID, auth(), nil).json(t)
	pdf, _ := base64.URLEncoding.DecodeString(a["data"].(string))
	if !strings.HasPrefix(string(pdf), "%PDF-1.4") {
		t.Errorf("attachment data %q", pdf)
	}
	text := parts[0].(map[string]any)["parts"].([]any)[0].(map[string]any)
	body, _ := base64.URLEncoding.DecodeString(text["body"].(map[string]any)["data"].(string))
	if !strings.HasPrefix(string(body), "Café   at") || text["partId"] != "0.0" {
		t.Errorf("text part %v body %q", text, body)
	}

	meta := e.do("GET", "/gmail/v1/users/me/messages/"+id+"?format=metadata&metadataHeaders=Subject&metadataHeaders=from", auth(), nil).json(t)
	hs := meta["payload"].(map[string]any)["headers"].([]any)
	if len(hs) != 2 || hs[0].(map[string]any)["name"] != "From" || hs[0].(map[string]any)["value"] != "Renée <renee@example.com>" {
		t.Errorf("metadata headers %v", hs)
	}
	raw := e.do("GET", "/gmail/v1/users/me/messages/"+id+"?format=raw", auth(), nil).json(t)
	if b, _ := base64.URLEncoding.DecodeString(raw["raw"].(string)); string(b) != testMail {
		t.Error("format=raw is not the bytes sent")
	}

	list := e.do("GET", "/gmail/v1/users/me/messages?maxResults=2", auth(), nil).json(t)
	msgs := list["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["id"] != imp["id"] || list["nextPageToken"] != "2" || list["resultSizeEstimate"] != float64(4) {
		t.Errorf("list newest first, paged: %v", list)
	}
	sentOnly := e.do("GET", "/gmail/v1/users/me/messages?labelIds=SENT", auth(), nil).json(t)
	if len(sentOnly["messages"].([]any)) != 2 {
		t.Errorf("labelIds=SENT: %v", sentOnly)
	}
	prof := e.do("GET", "/gmail/v1/users/me/profile", auth(), nil).json(t)
	if prof["emailAddress"] != DefaultAccount || prof["messagesTotal"] != float64(4) || prof["threadsTotal"] != float64(3) {
		t.Errorf("profile: %v", prof)
	}
	if r := e.do("GET", "/gmail/v1/users/me/messages/"+id+"?format=weird", auth(), nil); r.code != 400 {
		t.Errorf("bad format: %d", r.code)
	}
	if r := e.do("GET", "/gmail/v1/users/me/messages/nope", auth(), nil); r.code != 404 {
		t.Errorf("missing message: %d", r.code)
	}
}

func TestGmailDrafts(t *testing.T) {
	e := newEnv(t)
	thread := e.sendMail("/upload/gmail/v1/users/me/messages/send", "", "Subject: first\r\n\r\none\r\n")["threadId"].(string)
	d := e.sendMail("/upload/gmail/v1/users/me/drafts", `{"message":{"threadId":"`+thread+`"}}`, "Subject: draft v1\r\n\r\nv1\r\n")
	draftID := d["id"].(string)
	dm := d["message"].(map[string]any)
	if !strings.HasPrefix(draftID, "r") || dm["threadId"] != thread || !slices.Equal(labels(dm["labelIds"]), []string{"DRAFT"}) {
		t.Fatalf("drafts.create: %v", d)
	}
	// drafts.update is a PUT: its session ends with 200.
	v2 := "Subject: draft v2\r\n\r\nv2\r\n"
	uri := e.initiate("PUT", "/upload/gmail/v1/users/me/drafts/"+draftID, "message/rfc822", int64(len(v2)), `{"id":"`+draftID+`"}`)
	r := e.chunk(uri, []byte(v2), 0, int64(len(v2)))
	if r.code != 200 {
		t.Fatalf("drafts.update: %d %s", r.code, r.body)
	}
	upd := r.json(t)
	if upd["id"] != draftID || upd["message"].(map[string]any)["threadId"] != thread {
		t.Fatalf("drafts.update: %v", upd)
	}
	if r := e.do("GET", "/gmail/v1/users/me/messages/"+dm["id"].(string), auth(), nil); r.code != 404 {
		t.Errorf("the replaced draft message is still there: %d", r.code)
	}
	got := e.do("GET", "/gmail/v1/users/me/drafts/"+draftID+"?format=raw", auth(), nil).json(t)
	if raw, _ := base64.URLEncoding.DecodeString(got["message"].(map[string]any)["raw"].(string)); string(raw) != v2 {
		t.Errorf("drafts.get raw %q", raw)
	}
	dl := e.do("GET", "/gmail/v1/users/me/drafts", auth(), nil).json(t)
	if len(dl["drafts"].([]any)) != 1 {
		t.Errorf("drafts.list: %v", dl)
	}
	final := "Subject: sent draft\r\n\r\nfinal\r\n"
	sent := e.sendMail("/upload/gmail/v1/users/me/drafts/send", `{"id":"`+draftID+`"}`, final)
	if !slices.Equal(labels(sent["labelIds"]), []string{"SENT"}) || sent["threadId"] != thread {
		t.Fatalf("drafts.send: %v", sent)
	}
	if r := e.do("GET", "/gmail/v1/users/me/drafts/"+draftID, auth(), nil); r.code != 404 {
		t.Errorf("the sent draft is still a draft: %d", r.code)
	}
	if dl := e.do("GET", "/gmail/v1/users/me/drafts", auth(), nil).json(t); dl["drafts"] != nil {
		t.Errorf("drafts left: %v", dl)
	}
	msg := e.do("GET", "/gmail/v1/users/me/messages/"+sent["id"].(string)+"?format=raw", auth(), nil).json(t)
	if raw, _ := base64.URLEncoding.DecodeString(msg["raw"].(string)); string(raw) != final {
		t.Errorf("sent draft raw %q", raw)
	}
	if r := e.do("POST", "/upload/gmail/v1/users/me/drafts/send?uploadType=media", auth("Content-Type", "message/rfc822"), []byte(final)); r.code != 400 {
		t.Errorf("drafts.send without metadata: %d", r.code)
	}
}

func TestMirrorTimeline(t *testing.T) {
	e := newEnv(t)
	png := pngBytes()
	body := fmt.Sprintf("--b\r\nContent-Type: application/json\r\n\r\n%s\r\n--b\r\nContent-Type: image/png\r\n\r\n%s\r\n--b--\r\n",
		`{"text":"Hello Glass","notification":{"level":"DEFAULT"},"id":"client-chosen"}`, png)
	r := e.do("POST", "/upload/mirror/v1/timeline?uploadType=multipart", auth("Content-Type", "multipart/related; boundary=b"), []byte(body))
	if r.code != 200 {
		t.Fatalf("insert: %d %s", r.code, r.body)
	}
	item := r.json(t)
	id := item["id"].(string)
	if item["kind"] != "mirror#timelineItem" || id == "client-chosen" || item["text"] != "Hello Glass" || len(item["attachments"].([]any)) != 1 {
		t.Fatalf("item: %v", item)
	}
	audio := randomData(7, 3000)
	uri := e.initiate("POST", "/upload/mirror/v1/timeline/"+id+"/attachments", "audio/mpeg", int64(len(audio)), "")
	r = e.chunk(uri, audio, 0, int64(len(audio)))
	if r.code != 201 {
		t.Fatalf("attachments.insert: %d %s", r.code, r.body)
	}
	att := r.json(t)
	if att["contentType"] != "audio/mpeg" || att["contentUrl"] == "" {
		t.Fatalf("attachment: %v", att)
	}
	content := e.do("GET", att["contentUrl"].(string), auth(), nil)
	if string(content.body) != string(audio) || content.h.Get("Content-Type") != "audio/mpeg" {
		t.Fatalf("attachment content differs")
	}
	got := e.do("GET", "/mirror/v1/timeline/"+id, auth(), nil).json(t)
	if len(got["attachments"].([]any)) != 2 {
		t.Fatalf("timeline.get: %v", got)
	}
	atts := e.do("GET", "/mirror/v1/timeline/"+id+"/attachments", auth(), nil).json(t)
	if len(atts["items"].([]any)) != 2 {
		t.Fatalf("attachments.list: %v", atts)
	}
	second := e.do("POST", "/upload/mirror/v1/timeline?uploadType=media", auth("Content-Type", "video/mp4"), randomData(8, 100)).json(t)
	list := e.do("GET", "/mirror/v1/timeline", auth(), nil).json(t)
	items := list["items"].([]any)
	if list["kind"] != "mirror#timeline" || len(items) != 2 || items[0].(map[string]any)["id"] != second["id"] {
		t.Fatalf("timeline.list newest first: %v", list)
	}
	upd := e.do("PUT", "/upload/mirror/v1/timeline/"+id+"?uploadType=media", auth("Content-Type", "image/png"), png).json(t)
	if len(upd["attachments"].([]any)) != 1 || upd["text"] != nil {
		t.Fatalf("timeline.update replaces metadata and media: %v", upd)
	}
	if r := e.do("GET", "/mirror/v1/timeline/"+id+"/attachments/"+att["id"].(string), auth(), nil); r.code != 404 {
		t.Fatalf("replaced attachment still served: %d", r.code)
	}
}

func TestGmailMetadataURIs(t *testing.T) {
	e := newEnv(t)
	raw := base64.RawURLEncoding.EncodeToString([]byte(testMail))
	sent := e.do("POST", "/gmail/v1/users/me/messages/send", auth("Content-Type", "application/json"), []byte(`{"raw":"`+raw+`"}`))
	if sent.code != 200 || !slices.Equal(labels(sent.json(t)["labelIds"]), []string{"SENT"}) {
		t.Fatalf("messages.send with raw: %d %s", sent.code, sent.body)
	}
	got := e.do("GET", "/gmail/v1/users/me/messages/"+sent.json(t)["id"].(string)+"?format=raw", auth(), nil).json(t)
	if b, _ := base64.URLEncoding.DecodeString(got["raw"].(string)); string(b) != testMail {
		t.Fatal("raw round trip differs")
	}
	d := e.do("POST", "/gmail/v1/users/me/drafts", auth(), []byte(`{"message":{"raw":"`+raw+`"}}`)).json(t)
	msgID := d["message"].(map[string]any)["id"].(string)
	r := e.do("POST", "/gmail/v1/users/me/drafts/send", auth(), []byte(`{"id":"`+d["id"].(string)+`"}`))
	if r.code != 200 || r.json(t)["id"] != msgID || !slices.Equal(labels(r.json(t)["labelIds"]), []string{"SENT"}) {
		t.Fatalf("drafts.send of a draft as it stands: %d %s", r.code, r.body)
	}
	if r := e.do("GET", "/gmail/v1/users/me/drafts/"+d["id"].(string), auth(), nil); r.code != 404 {
		t.Fatalf("sent draft still listed: %d", r.code)
	}
	if r := e.do("POST", "/gmail/v1/users/me/messages/send", auth(), []byte(`{}`)); r.code != 400 || !strings.Contains(r.errMessage(t), "raw") {
		t.Fatalf("no raw: %d %s", r.code, r.body)
	}
	if r := e.do("POST", "/gmail/v1/users/me/messages/send", auth(), []byte(`{"raw":"***"}`)); r.code != 400 {
		t.Fatalf("bad raw: %d %s", r.code, r.body)
	}
}
