package transfer

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernel32 is loaded by name: it is a KnownDLL, always the system's own.
var kernel32 = syscall.NewLazyDLL("kernel32.dll")

var procGetFileInformationByHandleEx = kernel32.NewProc("GetFileInformationByHandleEx")

// fileBasicInfo is FILE_BASIC_INFO; times count 100 ns since 1601.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

const (
	fileBasicInfoClass = 0    // FileBasicInfo
	fileReadAttributes = 0x80 // FILE_READ_ATTRIBUTES
)

// changeTimeOf is the file's ChangeTime (a FileInfo has none on Windows:
// its Win32FileAttributeData lacks it) from its basic information (NTFS
// moves it at every write, and no ordinary tool sets it back). It opens
// the file for its attributes only, sharing everything, so it never stands
// in another program's way.
func changeTimeOf(path string, _ os.FileInfo) time.Time {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return time.Time{}
	}
	h, err := syscall.CreateFile(p, fileReadAttributes,
		syscall.FILE_SHARE_READ|syscall.FILE_SHARE_WRITE|syscall.FILE_SHARE_DELETE,
		nil, syscall.OPEN_EXISTING, syscall.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return time.Time{}
	}
	defer syscall.CloseHandle(h)
	var info fileBasicInfo
	r, _, _ := procGetFileInformationByHandleEx.Call(uintptr(h), fileBasicInfoClass, uintptr(unsafe.Pointer(&info)), unsafe.Sizeof(info))
	if r == 0 || info.ChangeTime == 0 {
		return time.Time{}
	}
	ft := syscall.Filetime{LowDateTime: uint32(info.ChangeTime), HighDateTime: uint32(info.ChangeTime >> 32)}
	return time.Unix(0, ft.Nanoseconds())
}
