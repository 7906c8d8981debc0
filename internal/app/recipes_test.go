package app

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"carrier/compose"
	"carrier/transfer"
)

func TestMessageRecipes(t *testing.T) {
	msg := &compose.Message{To: []string{"zoe@example.com"}, Subject: "Report"}
	cases := []struct {
		method      compose.Method
		o           GmailOptions
		path, http  string
		meta, label string
	}{
		{compose.Send, GmailOptions{}, "/upload/gmail/v1/users/me/messages/send", "POST", `{}`, "Gmail · send"},
		{compose.Send, GmailOptions{Thread: "t1", Labels: []string{"L1"}}, "/upload/gmail/v1/users/me/messages/send", "POST", `{"labelIds":["L1"],"threadId":"t1"}`, "Gmail · send"},
		{compose.Draft, GmailOptions{}, "/upload/gmail/v1/users/me/drafts", "POST", `{"message":{}}`, "Gmail · save draft"},
		{compose.Draft, GmailOptions{Thread: "t1"}, "/upload/gmail/v1/users/me/drafts", "POST", `{"message":{"threadId":"t1"}}`, "Gmail · save draft"},
		{compose.Draft, GmailOptions{DraftID: "r 1"}, "/upload/gmail/v1/users/me/drafts/r%201", "PUT", `{"id":"r 1","message":{}}`, "Gmail · update draft"},
		{compose.Draft, GmailOptions{SendDraft: "r2"}, "/upload/gmail/v1/users/me/drafts/send", "POST", `{"id":"r2"}`, "Gmail · send draft"},
		{compose.Insert, GmailOptions{Labels: []string{"L7"}}, "/upload/gmail/v1/users/me/messages", "POST", `{"labelIds":["L7"]}`, "Gmail · insert"},
		{compose.Import, GmailOptions{}, "/upload/gmail/v1/users/me/messages/import", "POST", `{}`, "Gmail · import"},
	}
	for _, c := range cases {
		up, err := Message(msg, c.method, c.o)
		if err != nil {
			t.Fatalf("%s %+v: %v", c.method, c.o, err)
		}
		if up.Path != c.path || up.Method != c.http || string(up.Metadata) != c.meta || up.ContentType != "message/rfc822" || up.Label != msg.Label() {
			t.Errorf("%s %+v: %+v (metadata %s)", c.method, c.o, up, up.Metadata)
		}
		// The way back: the job's URL names what it does.
		spec := up.Spec("http://127.0.0.1:8089")
		if got := Describe(spec.URL, "http://127.0.0.1:8089"); got != c.label+" (sandbox, on this computer)" {
			t.Errorf("%s %+v: described as %q", c.method, c.o, got)
		}
	}
	if _, err := Message(msg, compose.Draft, GmailOptions{Labels: []string{"X"}}); !errors.Is(err, ErrLabels) {
		t.Errorf("labels on a draft: %v", err)
	}
}

func TestPostRecipe(t *testing.T) {
	media := &compose.TimelineMedia{Path: "/home/zoe/Pictures/dot.png", MediaType: "image/png", Size: 68}
	up, err := Post(media, compose.TimelineItem{Text: "Sunset", Notify: true}, "")
	if err != nil || up.Path != "/upload/mirror/v1/timeline" || up.Method != http.MethodPost || up.ContentType != "image/png" ||
		string(up.Metadata) != `{"notification":{"level":"DEFAULT"},"text":"Sunset"}` || up.Label != "dot.png · to the timeline" {
		t.Fatalf("captioned post: %+v %s %v", up, up.Metadata, err)
	}
	if up, _ := Post(media, compose.TimelineItem{}, ""); up.Metadata != nil {
		t.Errorf("an uncaptioned post carries metadata %s", up.Metadata)
	}
	up, _ = Post(media, compose.TimelineItem{}, "item/1")
	if up.Path != "/upload/mirror/v1/timeline/item%2F1/attachments" || up.Metadata != nil {
		t.Errorf("added to an item: %+v", up)
	}
	if got := Describe("https://www.googleapis.com"+up.Path, "http://127.0.0.1:8089"); got != "Timeline · add to item at www.googleapis.com" {
		t.Errorf("described as %q", got)
	}
}

func TestChecksums(t *testing.T) {
	crc := []string{transfer.SumCRC32C}
	for _, c := range []struct {
		url  string
		md5  bool
		want []string
	}{
		{"http://127.0.0.1:9/upload/storage/v1/b/bucket/o?name=x", false, crc},
		{"https://storage.googleapis.com/upload/storage/v1/b/b/o", true, []string{transfer.SumCRC32C, transfer.SumMD5}},
		{"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send", true, nil},
		{"http://127.0.0.1:9/upload/mirror/v1/timeline", false, nil},
		{"::", false, nil},
	} {
		if got := Checksums(c.url, c.md5); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.url, got, c.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	const sb = "http://127.0.0.1:8089"
	cases := []struct{ url, want string }{
		{"http://127.0.0.1:8089/upload/mirror/v1/timeline", "Timeline (sandbox, on this computer)"},
		{"http://127.0.0.1:8089/upload/mirror/v1/timeline/abc", "Timeline (sandbox, on this computer)"},
		{"http://127.0.0.1:9/upload/storage/v1/b/bucket/o?name=x", "Storage at 127.0.0.1:9"},
		{"https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send", "Gmail · send at gmail.googleapis.com"},
		{"https://proxy.example.com/google/upload/gmail/v1/users/me/drafts", "Gmail · save draft at proxy.example.com"},
		{"https://files.example.com/put/here", "/put/here at files.example.com"},
		{"::", ""},
	}
	for _, c := range cases {
		if got := Describe(c.url, sb); got != c.want {
			t.Errorf("%s: %q, want %q", c.url, got, c.want)
		}
	}
	if got := Describe("https://sandbox.example.com/upload/gmail/v1/users/me/messages", "https://sandbox.example.com"); got != "Gmail · insert" {
		t.Errorf("a sandbox elsewhere: %q", got)
	}
	for _, r := range routes {
		if !strings.HasPrefix(r.path, "/upload/") {
			t.Errorf("route %q is not an upload path", r.path)
		}
	}
}
