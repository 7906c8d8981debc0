//go:build linux && (amd64 || arm64 || riscv64 || loong64)

package transfer

import (
	"encoding/binary"
	"net"
	"syscall"
	"time"
	"unsafe"
)

// Offsets in Linux's struct tcp_info (linux/tcp.h): 8 bytes of u8 fields,
// then u32s (tcpi_unacked the 5th, tcpi_rtt the 16th, tcpi_rttvar the
// 17th, 24 in all), then the u64s pacing_rate, max_pacing_rate,
// bytes_acked (since 4.1), bytes_received, two u32 segment counts and
// tcpi_notsent_bytes (since 4.6).
const (
	tcpiUnacked      = 24
	tcpiRTT          = 68
	tcpiRTTVar       = 72
	tcpiBytesAcked   = 120
	tcpiNotsentBytes = 144
)

type tcpProbe struct{ rc syscall.RawConn }

func systemAckProbe(c net.Conn) ackProbe {
	if p := systemTCPProbe(c); p != nil {
		return p
	}
	return nil
}

// systemPathProbe is the probe of a connection's path (deadpath.go), or
// nil where the kernel is older than 4.6.
func systemPathProbe(c net.Conn) pathProbe {
	p := systemTCPProbe(c)
	if p == nil {
		return nil
	}
	if _, ok := p.path(); !ok {
		return nil
	}
	return p
}

func systemTCPProbe(c net.Conn) *tcpProbe {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &tcpProbe{rc}
	if _, ok := p.acked(); !ok {
		return nil
	}
	return p
}

// info reads the socket's TCP_INFO; n is how many bytes the kernel filled.
func (p *tcpProbe) info(b *[256]byte) (n int, ok bool) {
	size := uint32(len(b))
	var errno syscall.Errno
	if err := p.rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&size)), 0)
	}); err != nil || errno != 0 {
		return 0, false
	}
	return int(size), true
}

func (p *tcpProbe) acked() (int64, bool) {
	var b [256]byte
	if n, ok := p.info(&b); !ok || n < tcpiBytesAcked+8 {
		return 0, false
	}
	return int64(binary.NativeEndian.Uint64(b[tcpiBytesAcked:])), true
}

// path: bytes are pending when segments are out unacknowledged or bytes
// wait in the send queue unsent. The second counts too: on a path that
// drops everything the kernel may not even send (no route: nothing is
// "out"), and behind a middlebox that stops forwarding the window closes
// with the bytes queued. The retransmission timeout is the smoothed RTT
// plus four times its variation (RFC 6298), never the backed-off figure
// (tcpi_rto), which on a dead path doubles as fast as time passes.
func (p *tcpProbe) path() (pathState, bool) {
	var b [256]byte
	if n, ok := p.info(&b); !ok || n < tcpiNotsentBytes+4 {
		return pathState{}, false
	}
	u32 := func(off int) uint32 { return binary.NativeEndian.Uint32(b[off:]) }
	rto := time.Duration(u32(tcpiRTT)+4*u32(tcpiRTTVar)) * time.Microsecond
	return pathState{
		acked:   int64(binary.NativeEndian.Uint64(b[tcpiBytesAcked:])),
		pending: u32(tcpiUnacked) > 0 || u32(tcpiNotsentBytes) > 0,
		rto:     max(rto, 200*time.Millisecond), // Linux's least RTO
	}, true
}
