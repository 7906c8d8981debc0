package cli

import (
	"testing"

	"carrier/internal/app"
)

// What signing out leaves waiting is said as a person counts it.
func TestWaitingWords(t *testing.T) {
	for _, c := range []struct {
		w    app.Waiting
		want string
	}{
		{app.Waiting{Messages: 1}, "1 message"},
		{app.Waiting{Messages: 2, Uploads: 1}, "2 messages and 1 upload"},
		{app.Waiting{Uploads: 3}, "3 uploads"},
	} {
		if got := waitingWords(c.w); got != c.want {
			t.Errorf("%+v: %q, want %q", c.w, got, c.want)
		}
	}
}
