package platform

import "golang.org/x/sys/unix"

// fdPeerUID reads the peer's user of a Unix socket: LOCAL_PEERCRED.
func fdPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
