package transfer

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// Promises of the engine's edges found by mutation runs, each pinned by a
// test that fails when it breaks (docs/RELIABILITY.md, Mutation).

// A request whose connection could not be made says the server could not
// be reached; one whose connection broke later says it dropped: a person
// tells "my network or the host is down" from "it went away midway".
func TestEdgeNetErrorSaysWhetherTheServerWasReached(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	for _, c := range []struct {
		err       error
		want, not string
	}{
		{refused, "could not reach the server: ", "dropped"},
		{reset, "the connection dropped: ", "could not reach"},
		{errors.New("unexpected EOF"), "the connection dropped: ", "could not reach"},
	} {
		got := netError("send bytes 0-9", "upload.example/x", c.err).Error()
		if !strings.HasPrefix(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%v gave %q: want it to begin %q", c.err, got, c.want)
		}
	}
}
