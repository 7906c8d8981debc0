package transfer

import "testing"

// A refusal's words: what kind of answer it was, Google's status word in
// brackets when it gave one, and its own words after a colon.
func TestAPIErrorWords(t *testing.T) {
	for _, c := range []struct {
		e    APIError
		want string
	}{
		{APIError{Code: 403, Status: "PERMISSION_DENIED", Message: "no access"}, "the server answered 403 Forbidden (PERMISSION_DENIED): no access"},
		{APIError{Code: 404}, "the server answered 404 Not Found"},
		{APIError{Code: 400, Message: "bad"}, "the server answered 400 Bad Request: bad"},
		{APIError{Code: 503, Status: "UNAVAILABLE"}, "the server is busy (it answered 503 Service Unavailable) (UNAVAILABLE)"},
		{APIError{Code: 429, Message: "slow down"}, "the server asks to slow down (it answered 429 Too Many Requests): slow down"},
		{APIError{Code: 403, Message: "Quota exceeded: requests per day"}, "the server's quota for the day is used up (it answered 403 Forbidden): Quota exceeded: requests per day"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}
