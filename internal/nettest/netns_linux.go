package nettest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"
)

// RunInPrivateNetwork runs this program again with args in a new user and
// network namespace, its output to this one's, and waits for it; in
// there InPrivateNetwork is true. ErrNoNamespaces when the system
// refuses one.
func RunInPrivateNetwork(args ...string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES) {
			return fmt.Errorf("%w: %v", ErrNoNamespaces, err)
		}
		return err
	}
	return cmd.Wait()
}

// SetLoopback brings the loopback interface up or down: down, every
// packet between two loopback addresses is silently dropped. Only in a
// private network namespace.
func SetLoopback(up bool) error {
	if !InPrivateNetwork() {
		return errors.New("nettest: the loopback is only taken down in a private network namespace")
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: the name, then a union whose flags are a short
	copy(ifr[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return fmt.Errorf("nettest: read the loopback's flags: %w", e)
	}
	fl := binary.NativeEndian.Uint16(ifr[syscall.IFNAMSIZ:])
	if up {
		fl |= syscall.IFF_UP
	} else {
		fl &^= syscall.IFF_UP
	}
	binary.NativeEndian.PutUint16(ifr[syscall.IFNAMSIZ:], fl)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return fmt.Errorf("nettest: set the loopback's flags: %w", e)
	}
	return nil
}
