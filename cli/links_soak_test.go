package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// bigFile writes n bytes of a seeded stream to name without holding
// them, and returns the path and the bytes' SHA-256.
func bigFile(t *testing.T, name string, n int64) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.NewChaCha8([32]byte{1, 2, 3}), n); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p, hex.EncodeToString(h.Sum(nil))
}

// The issue's own case, end to end against the sandbox: a 300 MB file and
// a 2 MB file sent together to two people. The sandbox holds one message
// with the 2 MB file attached and a link to one Drive file whose bytes are
// the 300 MB file's, shared reader with each recipient. Part of `make
// soak` (CARRIER_SOAK set): it writes 300 MB to the temporary folder.
func TestSoakSendLinks300MB(t *testing.T) {
	if os.Getenv("CARRIER_SOAK") == "" {
		t.Skip("300 MB through the sandbox: set CARRIER_SOAK=1 (make soak)")
	}
	e := newSendEnv(t)
	const size = 300_000_000
	big, sum := bigFile(t, "film.mov", size)
	small, _ := namedRandomFile(t, "notes.pdf", 2_000_000)
	start := time.Now()
	msg, errs, code := e.run("send", "--to", "zoe@example.com, max@example.com", "--subject", "Film", "--body", "Here.", "--attach", big, "--attach", small)
	if code != 0 {
		t.Fatalf("send: %s", errs)
	}
	t.Logf("sent in %s", time.Since(start).Round(time.Millisecond))
	if n := len(e.get("/gmail/v1/users/me/messages")["messages"].([]any)); n != 1 {
		t.Fatalf("%d messages", n)
	}
	raw := e.raw(msg["id"].(string))
	if !bytes.Contains(raw, []byte(`filename="notes.pdf"`)) || bytes.Contains(raw, []byte(`filename="film.mov"`)) {
		t.Fatalf("the message's attachments:\n%.2000s", raw)
	}
	m := driveLink.FindSubmatch(raw)
	if m == nil {
		t.Fatal("no Drive link in the message")
	}
	id := string(m[1])
	if n := len(e.get("/drive/v3/files?fields=files(id)")["files"].([]any)); n != 1 {
		t.Fatalf("%d Drive files", n)
	}
	f := e.get("/drive/v3/files/" + id + "?fields=name,size,sha256Checksum")
	if f["name"] != "film.mov" || f["size"] != fmt.Sprint(size) || f["sha256Checksum"] != sum {
		t.Fatalf("the Drive file: %v", f)
	}
	// Its bytes, read back whole, are the file's.
	req, _ := http.NewRequest("GET", e.url+"/drive/v3/files/"+id+"?alt=media", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	resp.Body.Close()
	if err != nil || n != size || hex.EncodeToString(h.Sum(nil)) != sum {
		t.Fatalf("read back %d bytes (%v), not the file's", n, err)
	}
	who, anyone := e.readers(id)
	if len(who) != 2 || anyone {
		t.Fatalf("readers %v, anyone %v", who, anyone)
	}
}
