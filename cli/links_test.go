package cli

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"carrier/transfer"
)

func namedRandomFile(t *testing.T, name string, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	rand.Read(data)
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// getBytes reads a path of the sandbox whole.
func (e *sendEnv) getBytes(path string) []byte {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.url+path, nil)
	req.Header.Set("Authorization", "Bearer tok")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		e.t.Fatalf("GET %s: %d %s", path, r.StatusCode, b)
	}
	return b
}

var driveLink = regexp.MustCompile(`/file/d/([A-Za-z0-9_-]+)/view`)

// A large file and a small one sent together: the sandbox holds one
// message with the small file attached and a link to a Drive file whose
// bytes are the large file's, shared as reader with each recipient and
// nobody else; the Drive file was verified by its SHA-256.
func TestSendLinksLargeFilesThroughDrive(t *testing.T) {
	e := newSendEnv(t)
	big, bigData := namedRandomFile(t, "Holiday video.mov", 40<<20)
	small, _ := namedRandomFile(t, "notes.bin", 2<<20)
	msg, errs, code := e.run("send", "--to", "Zoe <zoe@example.com>", "--cc", "max@example.com", "--subject", "Files", "--body", "Here.", "--attach", big, "--attach", small, "--chunk-size", "4194304")
	if code != 0 {
		t.Fatalf("send: %s", errs)
	}
	list := e.get("/gmail/v1/users/me/messages")
	if n := len(list["messages"].([]any)); n != 1 {
		t.Fatalf("%d messages", n)
	}
	raw := e.raw(msg["id"].(string))
	if !bytes.Contains(raw, []byte(`filename="notes.bin"`)) || bytes.Contains(raw, []byte("Holiday video.mov\"")) {
		t.Fatalf("attachments of the message:\n%.2000s", raw)
	}
	m := driveLink.FindSubmatch(raw)
	if m == nil {
		t.Fatalf("no Drive link in the message:\n%.3000s", raw)
	}
	id := string(m[1])
	files := e.get("/drive/v3/files?fields=files(id,name)")
	if n := len(files["files"].([]any)); n != 1 {
		t.Fatalf("%d Drive files: %v", n, files)
	}
	f := e.get("/drive/v3/files/" + id + "?fields=id,name,size,sha256Checksum")
	sum := sha256.Sum256(bigData)
	if f["name"] != "Holiday video.mov" || f["size"] != fmt.Sprint(len(bigData)) || f["sha256Checksum"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("the Drive file: %v", f)
	}
	if !bytes.Equal(e.getBytes("/drive/v3/files/"+id+"?alt=media"), bigData) {
		t.Fatal("the Drive file's bytes are not the file's")
	}
	perms := e.get("/drive/v3/files/" + id + "/permissions?fields=permissions(type,role,emailAddress)")
	readers := map[string]bool{}
	for _, p := range perms["permissions"].([]any) {
		pm := p.(map[string]any)
		switch {
		case pm["role"] == "owner":
		case pm["type"] == "user" && pm["role"] == "reader":
			readers[pm["emailAddress"].(string)] = true
		default:
			t.Errorf("a permission nobody asked for: %v", pm)
		}
	}
	if len(readers) != 2 || !readers["zoe@example.com"] || !readers["max@example.com"] {
		t.Fatalf("readers %v", readers)
	}
	// The journal: the Drive upload verified, the shares and the message done.
	var verified bool
	for _, r := range e.records() {
		if r.State != "done" {
			t.Errorf("job %s (%s) is %s", r.ID, r.Label, r.State)
		}
		if strings.HasSuffix(r.Label, "to Google Drive") {
			verified = r.Verified == "sha256"
		}
	}
	if !verified {
		t.Error("the Drive upload was not verified by its SHA-256")
	}
}

// Anyone with the link: one permission, type anyone; a quota too small
// is refused before a byte goes, saying how much is free and needed.
func TestSendLinksShareAndQuota(t *testing.T) {
	e := newSendEnv(t)
	big, _ := namedRandomFile(t, "big.bin", 30<<20)
	if _, errs, code := e.run("send", "--to", "zoe@example.com", "--attach", big, "--share", "anyone"); code != 0 {
		t.Fatalf("send: %s", errs)
	}
	files := e.get("/drive/v3/files?fields=files(id)")
	id := files["files"].([]any)[0].(map[string]any)["id"].(string)
	perms := e.get("/drive/v3/files/" + id + "/permissions")
	var anyone int
	for _, p := range perms["permissions"].([]any) {
		if p.(map[string]any)["type"] == "anyone" {
			anyone++
		} else if p.(map[string]any)["role"] != "owner" {
			t.Errorf("permission %v", p)
		}
	}
	if anyone != 1 {
		t.Fatalf("%d anyone permissions", anyone)
	}
	req, _ := http.NewRequest("PUT", e.url+"/sandbox/v1/drive", strings.NewReader(`{"limit":40000000}`))
	req.Header.Set("Authorization", "Bearer tok")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode/100 != 2 {
		t.Fatalf("setting the quota: %v %v", r, err)
	}
	before := len(e.records())
	_, errs, code := e.run("send", "--to", "zoe@example.com", "--attach", big)
	if code != 1 || !strings.Contains(errs, "Google Drive has no room") || !strings.Contains(errs, "free") {
		t.Fatalf("over quota: %d %s", code, errs)
	}
	if n := len(e.records()); n != before {
		t.Fatalf("a refused send left %d jobs", n-before)
	}
}

// records are the journal's jobs.
func (e *sendEnv) records() []*transfer.Record {
	e.t.Helper()
	j, err := transfer.OpenJournal(e.state)
	if err != nil {
		e.t.Fatal(err)
	}
	recs, err := j.List()
	if err != nil {
		e.t.Fatal(err)
	}
	return recs
}

// carrier drive upload: a file alone to Drive, shared with the addresses
// given, printed as the File with its link; refusals say what to fix.
func TestDriveUpload(t *testing.T) {
	e := newSendEnv(t)
	path, data := namedRandomFile(t, "report.pdf", 3<<20)
	f, errs, code := e.run("drive", "upload", "--file", path, "--share-with", "zoe@example.com, max@example.com", "--link-expiry", "7d")
	if code != 0 {
		t.Fatalf("drive upload: %s", errs)
	}
	sum := sha256.Sum256(data)
	if f["name"] != "report.pdf" || f["sha256Checksum"] != hex.EncodeToString(sum[:]) || !driveLink.MatchString(fmt.Sprint(f["webViewLink"])) {
		t.Fatalf("the File: %v", f)
	}
	id := f["id"].(string)
	if !bytes.Equal(e.getBytes("/drive/v3/files/"+id+"?alt=media"), data) {
		t.Fatal("bytes differ")
	}
	perms := e.get("/drive/v3/files/" + id + "/permissions?fields=permissions(role,emailAddress,expirationTime)")
	readers := 0
	for _, p := range perms["permissions"].([]any) {
		if pm := p.(map[string]any); pm["role"] == "reader" {
			readers++
			if pm["expirationTime"] == nil {
				t.Errorf("no expiry: %v", pm)
			}
		}
	}
	if readers != 2 {
		t.Fatalf("%d readers: %v", readers, perms)
	}
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"drive", "upload"}, "--file is required"},
		{[]string{"drive", "upload", "--file", path, "--anyone", "--share-with", "a@example.com"}, "not both"},
		{[]string{"drive", "upload", "--file", path, "--share-with", "not an address"}, "share-with"},
		{[]string{"drive", "upload", "--file", path, "--link-expiry", "7d"}, "--share-with"},
		{[]string{"drive"}, "carrier drive upload"},
	} {
		if _, errs, code := e.run(c.args...); code != 2 || !strings.Contains(errs, c.say) {
			t.Errorf("%v: %d %q", c.args, code, errs)
		}
	}
}
