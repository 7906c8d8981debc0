package delivery

import (
	"errors"
	"slices"
	"time"

	"carrier/transfer"
)

// Phase is where a delivery stands, as a stable key a front end words
// ("uploading" with Done, Total and Destination: "Uploading 1 of 2 files
// to Google Drive").
type Phase string

const (
	PhaseQueued    Phase = "queued"     // nothing has started yet
	PhaseUploading Phase = "uploading"  // files go up: Done of Total, to Destination
	PhaseSharing   Phase = "sharing"    // the message's files are on Drive and being shared
	PhaseSending   Phase = "sending"    // the message goes to Gmail (Destination: its route)
	PhaseScheduled Phase = "scheduled"  // every byte of the message but the last is in Gmail; the last go at SendAt
	PhaseSaving    Phase = "saving"     // the draft goes to Gmail
	PhasePosting   Phase = "posting"    // Photos makes the media items: Done of Total calls
	PhaseQuotaWait Phase = "quota-wait" // paused until Photos' daily quota resets at Reset
	PhasePaused    Phase = "paused"     // the person paused it
	PhaseHeld      Phase = "held"       // Member waits for the connection (Held: metered, offline)
	PhaseSignIn    Phase = "sign-in"    // Member waits for Account to sign in again
	PhaseMissing   Phase = "missing"    // Member's file is no longer at Path: a ghost, which the person locates (VerbLocate)
	PhaseBlocked   Phase = "blocked"    // Member was cancelled, and the rest waits for it: only cancel ends it
	PhaseFailed    Phase = "failed"     // Member failed (Failure says why); the rest waits
	PhaseCancelled Phase = "cancelled"  // the person cancelled it
	PhaseSent      Phase = "sent"       // the message reached Gmail and went to its recipients
	PhaseSaved     Phase = "saved"      // the draft is in Gmail
	PhaseDone      Phase = "done"       // everything arrived (a batch posted, an upload, a message put in the mailbox)
)

// Phases lists every phase.
var Phases = []Phase{PhaseQueued, PhaseUploading, PhaseSharing, PhaseSending, PhaseScheduled, PhaseSaving, PhasePosting, PhaseQuotaWait,
	PhasePaused, PhaseHeld, PhaseSignIn, PhaseMissing, PhaseBlocked, PhaseFailed, PhaseCancelled, PhaseSent, PhaseSaved, PhaseDone}

// Verb is something a person may do to a delivery.
type Verb string

const (
	VerbPause      Verb = "pause"       // pause every member that may be paused
	VerbResume     Verb = "resume"      // resume the paused members
	VerbRetry      Verb = "retry"       // send the failed members on
	VerbCancel     Verb = "cancel"      // cancel every member not ended
	VerbReopen     Verb = "reopen"      // open what the person composed again in Compose
	VerbSignIn     Verb = "sign-in"     // sign Account in again
	VerbSendAnyway Verb = "send-anyway" // send the members held by a metered connection now
	VerbRemove     Verb = "remove"      // forget the delivery and its jobs (all ended)
	VerbLocate     Verb = "locate"      // say where Member's file is now (missing): transfer's Locate
	// VerbUseFile: take the file of Member, which stopped because it
	// changed after its upload began, as it is now, or the same file found
	// elsewhere (transfer's UseFile). It mends the failure only when the
	// file holds the bytes the server holds: a front end asks CheckFile
	// before it offers it. A message's own spool is Carrier's, never
	// taken again: the message is reopened in Compose instead.
	VerbUseFile Verb = "use-file"
	// VerbUndo: cancel a message held for its SendAt (Undo send) and open
	// what was composed again; offered while the message may still be
	// held: a front end shows it only until SendAt.
	VerbUndo Verb = "undo"
)

// Standing is where a delivery stands: what Status says.
type Standing struct {
	Phase Phase
	Kind  Kind
	// Done and Total count files up (uploading), or Photos' calls made
	// (posting); both 0 in other phases.
	Done, Total int
	// Destination is the route kind the phase's work goes to
	// ("drive.upload", "photos.upload", "gmail.send", "storage"), "" when
	// the phase has none.
	Destination string
	// Confirmed and Size are the bytes the server confirmed and the bytes
	// of every member that carries a file (the message's spool, its Drive
	// files, the pictures, an upload); a member done counts whole.
	Confirmed, Size int64
	// Reset is when Photos' quota turns over (quota-wait).
	Reset time.Time
	// Account is the account to sign in again (sign-in).
	Account string
	// Path is where Member's file was, and is no longer (missing).
	Path string
	// Held is why Member waits for the connection (held):
	// transfer.HeldMetered, or the system's hold.
	Held string
	// SendAt is when the message's last bytes go (Undo send's window,
	// Send later), while it is not sent; zero when it goes as soon as it
	// can.
	SendAt time.Time
	// UploadFrom is, while a message held for a SendAt further ahead than
	// transfer.ScheduleLead waits with nothing sent, when its upload
	// starts; zero otherwise.
	UploadFrom time.Time
	// Member is the member the phase is about: the one failed, held,
	// waiting for a sign-in, whose file is missing, or cancelled under a
	// blocked delivery; nil
	// in other phases.
	Member *Member
	// Failure is why Member failed (failed), said once for the delivery:
	// the engine's structured failure, or for a record from before it,
	// the code its cause names.
	Failure *transfer.Failure
	// Verbs are what the person may do now, in a stable order.
	Verbs []Verb
}

// Can reports whether v is among the verbs that apply.
func (s Standing) Can(v Verb) bool { return slices.Contains(s.Verbs, v) }

// member is a member with its job's snapshot (read, never changed).
type member struct {
	Member
	snap *transfer.Snapshot
}

// Status is where d stands, from its jobs' snapshots alone (snaps: by job
// id, finished jobs too). A member whose job is not among them counts as
// cancelled (forgotten: nothing of it is left to stop). It is the only
// place that knows phases.
func Status(d Delivery, snaps map[string]transfer.Snapshot) Standing {
	return StatusOf(d, func(job string) *transfer.Snapshot {
		if s, ok := snaps[job]; ok {
			return &s
		}
		return nil
	})
}

// StatusOf is Status with each member's snapshot given by snap (nil: not
// among them), read and never changed: a front end that holds a camera
// roll's 20,000 snapshots gives them where they are, not copied into a
// map for each look (issue 29).
func StatusOf(d Delivery, snap func(job string) *transfer.Snapshot) Standing {
	st := Standing{Kind: d.Kind}
	ms := make([]member, len(d.Members))
	unfinished, active, started := false, false, false
	for i, m := range d.Members {
		s := snap(m.Job)
		if s == nil {
			s = &transfer.Snapshot{ID: m.Job, State: transfer.StateCancelled}
		}
		ms[i] = member{m, s}
		unfinished = unfinished || s.State.Unfinished()
		active = active || s.State.Active()
		started = started || s.State.Active() || s.State == transfer.StateDone || s.Confirmed > 0
		if m.Role.carriesBytes() {
			st.Size += s.Size
			if s.State == transfer.StateDone {
				st.Confirmed += s.Size
			} else {
				st.Confirmed += min(s.Confirmed, s.Size)
			}
		}
	}
	if d.Kind == KindPhotos && d.Bytes > st.Size {
		st.Size = d.Bytes // still being queued: its bar counts every file it said
	}
	heads := headsOf(d.Kind, ms)
	in := func(states ...transfer.State) func(member) bool {
		return func(m member) bool { return slices.Contains(states, m.snap.State) }
	}
	// A member of a Photos batch that Photos' daily quota failed waits
	// for the reset: the one the delivery keeps, else the one after its
	// failure (midnight Pacific); any other failure is the delivery's.
	quota := func(m member) bool {
		return m.snap.State == transfer.StateFailed && d.Kind == KindPhotos && failureOf(m.snap).Code == transfer.FailDailyQuota
	}
	failed := findIn(ms, func(m member) bool { return m.snap.State == transfer.StateFailed && !quota(m) })
	cancelled := findIn(ms, in(transfer.StateCancelled))
	switch {
	case len(ms) == 0: // every job forgotten: nothing is left to send or stop
		st.Phase = PhaseCancelled
	case len(heads) > 0 && allOf(heads, in(transfer.StateDone)):
		st.Phase = donePhase(d.Kind, heads)
	case anyOf(heads, in(transfer.StateCancelled)) || cancelled != nil && !unfinished && failed == nil:
		st.Phase = PhaseCancelled
	case failed != nil:
		st.Phase, st.Member = PhaseFailed, &failed.Member
		st.Failure = failureOf(failed.snap)
	case cancelled != nil:
		st.Phase, st.Member = PhaseBlocked, &cancelled.Member
	case anyOf(ms, quota):
		st.Phase, st.Reset = PhaseQuotaWait, d.QuotaReset
		if st.Reset.IsZero() {
			st.Reset = PhotosReset(findIn(ms, quota).snap.Updated).UTC()
		}
	default:
		st.progress(d, ms, heads, active, started)
	}
	if m := findIn(heads, func(m member) bool {
		return m.Role == RoleMessage && m.snap.State.Unfinished() && !m.snap.SendAt.IsZero()
	}); m != nil {
		st.SendAt, st.UploadFrom = m.snap.SendAt, m.snap.UploadFrom
	}
	st.Verbs = verbs(d, st, ms, unfinished)
	return st
}

// progress decides the phase of a delivery still going, with nothing
// failed or cancelled.
func (st *Standing) progress(d Delivery, ms, heads []member, active, started bool) {
	if m := findIn(ms, func(m member) bool { return m.snap.State == transfer.StateMissing }); m != nil {
		st.Phase, st.Path, st.Member = PhaseMissing, m.snap.Path, &m.Member
		return
	}
	if m := findIn(ms, func(m member) bool { return m.snap.State == transfer.StateSignIn }); m != nil {
		st.Phase, st.Account = PhaseSignIn, m.snap.SignInFor
		if st.Account == "" {
			st.Account = m.snap.Account
		}
		if st.Account == "" {
			st.Account = d.Account
		}
		st.Member = &m.Member
		return
	}
	if !active && findIn(ms, func(m member) bool { return m.snap.State == transfer.StatePaused }) != nil {
		st.Phase = PhasePaused
		if !d.QuotaReset.IsZero() {
			st.Phase, st.Reset = PhaseQuotaWait, d.QuotaReset
		}
		return
	}
	held := func(m member) bool {
		return m.snap.Held != "" && m.snap.State.Unfinished() && m.snap.State != transfer.StatePaused
	}
	if m := findIn(ms, held); m != nil {
		st.Phase, st.Held = PhaseHeld, m.snap.Held
		st.Member = &m.Member
		return
	}
	if m := findIn(heads, func(m member) bool { return m.snap.State == transfer.StateScheduled }); m != nil {
		st.Phase = PhaseScheduled
		return
	}
	if !started {
		st.Phase = PhaseQueued
		return
	}
	files := func(roles ...Role) (done, total int, dest string) {
		for _, m := range ms {
			if !slices.Contains(roles, m.Role) {
				continue
			}
			total++
			if m.snap.State == transfer.StateDone {
				done++
			} else if dest == "" {
				dest = RouteOf(m.snap.URL).Kind
			}
		}
		return done, total, dest
	}
	switch d.Kind {
	case KindMessage, KindDraft:
		if done, total, _ := files(RoleDriveFile); done < total {
			st.Phase, st.Done, st.Total, st.Destination = PhaseUploading, done, total, KindDriveUpload
			return
		}
		if done, total, _ := files(RoleDriveShare); done < total {
			st.Phase = PhaseSharing
			return
		}
		st.Phase = PhaseSending
		if d.Kind == KindDraft {
			st.Phase = PhaseSaving
		}
		if len(heads) > 0 {
			st.Destination = RouteOf(heads[0].snap.URL).Kind
		}
	case KindPhotos:
		// A batch still being queued counts the files it said it sends.
		if done, total, _ := files(RolePhoto); done < max(total, d.Files) {
			st.Phase, st.Done, st.Total, st.Destination = PhaseUploading, done, max(total, d.Files), KindPhotosUpload
			return
		}
		st.Phase, st.Destination = PhasePosting, KindPhotosItems
		st.Done, st.Total, _ = files(RoleItems)
	default:
		// Any file: an upload adopted from an old journal may be a file
		// to Drive or Photos alone.
		st.Phase = PhaseUploading
		st.Done, st.Total, st.Destination = files(RoleUpload, RoleDriveFile, RolePhoto)
	}
}

// headsOf are the members whose end is the delivery's: the message, the
// batch's batchCreate calls (or its uploads while none is recorded), the
// uploads; every member when none has the role.
func headsOf(k Kind, ms []member) []member {
	role := RoleUpload
	switch k {
	case KindMessage, KindDraft:
		role = RoleMessage
	case KindPhotos:
		role = RoleItems
		if findIn(ms, func(m member) bool { return m.Role == RoleItems }) == nil {
			role = RolePhoto
		}
	}
	var out []member
	for _, m := range ms {
		if m.Role == role {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return ms
	}
	return out
}

// donePhase is the phase of a delivery whose heads are done.
func donePhase(k Kind, heads []member) Phase {
	switch k {
	case KindDraft:
		return PhaseSaved
	case KindMessage:
		if sends(RouteOf(heads[0].snap.URL)) {
			return PhaseSent
		}
	}
	return PhaseDone
}

// verbs are what the person may do to a delivery standing at st: the
// moves the lifecycle table allows some member to make, and the verbs
// of the delivery's own (reopen, sign in, send anyway, remove).
func verbs(d Delivery, st Standing, ms []member, unfinished bool) []Verb {
	can := func(m transfer.Move) bool {
		return findIn(ms, func(x member) bool { return transfer.Can(m, x.snap.State) }) != nil
	}
	var out []Verb
	add := func(v Verb, ok bool) {
		if ok {
			out = append(out, v)
		}
	}
	ended := st.Phase == PhaseSent || st.Phase == PhaseSaved || st.Phase == PhaseDone
	// A delivery cancelled is not paused or resumed: what is still
	// stopping is cancelled (VerbCancel) instead.
	going := !ended && st.Phase != PhaseCancelled
	// A delivery stopped by a member (failed, or blocked by one
	// cancelled) is paused only while another member still moves on its
	// own (a Photos batch's other pictures going up): what merely waits
	// for the stopped member is going nowhere.
	pausable := going
	if st.Phase == PhaseFailed || st.Phase == PhaseBlocked {
		pausable = findIn(ms, func(m member) bool { return moves(m.snap.State) }) != nil
	}
	add(VerbPause, pausable && can(transfer.MovePause))
	add(VerbResume, going && can(transfer.MoveResume))
	// Retry only where it can finish the delivery: a member that would
	// fail the same way again (its file changed) needs a new delivery.
	add(VerbRetry, st.Phase == PhaseFailed && findIn(ms, func(m member) bool {
		return transfer.Can(transfer.MoveRetry, m.snap.State)
	}) != nil && findIn(ms, func(m member) bool {
		return m.snap.State == transfer.StateFailed && !mendable(failureOf(m.snap))
	}) == nil)
	add(VerbCancel, !ended && can(transfer.MoveCancel))
	add(VerbReopen, d.Composed != nil && (d.Kind == KindMessage || d.Kind == KindDraft) &&
		(st.Phase == PhaseFailed || st.Phase == PhaseCancelled || st.Phase == PhaseBlocked))
	add(VerbSignIn, st.Phase == PhaseSignIn)
	add(VerbLocate, st.Phase == PhaseMissing && can(transfer.MoveLocate))
	add(VerbUseFile, st.Phase == PhaseFailed && st.Failure != nil && st.Failure.Code == transfer.FailSourceChanged &&
		st.Member != nil && st.Member.Role != RoleMessage && st.Member.Role.carriesBytes())
	add(VerbSendAnyway, st.Phase == PhaseHeld && st.Held == transfer.HeldMetered)
	add(VerbRemove, !unfinished)
	// Undo while the message is held and still going: a cancelled or
	// failed one is reopened (VerbReopen) instead.
	add(VerbUndo, !st.SendAt.IsZero() && going && st.Phase != PhaseFailed && st.Phase != PhaseBlocked && can(transfer.MoveCancel))
	return out
}

// moves reports whether a job in state s goes on without the person: a
// worker has it or will (queued, held by the connection included), or it
// is scheduled for its time. Waiting, paused, parked, missing and ended
// jobs do not.
func moves(s transfer.State) bool {
	return s == transfer.StateQueued || s.Active() || s == transfer.StateScheduled
}

// mendable reports whether a retry can mend a failure: not when the same
// failure would come again (the file changed or differs from what the
// server holds, the target is gone, the file is too large).
func mendable(f *transfer.Failure) bool {
	if f == nil {
		return true
	}
	switch f.Code {
	case transfer.FailSourceChanged, transfer.FailNotVerified, transfer.FailNotFound, transfer.FailTooLarge:
		return false
	}
	return true
}

// failureOf is a failed job's failure: the engine's, or for a record from
// before structured failures, the code its cause names.
func failureOf(s *transfer.Snapshot) *transfer.Failure {
	if s.Failure != nil {
		f := *s.Failure
		return &f
	}
	code := transfer.FailOther
	for err, c := range map[error]transfer.FailureCode{
		transfer.ErrSourceChanged: transfer.FailSourceChanged, transfer.ErrMaybeSent: transfer.FailMaybeSent,
		transfer.ErrGaveUp: transfer.FailGaveUp, transfer.ErrSignIn: transfer.FailSignIn,
		transfer.ErrNotVerified: transfer.FailNotVerified, transfer.ErrDailyQuota: transfer.FailDailyQuota,
	} {
		if s.Cause != nil && errors.Is(s.Cause, err) {
			code = c
		}
	}
	return &transfer.Failure{Code: code}
}

func findIn(ms []member, ok func(member) bool) *member {
	for i := range ms {
		if ok(ms[i]) {
			return &ms[i]
		}
	}
	return nil
}

func allOf(ms []member, ok func(member) bool) bool {
	for _, m := range ms {
		if !ok(m) {
			return false
		}
	}
	return true
}

func anyOf(ms []member, ok func(member) bool) bool { return findIn(ms, ok) != nil }

// ByJob indexes snapshots by job id for Status and Reconcile; of two
// snapshots of one job the newer (the higher Seq) is kept.
func ByJob(snaps []transfer.Snapshot) map[string]transfer.Snapshot {
	out := make(map[string]transfer.Snapshot, len(snaps))
	for _, s := range snaps {
		if old, ok := out[s.ID]; !ok || s.Seq >= old.Seq {
			out[s.ID] = s
		}
	}
	return out
}

// PhotosReset is when Google Photos' daily quota turns over after t:
// midnight Pacific time.
func PhotosReset(t time.Time) time.Time {
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		loc = time.FixedZone("PST", -8*3600)
	}
	p := t.In(loc)
	return time.Date(p.Year(), p.Month(), p.Day()+1, 0, 0, 0, 0, loc)
}
