//go:build linux && (amd64 || arm64 || riscv64 || loong64)

package transfer

import (
	"encoding/binary"
	"net"
	"syscall"
	"unsafe"
)

// tcpiBytesAcked is the offset of tcpi_bytes_acked in Linux's struct
// tcp_info (linux/tcp.h, since 4.1): 8 bytes of u8 fields, 24 u32 fields,
// then the u64s pacing_rate, max_pacing_rate, bytes_acked.
const tcpiBytesAcked = 120

type tcpProbe struct{ rc syscall.RawConn }

func systemAckProbe(c net.Conn) ackProbe {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := tcpProbe{rc}
	if _, ok := p.acked(); !ok {
		return nil
	}
	return p
}

func (p tcpProbe) acked() (int64, bool) {
	var info [256]byte
	size := uint32(len(info))
	var errno syscall.Errno
	if err := p.rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&size)), 0)
	}); err != nil || errno != 0 || size < tcpiBytesAcked+8 {
		return 0, false
	}
	return int64(binary.NativeEndian.Uint64(info[tcpiBytesAcked:])), true
}
