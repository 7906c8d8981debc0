package nettest_test

import (
	"io"
	"net"
	"strings"
	"testing"

	"carrier/internal/nettest"
	"carrier/sandbox"
)

// Conns names each connection the server holds by its peer (what the
// Wi-Fi switch of bench/netbench cuts) and counts what was read from each
// alone.
func TestConnsTellConnectionsApart(t *testing.T) {
	srv, err := nettest.StartSandbox(sandbox.Options{Dir: t.TempDir(), Token: token, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	request := "GET /no-such-thing HTTP/1.1\r\nHost: " + srv.Addr + "\r\n\r\n"
	var peers []string
	for _, padding := range []int{0, 100} {
		c, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		req := request[:len(request)-2] + "X-Padding: " + strings.Repeat("a", padding) + "\r\n\r\n"
		if padding == 0 {
			req = request
		}
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		// The answer: the server has read the whole request by then.
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		peers = append(peers, c.LocalAddr().String())
	}
	got := map[string]int64{}
	for _, c := range srv.Conns() {
		got[c.Remote] = c.Read
	}
	if len(got) != 2 {
		t.Fatalf("the server holds %v, want the two connections %v", got, peers)
	}
	first, second := int64(len(request)), int64(len(request)+len("X-Padding: ")+100+2)
	if got[peers[0]] != first || got[peers[1]] != second {
		t.Fatalf("read %d and %d from the two connections, want %d and %d", got[peers[0]], got[peers[1]], first, second)
	}
}
