package platform

import (
	"regexp"
	"syscall"
	"testing"
	"unsafe"
)

var (
	procGetNamedSecurityInfo = advapi32.NewProc("GetNamedSecurityInfoW")
	procSDToSDDL             = advapi32.NewProc("ConvertSecurityDescriptorToStringSecurityDescriptorW")
	procWineGetVersion       = syscall.NewLazyDLL("ntdll.dll").NewProc("wine_get_version") // only Wine's ntdll has it
)

// ownerOnly reads path's access list back as SDDL: it must hold entries
// for this user only (any number: inherited ones come one per kind).
func ownerOnly(t *testing.T, path string) (bool, string) {
	if procWineGetVersion.Find() == nil {
		t.Skip("under Wine, whose SetNamedSecurityInfo on a file succeeds and keeps nothing (it reports an access list made from the Unix mode bits): the access list can only be checked on Windows itself")
	}
	p, _ := syscall.UTF16PtrFromString(path)
	var sd uintptr
	r, _, _ := procGetNamedSecurityInfo.Call(uintptr(unsafe.Pointer(p)), seFileObject, daclSecurityInformation,
		0, 0, 0, 0, uintptr(unsafe.Pointer(&sd)))
	if r != errorSuccess {
		t.Fatalf("GetNamedSecurityInfo %s: %v", path, syscall.Errno(r))
	}
	defer procLocalFree.Call(sd)
	var str *uint16
	if r, _, e := procSDToSDDL.Call(sd, sddlRevision1, daclSecurityInformation, uintptr(unsafe.Pointer(&str)), 0); r == 0 {
		t.Fatalf("ConvertSecurityDescriptorToStringSecurityDescriptor: %v", e)
	}
	defer procLocalFree.Call(uintptr(unsafe.Pointer(str)))
	n := 0
	for *(*uint16)(unsafe.Add(unsafe.Pointer(str), 2*n)) != 0 {
		n++
	}
	sddl := syscall.UTF16ToString(unsafe.Slice(str, n))
	sid, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	aces := regexp.MustCompile(`\(([^)]*)\)`).FindAllStringSubmatch(sddl, -1)
	if len(aces) == 0 {
		return false, sddl + " (no entries)"
	}
	for _, a := range aces {
		f := regexp.MustCompile(`;`).Split(a[1], -1)
		if len(f) < 6 || f[0] != "A" || (f[5] != sid && f[5] != "OW") {
			return false, sddl
		}
	}
	return true, sddl
}
