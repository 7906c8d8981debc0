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
		{transfer.Snapshot{State: transfer.StateFailed, Error: "the server or the network kept failing: EOF", Cause: transfer.ErrGaveUp}, "Press Retry to go on where it stopped.\n\u200ethe server or the network kept failing: EOF"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrMaybeSent}, "press Retry to send it again"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrSignIn}, "Account screen"},
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrDailyQuota}, "resets at midnight, Pacific time: press Retry after that"},
		// A Photos call goes on by itself at the reset (QuotaWait), so it
		// is not told to press Retry.
		{transfer.Snapshot{State: transfer.StateFailed, Error: "x", Cause: transfer.ErrDailyQuota, URL: "https://photoslibrary.googleapis.com/v1/mediaItems:batchCreate", Updated: now},
			"Carrier goes on by itself when it resets, at " + app.PhotosDailyReset(now).Local().Format("15:04")},
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
	failed := jobView{snap: transfer.Snapshot{State: transfer.StateFailed, Error: "cannot get credentials for the upload: " + app.ErrNoCredentials.Error()}}
	if got := stateWords(failed, now); strings.Contains(got, "carrier ") || !strings.Contains(got, "Account screen") {
		t.Errorf("a failure for want of a sign-in: %q", got)
	}
	held := jobView{snap: transfer.Snapshot{State: transfer.StateRetrying}, held: true, retryReason: "Offline: waiting for the network", retryAt: now.Add(time.Minute)}
	if got := stateWords(held, now); got != "Offline: waiting for the network" {
		t.Errorf("held: %q (no countdown while the system holds uploads)", got)
	}
}

// failureCases are refusals as they reach a row: the engine's named
// cause, the text the journal keeps, and while live the error itself.
var failureCases = []struct {
	name  string
	cause error
	text  string
	live  error
	kind  string
}{
	{"sign-in refused", transfer.ErrSignIn, "the server refused the credentials: the server no longer accepts the sign-in of a@example.com at https://www.googleapis.com (invalid_grant: it was revoked, expired or its client changed); sign in again", nil, failSignIn},
	{"invalid_grant", nil, `cannot refresh: oauth2: "invalid_grant" "Token has been expired or revoked."`, nil, failSignIn},
	{"401", nil, "the server answered 401 Unauthorized (UNAUTHENTICATED): Request had invalid authentication credentials.", nil, failSignIn},
	{"no credentials", nil, "cannot get credentials for the upload: " + app.ErrNoCredentials.Error(), nil, failSignIn},
	{"insufficientPermissions", nil, "the server answered 403 Forbidden (PERMISSION_DENIED): Request had insufficient authentication scopes.", &transfer.APIError{Code: 403, Status: "PERMISSION_DENIED", Reasons: []string{"insufficientPermissions"}}, failScope},
	{"insufficient scopes, after a restart", nil, "the server answered 403 Forbidden (PERMISSION_DENIED): Request had insufficient authentication scopes.", nil, failScope},
	{"forbidden", nil, "the server answered 403 Forbidden (PERMISSION_DENIED): The caller does not have permission", &transfer.APIError{Code: 403, Reasons: []string{"forbidden"}}, failForbidden},
	{"notFound", nil, "the server answered 404 Not Found (NOT_FOUND): File not found: 1AbC.", nil, failNotFound},
	{"notFound, live, no status in the text", nil, "File not found: 1AbC.", &transfer.APIError{Reasons: []string{"notFound"}}, failNotFound},
	{"uploadTooLarge", nil, "the server answered 413 Request Entity Too Large (OUT_OF_RANGE): Maximum upload size is 36700160 bytes", &transfer.APIError{Code: 413, Reasons: []string{"uploadTooLarge"}}, failTooLarge},
	{"storageQuotaExceeded", nil, "the server answered 403 Forbidden (PERMISSION_DENIED): The user's Drive storage quota has been exceeded.", &transfer.APIError{Code: 403, Reasons: []string{"storageQuotaExceeded"}}, failStorage},
	{"Photos item out of storage", nil, "Google Photos did not create the item (status 8): Insufficient storage: the account's Google storage has 0 bytes free and this item needs 12.", nil, failStorage},
	{"daily quota", transfer.ErrDailyQuota, "the server's quota for the day is used up (it answered 403 Forbidden): Daily Limit Exceeded", nil, failDaily},
	{"dailyLimitExceeded, live", nil, "the server answered 403 Forbidden: Limit Exceeded", &transfer.APIError{Code: 403, Reasons: []string{"dailyLimitExceeded"}}, failDaily},
	{"quotaExceeded", nil, "the server answered 403 Forbidden: Quota exceeded for quota metric 'Queries'", &transfer.APIError{Code: 403, Reasons: []string{"quotaExceeded"}}, failQuota},
	{"RESOURCE_EXHAUSTED", nil, "the server answered 400 Bad Request (RESOURCE_EXHAUSTED): Quota exceeded", nil, failQuota},
	{"rateLimitExceeded", nil, "the server asks to slow down (it answered 429 Too Many Requests) (RESOURCE_EXHAUSTED): Rate Limit Exceeded", &transfer.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Reasons: []string{"rateLimitExceeded"}}, failRateLimit},
	{"5xx kept failing", transfer.ErrGaveUp, "the server or the network kept failing: the server is busy (it answered 503 Service Unavailable)", nil, failServer},
	{"network kept failing", transfer.ErrGaveUp, "the server or the network kept failing: the connection dropped: send bytes 0-9 to www.googleapis.com/upload: EOF", nil, failGaveUp},
	{"source changed", transfer.ErrSourceChanged, "the file changed since its upload began: its size is now 12", nil, failChanged},
	{"may have arrived", transfer.ErrMaybeSent, "the upload may or may not have arrived: EOF", nil, failMaybeSent},
	{"not verified", transfer.ErrNotVerified, "the server holds other bytes than the file's: md5 differs", nil, failNotVerified},
	{"bad request", nil, "the server answered 400 Bad Request (INVALID_ARGUMENT): Invalid To header", nil, failBadRequest},
	{"Photos upload token gone", nil, "Google Photos did not create the item (status 3): The upload token expired (tokens last a day after their upload). Upload the bytes again.", nil, failPhotosToken},
	{"Photos item refused", nil, "Google Photos did not create the item (status 3): The album holds 20000 media items, as many as an album can.", nil, failPhotosItem},
	{"another status", nil, "the server answered 409 Conflict (ABORTED): try again", nil, failRefused},
	{"no status", nil, "cannot open /home/zoe/a.mov: no such file or directory", nil, failOther},
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
		fl := classifyFailure(c.cause, c.text, c.live)
		if fl.kind != c.kind {
			t.Errorf("%s: read as %q, want %q", c.name, fl.kind, c.kind)
		}
		if strings.Contains(failureSentence(fl, "The server"), "(0)") {
			t.Errorf("%s: the sentence names no status: %q", c.name, failureSentence(fl, "The server"))
		}
		kinds[c.kind] = true
	}
	if len(kinds) != 19 {
		t.Errorf("the cases cover %d kinds of failure, want all 19", len(kinds))
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
			fl := classifyFailure(c.cause, c.text, c.live)
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
			row := failureWords(transfer.Snapshot{State: transfer.StateFailed, Cause: c.cause, Error: c.text, URL: "https://www.googleapis.com/upload/drive/v3/files"}, c.live)
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
// right; the reason comes from the live failure (Google's
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
	e := fu.event(transfer.EventFailed, "j1", func(s *transfer.Snapshot) { s.State, s.Error = transfer.StateFailed, text })
	e.Err = &transfer.APIError{Code: 403, Status: "PERMISSION_DENIED", Reasons: []string{"storageQuotaExceeded"}, Message: "The user has exceeded their Drive storage quota"}
	events <- e
	fa := readCatalogue(t, "fa")["fail.storage"].(string)
	row := h.u.transfers.rows["j1"]
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
