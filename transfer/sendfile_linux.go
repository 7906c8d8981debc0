package transfer

import (
	"io"
	"net"
	"os"
	"syscall"
)

// sendFile sends the file's n bytes at off to c with sendfile(2): the
// kernel moves them from the page cache to the socket. It waits for room
// in the socket as a write does, telling sent of each part that went (an
// error from it ends the sending); the request's end (the transport
// closes the connection) ends it.
func sendFile(c *net.TCPConn, f *os.File, off int64, n int, each func(int) error) (int, error) {
	out, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	in, err := f.SyscallConn()
	if err != nil {
		return 0, errNoSendFile
	}
	sent := 0
	var serr error
	cerr := in.Control(func(infd uintptr) {
		werr := out.Write(func(outfd uintptr) bool {
			for sent < n {
				o := off + int64(sent)
				m, err := syscall.Sendfile(int(outfd), int(infd), &o, n-sent)
				if m > 0 {
					sent += m
					if eerr := each(m); eerr != nil {
						serr = eerr
						return true
					}
				}
				switch {
				case err == syscall.EAGAIN:
					return false // wait for room
				case err == syscall.EINTR:
				case err == syscall.EINVAL || err == syscall.ENOSYS || err == syscall.EOPNOTSUPP:
					if sent == 0 {
						serr = errNoSendFile
					} else {
						serr = err
					}
					return true
				case err != nil:
					serr = err
					return true
				case m == 0:
					serr = io.ErrUnexpectedEOF // the file is shorter than it was
					return true
				}
			}
			return true
		})
		if serr == nil {
			serr = werr
		}
	})
	if serr == nil {
		serr = cerr
	}
	if serr != nil && serr != errNoSendFile && serr != errBodyClosed {
		// As a failed write of the connection reads.
		serr = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("sendfile", serr)}
	}
	return sent, serr
}
