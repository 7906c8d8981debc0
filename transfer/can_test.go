package transfer

import "testing"

// Can says yes exactly where the table has an edge: where target finds a
// place to go.
func TestCanFollowsTheLifecycleTable(t *testing.T) {
	moves := []Move{MoveHold, MoveRelease, MoveStart, MoveBackoff, MoveAgain, MoveFinish, MoveFail, MoveStop,
		MoveRecover, MovePause, MoveResume, MoveRetry, MoveCancel, MovePark, MoveUnpark}
	for _, m := range moves {
		for _, s := range States {
			_, err := target(m, s)
			if got := Can(m, s); got != (err == nil) {
				t.Errorf("Can(%s, %s) = %v, the table says %v", m, s, got, err)
			}
		}
	}
	for _, c := range []struct {
		m    Move
		s    State
		want bool
	}{{MovePause, StatePaused, false}, {MoveResume, StatePaused, true}, {MoveRetry, StateFailed, true}, {MoveCancel, StateDone, false}, {MoveCancel, StateFailed, true}} {
		if Can(c.m, c.s) != c.want {
			t.Errorf("Can(%s, %s) != %v", c.m, c.s, c.want)
		}
	}
}
