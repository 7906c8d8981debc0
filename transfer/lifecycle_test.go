package transfer

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// Every allowed move of the table is allowed, to its one place, and
// nowhere else.
func TestLifecycleAllowedMoves(t *testing.T) {
	for _, e := range lifecycle {
		if err := next(e.move, e.from, e.to); err != nil {
			t.Errorf("%s from %s to %s: %v", e.move, e.from, e.to, err)
		}
		for _, other := range States {
			if other == e.to {
				continue
			}
			if err := next(e.move, e.from, other); !errors.Is(err, ErrIllegalMove) {
				t.Errorf("%s from %s to %s: %v, want ErrIllegalMove", e.move, e.from, other, err)
			}
		}
		if to, err := target(e.move, e.from); err != nil || to != e.to {
			t.Errorf("target(%s, %s) = %s, %v", e.move, e.from, to, err)
		}
	}
}

// Every move not in the table is refused, with the error the person's
// moves name, and ErrIllegalMove for the engine's.
func TestLifecycleRefusedMoves(t *testing.T) {
	want := map[Move]map[State]error{
		MovePause:   {StatePaused: ErrAlreadyPaused, StateMissing: ErrFileMissing, StateDone: ErrEnded, StateFailed: ErrEnded, StateCancelled: ErrEnded},
		MoveResume:  {StateQueued: ErrNotPaused, StateWaiting: ErrNotPaused, StateRunning: ErrNotPaused, StateRetrying: ErrNotPaused, StateScheduled: ErrNotPaused, StateSignIn: ErrNotPaused, StateMissing: ErrNotPaused, StateDone: ErrNotPaused, StateFailed: ErrNotPaused, StateCancelled: ErrNotPaused},
		MoveRetry:   {StateQueued: ErrNotFailed, StateWaiting: ErrNotFailed, StateRunning: ErrNotFailed, StateRetrying: ErrNotFailed, StateScheduled: ErrNotFailed, StatePaused: ErrNotFailed, StateSignIn: ErrNotFailed, StateMissing: ErrNotFailed, StateDone: ErrNotFailed, StateCancelled: ErrNotFailed},
		MoveCancel:  {StateDone: ErrAlreadyDone, StateCancelled: ErrCancelled},
		MoveLocate:  {StateQueued: ErrNotMissing, StateWaiting: ErrNotMissing, StateRunning: ErrNotMissing, StateRetrying: ErrNotMissing, StateScheduled: ErrNotMissing, StatePaused: ErrNotMissing, StateSignIn: ErrNotMissing, StateDone: ErrNotMissing, StateFailed: ErrNotMissing, StateCancelled: ErrNotMissing},
		MoveSendNow: {StateQueued: ErrNotScheduled, StateWaiting: ErrNotScheduled, StateRunning: ErrNotScheduled, StateRetrying: ErrNotScheduled, StatePaused: ErrNotScheduled, StateSignIn: ErrNotScheduled, StateMissing: ErrNotScheduled, StateDone: ErrNotScheduled, StateFailed: ErrNotScheduled, StateCancelled: ErrNotScheduled},
	}
	moves := map[Move]bool{}
	for _, e := range lifecycle {
		moves[e.move] = true
	}
	for m := range moves {
		for _, from := range States {
			to, err := target(m, from)
			if err == nil {
				if next(m, from, to) != nil {
					t.Errorf("%s from %s: target %s is refused by next", m, from, to)
				}
				continue
			}
			w, named := want[m][from]
			switch {
			case named && !errors.Is(err, w):
				t.Errorf("%s from %s: %v, want %v", m, from, err, w)
			case !named && person[m]:
				t.Errorf("%s from %s refused with %v, but the test expects it allowed", m, from, err)
			case !named && !errors.Is(err, ErrIllegalMove):
				t.Errorf("%s from %s: %v, want ErrIllegalMove", m, from, err)
			}
		}
	}
	// And every named refusal is one the table really makes.
	for m, froms := range want {
		for from := range froms {
			if _, err := target(m, from); err == nil {
				t.Errorf("%s from %s is allowed, but the test expects a refusal", m, from)
			}
		}
	}
}

// Ended states are final: no move leads out of them but Retry (failed)
// and Cancel (failed), and every unfinished state can be cancelled.
func TestLifecycleEnds(t *testing.T) {
	for _, e := range lifecycle {
		if !e.from.Unfinished() && !(e.from == StateFailed && (e.move == MoveRetry || e.move == MoveCancel)) {
			t.Errorf("%s leaves the ended state %s", e.move, e.from)
		}
	}
	for _, s := range States {
		if s.Unfinished() {
			if _, err := target(MoveCancel, s); err != nil {
				t.Errorf("an unfinished job (%s) cannot be cancelled: %v", s, err)
			}
		}
		if stateInfo(s) == nil {
			t.Errorf("state %s has no facts", s)
		}
	}
}

// docs/ARCHITECTURE.md shows the table as the code has it.
func TestArchitectureDocShowsTheTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), LifecycleTable()) {
		t.Fatalf("docs/ARCHITECTURE.md does not hold the lifecycle table as lifecycle.go has it; put this there:\n%s", LifecycleTable())
	}
}
