package cli

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestHostAuthPicksEachServersCredential(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := SandboxDir()
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, portFile), []byte("18123\n"), 0o600)
	os.WriteFile(filepath.Join(dir, tokenFile), []byte("sbx-local-token\n"), 0o600)
	h := newHostAuth(context.Background())
	cases := []struct {
		url, want string
		err       error
	}{
		{"http://127.0.0.1:18123/upload/storage/v1/b/b/o?uploadType=resumable", "Bearer sbx-local-token", nil},
		{"http://127.0.0.1:18124/upload/storage/v1/b/b/o?uploadType=resumable", "", errNoCredentials},
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
