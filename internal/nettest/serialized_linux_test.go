package nettest_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"carrier/internal/nettest"
	"carrier/sandbox"
	"carrier/transfer"
)

// A silent outage mid-chunk against a server that serialises a session's
// requests (issue 33; sandbox.Options.SerializeSessions): the engine
// resets the dead request's connection, but the reset is lost on the dead
// path, and the server's end of it keeps the session, reading a body that
// never comes, so the status query the engine sends once the path is back
// waits behind it. Here the server has no TCP keepalive, a small receive
// buffer and a 10-minute body timeout, so only the
// engine can free the session: once its new connection reaches the
// server, it knocks from the reset connection's port (transfer/knock.go),
// the server's kernel answers that SYN with an acknowledgement, and the
// engine's kernel resets the server's end. The upload must finish long
// before the server's own timeout (await's 2 minutes bound the hang).
// The test re-runs itself in a private network namespace.
func TestDeadPathFreesASerialisingServer(t *testing.T) {
	if !nettest.InPrivateNetwork() {
		err := nettest.RunInPrivateNetwork("-test.run=^TestDeadPathFreesASerialisingServer$", "-test.v", "-test.count=1")
		if errors.Is(err, nettest.ErrNoNamespaces) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatalf("the test in the private network: %v", err)
		}
		return
	}
	if err := nettest.SetLoopback(true); err != nil {
		t.Fatal(err)
	}
	const (
		size   = 8 << 20
		outage = 3 * time.Second
	)
	// No keepalive probe, and a receive buffer the server has read to its
	// end long before the path is back: its kernel has nothing to send
	// that would find the engine's end gone (a keepalive probe, or a
	// window update as the server reads what it held, each answered by a
	// reset once the path carries).
	lc := net.ListenConfig{KeepAlive: -1, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10) }); err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := nettest.StartSandboxOn(sandbox.Options{Dir: t.TempDir(), Token: token, NoSync: true, Faults: "rate=4000KB",
		SerializeSessions: true, BodyIdle: 10 * time.Minute}, ln)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, srv, transfer.Config{}, false)
	want := e.add(t, "hole", size)
	var holed, lifted time.Time
	restored := make(chan error, 1)
	e.await(t, func(ev transfer.Event) {
		if holed.IsZero() && ev.Kind == transfer.EventProgress && ev.Confirmed > 0 {
			if err := nettest.SetLoopback(false); err != nil {
				t.Fatal(err)
			}
			holed = time.Now()
			time.AfterFunc(outage, func() {
				lifted = time.Now()
				restored <- nettest.SetLoopback(true)
			})
		}
	})
	if holed.IsZero() {
		t.Fatal("the upload ended before the outage")
	}
	if err := <-restored; err != nil {
		t.Fatal(err)
	}
	t.Logf("done %s after the path was back", time.Since(lifted).Round(10*time.Millisecond))
	e.check(t, "hole", want)
}
