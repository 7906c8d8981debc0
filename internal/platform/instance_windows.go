package platform

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows the window's claim is a named pipe, \\.\pipe\ then the
// window's name (InstanceName: the app id and a digest of the data
// folder) and the user's SID: one per person and folder. The pipe's
// access list has one entry, the user who made it (no one else may open
// it), and it refuses clients from other computers. A second launch
// checks that the pipe's server runs as the same user before it says
// anything, so a pipe of that name made first by someone else learns
// nothing: the launch opens a window of its own.
//
// What goes over it: the items as JSON, after their length (4 bytes,
// little-endian); the window answers one byte, 1, once it has them.

// pipeHandOverLimit bounds a hand-over: more than a mail link's limit
// (internal/app/message.MaxMailtoURL) times a few.
const pipeHandOverLimit = 8 << 20

// pipeTimeout is how long either side waits for the other mid-message.
const pipeTimeout = 10 * time.Second

// instancePipe is the pipe's name for this user and folder.
func instancePipe(appID, dataDir string) (string, error) {
	sid, err := userSID()
	if err != nil {
		return "", err
	}
	return `\\.\pipe\` + InstanceName(appID, dataDir) + "." + sid, nil
}

// ClaimInstance makes the window's pipe, the first of its name. ErrRunning
// when the name is taken (another Carrier of this person on these
// folders holds it); any other error means no hand-over: open the window
// alone.
func ClaimInstance(appID, dataDir string) (*Instance, error) {
	name, err := instancePipe(appID, dataDir)
	if err != nil {
		return nil, err
	}
	sid, err := userSID()
	if err != nil {
		return nil, err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;" + sid + ")")
	if err != nil {
		return nil, err
	}
	sa := &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	mutexName, err := windows.UTF16PtrFromString(`Local\` + strings.TrimPrefix(name, `\\.\pipe\`))
	if err != nil {
		return nil, err
	}
	claim, err := windows.CreateMutex(sa, false, mutexName)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		if claim != 0 {
			windows.CloseHandle(claim)
		}
		return nil, ErrRunning
	}
	if err != nil {
		return nil, err
	}
	srv := &pipeServer{name: name, sa: sa}
	first, err := srv.create(true)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_PIPE_BUSY) {
		windows.CloseHandle(claim)
		return nil, ErrRunning
	}
	if err != nil {
		windows.CloseHandle(claim)
		return nil, err
	}
	quit, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(first)
		windows.CloseHandle(claim)
		return nil, err
	}
	srv.quit = quit
	inst := &Instance{}
	srv.inst = inst
	done := make(chan struct{})
	var once sync.Once
	inst.close = func() error {
		once.Do(func() {
			windows.SetEvent(quit)
			<-done
			windows.CloseHandle(quit)
			windows.CloseHandle(claim)
		})
		return nil
	}
	go func() {
		defer close(done)
		srv.serve(first)
	}()
	return inst, nil
}

type pipeServer struct {
	name string
	sa   *windows.SecurityAttributes
	quit windows.Handle
	inst *Instance
}

// create makes an instance of the pipe; first: only if the name is
// free.
func (s *pipeServer) create(first bool) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(s.name)
	if err != nil {
		return 0, err
	}
	flags := uint32(windows.PIPE_ACCESS_DUPLEX | windows.FILE_FLAG_OVERLAPPED)
	if first {
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	mode := uint32(windows.PIPE_TYPE_BYTE | windows.PIPE_READMODE_BYTE | windows.PIPE_WAIT | windows.PIPE_REJECT_REMOTE_CLIENTS)
	h, err := windows.CreateNamedPipe(p, flags, mode, windows.PIPE_UNLIMITED_INSTANCES, 4096, 4096, 0, s.sa)
	if err != nil {
		return 0, err
	}
	return h, nil
}

// serve takes one launch at a time until quit. The pipe's name stays
// this process's as long as an instance of it is open: h until the next
// is made.
func (s *pipeServer) serve(h windows.Handle) {
	for {
		_, err := overlapped(h, s.quit, windows.INFINITE, func(o *windows.Overlapped) error {
			err := windows.ConnectNamedPipe(h, o)
			if errors.Is(err, windows.ERROR_PIPE_CONNECTED) {
				return nil
			}
			return err
		})
		if errors.Is(err, errQuit) {
			windows.CloseHandle(h)
			return
		}
		if err == nil {
			if items, err := readHandOver(h, s.quit); err == nil {
				s.inst.handed(items)
				if writeAll(h, s.quit, []byte{1}) == nil {
					// Until the launch has read the answer and gone:
					// closing before would lose it.
					var b [1]byte
					readSome(h, s.quit, b[:])
				}
			}
		}
		next, err := s.create(false)
		windows.DisconnectNamedPipe(h)
		windows.CloseHandle(h)
		if err != nil {
			// The name is lost with the last instance: later launches
			// open their own windows.
			return
		}
		h = next
	}
}

// HandOver gives items (file: URIs, mailto: URLs, full paths; none: only
// come to the front) to the window holding this person's pipe for these
// folders, and returns once it has taken them. An error means no window
// took them: open one.
func HandOver(appID, dataDir string, items []string) error {
	name, err := instancePipe(appID, dataDir)
	if err != nil {
		return err
	}
	if items == nil {
		items = []string{}
	}
	msg, err := json.Marshal(items)
	if err != nil {
		return err
	}
	if len(msg) > pipeHandOverLimit {
		return fmt.Errorf("%d bytes are too many to hand to the open window", len(msg))
	}
	h, err := openPipe(name)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	pid, err := sameUserServer(h)
	if err != nil {
		return err
	}
	// This launch may have been started by the program in front (Explorer,
	// a mail link's browser): the window may come to the front over it.
	procAllowSetForeground.Call(uintptr(pid))
	var head [4]byte
	binary.LittleEndian.PutUint32(head[:], uint32(len(msg)))
	if err := writeAll(h, 0, append(head[:], msg...)); err != nil {
		return err
	}
	var ok [1]byte
	if n, err := readSome(h, 0, ok[:]); err != nil || n != 1 || ok[0] != 1 {
		return fmt.Errorf("the open window did not take the items: %v", err)
	}
	return nil
}

// openPipe opens the window's pipe, waiting while it serves another
// launch. Only identification is allowed to the server: it may learn who
// connects, not act as them.
func openPipe(name string) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(pipeTimeout)
	for {
		h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
			windows.FILE_FLAG_OVERLAPPED|windows.SECURITY_SQOS_PRESENT|windows.SECURITY_IDENTIFICATION, 0)
		if err == nil {
			return h, nil
		}
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
			return 0, errors.New("no Carrier window is open for these folders")
		}
		if !errors.Is(err, windows.ERROR_PIPE_BUSY) || time.Now().After(deadline) {
			return 0, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var procAllowSetForeground = windows.NewLazySystemDLL("user32.dll").NewProc("AllowSetForegroundWindow")

// sameUserServer refuses a pipe whose server runs as another user; else
// it gives the server's process id.
func sameUserServer(h windows.Handle) (uint32, error) {
	var pid uint32
	if err := windows.GetNamedPipeServerProcessId(h, &pid); err != nil {
		return 0, err
	}
	return pid, sameUser(pid)
}

func sameUser(pid uint32) error {
	p, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return fmt.Errorf("the window's pipe is served by a process this user may not look at: %w", err)
	}
	defer windows.CloseHandle(p)
	var t windows.Token
	if err := windows.OpenProcessToken(p, windows.TOKEN_QUERY, &t); err != nil {
		return fmt.Errorf("the window's pipe is served by a process this user may not look at: %w", err)
	}
	defer t.Close()
	u, err := t.GetTokenUser()
	if err != nil {
		return err
	}
	me, err := userSID()
	if err != nil {
		return err
	}
	if got := u.User.Sid.String(); !strings.EqualFold(got, me) {
		return fmt.Errorf("the pipe of Carrier's window is served by another user (%s): nothing handed over", got)
	}
	return nil
}

var errQuit = errors.New("the window let its claim go")

// overlapped runs one overlapped call on h and waits for it, for quit
// (when not 0), or for timeout; the call is cancelled unless it ended.
// It gives the bytes the call moved.
func overlapped(h, quit windows.Handle, timeout uint32, call func(*windows.Overlapped) error) (uint32, error) {
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return 0, err
	}
	defer windows.CloseHandle(ev)
	o := &windows.Overlapped{HEvent: ev}
	var n uint32
	if err := call(o); err == nil {
		err = windows.GetOverlappedResult(h, o, &n, true)
		return n, err
	} else if !errors.Is(err, windows.ERROR_IO_PENDING) {
		return 0, err
	}
	handles := []windows.Handle{ev}
	if quit != 0 {
		handles = append(handles, quit)
	}
	w, err := windows.WaitForMultipleObjects(handles, false, timeout)
	switch {
	case err != nil:
	case w == windows.WAIT_OBJECT_0:
		err = windows.GetOverlappedResult(h, o, &n, false)
		return n, err
	case w == windows.WAIT_OBJECT_0+1:
		err = errQuit
	default:
		err = errors.New("timed out waiting for the other Carrier")
	}
	windows.CancelIoEx(h, o)
	windows.GetOverlappedResult(h, o, &n, true) // o must outlive the call
	return 0, err
}

func readSome(h, quit windows.Handle, b []byte) (int, error) {
	n, err := overlapped(h, quit, uint32(pipeTimeout/time.Millisecond), func(o *windows.Overlapped) error {
		return windows.ReadFile(h, b, nil, o)
	})
	return int(n), err
}

func readFull(h, quit windows.Handle, b []byte) error {
	for len(b) > 0 {
		n, err := readSome(h, quit, b)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the other Carrier stopped mid-message")
		}
		b = b[n:]
	}
	return nil
}

func writeAll(h, quit windows.Handle, b []byte) error {
	for len(b) > 0 {
		n, err := overlapped(h, quit, uint32(pipeTimeout/time.Millisecond), func(o *windows.Overlapped) error {
			return windows.WriteFile(h, b, nil, o)
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the other Carrier took nothing")
		}
		b = b[n:]
	}
	return nil
}

// readHandOver reads one launch's items.
func readHandOver(h, quit windows.Handle) ([]string, error) {
	var head [4]byte
	if err := readFull(h, quit, head[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(head[:])
	if size > pipeHandOverLimit {
		return nil, fmt.Errorf("a hand-over of %d bytes is over the limit", size)
	}
	msg := make([]byte, size)
	if err := readFull(h, quit, msg); err != nil {
		return nil, err
	}
	var items []string
	if err := json.Unmarshal(msg, &items); err != nil {
		return nil, err
	}
	return items, nil
}
