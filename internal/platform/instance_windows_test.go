package platform

import (
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// instanceTestSetup: the pipe needs nothing set up.
func instanceTestSetup(t *testing.T) {}

// The window's pipe is this user's alone: its name carries the user's
// SID, and its access list, protected from inheritance, has one entry,
// all access for that user; no one else may open it.
func TestInstancePipeIsTheUsers(t *testing.T) {
	data := t.TempDir()
	inst, err := ClaimInstance(testAppID, data)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	name, err := instancePipe(testAppID, data)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, `\\.\pipe\`+InstanceName(testAppID, data)) || !strings.HasSuffix(name, "."+sid) {
		t.Errorf("the pipe is %s, want the window's name and the SID %s", name, sid)
	}
	h, err := openPipe(name)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	if _, err := sameUserServer(h); err != nil {
		t.Errorf("the window's own pipe: %v", err)
	}
	sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	sddl := sd.String()
	if want := "D:P(A;;FA;;;" + sid + ")"; sddl != want {
		t.Errorf("the pipe's access list is %s, want %s", sddl, want)
	}
}
