package delivery

import "carrier/transfer"

// verbMoves are the lifecycle moves the verbs that move jobs make of
// each member.
var verbMoves = map[Verb]transfer.Move{
	VerbPause: transfer.MovePause, VerbResume: transfer.MoveResume,
	VerbRetry: transfer.MoveRetry, VerbCancel: transfer.MoveCancel,
}

// Moves reports whether v is done by moving d's jobs (pause, resume,
// retry, cancel, send anyway), rather than by the person elsewhere
// (reopen, sign in, locate, ...).
func Moves(v Verb) bool {
	_, ok := verbMoves[v]
	return ok || v == VerbSendAnyway
}

// Targets are the jobs of d that doing v moves, with d's jobs standing as
// snaps says (by job id; a job not there has no state, and moves only
// when it is d's one job), in the order they are to be moved: the
// message first (cancelling a message stops it before its parts, so no
// part can make it go), then the others in the members' order.
//
// A delivery of one job gives it the verb as it stands (the engine says
// why it cannot move); a delivery's jobs each as the lifecycle table lets
// them move (transfer.Can), so a member that ended or waits is left as
// it is. Send anyway moves the members a metered connection holds. A
// verb that moves no job has none.
func Targets(d Delivery, snaps map[string]transfer.Snapshot, v Verb) []string {
	move, ok := verbMoves[v]
	if !ok && v != VerbSendAnyway {
		return nil
	}
	var first, rest []string
	for _, m := range d.Members {
		s := snaps[m.Job]
		var moves bool
		switch {
		case v == VerbSendAnyway:
			moves = s.Held == transfer.HeldMetered && s.State.Unfinished() && s.State != transfer.StatePaused
		case len(d.Members) == 1:
			moves = true
		default:
			moves = transfer.Can(move, s.State)
		}
		switch {
		case !moves:
		case m.Role == RoleMessage:
			first = append(first, m.Job)
		default:
			rest = append(rest, m.Job)
		}
	}
	return append(first, rest...)
}

// Files are d's Drive uploads (RoleDriveFile), whatever their state: the
// files a cancelled message may have left on Drive.
func Files(d Delivery) []string {
	var out []string
	for _, m := range d.Members {
		if m.Role == RoleDriveFile {
			out = append(out, m.Job)
		}
	}
	return out
}
