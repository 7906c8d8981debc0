package delivery

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"carrier/transfer"
)

const (
	root      = "http://127.0.0.1:4000"
	driveURL  = root + "/upload/drive/v3/files?fields=id%2Cname"
	shareURL  = root + "/drive/v3/files/F1/permissions"
	sendURL   = root + "/upload/gmail/v1/users/me/messages/send"
	insertURL = root + "/upload/gmail/v1/users/me/messages"
	draftURL  = root + "/upload/gmail/v1/users/me/drafts"
	photoURL  = root + "/v1/uploads"
	itemsURL  = root + "/v1/mediaItems:batchCreate"
	postURL   = root + "/upload/mirror/v1/timeline"
)

// snap is a job's snapshot; opts set what else the case needs.
func snap(id, url string, st transfer.State, size, confirmed int64, opts ...func(*transfer.Snapshot)) transfer.Snapshot {
	s := transfer.Snapshot{ID: id, URL: url, State: st, Size: size, Confirmed: confirmed}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func held(why string) func(*transfer.Snapshot) { return func(s *transfer.Snapshot) { s.Held = why } }
func failure(code transfer.FailureCode, status int) func(*transfer.Snapshot) {
	return func(s *transfer.Snapshot) { s.Failure = &transfer.Failure{Code: code, Status: status} }
}
func signIn(acct string) func(*transfer.Snapshot) {
	return func(s *transfer.Snapshot) { s.SignInFor = acct }
}
func where(path string) func(*transfer.Snapshot) { return func(s *transfer.Snapshot) { s.Path = path } }
func cause(err error) func(*transfer.Snapshot)   { return func(s *transfer.Snapshot) { s.Cause = err } }

var reset = t0.Add(15 * time.Hour)

func message(kind Kind, composed bool) Delivery {
	d := Delivery{ID: "d-01", Kind: kind, Created: t0, Account: "ann@example.com", Members: []Member{
		{Job: "f1", Role: RoleDriveFile, File: "/home/ann/big.mov"}, {Job: "s1", Role: RoleDriveShare}, {Job: "m", Role: RoleMessage}}}
	if composed {
		d.Composed = &Composed{To: []string{"bob@example.com"}, Subject: "Report"}
	}
	return d
}

func photos(quota bool) Delivery {
	d := Delivery{ID: "d-02", Kind: KindPhotos, Created: t0, Album: "Trip", Members: []Member{
		{Job: "p1", Role: RolePhoto, File: "/p/1.jpg"}, {Job: "p2", Role: RolePhoto, File: "/p/2.jpg"}, {Job: "c1", Role: RoleItems}}}
	if quota {
		d.QuotaReset = reset
	}
	return d
}

var upload = Delivery{ID: "d-03", Kind: KindUpload, Created: t0, Members: []Member{{Job: "u1", Role: RoleUpload, File: "/home/ann/clip.mp4"}}}

// msgSnaps are a message's file, share and message jobs in these states;
// opts go to the first of them neither done nor waiting.
func msgSnaps(url string, f, s, m transfer.State, opts ...func(*transfer.Snapshot)) []transfer.Snapshot {
	fc := int64(0)
	if f.Active() {
		fc = 40
	}
	out := []transfer.Snapshot{snap("f1", driveURL, f, 100, fc), snap("s1", shareURL, s, 0, 0), snap("m", url, m, 10, 0)}
	for i := range out {
		if out[i].State != transfer.StateDone && out[i].State != transfer.StateWaiting {
			for _, o := range opts {
				o(&out[i])
			}
			break
		}
	}
	return out
}

type want struct {
	phase       Phase
	done, total int
	dest        string
	confirmed   int64
	size        int64
	member      string
	code        transfer.FailureCode
	account     string
	path        string
	held        string
	reset       time.Time
	sendAt      time.Time
	uploadFrom  time.Time
	verbs       []Verb
}

const (
	Q  = transfer.StateQueued
	W  = transfer.StateWaiting
	R  = transfer.StateRunning
	RT = transfer.StateRetrying
	P  = transfer.StatePaused
	S  = transfer.StateSignIn
	M  = transfer.StateMissing
	D  = transfer.StateDone
	F  = transfer.StateFailed
	C  = transfer.StateCancelled
)

var (
	pause, resume, retry, cancel = VerbPause, VerbResume, VerbRetry, VerbCancel
	reopen, signin, anyway, rm   = VerbReopen, VerbSignIn, VerbSendAnyway, VerbRemove
	undo, locate, useFile        = VerbUndo, VerbLocate, VerbUseFile
	sendAt                       = t0.Add(10 * time.Second)
)

func at(t time.Time) func(*transfer.Snapshot) { return func(s *transfer.Snapshot) { s.SendAt = t } }

type statusCase struct {
	name  string
	d     Delivery
	snaps []transfer.Snapshot
	want  want
}

func statusCases() []statusCase {
	mm := message(KindMessage, true)
	dr := message(KindDraft, false)
	twoFiles := message(KindMessage, true)
	twoFiles.Members = append([]Member{{Job: "f2", Role: RoleDriveFile, File: "/home/ann/small.mov"}}, twoFiles.Members...)
	plain := Delivery{ID: "d-04", Kind: KindMessage, Created: t0, Members: []Member{{Job: "m", Role: RoleMessage}}}
	running := func(id, url string, size, conf int64) transfer.Snapshot { return snap(id, url, R, size, conf) }
	return []statusCase{
		// A message with a Drive link.
		{"message queued", mm, msgSnaps(sendURL, Q, W, W), want{phase: PhaseQueued, size: 110, verbs: []Verb{pause, cancel}}},
		{"message uploading", mm, msgSnaps(sendURL, R, W, W), want{phase: PhaseUploading, total: 1, dest: KindDriveUpload, confirmed: 40, size: 110, verbs: []Verb{pause, cancel}}},
		{"message uploading, retrying", mm, msgSnaps(sendURL, RT, W, W), want{phase: PhaseUploading, total: 1, dest: KindDriveUpload, confirmed: 40, size: 110, verbs: []Verb{pause, cancel}}},
		{"message sharing", mm, msgSnaps(sendURL, D, R, W), want{phase: PhaseSharing, confirmed: 100, size: 110, verbs: []Verb{pause, cancel}}},
		{"message sending", mm, []transfer.Snapshot{snap("f1", driveURL, D, 100, 100), snap("s1", shareURL, D, 0, 0), running("m", sendURL, 10, 5)},
			want{phase: PhaseSending, dest: "gmail.send", confirmed: 105, size: 110, verbs: []Verb{pause, cancel}}},
		{"message sent", mm, msgSnaps(sendURL, D, D, D), want{phase: PhaseSent, confirmed: 110, size: 110, verbs: []Verb{rm}}},
		// Undo send: held for its time while its links go, then scheduled.
		{"message uploading in its undo window", mm, []transfer.Snapshot{snap("f1", driveURL, R, 100, 40), snap("s1", shareURL, W, 0, 0), snap("m", sendURL, W, 10, 0, at(sendAt))},
			want{phase: PhaseUploading, total: 1, dest: KindDriveUpload, confirmed: 40, size: 110, sendAt: sendAt, verbs: []Verb{pause, cancel, undo}}},
		{"message scheduled", plain, []transfer.Snapshot{snap("m", sendURL, transfer.StateScheduled, 10, 0, at(sendAt))},
			want{phase: PhaseScheduled, size: 10, sendAt: sendAt, verbs: []Verb{pause, cancel, undo}}},
		{"message scheduled so far ahead that its upload starts later", plain, []transfer.Snapshot{snap("m", sendURL, transfer.StateScheduled, 10, 0, at(sendAt), func(s *transfer.Snapshot) { s.UploadFrom = sendAt.Add(-transfer.ScheduleLead) })},
			want{phase: PhaseScheduled, size: 10, sendAt: sendAt, uploadFrom: sendAt.Add(-transfer.ScheduleLead), verbs: []Verb{pause, cancel, undo}}},
		{"message sent after its window", plain, []transfer.Snapshot{snap("m", sendURL, D, 10, 10, at(sendAt))}, want{phase: PhaseSent, confirmed: 10, size: 10, verbs: []Verb{rm}}},
		{"message undone", plain, []transfer.Snapshot{snap("m", sendURL, C, 10, 0, at(sendAt))}, want{phase: PhaseCancelled, size: 10, verbs: []Verb{rm}}},
		{"message put in the mailbox", plain, []transfer.Snapshot{snap("m", insertURL, D, 10, 10)}, want{phase: PhaseDone, confirmed: 10, size: 10, verbs: []Verb{rm}}},
		{"message sent, its parts forgotten", mm, []transfer.Snapshot{snap("m", sendURL, D, 10, 10)}, want{phase: PhaseSent, confirmed: 10, size: 10, verbs: []Verb{rm}}},
		{"message paused", mm, msgSnaps(sendURL, P, W, W), want{phase: PhasePaused, size: 110, verbs: []Verb{pause, resume, cancel}}},
		{"message held by a metered connection", mm, msgSnaps(sendURL, Q, W, W, held(transfer.HeldMetered)),
			want{phase: PhaseHeld, member: "f1", held: transfer.HeldMetered, size: 110, verbs: []Verb{pause, cancel, anyway}}},
		{"message held offline", mm, msgSnaps(sendURL, Q, W, W, held("Offline: waiting for the network")),
			want{phase: PhaseHeld, member: "f1", held: "Offline: waiting for the network", size: 110, verbs: []Verb{pause, cancel}}},
		{"message waits for a sign-in", mm, msgSnaps(sendURL, S, W, W, signIn("ann@example.com")),
			want{phase: PhaseSignIn, member: "f1", account: "ann@example.com", size: 110, verbs: []Verb{pause, cancel, signin}}},
		{"message's Drive file moved away", mm, msgSnaps(sendURL, M, W, W, where("/home/ann/big.mov")),
			want{phase: PhaseMissing, member: "f1", path: "/home/ann/big.mov", size: 110, verbs: []Verb{pause, cancel, locate}}},
		{"message failed", mm, msgSnaps(sendURL, F, W, W, failure(transfer.FailGaveUp, 503)),
			want{phase: PhaseFailed, member: "f1", code: transfer.FailGaveUp, size: 110, verbs: []Verb{retry, cancel, reopen}}},
		{"message failed for good", mm, msgSnaps(sendURL, F, W, W, failure(transfer.FailSourceChanged, 0)),
			want{phase: PhaseFailed, member: "f1", code: transfer.FailSourceChanged, size: 110, verbs: []Verb{cancel, reopen, useFile}}},
		{"message failed, recorded before failures had codes", mm, msgSnaps(sendURL, F, W, W, cause(transfer.ErrSourceChanged)),
			want{phase: PhaseFailed, member: "f1", code: transfer.FailSourceChanged, size: 110, verbs: []Verb{cancel, reopen, useFile}}},
		// A stopped delivery is paused only while something of it still moves.
		{"message failed, another file still uploading", twoFiles, []transfer.Snapshot{snap("f1", driveURL, F, 100, 40, failure(transfer.FailSourceChanged, 0)), snap("f2", driveURL, R, 50, 10), snap("s1", shareURL, W, 0, 0), snap("m", sendURL, W, 10, 0)},
			want{phase: PhaseFailed, member: "f1", code: transfer.FailSourceChanged, confirmed: 50, size: 160, verbs: []Verb{pause, cancel, reopen, useFile}}},
		{"message failed, another file paused", twoFiles, []transfer.Snapshot{snap("f1", driveURL, F, 100, 40, failure(transfer.FailGaveUp, 503)), snap("f2", driveURL, P, 50, 10), snap("s1", shareURL, W, 0, 0), snap("m", sendURL, W, 10, 0)},
			want{phase: PhaseFailed, member: "f1", code: transfer.FailGaveUp, confirmed: 50, size: 160, verbs: []Verb{resume, retry, cancel, reopen}}},
		{"message failed in its undo window", mm, []transfer.Snapshot{snap("f1", driveURL, F, 100, 40, failure(transfer.FailSourceChanged, 0)), snap("s1", shareURL, W, 0, 0), snap("m", sendURL, W, 10, 0, at(sendAt))},
			want{phase: PhaseFailed, member: "f1", code: transfer.FailSourceChanged, confirmed: 40, size: 110, sendAt: sendAt, verbs: []Verb{cancel, reopen, useFile}}},
		{"message whose own spool changed", plain, []transfer.Snapshot{snap("m", sendURL, F, 10, 0, failure(transfer.FailSourceChanged, 0))},
			want{phase: PhaseFailed, member: "m", code: transfer.FailSourceChanged, size: 10, verbs: []Verb{cancel, rm}}},
		{"message blocked by a cancelled file", mm, msgSnaps(sendURL, C, W, W), want{phase: PhaseBlocked, member: "f1", size: 110, verbs: []Verb{cancel, reopen}}},
		{"message cancelled", mm, msgSnaps(sendURL, C, C, C), want{phase: PhaseCancelled, size: 110, verbs: []Verb{reopen, rm}}},
		{"message cancelled, a file still stopping", mm, msgSnaps(sendURL, R, W, C),
			want{phase: PhaseCancelled, confirmed: 40, size: 110, verbs: []Verb{cancel, reopen}}},

		// A draft with a Drive link.
		{"draft queued", dr, msgSnaps(draftURL, Q, W, W), want{phase: PhaseQueued, size: 110, verbs: []Verb{pause, cancel}}},
		{"draft uploading", dr, msgSnaps(draftURL, R, W, W), want{phase: PhaseUploading, total: 1, dest: KindDriveUpload, confirmed: 40, size: 110, verbs: []Verb{pause, cancel}}},
		{"draft sharing", dr, msgSnaps(draftURL, D, Q, W), want{phase: PhaseSharing, confirmed: 100, size: 110, verbs: []Verb{pause, cancel}}},
		{"draft saving", dr, msgSnaps(draftURL, D, D, R), want{phase: PhaseSaving, dest: "gmail.savedraft", confirmed: 100, size: 110, verbs: []Verb{pause, cancel}}},
		{"draft saved", dr, msgSnaps(draftURL, D, D, D), want{phase: PhaseSaved, confirmed: 110, size: 110, verbs: []Verb{rm}}},
		{"draft paused", dr, msgSnaps(draftURL, D, D, P), want{phase: PhasePaused, confirmed: 100, size: 110, verbs: []Verb{resume, cancel}}},
		{"draft held", dr, msgSnaps(draftURL, R, W, W, held(transfer.HeldMetered)), want{phase: PhaseHeld, member: "f1", held: transfer.HeldMetered, confirmed: 40, size: 110, verbs: []Verb{pause, cancel, anyway}}},
		{"draft's Drive file moved away", dr, msgSnaps(draftURL, M, W, W, where("/home/ann/big.mov")),
			want{phase: PhaseMissing, member: "f1", path: "/home/ann/big.mov", size: 110, verbs: []Verb{pause, cancel, locate}}},
		{"draft waits for a sign-in", dr, msgSnaps(draftURL, D, D, S, signIn("ann@example.com")), want{phase: PhaseSignIn, member: "m", account: "ann@example.com", confirmed: 100, size: 110, verbs: []Verb{pause, cancel, signin}}},
		{"draft failed", dr, msgSnaps(draftURL, D, D, F, failure(transfer.FailNotFound, 404)), want{phase: PhaseFailed, member: "m", code: transfer.FailNotFound, confirmed: 100, size: 110, verbs: []Verb{cancel, rm}}},
		{"draft blocked", dr, msgSnaps(draftURL, D, C, W), want{phase: PhaseBlocked, member: "s1", confirmed: 100, size: 110, verbs: []Verb{cancel}}},
		{"draft cancelled", dr, msgSnaps(draftURL, D, D, C), want{phase: PhaseCancelled, confirmed: 100, size: 110, verbs: []Verb{rm}}},

		// A batch for Google Photos.
		{"photos queued", photos(false), []transfer.Snapshot{snap("p1", photoURL, Q, 50, 0), snap("p2", photoURL, Q, 50, 0), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseQueued, size: 100, verbs: []Verb{pause, cancel}}},
		{"photos uploading", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, R, 50, 10), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseUploading, done: 1, total: 2, dest: KindPhotosUpload, confirmed: 60, size: 100, verbs: []Verb{pause, cancel}}},
		// Still being queued: it counts the files it said it sends, and
		// its first call made is not its end.
		{"photos queuing, its first call being made", func() Delivery { d := photos(false); d.Files, d.Bytes = 120, 6000; return d }(), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, D, 50, 50), snap("c1", itemsURL, R, 0, 0)},
			want{phase: PhaseUploading, done: 2, total: 120, dest: KindPhotosUpload, confirmed: 100, size: 6000, verbs: []Verb{pause, cancel}}},
		{"photos posting", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, D, 50, 50), snap("c1", itemsURL, R, 0, 0)},
			want{phase: PhasePosting, total: 1, dest: KindPhotosItems, confirmed: 100, size: 100, verbs: []Verb{pause, cancel}}},
		{"photos done", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, D, 50, 50), snap("c1", itemsURL, D, 0, 0)},
			want{phase: PhaseDone, confirmed: 100, size: 100, verbs: []Verb{rm}}},
		{"photos wait for the quota, held before a byte", photos(true), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, P, 50, 0), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseQuotaWait, reset: reset, confirmed: 50, size: 100, verbs: []Verb{pause, resume, cancel}}},
		{"photos wait for the quota, failed for it", photos(true), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, F, 50, 0, failure(transfer.FailDailyQuota, 429)), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseQuotaWait, reset: reset, confirmed: 50, size: 100, verbs: []Verb{pause, cancel}}},
		// One the daily quota stopped while it went (no reset kept: it was
		// not held before its first byte) waits for the reset after its
		// failure, midnight Pacific: not failed, no Retry.
		{"photos wait for the quota, failed for it as they went", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, F, 50, 0, failure(transfer.FailDailyQuota, 429), func(s *transfer.Snapshot) { s.Updated = t0 }), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseQuotaWait, reset: time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC), confirmed: 50, size: 100, verbs: []Verb{pause, cancel}}},
		{"photos failed for a quota not waited for", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, F, 50, 0, failure(transfer.FailQuota, 403)), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseFailed, member: "p2", code: transfer.FailQuota, confirmed: 50, size: 100, verbs: []Verb{retry, cancel}}},
		{"photos paused", photos(false), []transfer.Snapshot{snap("p1", photoURL, P, 50, 0), snap("p2", photoURL, P, 50, 0), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhasePaused, size: 100, verbs: []Verb{pause, resume, cancel}}},
		{"photos held", photos(false), []transfer.Snapshot{snap("p1", photoURL, Q, 50, 0, held(transfer.HeldMetered)), snap("p2", photoURL, Q, 50, 0), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseHeld, member: "p1", held: transfer.HeldMetered, size: 100, verbs: []Verb{pause, cancel, anyway}}},
		{"photos wait for a sign-in", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, D, 50, 50), snap("c1", itemsURL, S, 0, 0, signIn("ann@example.com"))},
			want{phase: PhaseSignIn, member: "c1", account: "ann@example.com", confirmed: 100, size: 100, verbs: []Verb{pause, cancel, signin}}},
		{"photos: a picture moved away", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, M, 50, 20, where("/p/2.jpg")), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseMissing, member: "p2", path: "/p/2.jpg", confirmed: 70, size: 100, verbs: []Verb{pause, cancel, locate}}},
		{"photos failed", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, D, 50, 50), snap("c1", itemsURL, F, 0, 0, failure(transfer.FailRefused, 400))},
			want{phase: PhaseFailed, member: "c1", code: transfer.FailRefused, confirmed: 100, size: 100, verbs: []Verb{retry, cancel, rm}}},
		{"photos: a picture changed", photos(false), []transfer.Snapshot{snap("p1", photoURL, D, 50, 50), snap("p2", photoURL, F, 50, 20, failure(transfer.FailSourceChanged, 0)), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseFailed, member: "p2", code: transfer.FailSourceChanged, confirmed: 70, size: 100, verbs: []Verb{cancel, useFile}}},
		{"photos: a picture changed while another uploads", photos(false), []transfer.Snapshot{snap("p1", photoURL, R, 50, 10), snap("p2", photoURL, F, 50, 20, failure(transfer.FailSourceChanged, 0)), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseFailed, member: "p2", code: transfer.FailSourceChanged, confirmed: 30, size: 100, verbs: []Verb{pause, cancel, useFile}}},
		{"photos: a picture changed while another waits its turn", photos(false), []transfer.Snapshot{snap("p1", photoURL, Q, 50, 0), snap("p2", photoURL, F, 50, 20, failure(transfer.FailSourceChanged, 0)), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseFailed, member: "p2", code: transfer.FailSourceChanged, confirmed: 20, size: 100, verbs: []Verb{pause, cancel, useFile}}},
		{"photos blocked while another picture uploads", photos(false), []transfer.Snapshot{snap("p1", photoURL, C, 50, 0), snap("p2", photoURL, RT, 50, 10), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseBlocked, member: "p1", confirmed: 10, size: 100, verbs: []Verb{pause, cancel}}},
		{"photos blocked", photos(false), []transfer.Snapshot{snap("p1", photoURL, C, 50, 0), snap("p2", photoURL, D, 50, 50), snap("c1", itemsURL, W, 0, 0)},
			want{phase: PhaseBlocked, member: "p1", confirmed: 50, size: 100, verbs: []Verb{cancel}}},
		{"photos cancelled", photos(false), []transfer.Snapshot{snap("p1", photoURL, C, 50, 0), snap("p2", photoURL, C, 50, 0), snap("c1", itemsURL, C, 0, 0)},
			want{phase: PhaseCancelled, size: 100, verbs: []Verb{rm}}},

		// A plain upload.
		{"upload queued", upload, []transfer.Snapshot{snap("u1", postURL, Q, 80, 0)}, want{phase: PhaseQueued, size: 80, verbs: []Verb{pause, cancel}}},
		{"upload uploading", upload, []transfer.Snapshot{snap("u1", postURL, R, 80, 20)}, want{phase: PhaseUploading, total: 1, dest: "timeline", confirmed: 20, size: 80, verbs: []Verb{pause, cancel}}},
		{"upload done", upload, []transfer.Snapshot{snap("u1", postURL, D, 80, 80)}, want{phase: PhaseDone, confirmed: 80, size: 80, verbs: []Verb{rm}}},
		{"upload paused", upload, []transfer.Snapshot{snap("u1", postURL, P, 80, 20)}, want{phase: PhasePaused, confirmed: 20, size: 80, verbs: []Verb{resume, cancel}}},
		{"upload held", upload, []transfer.Snapshot{snap("u1", postURL, Q, 80, 0, held(transfer.HeldMetered))}, want{phase: PhaseHeld, member: "u1", held: transfer.HeldMetered, size: 80, verbs: []Verb{pause, cancel, anyway}}},
		{"upload waits for a sign-in", upload, []transfer.Snapshot{snap("u1", postURL, S, 80, 20)}, want{phase: PhaseSignIn, member: "u1", confirmed: 20, size: 80, verbs: []Verb{pause, cancel, signin}}},
		{"upload's file moved away", upload, []transfer.Snapshot{snap("u1", postURL, M, 80, 20, where("/home/ann/clip.mp4"))},
			want{phase: PhaseMissing, member: "u1", path: "/home/ann/clip.mp4", confirmed: 20, size: 80, verbs: []Verb{cancel, locate}}},
		{"upload failed", upload, []transfer.Snapshot{snap("u1", postURL, F, 80, 20, failure(transfer.FailMaybeSent, 0))}, want{phase: PhaseFailed, member: "u1", code: transfer.FailMaybeSent, confirmed: 20, size: 80, verbs: []Verb{retry, cancel, rm}}},
		{"upload's file changed", upload, []transfer.Snapshot{snap("u1", postURL, F, 80, 20, failure(transfer.FailSourceChanged, 0))},
			want{phase: PhaseFailed, member: "u1", code: transfer.FailSourceChanged, confirmed: 20, size: 80, verbs: []Verb{cancel, useFile, rm}}},
		{"upload cancelled", upload, []transfer.Snapshot{snap("u1", postURL, C, 80, 20)}, want{phase: PhaseCancelled, confirmed: 20, size: 80, verbs: []Verb{rm}}},
		{"upload forgotten", upload, nil, want{phase: PhaseCancelled, verbs: []Verb{rm}}},
		{"upload of a file to Drive alone", Delivery{ID: "d-07", Kind: KindUpload, Created: t0, Members: []Member{{Job: "f1", Role: RoleDriveFile}}},
			[]transfer.Snapshot{snap("f1", driveURL, R, 100, 30)}, want{phase: PhaseUploading, total: 1, dest: KindDriveUpload, confirmed: 30, size: 100, verbs: []Verb{pause, cancel}}},
		{"upload with no member left", Delivery{ID: "d-05", Kind: KindUpload, Created: t0}, nil, want{phase: PhaseCancelled, verbs: []Verb{rm}}},
		{"photos with no member left", Delivery{ID: "d-06", Kind: KindPhotos, Created: t0}, nil, want{phase: PhaseCancelled, verbs: []Verb{rm}}},
	}
}

func TestStatusOfEveryPhaseOfEveryKind(t *testing.T) {
	seen := map[Kind]map[Phase]bool{}
	for _, c := range statusCases() {
		got := Status(c.d, snapsOf(c.snaps...))
		w := c.want
		if seen[c.d.Kind] == nil {
			seen[c.d.Kind] = map[Phase]bool{}
		}
		seen[c.d.Kind][got.Phase] = true
		member := ""
		if got.Member != nil {
			member = got.Member.Job
		}
		var code transfer.FailureCode
		if got.Failure != nil {
			code = got.Failure.Code
		}
		gotW := want{phase: got.Phase, done: got.Done, total: got.Total, dest: got.Destination, confirmed: got.Confirmed, size: got.Size,
			member: member, code: code, account: got.Account, path: got.Path, held: got.Held, reset: got.Reset, sendAt: got.SendAt, uploadFrom: got.UploadFrom, verbs: got.Verbs}
		if fmt.Sprint(gotW) != fmt.Sprint(w) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, gotW, w)
		}
		if got.Kind != c.d.Kind {
			t.Errorf("%s: kind %s", c.name, got.Kind)
		}
	}
	// Every phase a kind can be in is met, from snapshots alone.
	all := []Phase{PhaseQueued, PhaseUploading, PhasePaused, PhaseHeld, PhaseSignIn, PhaseMissing, PhaseFailed, PhaseCancelled}
	expect := map[Kind][]Phase{
		KindMessage: append(slices.Clone(all), PhaseSharing, PhaseSending, PhaseScheduled, PhaseSent, PhaseDone, PhaseBlocked),
		KindDraft:   append(slices.Clone(all), PhaseSharing, PhaseSaving, PhaseSaved, PhaseBlocked),
		KindPhotos:  append(slices.Clone(all), PhasePosting, PhaseQuotaWait, PhaseDone, PhaseBlocked),
		KindUpload:  append(slices.Clone(all), PhaseDone),
	}
	met := map[Phase]bool{}
	for k, phases := range expect {
		for _, p := range phases {
			met[p] = true
			if !seen[k][p] {
				t.Errorf("no case shows a %s %s", k, p)
			}
		}
	}
	for _, p := range Phases {
		if !met[p] {
			t.Errorf("phase %s belongs to no kind", p)
		}
	}
}

// The failure is the delivery's own copy: a front end may keep it.
func TestStatusFailureIsACopy(t *testing.T) {
	s := msgSnaps(sendURL, F, W, W, failure(transfer.FailGaveUp, 503))
	st := Status(message(KindMessage, false), snapsOf(s...))
	st.Failure.Status = 0
	if s[0].Failure.Status != 503 {
		t.Fatal("Status handed out the snapshot's failure")
	}
}

func TestByJobKeepsTheNewestSnapshot(t *testing.T) {
	m := ByJob([]transfer.Snapshot{{ID: "a", Seq: 5, State: R}, {ID: "b", Seq: 1, State: Q}, {ID: "a", Seq: 7, State: D}, {ID: "a", Seq: 3, State: Q}})
	if len(m) != 2 || m["a"].State != D || m["b"].State != Q {
		t.Fatalf("ByJob = %v", m)
	}
}

// Photos' daily quota is a wait for a Photos batch alone: a message a
// daily limit refused has failed (Gmail's limits are not Photos' reset).
func TestStatusDailyQuotaWaitIsPhotos(t *testing.T) {
	st := Status(message(KindMessage, false), snapsOf(msgSnaps(sendURL, D, D, F, failure(transfer.FailDailyQuota, 429))...))
	if st.Phase != PhaseFailed || st.Failure == nil || st.Failure.Code != transfer.FailDailyQuota {
		t.Fatalf("a message refused for a daily limit: %s (%+v)", st.Phase, st.Failure)
	}
	// A record from before structured failures says so by its cause.
	old := snap("p2", photoURL, F, 50, 0, func(s *transfer.Snapshot) { s.Cause = transfer.ErrDailyQuota; s.Updated = t0 })
	if st := Status(photos(false), snapsOf(snap("p1", photoURL, D, 50, 50), old, snap("c1", itemsURL, W, 0, 0))); st.Phase != PhaseQuotaWait {
		t.Fatalf("a batch whose old record failed for the daily quota: %s", st.Phase)
	}
}
