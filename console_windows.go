package main

import (
	"os"
	"syscall"
	"unsafe"
)

var (
	kernel32          = syscall.NewLazyDLL("kernel32.dll")
	procAttachConsole = kernel32.NewProc("AttachConsole")
	user32            = syscall.NewLazyDLL("user32.dll")
	procMessageBox    = user32.NewProc("MessageBoxW")
)

const attachParentProcess = ^uintptr(0) // ATTACH_PARENT_PROCESS, (DWORD)-1

// attachConsole lets the GUI-subsystem exe (no console window when
// started from Explorer) act as a command in a terminal: it joins the
// terminal's console and writes there, unless its output already goes to
// a file or a pipe.
func attachConsole() {
	if r, _, _ := procAttachConsole.Call(attachParentProcess); r == 0 {
		return // started from Explorer, or already with a console
	}
	reopen := func(f **os.File, name string, flag int) {
		if h := (*f).Fd(); h != 0 && h != uintptr(syscall.InvalidHandle) {
			if _, err := syscall.GetFileType(syscall.Handle(h)); err == nil {
				return // redirected to a file or a pipe: keep it
			}
		}
		if c, err := os.OpenFile(name, flag, 0); err == nil {
			*f = c
		}
	}
	reopen(&os.Stdout, "CONOUT$", os.O_WRONLY)
	reopen(&os.Stderr, "CONOUT$", os.O_WRONLY)
	reopen(&os.Stdin, "CONIN$", os.O_RDONLY)
}

// systemAlert shows a message box: it needs no OpenGL.
func systemAlert(title, text string) {
	t, _ := syscall.UTF16PtrFromString(title)
	m, _ := syscall.UTF16PtrFromString(text)
	const mbIconError = 0x10
	procMessageBox.Call(0, uintptr(unsafe.Pointer(m)), uintptr(unsafe.Pointer(t)), mbIconError)
}
