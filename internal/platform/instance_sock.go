//go:build linux || darwin

package platform

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// A socket in the data folder, where there is no session bus to name the
// window on (macOS; Linux's is the bus, instance_linux.go, but this runs
// and is tested there too): the folder is the person's alone (0700, theirs,
// or the socket is not made), and the window also refuses a caller of
// another user (the peer's credentials). The claim is a lock on a file
// beside it, held while the window is open, so a socket left by a Carrier
// that died is replaced, never one a live window serves.
//
// What goes over it is what goes over Windows' pipe: the items as JSON
// after their length (4 bytes, little-endian); the window answers 1 once
// it has them.

const (
	sockName = "carrier.sock"
	lockName = "carrier.lock"
	// sockLimit bounds a hand-over, as pipeHandOverLimit does.
	sockLimit   = 8 << 20
	sockTimeout = 10 * time.Second
)

// privateFolder makes dir (0700) if missing and checks that it is a
// folder of this user's that no one else may enter.
func privateFolder(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not a folder private to you (mode %o): no hand-over socket is made there", dir, fi.Mode().Perm())
	}
	return nil
}

func claimSocket(dataDir string) (*Instance, error) {
	if err := privateFolder(dataDir); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dataDir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, err
	}
	path := filepath.Join(dataDir, sockName)
	os.Remove(path) // a socket whose window died with it
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		lock.Close()
		return nil, err
	}
	l.SetUnlinkOnClose(true)
	inst := &Instance{}
	done := make(chan struct{})
	var once sync.Once
	inst.close = func() error {
		once.Do(func() {
			l.Close()
			<-done
			lock.Close()
		})
		return nil
	}
	go func() {
		defer close(done)
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			serveSocket(inst, c)
		}
	}()
	return inst, nil
}

// serveSocket takes one launch's items, from this user only.
func serveSocket(inst *Instance, c *net.UnixConn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(sockTimeout))
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		return
	}
	var head [4]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return
	}
	size := binary.LittleEndian.Uint32(head[:])
	if size > sockLimit {
		return
	}
	msg := make([]byte, size)
	if _, err := io.ReadFull(c, msg); err != nil {
		return
	}
	var items []string
	if json.Unmarshal(msg, &items) != nil {
		return
	}
	inst.handed(items)
	c.Write([]byte{1})
}

func handOverSocket(dataDir string, items []string) error {
	if items == nil {
		items = []string{}
	}
	msg, err := json.Marshal(items)
	if err != nil {
		return err
	}
	if len(msg) > sockLimit {
		return fmt.Errorf("%d bytes are too many to hand to the open window", len(msg))
	}
	// The folder must be the person's alone before anything is said into
	// it.
	if fi, err := os.Lstat(dataDir); err != nil {
		return err
	} else if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not a folder private to you: nothing handed over", dataDir)
	}
	c, err := net.DialTimeout("unix", filepath.Join(dataDir, sockName), sockTimeout)
	if err != nil {
		return fmt.Errorf("no Carrier window is open for these folders: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(sockTimeout))
	var head [4]byte
	binary.LittleEndian.PutUint32(head[:], uint32(len(msg)))
	if _, err := c.Write(append(head[:], msg...)); err != nil {
		return err
	}
	var ok [1]byte
	if _, err := io.ReadFull(c, ok[:]); err != nil || ok[0] != 1 {
		return fmt.Errorf("the open window did not take the items: %v", err)
	}
	return nil
}
