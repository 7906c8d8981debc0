package ui

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2/lang"

	"carrier/auth"
	"carrier/internal/app"
	"carrier/internal/app/photos"
	"carrier/internal/delivery"
	"carrier/transfer"
)

// A failure reaches Carrier in the words of whoever refused: the engine
// ("the server answered 403 Forbidden (PERMISSION_DENIED): ..."), Google
// or the sandbox (their JSON error's message), the token endpoint
// (invalid_grant). Those words are English and say nothing of what to do
// in the window. So a failed job is shown as a sentence in the person's
// language, chosen by what the failure was (the engine's transfer.Failure:
// its code, the HTTP status, Google's reason), saying what happened and
// what to do; the refusal's own text stays under it as a detail line,
// untranslated, since it is what a search or a support question needs.

// Kinds of failure, each with its sentence in failureSentence.
const (
	failSignIn      = "signin"      // the sign-in is dead: invalid_grant, 401, no credential
	failScope       = "scope"       // the sign-in does not allow it: insufficientPermissions
	failForbidden   = "forbidden"   // 403 for another reason
	failNotFound    = "notfound"    // 404/410: what the upload goes to is gone
	failTooLarge    = "toolarge"    // 413, uploadTooLarge
	failStorage     = "storage"     // storageQuotaExceeded: the account's storage is full
	failDaily       = "daily"       // a quota per day (dailyLimitExceeded)
	failQuota       = "quota"       // quotaExceeded, RESOURCE_EXHAUSTED
	failRateLimit   = "ratelimit"   // rateLimitExceeded, 429, still refused after the retries
	failServer      = "server"      // 5xx, still failing after the retries
	failGaveUp      = "gaveup"      // the engine gave up: the network or the server kept failing
	failChanged     = "changed"     // the file changed since its upload began
	failMaybeSent   = "maybesent"   // no answer came after the bytes went
	failNotVerified = "notverified" // the server holds other bytes than the file's
	failBadRequest  = "badrequest"  // 400: the server refused what was sent
	failRefused     = "refused"     // another HTTP status
	failOther       = "other"       // no status, no cause: the detail says it
)

// failure is what a failed job's row says.
type failure struct {
	kind   string
	status int // the HTTP status, 0 when none is known
}

// Google's reasons that the words tell apart within a code.
var (
	scopeReasons     = []string{"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"}
	rateLimitReasons = []string{"rateLimitExceeded", "userRateLimitExceeded"}
)

// classifyFailure says what kind of failure a job's is, from the failure
// the engine recorded (its code, the HTTP status, Google's reason).
func classifyFailure(fl *transfer.Failure) failure {
	if fl == nil {
		return failure{kind: failOther}
	}
	f := func(kind string) failure { return failure{kind: kind, status: fl.Status} }
	switch fl.Code {
	case transfer.FailSourceChanged:
		return f(failChanged)
	case transfer.FailMaybeSent:
		return f(failMaybeSent)
	case transfer.FailNotVerified:
		return f(failNotVerified)
	case transfer.FailDailyQuota:
		return f(failDaily)
	case transfer.FailSignIn:
		return f(failSignIn)
	case transfer.FailTooLarge:
		return f(failTooLarge)
	case transfer.FailNotFound:
		return failure{kind: failNotFound, status: cmp.Or(fl.Status, 404)} // the sentence names a status
	case transfer.FailQuota:
		if fl.Reason == "storageQuotaExceeded" {
			return f(failStorage)
		}
		return f(failQuota)
	case transfer.FailGaveUp:
		switch {
		case fl.Status == 429 || slices.Contains(rateLimitReasons, fl.Reason):
			return f(failRateLimit)
		case fl.Status >= 500:
			return f(failServer)
		}
		return f(failGaveUp)
	case transfer.FailRefused:
		switch {
		case slices.Contains(scopeReasons, fl.Reason):
			return f(failScope)
		case fl.Status == 403:
			return f(failForbidden)
		case fl.Status == 400:
			return f(failBadRequest)
		case fl.Status != 0:
			return f(failRefused)
		}
	}
	return f(failOther)
}

// failureSentence is the failure said in the person's language: what
// happened, and what to do in the window. server names the server the
// job talked to (serverName).
func failureSentence(fl failure, server string) string {
	d := w{"Server": server, "Status": fl.status}
	switch fl.kind {
	case failSignIn:
		return lang.X("fail.signin", "The sign-in is no longer accepted: it expired or was revoked. Sign in again on the Account screen, then press Retry.")
	case failScope:
		return lang.X("fail.scope", "The sign-in does not allow Carrier to do this. Sign in again on the Account screen and allow what Carrier asks for, then press Retry.")
	case failForbidden:
		return lang.X("fail.forbidden", "{{.Server}} refused the upload ({{.Status}}): this account may not do it. Check the account, or send as another, then press Retry.", d)
	case failNotFound:
		return lang.X("fail.notfound", "{{.Server}} no longer has what the upload goes to ({{.Status}}): it may have been deleted. Send it again.", d)
	case failTooLarge:
		return lang.X("fail.toolarge", "The file is larger than {{.Server}} takes. Send it as a Drive link, or make it smaller.", d)
	case failStorage:
		return lang.X("fail.storage", "Your Google storage is full (Gmail, Drive and Photos share it). Free some space, then press Retry.")
	case failDaily:
		return lang.X("fail.daily", "Google's quota for the day is used up. It resets at midnight, Pacific time: press Retry after that.")
	case failQuota:
		return lang.X("fail.quota", "The account's quota at Google is used up for now. Wait an hour or so, then press Retry.")
	case failRateLimit:
		return lang.X("fail.ratelimit", "{{.Server}} kept asking Carrier to slow down. Wait a few minutes, then press Retry.", d)
	case failServer:
		return lang.X("fail.server", "{{.Server}} kept having a problem ({{.Status}}). Press Retry later: the upload goes on where it stopped.", d)
	case failGaveUp:
		return lang.X("fail.gaveup", "The server or the network kept failing, so Carrier stopped trying. Press Retry to go on where it stopped.")
	case failChanged:
		return lang.X("fail.changed", "The file changed after its upload began, so Carrier stopped rather than send a mix of old and new. Add the file again if its new content is what you want.")
	case failMaybeSent:
		return lang.X("fail.maybesent", "The upload went out but no answer came: it may or may not have arrived. Check the destination; if it is missing, press Retry to send it again.")
	case failNotVerified:
		return lang.X("fail.notverified", "The copy at the destination is not the file: its checksum differs. Add the file again.")
	case failBadRequest:
		return lang.X("fail.badrequest", "{{.Server}} refused what Carrier sent ({{.Status}}). Its words are below.", d)
	case failRefused:
		return lang.X("fail.refused", "{{.Server}} refused the upload ({{.Status}}). Its words are below.", d)
	}
	return lang.X("fail.other", "The upload failed. What went wrong is below.")
}

// detailLine is a refusal's own text as a line under the sentence:
// untranslated, made safe (app.Printable drops the controls a server
// could reorder the line with), and opened with a left-to-right mark so
// that the line reads left to right even in a right-to-left window and
// even when it starts with a Persian file name.
func detailLine(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return string(lrm) + windowText(text)
}

// failureWords is a failed job's words: the sentence, then the detail
// line.
func failureWords(snap transfer.Snapshot) string { return failureWordsAs(snap, guessRole(snap)) }

// failureWordsAs is failureWords of a job in role r of its delivery.
func failureWordsAs(snap transfer.Snapshot, r delivery.Role) string {
	fl := classifyFailure(snap.Failure)
	s := failureSentence(fl, serverName(snap.URL))
	if fl.kind == failChanged && snap.Path != "" && !isMessage(r) {
		s = changedWords(snap)
	}
	if reset, ok := photos.QuotaStopped(snap); ok {
		// The window's QuotaWait sends a Photos job on by itself at the
		// reset: "press Retry" would not be true.
		s = lang.X("fail.daily.photos", "Google Photos' quota for the day is used up. Carrier goes on by itself when it resets, at {{.Time}}.", w{"Time": reset.Local().Format("15:04")})
	}
	if d := detailLine(snap.Error); d != "" {
		s += "\n" + d
	}
	return s
}

// changedHow says how a file changed (the Reason of the engine's
// FailSourceChanged), in the person's language; "" for a way it does not
// name.
func changedHow(how string) string {
	switch how {
	case transfer.ChangedSize:
		return lang.X("fail.changed.size", "its size is not what it was")
	case transfer.ChangedModified:
		return lang.X("fail.changed.time", "it was saved again (its modification time changed), even if its bytes may be the same")
	case transfer.ChangedWritten:
		return lang.X("fail.changed.written", "it was written to")
	case transfer.ChangedContent:
		return lang.X("fail.changed.content", "its content is different")
	}
	return ""
}

// changedWords says which file changed after its upload began, and how:
// Retry would stop the same way, so the way on is the file sent again.
func changedWords(snap transfer.Snapshot) string {
	how := ""
	if snap.Failure != nil {
		how = changedHow(snap.Failure.Reason)
	}
	if how == "" {
		how = lang.X("fail.changed.content", "its content is different")
	}
	return lang.X("fail.changed.named", "{{.Name}} changed after its upload began: {{.How}}. Carrier stopped rather than send a mix of old and new, and Retry would stop the same way: send the file again (for a message, Reopen in Compose) if its new content is what you want.",
		w{"Name": app.Printable(filepath.Base(snap.Path)), "How": how})
}

// retryCannotMend reports whether Retry on a job that failed this way
// would fail the same way: the file changed (its size and times are
// compared, so even the same bytes put back fail), the copy at the
// destination is not the file, what the upload goes to is gone, Google
// Photos dropped the uploaded bytes, or the file is too large. The row
// does not offer Retry then; a message's offers Reopen in Compose.
func retryCannotMend(snap transfer.Snapshot) bool {
	switch classifyFailure(snap.Failure).kind {
	case failChanged, failNotVerified, failNotFound, failTooLarge:
		return true
	}
	return false
}

// signInFailedWords says in the person's language why a sign-in did not happen,
// by the cause auth names, with auth's own words, which say more (the
// server's refusal, how long the browser was waited for), as the detail
// line.
func signInFailedWords(err error) string {
	var s string
	switch {
	case errors.Is(err, auth.ErrDenied):
		s = lang.X("signin.denied", "Not signed in: access was not granted in the browser. Nothing was saved; sign in again and choose Allow.")
	case errors.Is(err, auth.ErrStateMismatch):
		s = lang.X("signin.other", "Not signed in: another sign-in tab answered. Close the other sign-in tabs and sign in again; nothing was saved.")
	case errors.Is(err, auth.ErrTimeout):
		s = lang.X("signin.timeout", "Not signed in: no answer came from the browser. Was its sign-in window closed? Nothing was saved; sign in again.")
	case errors.Is(err, context.Canceled):
		s = lang.X("signin.stopped", "Not signed in: the sign-in was stopped before the browser answered. Nothing was saved.")
	default:
		s = lang.X("signin.failed", "Not signed in. What went wrong is below; nothing was saved.")
	}
	return s + "\n" + detailLine(err.Error())
}

// scopeAllows is what a scope lets Carrier do, in the person's language;
// a scope this table does not know keeps auth's English.
func scopeAllows(scope, english string) string {
	switch scope {
	case auth.ScopeGmailSend:
		return lang.X("scope.gmail.send", "send mail as you; Carrier cannot read your mail with it")
	case auth.ScopeGmailCompose:
		return lang.X("scope.gmail.compose", "make, change and send drafts (asked for when you save a draft)")
	case auth.ScopeGmailInsert:
		return lang.X("scope.gmail.insert", "put messages into your mailbox without sending them, as when you import old mail into Gmail")
	case auth.ScopeDriveFile:
		return lang.X("scope.drive.file", "upload files too large to attach to your Drive and share them as links; only the files Carrier made, none of your others")
	case auth.ScopePhotosAppend:
		return lang.X("scope.photos.append", "add pictures and videos to Google Photos and make albums; it reads none of your photos")
	case auth.ScopeTimeline:
		return lang.X("scope.timeline", "post to the Mirror timeline")
	case "openid email":
		return lang.X("scope.email", "learn your address, to name the account")
	}
	return english
}

// clientFileWords says in the person's language why a client file is
// refused (auth.GoogleConfig's checks); auth's own words, which name the
// way to a right one, are the detail the assistant keeps behind Details.
func clientFileWords(text string) (sentence, detail string) {
	var s string
	switch {
	case strings.Contains(text, `"Web application" client`):
		s = lang.X("assistant.bad.web", "Not this file: it is for a \"Web application\" client, whose sign-ins cannot come back to this computer. Make a \"Desktop app\" client as step 1 says.")
	case strings.Contains(text, "service account"):
		s = lang.X("assistant.bad.service", "Not this file: it is a service account's key, which cannot sign a person in. Make a \"Desktop app\" client as step 1 says.")
	case strings.Contains(text, "is empty"):
		s = lang.X("assistant.bad.empty", "Not this file: it is empty.")
	case strings.Contains(text, "is not the JSON"):
		s = lang.X("assistant.bad.json", "Not this file: it is not the JSON the Cloud Console downloads for an OAuth client.")
	case strings.Contains(text, `no "installed" client`):
		s = lang.X("assistant.bad.installed", "Not this file: it holds no \"Desktop app\" client. Make one as step 1 says.")
	case strings.Contains(text, "no client_id"):
		s = lang.X("assistant.bad.clientid", "Not this file: it has no client ID. Download it again from the Cloud Console.")
	case strings.Contains(text, "as an OAuth server"):
		s = lang.X("assistant.bad.server", "Not this file: it sends sign-ins to a server that is not Google's. Download it again from the Cloud Console.")
	default:
		s = lang.X("assistant.bad", "Not this file.")
	}
	return s, detailLine(text)
}

// fyneKeys are the words of Fyne's own dialogs and menus (lang.L in Fyne's
// code: "Cancel", "OK", "Yes", "No", ...). Fyne v2.8.1 has no Persian,
// Hebrew or Arabic catalogue; its lang package looks every key up in one
// bundle, to which Carrier adds its catalogues, so Carrier's catalogues
// carry these keys too. Filed under the locale Carrier chose, they also
// make a dialog's buttons speak the chosen language rather than the
// system's. TestEveryKeyInEveryLanguage wants them in every catalogue.
var fyneKeys = map[string]string{ // key: its English
	"Cancel": "Cancel", "Confirm": "Confirm", "Copy": "Copy", "Create Folder": "Create Folder", "Cut": "Cut",
	"Error": "Error", "Favourites": "Favourites", "New Folder": "New Folder", "No": "No", "OK": "OK",
	"Open": "Open", "Paste": "Paste", "Quit": "Quit", "Redo": "Redo", "Save": "Save", "Select all": "Select all",
	"Show Hidden Files": "Show Hidden Files", "Undo": "Undo", "Yes": "Yes",
	// The file picker's, looked up with lang.X.
	"file.name": "Name", "file.parent": "Parent",
}

// noAnswerWords says in the person's language what became of a request
// that got no answer, from the engine's words for it (transfer.NetError:
// "the connection dropped: ...", "could not reach the server: ...", or a
// request it abandoned itself).
func noAnswerWords(reason, server string) string {
	switch {
	case strings.HasPrefix(reason, "the connection dropped"):
		return lang.X("noanswer.dropped", "The connection dropped")
	case strings.HasPrefix(reason, "could not reach the server"):
		return lang.X("noanswer.unreachable", "Could not reach {{.Server}}", w{"Server": server})
	case strings.HasPrefix(reason, "no progress within the stall timeout"):
		return lang.X("noanswer.stalled", "Nothing moved for too long, so Carrier asked again")
	case strings.HasPrefix(reason, "slower than "):
		return lang.X("noanswer.slow", "The upload went slower than the least speed set, so Carrier asked again")
	case strings.HasPrefix(reason, "the system woke from sleep"):
		return lang.X("noanswer.woke", "The computer woke or its network changed, so Carrier asked again")
	}
	return lang.X("noanswer.other", "{{.Server}} gave no answer Carrier could use", w{"Server": server})
}
