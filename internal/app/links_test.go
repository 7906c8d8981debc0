package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"carrier/transfer"
)

// Drive's storage, read by the Photos batch and the window alike: a
// sign-in Drive refuses (403: a grant for Photos alone) reads as no
// limit, anything else is an error.
func TestStorageFree(t *testing.T) {
	e := testSandbox(t)
	ctx := context.Background()
	free, err := (Drive{Root: e.URL, Auth: transfer.StaticToken(e.Token)}).StorageFree(ctx)
	if err != nil || free <= 0 {
		t.Fatalf("free %d, %v", free, err)
	}
	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"error":{"code":403,"message":"Request had insufficient authentication scopes.","status":"PERMISSION_DENIED"}}`)
	}))
	defer refused.Close()
	free, err = (Drive{Root: refused.URL}).StorageFree(ctx)
	if err != nil || free != -1 {
		t.Fatalf("refused: free %d, %v; want -1 and no error", free, err)
	}
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	defer broken.Close()
	if _, err := (Drive{Root: broken.URL}).StorageFree(ctx); err == nil {
		t.Fatal("a 404 read as storage")
	}
}
