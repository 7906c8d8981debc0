package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/template"
	"time"

	"fyne.io/fyne/v2"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/internal/app/photos"
	"carrier/transfer"
)

// A failure is worded for the window from its cause, and a waiting job
// says why it waits.
func TestStateWordsForCausesAndWaiting(t *testing.T) {
	now := time.Now()
	cases := []struct {
		snap transfer.Snapshot
		want string
	}{
		{transfer.Snapshot{State: transfer.StateFailed, Error: "the server or the network kept failing: EOF", Failure: &transfer.Failure{Code: transfer.FailGaveUp}}, "Press Retry to go on where it stopped.\n\u200ethe server or the network kept failing: EOF"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Failure: &transfer.Failure{Code: transfer.FailMaybeSent}}, "press Retry to send it again"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Failure: &transfer.Failure{Code: transfer.FailSignIn}}, "Account screen"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Failure: &transfer.Failure{Code: transfer.FailDailyQuota}}, "resets at midnight, Pacific time: press Retry after that"},
		// A Photos call goes on by itself at the reset (QuotaWait), so it
		// is not told to press Retry.
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrDailyQuota, Failure: &transfer.Failure{Code: transfer.FailDailyQuota}, URL: "https://photoslibrary.googleapis.com/v1/mediaItems:batchCreate", Updated: now},
			"Carrier goes on by itself when it resets, at " + photos.PhotosDailyReset(now).Local().Format("15:04")},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "bad request"}, "The upload failed. What went wrong is below.\n\u200ebad request"},
		{transfer.Snapshot{State: transfer.StateSignIn, SignInFor: "zoe@example.com", Error: "a sign-in is needed"}, "Sign in to zoe@example.com again to continue"},
		{transfer.Snapshot{State: transfer.StateWaiting}, "Waiting for the uploads it needs to finish first"},
		{transfer.Snapshot{State: transfer.StateWaiting, Blocked: `it needs "a.mov", which failed`}, `Waiting: it needs "a.mov", which failed. Retry that upload, or cancel this one.`},
	}
	for _, c := range cases {
		if got := stateWords(jobView{snap: c.snap}, now); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q in it", c.snap, got, c.want)
		}
	}
	// A retry is worded by its cause: the server's trouble is not the
	// network's.
	retry := func(url string, status int, reason string) jobView {
		return jobView{snap: transfer.Snapshot{State: transfer.StateRetrying, URL: url}, retryStatus: status, retryReason: reason, retryAt: now.Add(8 * time.Second)}
	}
	google := "https://www.googleapis.com/upload/gmail/v1/users/me/messages/send?uploadType=resumable"
	for _, c := range []struct {
		v    jobView
		want string
	}{
		{retry(google, 503, "the server is busy (it answered 503 Service Unavailable)"), "Google's server had a problem (503); retrying in 8 s"},
		{retry(google, 429, "the server asks to slow down"), "Google's server asked Carrier to slow down (429); retrying in 8 s"},
		{retry("http://127.0.0.1:8765/upload/gmail/v1/users/me/messages/send", 500, "x"), "The sandbox had a problem (500); retrying in 8 s"},
		{retry(google, 0, "the connection dropped: send bytes 0-9 to www.googleapis.com/upload: EOF"), "The connection dropped; retrying in 8 s\n\u200ethe connection dropped: send bytes 0-9 to www.googleapis.com/upload: EOF"},
		{retry(google, 0, "could not reach the server: start the upload to www.googleapis.com/upload: dial tcp: connection refused"), "Could not reach Google's server; retrying in 8 s\n\u200ecould not reach the server: start the upload to www.googleapis.com/upload: dial tcp: connection refused"},
		{retry(google, 0, "no progress within the stall timeout, so the request was abandoned (send bytes 0-9 to www.googleapis.com/upload)"), "Nothing moved for too long, so Carrier asked again; retrying in 8 s\n\u200eno progress within the stall timeout, so the request was abandoned (send bytes 0-9 to www.googleapis.com/upload)"},
	} {
		if got := stateWords(c.v, now); got != c.want {
			t.Errorf("status %d: %q, want %q", c.v.retryStatus, got, c.want)
		}
	}
	failed := jobView{snap: transfer.Snapshot{State: transfer.StateFailed, Error: "cannot get credentials for the upload: " + app.ErrNoCredentials.Error(), Failure: &transfer.Failure{Code: transfer.FailSignIn}}}
	if got := stateWords(failed, now); strings.Contains(got, "carrier ") || !strings.Contains(got, "Account screen") {
		t.Errorf("a failure for want of a sign-in: %q", got)
	}
	held := jobView{snap: transfer.Snapshot{State: transfer.StateRetrying}, held: true, retryReason: "Offline: waiting for the network", retryAt: now.Add(time.Minute)}
	if got := stateWords(held, now); got != "Offline: waiting for the network" {
		t.Errorf("held: %q (no countdown while the system holds uploads)", got)
	}
}

// failureCases are failures as they reach a row: the failure the engine
// recorded (code, HTTP status, Google's reason) and the text the journal
// keeps, shown under the sentence.
var failureCases = []struct {
	name    string
	failure *transfer.Failure
	text    string
	kind    string
}{
	{"sign-in refused", &transfer.Failure{Code: transfer.FailSignIn, Status: 401}, "the server refused the credentials: the server no longer accepts the sign-in of a@example.com at https://www.googleapis.com (invalid_grant: it was revoked, expired or its client changed); sign in again", failSignIn},
	{"no credentials", &transfer.Failure{Code: transfer.FailSignIn}, "cannot get credentials for the upload: " + app.ErrNoCredentials.Error(), failSignIn},
	{"insufficientPermissions", &transfer.Failure{Code: transfer.FailRefused, Status: 403, Reason: "insufficientPermissions"}, "the server answered 403 Forbidden (PERMISSION_DENIED): Request had insufficient authentication scopes.", failScope},
	{"forbidden", &transfer.Failure{Code: transfer.FailRefused, Status: 403, Reason: "forbidden"}, "the server answered 403 Forbidden (PERMISSION_DENIED): The caller does not have permission", failForbidden},
	{"notFound", &transfer.Failure{Code: transfer.FailNotFound, Status: 404, Reason: "notFound"}, "the server answered 404 Not Found (NOT_FOUND): File not found: 1AbC.", failNotFound},
	{"notFound without a status", &transfer.Failure{Code: transfer.FailNotFound, Reason: "notFound"}, "File not found: 1AbC.", failNotFound},
	{"uploadTooLarge", &transfer.Failure{Code: transfer.FailTooLarge, Status: 413, Reason: "uploadTooLarge"}, "the server answered 413 Request Entity Too Large (OUT_OF_RANGE): Maximum upload size is 36700160 bytes", failTooLarge},
	{"storageQuotaExceeded", &transfer.Failure{Code: transfer.FailQuota, Status: 403, Reason: "storageQuotaExceeded"}, "the server answered 403 Forbidden (PERMISSION_DENIED): The user's Drive storage quota has been exceeded.", failStorage},
	{"daily quota", &transfer.Failure{Code: transfer.FailDailyQuota, Status: 403, Reason: "dailyLimitExceeded"}, "the server's quota for the day is used up (it answered 403 Forbidden): Daily Limit Exceeded", failDaily},
	{"quotaExceeded", &transfer.Failure{Code: transfer.FailQuota, Status: 403, Reason: "quotaExceeded"}, "the server answered 403 Forbidden: Quota exceeded for quota metric 'Queries'", failQuota},
	{"RESOURCE_EXHAUSTED", &transfer.Failure{Code: transfer.FailQuota, Status: 400, Reason: "RESOURCE_EXHAUSTED"}, "the server answered 400 Bad Request (RESOURCE_EXHAUSTED): Quota exceeded", failQuota},
	{"rateLimitExceeded", &transfer.Failure{Code: transfer.FailGaveUp, Status: 429, Reason: "rateLimitExceeded"}, "the server or the network kept failing: the server asks to slow down (it answered 429 Too Many Requests) (RESOURCE_EXHAUSTED): Rate Limit Exceeded", failRateLimit},
	{"userRateLimitExceeded as a 403", &transfer.Failure{Code: transfer.FailGaveUp, Status: 403, Reason: "userRateLimitExceeded"}, "the server or the network kept failing: the server asks to slow down (it answered 403 Forbidden): User Rate Limit Exceeded", failRateLimit},
	{"5xx kept failing", &transfer.Failure{Code: transfer.FailGaveUp, Status: 503}, "the server or the network kept failing: the server is busy (it answered 503 Service Unavailable)", failServer},
	{"network kept failing", &transfer.Failure{Code: transfer.FailGaveUp}, "the server or the network kept failing: the connection dropped: send bytes 0-9 to www.googleapis.com/upload: EOF", failGaveUp},
	{"source changed", &transfer.Failure{Code: transfer.FailSourceChanged, Reason: transfer.ChangedSize}, "the file changed since its upload began: its size is now 12", failChanged},
	{"may have arrived", &transfer.Failure{Code: transfer.FailMaybeSent}, "the upload may or may not have arrived: EOF", failMaybeSent},
	{"not verified", &transfer.Failure{Code: transfer.FailNotVerified}, "the server holds other bytes than the file's: md5 differs", failNotVerified},
	{"bad request", &transfer.Failure{Code: transfer.FailRefused, Status: 400, Reason: "invalid"}, "the server answered 400 Bad Request (INVALID_ARGUMENT): Invalid To header", failBadRequest},
	{"another status", &transfer.Failure{Code: transfer.FailRefused, Status: 409, Reason: "ABORTED"}, "the server answered 409 Conflict (ABORTED): try again", failRefused},
	{"no status", &transfer.Failure{Code: transfer.FailOther}, "cannot open /home/zoe/a.mov: no such file or directory", failOther},
	{"a code from a newer Carrier", &transfer.Failure{Code: "teleported", Status: 451}, "x", failOther},
	{"none recorded", nil, "x", failOther},
}

// TestFailureTableInEveryLanguage: each cause, status and Google reason is
// read as its kind, and each kind has a sentence of its own in each
// language, the catalogue's, never the English in another language; the
// refusal's own text follows, untranslated, on a line that reads left to
// right.
func TestFailureTableInEveryLanguage(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	kinds := map[string]bool{}
	for _, c := range failureCases {
		fl := classifyFailure(c.failure)
		if fl.kind != c.kind {
			t.Errorf("%s: read as %q, want %q", c.name, fl.kind, c.kind)
		}
		if strings.Contains(failureSentence(fl, "The server"), "(0)") {
			t.Errorf("%s: the sentence names no status: %q", c.name, failureSentence(fl, "The server"))
		}
		kinds[c.kind] = true
	}
	if len(kinds) != 17 {
		t.Errorf("the cases cover %d kinds of failure, want all 17", len(kinds))
	}
	english := map[string]string{}
	for _, code := range []string{"en", "fa", "he", "ar"} {
		useLanguage(code)
		if err := LoadTranslations(); err != nil {
			t.Fatal(err)
		}
		cat := readCatalogue(t, code)
		server := serverName("https://www.googleapis.com/upload/drive/v3/files")
		seen := map[string]string{}
		for _, c := range failureCases {
			fl := classifyFailure(c.failure)
			got := failureSentence(fl, server)
			want := renderTemplate(t, cat["fail."+c.kind].(string), w{"Server": server, "Status": fl.status})
			if got != want {
				t.Errorf("%s, %s: %q, want the catalogue's %q", code, c.name, got, want)
			}
			if code == "en" {
				english[c.kind] = got
			} else if got == english[c.kind] {
				t.Errorf("%s, %s: still English: %q", code, c.name, got)
			}
			if other, ok := seen[got]; ok && other != c.kind {
				t.Errorf("%s: %s and %s read the same: %q", code, c.kind, other, got)
			}
			seen[got] = c.kind
			row := failureWords(transfer.Snapshot{State: transfer.StateFailed, Failure: c.failure, Error: c.text, URL: "https://www.googleapis.com/upload/drive/v3/files"})
			if row != got+"\n\u200e"+windowText(c.text) {
				t.Errorf("%s, %s: the row reads %q, want the sentence, then the text as it came after a left-to-right mark", code, c.name, row)
			}
		}
	}
}

func renderTemplate(t *testing.T, s string, data any) string {
	t.Helper()
	tpl, err := template.New("").Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tpl.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A failed upload's row in a Persian window says what happened in
// Persian, right-aligned, with Google's own words under it read left to
// right; the reason comes from the failure the engine recorded (Google's
// storageQuotaExceeded), which the text alone does not name.
func TestFailedRowInPersian(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	useLanguage("fa")
	if err := LoadTranslations(); err != nil {
		t.Fatal(err)
	}
	url := "https://www.googleapis.com/upload/drive/v3/files?uploadType=resumable"
	fu := &fakeUploads{recs: map[string]transfer.Snapshot{"j1": {ID: "j1", Label: "گزارش.pdf", URL: url, State: transfer.StateRunning, Size: 100}}}
	events := make(chan transfer.Event, 8)
	h := newHarness(t, func(o *harnessOpts) { o.uploads, o.events = fu, events })
	text := "the server answered 403 Forbidden (PERMISSION_DENIED): The user has exceeded their Drive storage quota"
	events <- fu.event(transfer.EventFailed, "j1", func(s *transfer.Snapshot) {
		s.State, s.Error = transfer.StateFailed, text
		s.Failure = &transfer.Failure{Code: transfer.FailQuota, Status: 403, Reason: "storageQuotaExceeded"}
	})
	fa := readCatalogue(t, "fa")["fail.storage"].(string)
	row := h.u.transfers.rowOf("j1")
	// In reading order: the row's label breaks it into lines for its
	// width (TestRightToLeftParagraphWrapsInReadingOrder).
	h.until("the row says the storage is full, in Persian", func() bool { return row.state.AccessibilityLabel() == fa+"\n\u200e"+text })
	if row.state.Alignment != fyne.TextAlignTrailing {
		t.Errorf("the Persian failure is aligned %v, want right", row.state.Alignment)
	}
	// Google's words, left to right, under the sentence, however broken.
	lines := strings.Split(row.state.Text, "\n")
	var english []string
	for _, l := range lines {
		if !needsBidi(l) {
			english = append(english, strings.Trim(l, "\u200e"))
		}
	}
	if strings.Join(english, " ") != text || needsBidi(lines[len(lines)-1]) {
		t.Errorf("Google's words are not kept as they came, left to right, under the sentence: %q", row.state.Text)
	}
}

// A sign-in that did not happen is said by its cause in each language,
// each cause its own sentence, with auth's words after it on a line that
// reads left to right.
func TestSignInFailedWordsInEveryLanguage(t *testing.T) {
	t.Cleanup(func() {
		useLanguage("")
		if err := LoadTranslations(); err != nil {
			t.Error(err)
		}
	})
	cases := []struct {
		err error
		key string
	}{
		{fmt.Errorf("%w (access_denied). Nothing was saved", auth.ErrDenied), "signin.denied"},
		{fmt.Errorf("%w within 5m0s: was the sign-in window closed?", auth.ErrTimeout), "signin.timeout"},
		{fmt.Errorf("%w within 5m0s; 1 answer(s) were ignored because %w", auth.ErrTimeout, auth.ErrStateMismatch), "signin.other"},
		{fmt.Errorf("sign-in stopped before the browser answered: %w", context.Canceled), "signin.stopped"},
		{errors.New("the sign-in server did not accept the authorization code: 400 invalid_grant"), "signin.failed"},
	}
	english := map[string]string{}
	for _, code := range []string{"en", "fa", "he", "ar"} {
		useLanguage(code)
		if err := LoadTranslations(); err != nil {
			t.Fatal(err)
		}
		cat := readCatalogue(t, code)
		for _, c := range cases {
			got := signInFailedWords(c.err)
			want := cat[c.key].(string) + "\n\u200e" + windowText(c.err.Error())
			if got != want {
				t.Errorf("%s, %s: %q, want %q", code, c.key, got, want)
			}
			if code == "en" {
				english[c.key] = got
			} else if got == english[c.key] {
				t.Errorf("%s, %s: still English", code, c.key)
			}
		}
	}
}
