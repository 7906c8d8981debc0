package app

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestCredentialsPickEachServersOwn(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := DefaultDirs().Sandbox()
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, portFile), []byte("18123\n"), 0o600)
	os.WriteFile(filepath.Join(dir, tokenFile), []byte("sbx-local-token\n"), 0o600)
	h := NewCredentials(context.Background(), dir)
	h.prover = folderProver(dir) // a sandbox at 18123 that proves it serves dir
	cases := []struct {
		url, want string
		err       error
	}{
		{"http://127.0.0.1:18123/upload/storage/v1/b/b/o?uploadType=resumable", "Bearer sbx-local-token", nil},
		{"http://127.0.0.1:18124/upload/storage/v1/b/b/o?uploadType=resumable", "", ErrNoCredentials},
		{"http://127.0.0.1:18124/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=abc", "", nil},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("PUT", c.url, nil)
		err := h.Authorize(context.Background(), req)
		if !errors.Is(err, c.err) || req.Header.Get("Authorization") != c.want {
			t.Errorf("%s: %v, Authorization %q", c.url, err, req.Header.Get("Authorization"))
		}
	}
	if err := h.Refresh(context.Background()); err == nil {
		t.Error("a static sandbox token cannot be refreshed, and Refresh said it was")
	}
}

// Reset makes the next request look its credential up again: a sign-in or
// sign-out (or a new sandbox token) counts from then on.
func TestCredentialsReset(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, portFile), []byte("18125\n"), 0o600)
	os.WriteFile(filepath.Join(dir, tokenFile), []byte("sbx-first\n"), 0o600)
	c := NewCredentials(context.Background(), dir)
	c.prover = folderProver(dir)
	authz := func() string {
		req, _ := http.NewRequest("POST", "http://127.0.0.1:18125/upload/gmail/v1/users/me/messages/send", nil)
		c.Authorize(context.Background(), req)
		return req.Header.Get("Authorization")
	}
	if got := authz(); got != "Bearer sbx-first" {
		t.Fatalf("first: %q", got)
	}
	os.WriteFile(filepath.Join(dir, tokenFile), []byte("sbx-second\n"), 0o600)
	if got := authz(); got != "Bearer sbx-first" {
		t.Fatalf("looked up again without a reset: %q", got)
	}
	c.Reset()
	if got := authz(); got != "Bearer sbx-second" {
		t.Fatalf("after Reset: %q", got)
	}
}
