package gapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"carrier/sandbox"
	"carrier/transfer"
)

// The client against the sandbox: Drive's storage and ids read, a
// refusal comes back as a structured error.
func TestSandboxDrive(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir(), Token: "gapi-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	c := &Client{Root: srv.URL, Auth: transfer.StaticToken("gapi-token"), Service: "Google Drive"}
	ctx := context.Background()

	var about struct {
		StorageQuota struct{ Limit, Usage string } `json:"storageQuota"`
	}
	if err := c.Get(ctx, "/drive/v3/about?fields=storageQuota", &about); err != nil {
		t.Fatal(err)
	}
	if about.StorageQuota.Limit == "" {
		t.Fatalf("no storage limit read: %+v", about)
	}
	var g struct{ IDs []string }
	if err := c.Do(ctx, Call{Path: "/drive/v3/files/generateIds", Query: map[string][]string{"count": {"3"}, "space": {"drive"}}}, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.IDs) != 3 {
		t.Fatalf("ids %v, want 3", g.IDs)
	}

	err = c.Get(ctx, "/drive/v3/files/no-such-file", &struct{}{})
	var refused *Error
	if !errors.As(err, &refused) || refused.Code != http.StatusNotFound || StatusOf(err) != 404 {
		t.Fatalf("a missing file: %v (%#v), want a 404 *Error", err, refused)
	}
	if !strings.HasPrefix(err.Error(), "Google Drive answered 404") {
		t.Fatalf("words %q", err)
	}

	bad := &Client{Root: srv.URL, Auth: transfer.StaticToken("wrong"), Service: "Google Drive"}
	err = bad.Get(ctx, "/drive/v3/about?fields=storageQuota", &about)
	if !errors.As(err, &refused) || refused.Code != http.StatusUnauthorized || !errors.Is(err, transfer.ErrCannotRefresh) {
		t.Fatalf("a refused token that cannot be renewed: %v", err)
	}
}

// fake counts requests and answers each with what answer says for its
// number (from 1).
func fake(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(int(n.Add(1)), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// tokens is an Authorizer whose token changes with each refresh.
type tokens struct{ refreshes atomic.Int32 }

func (k *tokens) Authorize(_ context.Context, r *http.Request) error {
	r.Header.Set("Authorization", "Bearer t"+string(rune('0'+k.refreshes.Load())))
	return nil
}

func (k *tokens) Refresh(context.Context) error { k.refreshes.Add(1); return nil }

func TestUnauthorizedThenRefreshed(t *testing.T) {
	srv, n := fake(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t1" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"code":401,"message":"Invalid Credentials","status":"UNAUTHENTICATED"}}`))
			return
		}
		w.Write([]byte(`{"ok":true}`))
	})
	k := &tokens{}
	c := &Client{Root: srv.URL, Auth: k, Service: "Gmail"}
	var v struct{ OK bool }
	if err := c.Get(context.Background(), "/x", &v); err != nil || !v.OK {
		t.Fatalf("got %v, %+v", err, v)
	}
	if k.refreshes.Load() != 1 || n.Load() != 2 {
		t.Fatalf("%d refreshes, %d requests; want 1 and 2", k.refreshes.Load(), n.Load())
	}
}

func TestUnauthorizedTwiceNamesSignIn(t *testing.T) {
	srv, n := fake(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"code":401,"message":"Invalid Credentials","status":"UNAUTHENTICATED","errors":[{"reason":"authError"}]}}`))
	})
	k := &tokens{}
	c := &Client{Root: srv.URL, Auth: k, Service: "Gmail"}
	err := c.Get(transfer.WithAccount(context.Background(), "ana@example.com"), "/x", nil)
	var signin *transfer.SignInError
	if !errors.As(err, &signin) || signin.Account != "ana@example.com" || !errors.Is(err, transfer.ErrSignInNeeded) {
		t.Fatalf("got %v, want a sign-in error for the account", err)
	}
	var refused *Error
	if !errors.As(err, &refused) || refused.Code != 401 || refused.Status != "UNAUTHENTICATED" || !refused.Has("authError") {
		t.Fatalf("the refusal is not kept: %#v", refused)
	}
	if !strings.Contains(err.Error(), "sign in again") {
		t.Fatalf("the words do not name signing in: %q", err)
	}
	if k.refreshes.Load() != 1 || n.Load() != 2 {
		t.Fatalf("%d refreshes, %d requests; want 1 and 2", k.refreshes.Load(), n.Load())
	}
}

func TestUnavailableRetried(t *testing.T) {
	srv, n := fake(t, func(i int, w http.ResponseWriter, r *http.Request) {
		if i < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":503,"message":"Backend Error","status":"UNAVAILABLE"}}`))
			return
		}
		w.Write([]byte(`{"ids":["a"]}`))
	})
	c := &Client{Root: srv.URL, Backoff: time.Millisecond}
	var g struct{ IDs []string }
	if err := c.Get(context.Background(), "/ids", &g); err != nil || len(g.IDs) != 1 {
		t.Fatalf("got %v, %v", err, g)
	}
	if n.Load() != 3 {
		t.Fatalf("%d requests, want 3", n.Load())
	}

	// A bounded number of times: the refusal comes back in the end.
	srv2, n2 := fake(t, func(i int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	c = &Client{Root: srv2.URL, Backoff: time.Millisecond, Retries: 2}
	if err := c.Get(context.Background(), "/ids", nil); StatusOf(err) != http.StatusBadGateway || n2.Load() != 3 {
		t.Fatalf("got %v after %d requests, want a 502 after 3", err, n2.Load())
	}
}

// A call that is not idempotent is sent once when it went out, whatever
// came back (or did not); one marked idempotent is tried again.
func TestPostNotRetriedOnceSent(t *testing.T) {
	hangUp := func(_ int, w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // no answer: the album may have been made
		}
	}
	srv, n := fake(t, hangUp)
	c := &Client{Root: srv.URL, Backoff: time.Millisecond}
	err := c.Do(context.Background(), Call{Method: http.MethodPost, Path: "/v1/albums", Body: map[string]any{"album": map[string]string{"title": "x"}}}, nil)
	if err == nil || StatusOf(err) != 0 || n.Load() != 1 {
		t.Fatalf("got %v after %d requests, want no answer after 1", err, n.Load())
	}
	if !strings.HasPrefix(err.Error(), "cannot reach "+strings.TrimPrefix(srv.URL, "http://")) {
		t.Fatalf("words %q", err)
	}

	srv2, n2 := fake(t, func(_ int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	c = &Client{Root: srv2.URL, Backoff: time.Millisecond}
	if err := c.Do(context.Background(), Call{Method: http.MethodPost, Path: "/send", Body: []byte(`{}`)}, nil); StatusOf(err) != 503 || n2.Load() != 1 {
		t.Fatalf("got %v after %d requests, want a 503 after 1", err, n2.Load())
	}

	srv3, n3 := fake(t, func(i int, w http.ResponseWriter, r *http.Request) {
		if i == 1 {
			hangUp(i, w, r)
			return
		}
		w.Write([]byte(`{}`))
	})
	c = &Client{Root: srv3.URL, Backoff: time.Millisecond}
	if err := c.Do(context.Background(), Call{Method: http.MethodPost, Path: "/get", Body: []byte(`{}`), Idempotent: true}, nil); err != nil || n3.Load() != 2 {
		t.Fatalf("got %v after %d requests, want success after 2", err, n3.Load())
	}
}

func TestAnswerOverTheLimit(t *testing.T) {
	srv, _ := fake(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"raw":"` + strings.Repeat("A", 2000) + `"}`))
	})
	c := &Client{Root: srv.URL, Service: "Gmail", Limit: 1 << 10}
	var v map[string]string
	err := c.Get(context.Background(), "/big", &v)
	var tl *TooLargeError
	if !errors.As(err, &tl) || v != nil {
		t.Fatalf("got %v, %d keys; want a refusal and nothing read", err, len(v))
	}
	if err.Error() != "Gmail answered with more than 1 KiB, more than Carrier reads" {
		t.Fatalf("words %q", err)
	}
	c.Limit = 4 << 10
	if err := c.Get(context.Background(), "/big", &v); err != nil || len(v["raw"]) != 2000 {
		t.Fatalf("under the limit: %v", err)
	}
}

// An absolute address goes only to the root's origin, token and all.
func TestOtherOriginRefused(t *testing.T) {
	other, n := fake(t, func(_ int, w http.ResponseWriter, r *http.Request) {})
	own, _ := fake(t, func(_ int, w http.ResponseWriter, r *http.Request) { w.Write([]byte("bytes")) })
	c := &Client{Root: own.URL, Auth: transfer.StaticToken("secret")}
	for _, u := range []string{other.URL + "/file", "//" + strings.TrimPrefix(other.URL, "http://") + "/file", strings.Replace(own.URL, "http://", "http://user@", 1) + "/file"} {
		if err := c.Get(context.Background(), u, nil); !errors.Is(err, ErrElsewhere) {
			t.Fatalf("%s: %v", u, err)
		}
	}
	if n.Load() != 0 {
		t.Fatal("a request went to another server")
	}
	var b []byte
	if err := c.Get(context.Background(), own.URL+"/file", &b); err != nil || string(b) != "bytes" {
		t.Fatalf("own origin: %v %q", err, b)
	}
}

// Open hands a 2xx answer over unread, past the read limit (an
// attachment goes to disk as it arrives); a refusal is an *Error, read
// within the limit, and a 401 is refreshed as Do's is.
func TestOpenStreams(t *testing.T) {
	big := strings.Repeat("x", 8<<10)
	srv, n := fake(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer t1":
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/gone":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`))
		default:
			w.Write([]byte(big))
		}
	})
	k := &tokens{}
	c := &Client{Root: srv.URL, Auth: k, Limit: 1 << 10, Service: "Gmail"}
	body, err := c.Open(context.Background(), Call{Path: "/attachment"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(body)
	body.Close()
	if err != nil || string(b) != big || k.refreshes.Load() != 1 || n.Load() != 2 {
		t.Fatalf("read %d bytes, %v, after %d refreshes and %d requests", len(b), err, k.refreshes.Load(), n.Load())
	}
	_, err = c.Open(context.Background(), Call{Path: "/gone"})
	var refused *Error
	if !errors.As(err, &refused) || refused.Code != 404 || refused.Status != "NOT_FOUND" {
		t.Fatalf("got %v", err)
	}
}
