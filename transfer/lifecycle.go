package transfer

import (
	"errors"
	"fmt"
	"strings"
)

// State is where a job stands. Only Queue.transition writes it, and only
// along an edge of the lifecycle table below.
type State string

const (
	StateQueued   State = "queued"   // waiting for a worker
	StateWaiting  State = "waiting"  // waiting for the jobs it needs to be done
	StateRunning  State = "running"  // a worker is uploading it
	StateRetrying State = "retrying" // a worker waits before trying again
	StatePaused   State = "paused"   // held by the person; the session is kept
	StateSignIn   State = "sign-in"  // its sign-in ended: waits for the person to sign in again; the session is kept
	// StateScheduled: every byte but the last request's is with the server,
	// and the last wait for the record's SendAt (Undo send, Send later).
	// The session is kept; nothing exists on the server until they go. A
	// SendAt further ahead than ScheduleLead waits here before its session
	// is opened, until the upload's start (Record.DueAt).
	StateScheduled State = "scheduled"
	// StateMissing: its file is no longer where the job recorded it
	// (moved, renamed, on a disk not mounted): a ghost, which waits for
	// the person to say where it is now (Queue.Locate). The session is
	// kept. Carrier's own files (a message's spool, a call's body) are
	// never ghosts: they fail as before.
	StateMissing   State = "missing"
	StateDone      State = "done"      // the server holds it; Response is its answer
	StateFailed    State = "failed"    // gave up; Retry may send it on
	StateCancelled State = "cancelled" // stopped for good; its session was deleted
)

// States lists every state, in the order a job usually meets them.
var States = []State{StateQueued, StateWaiting, StateRunning, StateRetrying, StateScheduled, StatePaused, StateSignIn, StateMissing, StateDone, StateFailed, StateCancelled}

func (s State) valid() bool { return stateInfo(s) != nil }

// Unfinished reports whether a job in state s may still be sent.
func (s State) Unfinished() bool {
	i := stateInfo(s)
	return i != nil && !i.final
}

// Active reports whether a worker holds a job in state s.
func (s State) Active() bool { return s == StateRunning || s == StateRetrying }

type stateFacts struct {
	final bool
	event EventKind // the event a move into the state emits
}

func stateInfo(s State) *stateFacts {
	switch s {
	case StateQueued:
		return &stateFacts{event: EventQueued}
	case StateWaiting:
		return &stateFacts{event: EventWaiting}
	case StateRunning:
		return &stateFacts{event: EventStarted}
	case StateRetrying:
		return &stateFacts{event: EventRetrying}
	case StatePaused:
		return &stateFacts{event: EventPaused}
	case StateSignIn:
		return &stateFacts{event: EventSignIn}
	case StateScheduled:
		return &stateFacts{event: EventScheduled}
	case StateMissing:
		return &stateFacts{event: EventMissing}
	case StateDone:
		return &stateFacts{final: true, event: EventDone}
	case StateFailed:
		return &stateFacts{final: true, event: EventFailed}
	case StateCancelled:
		return &stateFacts{final: true, event: EventCancelled}
	}
	return nil
}

// Move names why a job changes state.
type Move string

const (
	MoveHold     Move = "hold"      // a job it needs is not done yet
	MoveRelease  Move = "release"   // every job it needs is done
	MoveStart    Move = "start"     // a worker takes it
	MoveBackoff  Move = "backoff"   // a try failed; wait before the next
	MoveAgain    Move = "again"     // the wait is over
	MoveFinish   Move = "finish"    // the server holds the whole file
	MoveFail     Move = "fail"      // the engine gives up
	MoveStop     Move = "stop"      // the queue closes under a worker; next time it goes on
	MoveRecover  Move = "recover"   // found running in the journal: its process died
	MovePause    Move = "pause"     // the person holds it
	MoveResume   Move = "resume"    // the person lets a paused job go on
	MoveRetry    Move = "retry"     // the person sends a failed job on
	MoveCancel   Move = "cancel"    // the person stops it for good
	MovePark     Move = "park"      // its sign-in ended: only a person can mend that
	MoveUnpark   Move = "unpark"    // its account signed in again (or a new start tries once)
	MoveHoldLast Move = "hold-last" // every byte but the last is with the server; the last wait for SendAt
	MoveDefer    Move = "defer"     // SendAt is so far ahead that the upload starts later (ScheduleLead)
	MoveDue      Move = "due"       // SendAt came: the last bytes go
	MoveSendNow  Move = "send-now"  // the person sends a scheduled job's last bytes at once
	MoveLose     Move = "lose"      // its file is no longer where it was recorded
	MoveLocate   Move = "locate"    // the person says where the same file is now
)

// person marks moves a person asks for: they stand only once on disk. The
// engine's own moves stand in memory even when the journal cannot be
// written, since they state what already happened on the wire.
var person = map[Move]bool{MovePause: true, MoveResume: true, MoveRetry: true, MoveCancel: true, MoveSendNow: true, MoveLocate: true}

// edge is one allowed move.
type edge struct {
	move     Move
	from, to State
}

// lifecycle is every move a job may make. A move not listed is refused
// with the error refusals names for it.
var lifecycle = []edge{
	{MoveHold, StateQueued, StateWaiting},
	{MoveRelease, StateWaiting, StateQueued},
	{MoveStart, StateQueued, StateRunning},
	{MoveBackoff, StateRunning, StateRetrying},
	{MoveAgain, StateRetrying, StateRunning},
	{MoveFinish, StateRunning, StateDone},
	{MoveFail, StateRunning, StateFailed},
	{MoveFail, StateRetrying, StateFailed},
	{MoveStop, StateRunning, StateQueued},
	{MoveStop, StateRetrying, StateQueued},
	{MoveRecover, StateRunning, StateQueued},
	{MoveRecover, StateRetrying, StateQueued},
	{MovePark, StateRunning, StateSignIn},
	{MovePark, StateRetrying, StateSignIn},
	{MoveUnpark, StateSignIn, StateQueued},
	{MoveHoldLast, StateRunning, StateScheduled},
	{MoveDefer, StateRunning, StateScheduled},
	{MoveDue, StateScheduled, StateQueued},
	{MoveSendNow, StateScheduled, StateQueued},
	{MoveLose, StateRunning, StateMissing},
	{MoveLose, StateRetrying, StateMissing},
	{MoveLocate, StateMissing, StateQueued},
	{MovePause, StateQueued, StatePaused},
	{MovePause, StateWaiting, StatePaused},
	{MovePause, StateRunning, StatePaused},
	{MovePause, StateRetrying, StatePaused},
	{MovePause, StateSignIn, StatePaused},
	{MovePause, StateScheduled, StatePaused},
	{MoveResume, StatePaused, StateQueued},
	{MoveRetry, StateFailed, StateQueued},
	{MoveCancel, StateQueued, StateCancelled},
	{MoveCancel, StateWaiting, StateCancelled},
	{MoveCancel, StateRunning, StateCancelled},
	{MoveCancel, StateRetrying, StateCancelled},
	{MoveCancel, StatePaused, StateCancelled},
	{MoveCancel, StateSignIn, StateCancelled},
	{MoveCancel, StateScheduled, StateCancelled},
	{MoveCancel, StateMissing, StateCancelled},
	{MoveCancel, StateFailed, StateCancelled},
}

// Refused moves. The front ends turn them into words for their medium.
var (
	ErrAlreadyPaused = errors.New("the job is already paused")
	ErrNotPaused     = errors.New("the job is not paused, so there is nothing to resume")
	ErrNotFailed     = errors.New("the job has not failed, so there is nothing to retry")
	ErrEnded         = errors.New("the job has ended")
	ErrAlreadyDone   = errors.New("the job already finished; there is nothing to cancel")
	ErrCancelled     = errors.New("the job was cancelled")
	ErrNotScheduled  = errors.New("the job is not waiting for its time to send, so there is nothing to send now")
	ErrNotMissing    = errors.New("the job's file is not missing, so there is nothing to locate")
	// ErrFileMissing refuses to pause a ghost: nothing of it runs, and
	// only Locate (or Cancel) moves it.
	ErrFileMissing = errors.New("the job's file is no longer where it was: locate it, or cancel the job")
	// ErrUnfinished refuses to forget a job that may still be sent.
	ErrUnfinished = errors.New("the job is not finished: cancel it first")
	// ErrIllegalMove is a move the engine itself should never make.
	ErrIllegalMove = errors.New("the job cannot make that move from where it stands")
)

// refusal is the error for a move a job may not make from a state.
type refusal struct {
	move Move
	from []State // nil: from any state
	err  error
}

var refusals = []refusal{
	{MovePause, []State{StatePaused}, ErrAlreadyPaused},
	{MovePause, []State{StateMissing}, ErrFileMissing},
	{MovePause, nil, ErrEnded},
	{MoveResume, nil, ErrNotPaused},
	{MoveRetry, nil, ErrNotFailed},
	{MoveSendNow, nil, ErrNotScheduled},
	{MoveLocate, nil, ErrNotMissing},
	{MoveCancel, []State{StateDone}, ErrAlreadyDone},
	{MoveCancel, []State{StateCancelled}, ErrCancelled},
}

// next checks a move: nil when the table allows from -> to by m, else the
// named refusal.
func next(m Move, from, to State) error {
	allowed := false
	for _, e := range lifecycle {
		if e.move == m && e.from == from {
			if e.to == to {
				return nil
			}
			allowed = true
		}
	}
	if allowed { // the move is fine from here, but not to there: a bug
		return fmt.Errorf("%w (%s from %s to %s)", ErrIllegalMove, m, from, to)
	}
	for _, r := range refusals {
		if r.move == m && (r.from == nil || containsState(r.from, from)) {
			return r.err
		}
	}
	return fmt.Errorf("%w (%s from %s)", ErrIllegalMove, m, from)
}

// move makes a record move to a state by m, as the table allows: the one
// place a record's state changes.
func (r *Record) move(m Move, to State) error {
	if err := next(m, r.State, to); err != nil {
		return err
	}
	r.State = to
	return nil
}

// target is where m leads from a state, when the table allows exactly one
// place; moves that may go two ways (after a pause, waiting or queued) are
// decided by the queue.
func target(m Move, from State) (State, error) {
	for _, e := range lifecycle {
		if e.move == m && e.from == from {
			return e.to, nil
		}
	}
	return "", next(m, from, "")
}

func containsState(ss []State, s State) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// LifecycleTable renders the lifecycle as Markdown tables, one row per
// move, for docs/ARCHITECTURE.md (a test keeps the two the same).
func LifecycleTable() string {
	var b strings.Builder
	b.WriteString("| from | move | to |\n|---|---|---|\n")
	for _, e := range lifecycle {
		who := "engine"
		if person[e.move] {
			who = "person"
		}
		fmt.Fprintf(&b, "| %s | %s (%s) | %s |\n", e.from, e.move, who, e.to)
	}
	b.WriteString("\n| refused move | from | error |\n|---|---|---|\n")
	for _, r := range refusals {
		from := "any other"
		if r.from != nil {
			var names []string
			for _, s := range r.from {
				names = append(names, string(s))
			}
			from = strings.Join(names, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.move, from, r.err)
	}
	return b.String()
}
