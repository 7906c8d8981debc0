package sandbox

import (
	"strings"
	"testing"
)

// Every control of the sandbox's own reads at most 4 KiB and says so; the
// two that take any of several fields show an example of the body when it
// is not a JSON object.
func TestControlsRefuseBodies(t *testing.T) {
	e := newEnv(t)
	long := `{"x": "` + strings.Repeat("a", 5000) + `"}`
	for _, c := range []struct{ method, path string }{
		{"PUT", "/sandbox/v1/drive"},
		{"PUT", "/sandbox/v1/auth"},
		{"PUT", "/sandbox/v1/photos"},
		{"PUT", "/sandbox/v1/sessions"},
		{"POST", "/sandbox/v1/accounts"},
	} {
		r := e.control(c.method, c.path, long)
		if r.code != 400 || !strings.Contains(r.errMessage(t), "The body is too long or unreadable") {
			t.Errorf("%s %s, 5,000 bytes: %d %s", c.method, c.path, r.code, r.body)
		}
	}
	for path, example := range map[string]string{
		"/sandbox/v1/drive": `{"limit": 1000000, "otherUsage": 0}`,
		"/sandbox/v1/auth":  `{"refreshTokenTTL": "168h", "refreshTokenLimit": 100, "sessionNeedsToken": true, "signInAccount": "you@carrier.sandbox"}`,
	} {
		r := e.control("PUT", path, `[1]`)
		if msg := r.errMessage(t); r.code != 400 || !strings.HasPrefix(msg, "The body must be JSON such as "+example+": ") {
			t.Errorf("PUT %s, a list: %d %q", path, r.code, msg)
		}
	}
}
