package app

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestEmbeddedSandbox(t *testing.T) {
	dir := t.TempDir()
	e, err := StartEmbedded(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.URL+"/gmail/v1/users/me/profile", nil)
	req.Header.Set("Authorization", "Bearer "+e.Token)
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("embedded sandbox: %v %v", r, err)
	}
	r.Body.Close()
	// A second user of the folder finds the first one's address and token.
	again, err := StartEmbedded(context.Background(), dir, nil)
	if err != nil || again.URL != e.URL || again.Token != e.Token || again.Sandbox() != nil {
		t.Fatalf("second start: %+v %v", again, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "token")); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 { // mode bits are Unix's
		t.Fatalf("token file: %v %v", fi, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Restarted, it comes back on the same port with the same token:
	// session URIs in the journal still lead to it.
	third, err := StartEmbedded(context.Background(), dir, nil)
	if err != nil || third.URL != e.URL || third.Token != e.Token {
		t.Fatalf("restart: %+v %v (was %s)", third, err, e.URL)
	}
	third.Close()
}
