package cli

import (
	"net/http"
	"strings"
	"testing"
)

// A public sandbox answers to the names it was given, and to no other
// (DNS rebinding); --host without --public is a misuse.
func TestPublicSandboxHosts(t *testing.T) {
	url, token, stop := startSandbox(t, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--public", "--host", "sandbox.example.test")
	defer stop()
	status := func(host string) int {
		req, _ := http.NewRequest("GET", url+"/gmail/v1/users/me/profile", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+token)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	port := url[strings.LastIndex(url, ":")+1:]
	if c := status("sandbox.example.test:" + port); c != http.StatusOK {
		t.Errorf("the name given with --host: %d", c)
	}
	if c := status("rebind.example:" + port); c != http.StatusMisdirectedRequest {
		t.Errorf("another name: %d, want 421", c)
	}
	if code, _, errOut := runCmd("sandbox", "--host", "x.example"); code != 2 || !strings.Contains(errOut, "--public") {
		t.Errorf("--host without --public: %d %q", code, errOut)
	}
}
