package transfer

import (
	"testing"
	"time"
)

// Promises of events.go and oneshot.go found by a whole mutation run of
// the two files, each pinned by a test that fails when it breaks
// (docs/RELIABILITY.md, Mutation).

// A job scheduled with nothing sent says when its upload starts,
// ScheduleLead before its last bytes go; one whose session is open, or
// one not scheduled, says nothing of it.
func TestEdgeSnapshotSaysWhenAScheduledUploadStarts(t *testing.T) {
	sendAt := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name    string
		state   State
		session string
		want    time.Time
	}{
		{"scheduled, nothing sent", StateScheduled, "", sendAt.Add(-ScheduleLead)},
		{"scheduled, its session open", StateScheduled, "https://upload.example/s/1", time.Time{}},
		{"queued", StateQueued, "", time.Time{}},
	} {
		r := &Record{ID: "j", State: c.state, SendAt: sendAt}
		r.Session = c.session
		if got := r.Snapshot().UploadFrom; !got.Equal(c.want) {
			t.Errorf("%s: UploadFrom %v, want %v", c.name, got, c.want)
		}
	}
}

// Confirmations leave the pace's window by their age: one 9 s old at a
// confirmation 15 s into the upload stays, however far from the start.
func TestEdgeConfirmationsLeaveByTheirAge(t *testing.T) {
	s := time.Second
	var m confirmMeter
	for _, a := range []rateSample{{6 * s, 0}, {10 * s, 400}, {15 * s, 900}} {
		m.add(a.at, a.bytes)
	}
	want := confirmEstimate{bytes: 900, span: 9 * s, count: 2, at: 15 * s, left: 100}
	if got := m.estimate(1000); got != want {
		t.Errorf("%+v, want %+v (no confirmation is older than the window)", got, want)
	}
}
