package delivery

import (
	"slices"
	"testing"

	"carrier/transfer"
)

// Every verb, of every kind of delivery, with its members in the states
// that decide which of them move: the jobs Targets gives, in their order.
func TestTargets(t *testing.T) {
	const (
		Q  = transfer.StateQueued
		W  = transfer.StateWaiting
		R  = transfer.StateRunning
		Y  = transfer.StateRetrying
		P  = transfer.StatePaused
		F  = transfer.StateFailed
		C  = transfer.StateCancelled
		D  = transfer.StateDone
		S  = transfer.StateScheduled
		SI = transfer.StateSignIn
		M  = transfer.StateMissing
	)
	metered := held(transfer.HeldMetered)
	msg := func(kind Kind, f, s, m transfer.State, fOpts ...func(*transfer.Snapshot)) standing {
		url := sendURL
		if kind == KindDraft {
			url = draftURL
		}
		return standing{message(kind, true), []transfer.Snapshot{snap("f1", driveURL, f, 100, 0, fOpts...), snap("s1", shareURL, s, 0, 0), snap("m", url, m, 10, 0)}}
	}
	batch := func(p1, p2, c1 transfer.State, p2Opts ...func(*transfer.Snapshot)) standing {
		return standing{photos(false), []transfer.Snapshot{snap("p1", photoURL, p1, 10, 0), snap("p2", photoURL, p2, 10, 0, p2Opts...), snap("c1", itemsURL, c1, 0, 0)}}
	}
	lone := func(u transfer.State, opts ...func(*transfer.Snapshot)) standing {
		return standing{upload, []transfer.Snapshot{snap("u1", postURL, u, 10, 0, opts...)}}
	}
	type want map[Verb][]string // verbs not named move nothing
	for _, c := range []struct {
		name string
		standing
		want want
	}{
		// A message uploading its Drive file: the message goes first, the
		// share waiting for its file moves with it.
		{"message uploading", msg(KindMessage, R, W, W), want{
			VerbPause: {"m", "f1", "s1"}, VerbCancel: {"m", "f1", "s1"}}},
		// Its file and share done, the message going: only the message.
		{"message sending", msg(KindMessage, D, D, R), want{
			VerbPause: {"m"}, VerbCancel: {"m"}}},
		{"message sent", msg(KindMessage, D, D, D), want{}},
		{"message paused", msg(KindMessage, P, P, P), want{
			VerbResume: {"m", "f1", "s1"}, VerbCancel: {"m", "f1", "s1"}}},
		// Its Drive file failed: retry sends that file on; cancel stops all.
		{"message file failed", msg(KindMessage, F, W, W), want{
			VerbPause: {"m", "s1"}, VerbRetry: {"f1"}, VerbCancel: {"m", "f1", "s1"}}},
		// Its file done and its share retrying: the file is left alone.
		{"message sharing", msg(KindMessage, D, Y, W), want{
			VerbPause: {"m", "s1"}, VerbCancel: {"m", "s1"}}},
		// Held for Undo send, its file and share done.
		{"message scheduled", msg(KindMessage, D, D, S), want{
			VerbPause: {"m"}, VerbCancel: {"m"}}},
		{"message cancelled", msg(KindMessage, D, C, C), want{}},
		// A metered connection holds its file: send anyway lets it go.
		{"message held", msg(KindMessage, Q, W, W, metered), want{
			VerbPause: {"m", "f1", "s1"}, VerbCancel: {"m", "f1", "s1"}, VerbSendAnyway: {"f1"}}},
		// Paused, a held file is the person's pause, not the connection's.
		{"message held paused", msg(KindMessage, P, W, W, metered), want{
			VerbPause: {"m", "s1"}, VerbResume: {"f1"}, VerbCancel: {"m", "f1", "s1"}}},
		{"message waiting for sign-in", msg(KindMessage, SI, W, W), want{
			VerbPause: {"m", "f1", "s1"}, VerbCancel: {"m", "f1", "s1"}}},
		{"message file missing", msg(KindMessage, M, W, W), want{
			VerbPause: {"m", "s1"}, VerbCancel: {"m", "f1", "s1"}}},
		{"draft saving", msg(KindDraft, D, D, R), want{
			VerbPause: {"m"}, VerbCancel: {"m"}}},
		{"draft file failed", msg(KindDraft, F, W, W), want{
			VerbPause: {"m", "s1"}, VerbRetry: {"f1"}, VerbCancel: {"m", "f1", "s1"}}},
		// A Photos batch: its pictures and its call, in the members' order.
		{"photos uploading", batch(R, Q, W), want{
			VerbPause: {"p1", "p2", "c1"}, VerbCancel: {"p1", "p2", "c1"}}},
		// One picture failed: retry sends it on, the one done stays done.
		{"photos picture failed", batch(D, F, W, failure(transfer.FailGaveUp, 503)), want{
			VerbPause: {"c1"}, VerbRetry: {"p2"}, VerbCancel: {"p2", "c1"}}},
		{"photos paused", batch(P, P, P), want{
			VerbResume: {"p1", "p2", "c1"}, VerbCancel: {"p1", "p2", "c1"}}},
		{"photos posting", batch(D, D, R), want{
			VerbPause: {"c1"}, VerbCancel: {"c1"}}},
		{"photos done", batch(D, D, D), want{}},
		// A job alone gets every verb as it stands, the engine saying why
		// it cannot move; send anyway only when the connection holds it.
		{"lone running", lone(R), want{
			VerbPause: {"u1"}, VerbResume: {"u1"}, VerbRetry: {"u1"}, VerbCancel: {"u1"}}},
		{"lone done", lone(D), want{
			VerbPause: {"u1"}, VerbResume: {"u1"}, VerbRetry: {"u1"}, VerbCancel: {"u1"}}},
		{"lone held", lone(Q, metered), want{
			VerbPause: {"u1"}, VerbResume: {"u1"}, VerbRetry: {"u1"}, VerbCancel: {"u1"}, VerbSendAnyway: {"u1"}}},
		// A member whose job is forgotten has nothing to move.
		{"message file forgotten", standing{message(KindMessage, false), []transfer.Snapshot{snap("s1", shareURL, W, 0, 0), snap("m", sendURL, W, 10, 0)}}, want{
			VerbPause: {"m", "s1"}, VerbCancel: {"m", "s1"}}},
	} {
		byJob := ByJob(c.snaps)
		for _, v := range []Verb{VerbPause, VerbResume, VerbRetry, VerbCancel, VerbSendAnyway,
			VerbReopen, VerbSignIn, VerbRemove, VerbLocate, VerbUseFile, VerbUndo} {
			got := Targets(c.d, byJob, v)
			if w := c.want[v]; !slices.Equal(got, w) {
				t.Errorf("%s, %s: %v, want %v", c.name, v, got, w)
			}
			if got != nil && !Moves(v) {
				t.Errorf("%s: %s moves jobs, but Moves says it does not", c.name, v)
			}
		}
	}
}

// standing is a delivery with its jobs' snapshots.
type standing struct {
	d     Delivery
	snaps []transfer.Snapshot
}

// Files are a message's Drive uploads whatever their state, and none of
// a batch's or an upload's.
func TestFiles(t *testing.T) {
	for _, c := range []struct {
		d    Delivery
		want []string
	}{{message(KindMessage, false), []string{"f1"}}, {message(KindDraft, false), []string{"f1"}}, {photos(false), nil}, {upload, nil}} {
		if got := Files(c.d); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.d.Kind, got, c.want)
		}
	}
}
