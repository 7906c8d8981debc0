package transfer

import (
	"slices"
	"strings"
	"testing"
)

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

// Which refusals are a day's quota used up (a job fails at once, to be
// resumed after the reset) and which ask to slow down (a backoff).
func TestAPIErrorDailyAndSlowDown(t *testing.T) {
	for _, c := range []struct {
		e           APIError
		daily, slow bool
	}{
		{APIError{Code: 429, Message: "Quota exceeded: requests per day"}, true, true},
		{APIError{Code: 403, Message: "Requests Per Day exceeded"}, true, false},
		{APIError{Code: 400, Status: "RESOURCE_EXHAUSTED", Message: "per day"}, true, false},
		{APIError{Code: 400, Message: "per day"}, false, false},
		{APIError{Code: 500, Message: "per day"}, false, false},
		{APIError{Code: 400, Reasons: []string{"dailyLimitExceeded"}}, true, false},
		{APIError{Code: 429, Message: "per minute"}, false, true},
		{APIError{Code: 403, Status: "RESOURCE_EXHAUSTED", Message: "per minute"}, false, false},
		{APIError{Code: 400, Message: "per minute", slowDown: true}, false, true},
		{APIError{Code: 403, Reasons: []string{"userRateLimitExceeded"}}, false, true},
		{APIError{Code: 403, Reasons: []string{"rateLimitExceeded"}}, false, true},
		{APIError{Code: 400, Reasons: []string{"rateLimitExceeded"}}, false, false},
		{APIError{Code: 403, Reasons: []string{"forbidden"}}, false, false},
	} {
		if got := c.e.daily(); got != c.daily {
			t.Errorf("%+v: a day's quota %v, want %v", c.e, got, c.daily)
		}
		if got := c.e.rateLimited(); got != c.slow {
			t.Errorf("%+v: slow down %v, want %v", c.e, got, c.slow)
		}
	}
}

// Each form a refusal comes in: Google's JSON with any of its message,
// status or errors (the first error's message standing in for a missing
// one; errors' and details' reasons, empty ones left out), or anything
// else (a proxy's page), whose first line is kept, cut at 200 bytes.
func TestAPIErrorForms(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, c := range []struct {
		body    string
		status  string
		message string
		reasons []string
	}{
		{`{"error":{"message":"gone"}}`, "", "gone", nil},
		{`{"error":{"status":"NOT_FOUND"}}`, "NOT_FOUND", "", nil},
		{`{"error":{"errors":[{"reason":"notFound","message":"File not found"},{"message":"second"}]}}`, "", "File not found", []string{"notFound"}},
		{`{"error":{"message":"top","errors":[{"reason":"","message":"inner"}],"details":[{"reason":"RATE_LIMIT_EXCEEDED"},{"reason":""}]}}`, "", "top", []string{"RATE_LIMIT_EXCEEDED"}},
		{`{"error":{"code":400}}`, "", `{"error":{"code":400}}`, nil},
		{`{"other":1}`, "", `{"other":1}`, nil},
		{"  plain words  \nsecond line", "", "plain words", nil},
		{long, "", long, nil},
		{long + "y", "", long + "...", nil},
	} {
		e := parseAPIError(400, []byte(c.body))
		if e.Code != 400 || e.Status != c.status || e.Message != c.message || !slices.Equal(e.Reasons, c.reasons) {
			t.Errorf("%.60q: status %q, message %.80q, reasons %q; want %q, %.80q, %q", c.body, e.Status, e.Message, e.Reasons, c.status, c.message, c.reasons)
		}
	}
}
