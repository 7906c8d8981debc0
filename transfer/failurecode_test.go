package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
)

// googleBody is Google's JSON error with one errors[].reason.
func googleBody(code int, status, reason, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "status": status,
		"errors": []any{map[string]any{"message": msg, "reason": reason}},
	}})
	return b
}

// Every way a job ends reads as its code, with the HTTP status and
// Google's reason of the refusal behind it, built from the errors as the
// engine builds them.
func TestFailureOfEveryPath(t *testing.T) {
	refused := func(code int, status, reason, msg string) error {
		return &permanent{parseAPIError(code, googleBody(code, status, reason, msg))}
	}
	gaveUp := func(cause error) error {
		return fmt.Errorf("%w: gave up after %d tries in a row without progress; the session is kept: %w", ErrGaveUp, 6, cause)
	}
	netDown := netError("send bytes 0-9", "www.googleapis.com/upload", &net.OpError{Op: "dial", Err: errors.New("connection refused")})
	cases := []struct {
		name string
		err  error
		want Failure
	}{
		{"403 with a reason", refused(403, "PERMISSION_DENIED", "insufficientPermissions", "Request had insufficient authentication scopes."), Failure{FailRefused, 403, "insufficientPermissions"}},
		{"403 forbidden", refused(403, "PERMISSION_DENIED", "forbidden", "The caller does not have permission"), Failure{FailRefused, 403, "forbidden"}},
		{"400", refused(400, "INVALID_ARGUMENT", "badContent", "Invalid To header"), Failure{FailRefused, 400, "badContent"}},
		{"404", refused(404, "NOT_FOUND", "notFound", "File not found: 1AbC."), Failure{FailNotFound, 404, "notFound"}},
		{"404 without Google's form", &permanent{parseAPIError(404, []byte("<html>Not Found</html>"))}, Failure{FailNotFound, 404, ""}},
		{"410", refused(410, "", "gone", "gone"), Failure{FailNotFound, 410, "gone"}},
		{"413", refused(413, "OUT_OF_RANGE", "uploadTooLarge", "Maximum upload size is 36700160 bytes"), Failure{FailTooLarge, 413, "uploadTooLarge"}},
		{"uploadTooLarge as a 400", refused(400, "INVALID_ARGUMENT", "uploadTooLarge", "too large"), Failure{FailTooLarge, 400, "uploadTooLarge"}},
		{"quotaExceeded", refused(403, "PERMISSION_DENIED", "quotaExceeded", "Quota exceeded for quota metric 'Queries'"), Failure{FailQuota, 403, "quotaExceeded"}},
		{"storageQuotaExceeded", refused(403, "PERMISSION_DENIED", "storageQuotaExceeded", "The user's Drive storage quota has been exceeded."), Failure{FailQuota, 403, "storageQuotaExceeded"}},
		{"RESOURCE_EXHAUSTED", &permanent{parseAPIError(400, []byte(`{"error":{"code":400,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded"}}`))}, Failure{FailQuota, 400, "RESOURCE_EXHAUSTED"}},
		{"a quota per day", refused(403, "PERMISSION_DENIED", "dailyLimitExceeded", "Daily Limit Exceeded"), Failure{FailDailyQuota, 403, "dailyLimitExceeded"}},
		{"a quota per day in words", refused(429, "RESOURCE_EXHAUSTED", "", "Quota exceeded for quota metric 'Write requests' per day"), Failure{FailDailyQuota, 429, "RESOURCE_EXHAUSTED"}},
		{"429 retries ran out", gaveUp(parseAPIError(429, googleBody(429, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "Rate Limit Exceeded"))), Failure{FailGaveUp, 429, "rateLimitExceeded"}},
		{"503 retries ran out", gaveUp(parseAPIError(503, []byte("busy"))), Failure{FailGaveUp, 503, ""}},
		{"the network gone", gaveUp(netDown), Failure{FailGaveUp, 0, ""}},
		{"the source changed", changedError("/home/zoe/a.mov", ChangedSize, "its size is now 12 bytes, not 10"), Failure{FailSourceChanged, 0, ChangedSize}},
		{"the source written to", changedError("/home/zoe/a.mov", ChangedWritten, "it was written to (its change time moved)"), Failure{FailSourceChanged, 0, ChangedWritten}},
		{"a one-shot whose answer was lost", &permanent{fmt.Errorf("%w: the connection failed after the whole media upload was sent: %w", ErrMaybeSent, netDown)}, Failure{FailMaybeSent, 0, ""}},
		{"a checksum mismatch", &permanent{fmt.Errorf("%w: /a: its MD5 is x, but the server reports y", ErrNotVerified)}, Failure{FailNotVerified, 0, ""}},
		{"a dead sign-in", &permanent{&credentialsError{&SignInError{Account: "zoe@example.com", Err: errors.New("invalid_grant")}}}, Failure{FailSignIn, 0, ""}},
		{"no credentials", &permanent{&credentialsError{errors.New("no credentials for this server")}}, Failure{FailSignIn, 0, ""}},
		{"401 after a refresh", &permanent{fmt.Errorf("%w even after a refresh: %w", ErrSignIn, parseAPIError(401, googleBody(401, "UNAUTHENTICATED", "authError", "Invalid Credentials")))}, Failure{FailSignIn, 401, "authError"}},
		{"a cancel", ErrCancelled, Failure{FailCancelled, 0, ""}},
		{"a local error", &permanent{&os.PathError{Op: "open", Path: "/a", Err: os.ErrNotExist}}, Failure{FailOther, 0, ""}},
	}
	codes := map[FailureCode]bool{}
	for _, c := range cases {
		got := failureOf(c.err)
		if *got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, *got, c.want)
		}
		codes[got.Code] = true
	}
	for _, c := range []FailureCode{FailGaveUp, FailRefused, FailNotFound, FailTooLarge, FailQuota, FailDailyQuota, FailSourceChanged, FailMaybeSent, FailNotVerified, FailSignIn, FailCancelled, FailOther} {
		if !codes[c] || !c.known() {
			t.Errorf("code %q: no case reads as it, or it is not known", c)
		}
	}
}

// A failed, a parked and a cancelled job each keep their failure in the
// record, through a restart; Retry clears it.
func TestFailureRecordedAndKeptOverRestart(t *testing.T) {
	f := newFake(t)
	f.hook = func(kind string, n int, w http.ResponseWriter, r *http.Request, s *fakeSession) bool {
		if kind == "start" && strings.Contains(r.URL.RawQuery, "refuse") {
			googleError(w, 403, "PERMISSION_DENIED", "storageQuotaExceeded", "The user's Drive storage quota has been exceeded.")
			return true
		}
		if kind == "chunk" {
			f.hold(r)
			return true
		}
		return false
	}
	dead := false
	auth := TokenFunc(func(ctx context.Context, refresh bool) (string, error) {
		if dead {
			return "", &SignInError{Account: "zoe@example.com", Err: errors.New("invalid_grant")}
		}
		return "tok", nil
	})
	dir := t.TempDir()
	h := newHarness(t, Config{StateDir: dir, Auth: auth})
	path, _ := writeFile(t, 1000)
	failed := h.add(Spec{URL: f.url() + "&refuse=1", ContentType: "application/octet-stream", Path: path})
	if e := h.finish(failed); e.Kind != EventFailed {
		t.Fatalf("the refused job: %s", e)
	}
	cancelled := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	if err := h.q.Cancel(context.Background(), cancelled); err != nil {
		t.Fatal(err)
	}
	dead = true
	parked := h.add(Spec{URL: f.url(), ContentType: "application/octet-stream", Path: path})
	if snap, err := h.q.Wait(context.Background(), parked); err != nil || snap.State != StateSignIn {
		t.Fatalf("the job whose sign-in ended: %+v %v", snap, err)
	}
	want := map[string]Failure{
		failed:    {FailQuota, 403, "storageQuotaExceeded"},
		cancelled: {FailCancelled, 0, ""},
		parked:    {FailSignIn, 0, ""},
	}
	check := func(when string, snaps []Snapshot) {
		t.Helper()
		seen := 0
		for _, s := range snaps {
			w, ok := want[s.ID]
			if !ok {
				continue
			}
			seen++
			if s.Failure == nil || *s.Failure != w {
				t.Errorf("%s: job %s (%s): failure %+v, want %+v", when, s.ID, s.State, s.Failure, w)
			}
		}
		if seen != len(want) {
			t.Errorf("%s: %d of the %d jobs", when, seen, len(want))
		}
	}
	check("live", h.q.Jobs())
	h.q.Close()
	h2 := newHarness(t, Config{StateDir: dir, Auth: auth})
	hist, err := h2.q.History()
	if err != nil {
		t.Fatal(err)
	}
	check("after a restart", hist)
	dead = false
	if _, err := h2.q.ResumeJournal(false); err != nil {
		t.Fatal(err)
	}
	if err := h2.q.Retry(context.Background(), failed); err != nil {
		t.Fatal(err)
	}
	if s, _ := h2.q.Job(failed); s.Failure != nil {
		t.Errorf("a retried job keeps its failure: %+v (%s)", s.Failure, s.State)
	}
}

// A record from before Failure gets one from its cause and its text, once,
// as it is read; a code a newer Carrier wrote reads as FailOther.
func TestFailureOfRecordsFromBefore(t *testing.T) {
	base := func(state State, cause, text string, failure string) []byte {
		rec := goodRecord()
		rec.State, rec.Cause, rec.Error, rec.Failure = state, cause, text, nil
		data, err := EncodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		r := map[string]any{}
		json.Unmarshal(data, &r)
		if failure != "" {
			r["failure"] = json.RawMessage(failure)
		}
		b, _ := json.Marshal(r)
		return b
	}
	cases := []struct {
		name string
		data []byte
		want *Failure
	}{
		{"403 scopes", base(StateFailed, "", "the server answered 403 Forbidden (PERMISSION_DENIED): Request had insufficient authentication scopes.", ""), &Failure{FailRefused, 403, "insufficientPermissions"}},
		{"404", base(StateFailed, "", "the server answered 404 Not Found (NOT_FOUND): File not found: 1AbC.", ""), &Failure{FailNotFound, 404, "NOT_FOUND"}},
		{"413", base(StateFailed, "", "the server answered 413 Request Entity Too Large (OUT_OF_RANGE): Maximum upload size is 36700160 bytes", ""), &Failure{FailTooLarge, 413, "uploadTooLarge"}},
		{"storage", base(StateFailed, "", "the server answered 403 Forbidden (PERMISSION_DENIED): The user's Drive storage quota has been exceeded.", ""), &Failure{FailQuota, 403, "storageQuotaExceeded"}},
		{"RESOURCE_EXHAUSTED", base(StateFailed, "", "the server answered 400 Bad Request (RESOURCE_EXHAUSTED): Quota exceeded", ""), &Failure{FailQuota, 400, "quotaExceeded"}},
		{"gave up on a 503", base(StateFailed, "gave-up", "the server or the network kept failing: the server is busy (it answered 503 Service Unavailable)", ""), &Failure{FailGaveUp, 503, ""}},
		{"daily", base(StateFailed, "daily-quota", "the server's quota for the day is used up (it answered 403 Forbidden): Daily Limit Exceeded", ""), &Failure{FailDailyQuota, 403, "dailyLimitExceeded"}},
		{"changed", base(StateFailed, "source-changed", "the file changed since its upload began (/a: its size is now 12)", ""), &Failure{FailSourceChanged, 0, ChangedSize}},
		{"maybe sent", base(StateFailed, "maybe-sent", "the upload may or may not have arrived: EOF", ""), &Failure{FailMaybeSent, 0, ""}},
		{"not verified", base(StateFailed, "not-verified", "the server holds other bytes than the file's: md5", ""), &Failure{FailNotVerified, 0, ""}},
		{"invalid_grant", base(StateFailed, "", `cannot refresh: oauth2: "invalid_grant" "Token has been expired or revoked."`, ""), &Failure{FailSignIn, 0, "invalid_grant"}},
		{"no credentials", base(StateFailed, "", "cannot get credentials for the upload: no credentials for this server", ""), &Failure{FailSignIn, 0, ""}},
		{"parked", base(StateSignIn, "", "a sign-in is needed (zoe@example.com)", ""), &Failure{FailSignIn, 0, ""}},
		{"cancelled", base(StateCancelled, "", "", ""), &Failure{FailCancelled, 0, ""}},
		{"local", base(StateFailed, "", "cannot open /a: no such file or directory", ""), &Failure{FailOther, 0, ""}},
		{"paused", base(StatePaused, "", "", ""), nil},
		{"queued", base(StateQueued, "", "", ""), nil},
		{"a newer Carrier's code", base(StateFailed, "", "x", `{"code":"teleported","status":451,"reason":"r"}`), &Failure{FailOther, 451, "r"}},
		{"kept as written", base(StateFailed, "", "the server answered 404 Not Found", `{"code":"refused","status":400}`), &Failure{FailRefused, 400, ""}},
	}
	for _, c := range cases {
		r, err := DecodeRecord(c.data)
		if err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
			continue
		}
		if (r.Failure == nil) != (c.want == nil) || r.Failure != nil && *r.Failure != *c.want {
			t.Errorf("%s: %+v, want %+v", c.name, r.Failure, c.want)
		}
	}
}
