//go:build linux || darwin

package platform

import "net"

// peerUID is the user of the process at the other end of c, as the
// system's socket option says it (fdPeerUID).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = fdPeerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, cerr
}
