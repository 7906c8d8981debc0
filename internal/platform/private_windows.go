package platform

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

var (
	advapi32 = syscall.NewLazyDLL("advapi32.dll") // a KnownDLL: always the system's
	kernel32 = syscall.NewLazyDLL("kernel32.dll")

	procConvertSDDL    = advapi32.NewProc("ConvertStringSecurityDescriptorToSecurityDescriptorW")
	procGetSDDacl      = advapi32.NewProc("GetSecurityDescriptorDacl")
	procSetNamedSecure = advapi32.NewProc("SetNamedSecurityInfoW")
	procLocalFree      = kernel32.NewProc("LocalFree")
)

const (
	sddlRevision1              = 1
	seFileObject               = 1
	daclSecurityInformation    = 0x4
	protectedDaclSecurityInfo  = 0x80000000
	fileAttributeDirectory     = 0x10
	invalidFileAttributes      = 0xffffffff
	errorSuccess               = 0
	ownerOnlyFolderSDDLPattern = "D:P(A;OICI;FA;;;%s)" // inherited by files and folders made inside
	ownerOnlyFileSDDLPattern   = "D:P(A;;FA;;;%s)"
)

// private replaces path's access list with one entry, full control for the
// user running Carrier, protected from the parent's inheritable entries.
func private(path string) error {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	attrs, err := syscall.GetFileAttributes(p)
	if err != nil {
		return &os.PathError{Op: "make private", Path: path, Err: err}
	}
	sid, err := userSID()
	if err != nil {
		return &os.PathError{Op: "make private", Path: path, Err: err}
	}
	pattern := ownerOnlyFileSDDLPattern
	if attrs != invalidFileAttributes && attrs&fileAttributeDirectory != 0 {
		pattern = ownerOnlyFolderSDDLPattern
	}
	sddl, err := syscall.UTF16PtrFromString(fmt.Sprintf(pattern, sid))
	if err != nil {
		return err
	}
	var sd uintptr
	if r, _, e := procConvertSDDL.Call(uintptr(unsafe.Pointer(sddl)), sddlRevision1, uintptr(unsafe.Pointer(&sd)), 0); r == 0 {
		return &os.PathError{Op: "make private", Path: path, Err: e}
	}
	defer procLocalFree.Call(sd)
	var present, defaulted int32
	var dacl uintptr
	if r, _, e := procGetSDDacl.Call(sd, uintptr(unsafe.Pointer(&present)), uintptr(unsafe.Pointer(&dacl)), uintptr(unsafe.Pointer(&defaulted))); r == 0 {
		return &os.PathError{Op: "make private", Path: path, Err: e}
	}
	r, _, _ := procSetNamedSecure.Call(uintptr(unsafe.Pointer(p)), seFileObject,
		daclSecurityInformation|protectedDaclSecurityInfo, 0, 0, dacl, 0)
	if r != errorSuccess {
		return &os.PathError{Op: "make private", Path: path, Err: syscall.Errno(r)}
	}
	return nil
}

// userSID is the SID of the user this process runs as, "S-1-5-21-...".
func userSID() (string, error) {
	t, err := syscall.OpenCurrentProcessToken()
	if err != nil {
		return "", err
	}
	defer t.Close()
	u, err := t.GetTokenUser()
	if err != nil {
		return "", err
	}
	return u.User.Sid.String()
}
